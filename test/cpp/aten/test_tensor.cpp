#include <aten/core/Tensor.h>
#include <c10/core/CPUAllocator.h>

#include <gtest/gtest.h>

#include <sstream>

namespace {

at::Tensor make_float(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  c10::Storage storage(c10::StorageImpl::use_byte_size_t{}, n * 4, c10::GetCPUAllocator());
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), c10::kFloat);
  impl->set_sizes_contiguous(sizes);
  return at::Tensor(std::move(impl));
}

TEST(Tensor, HandleSharesItsImpl) {
  at::Tensor a = make_float({2, 3});
  at::Tensor b = a;
  EXPECT_TRUE(a.is_same(b));
  EXPECT_EQ(a.use_count(), 2u);
  EXPECT_EQ(b.sizes(), c10::IntArrayRef({2, 3}));
  EXPECT_EQ(b.numel(), 6);
  EXPECT_EQ(b.nbytes(), 24u);
  EXPECT_EQ(b.data_ptr<float>(), static_cast<float*>(a.storage().data()));
  b.reset();
  EXPECT_FALSE(b.defined());
  EXPECT_EQ(a.use_count(), 1u);
}

TEST(Tensor, Prints) {
  std::ostringstream os;
  os << make_float({2, 3}) << " " << at::Tensor();
  EXPECT_EQ(os.str(), "Tensor(sizes=[2, 3], dtype=Float, device=cpu) Tensor(undefined)");
}

}  // namespace
