#include <aten/core/Tensor.h>
#include <c10/core/CPUAllocator.h>

#include "tensor_factory.h"

#include <gtest/gtest.h>

#include <sstream>

namespace {

at::Tensor make_float(std::vector<int64_t> sizes) { return tessera_test::make_tensor(std::move(sizes)); }

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
