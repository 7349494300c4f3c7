#include <c10/core/CPUAllocator.h>
#include <c10/core/TensorImpl.h>

#include "test_data.h"

#include <sstream>

namespace {

using c10::DispatchKey;
using c10::IntArrayRef;
using c10::TensorImpl;

c10::intrusive_ptr<TensorImpl> make_cpu(std::vector<int64_t> sizes, c10::ScalarType dtype = c10::kFloat) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  c10::Storage storage(c10::StorageImpl::use_byte_size_t{}, n * c10::elementSize(dtype), c10::GetCPUAllocator());
  auto t = c10::make_intrusive<TensorImpl>(std::move(storage), dtype);
  t->set_sizes_contiguous(sizes);
  return t;
}

TEST(TensorImpl, FreshTensorIsOneDimEmpty) {
  auto t = c10::make_intrusive<TensorImpl>(c10::Storage(), c10::kFloat);
  EXPECT_EQ(t->dim(), 1);
  EXPECT_EQ(t->sizes(), IntArrayRef({0}));
  EXPECT_EQ(t->numel(), 0);
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_EQ(t->data(), nullptr);
}

TEST(TensorImpl, SizesStridesNumelOffset) {
  auto t = make_cpu({2, 3, 4});
  EXPECT_EQ(t->dim(), 3);
  EXPECT_EQ(t->sizes(), IntArrayRef({2, 3, 4}));
  EXPECT_EQ(t->strides(), IntArrayRef({12, 4, 1}));
  EXPECT_EQ(t->numel(), 24);
  EXPECT_EQ(t->size(-1), 4);
  EXPECT_EQ(t->stride(0), 12);
  EXPECT_EQ(t->itemsize(), 4u);
  EXPECT_EQ(t->scalar_type(), c10::kFloat);
  EXPECT_EQ(t->device(), c10::Device("cpu"));
  EXPECT_EQ(t->layout(), c10::kStrided);
  char* base = static_cast<char*>(t->storage().data());
  EXPECT_EQ(t->data(), base);
  t->set_storage_offset(5);
  EXPECT_EQ(t->data(), base + 5 * 4);
  EXPECT_THROW(t->set_storage_offset(-1), c10::Error);
}

TEST(TensorImpl, ZeroDimTensor) {
  auto t = make_cpu({});
  EXPECT_EQ(t->dim(), 0);
  EXPECT_EQ(t->numel(), 1);
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_FALSE(t->is_contiguous(c10::MemoryFormat::ChannelsLast));
  // torch: a 0-dim tensor has no size(d) for any d.
  try {
    t->size(0);
    FAIL();
  } catch (const c10::IndexError& e) {
    EXPECT_STREQ(e.what(), "Dimension specified as 0 but tensor has no dimensions");
  }
  EXPECT_THROW(t->stride(-1), c10::IndexError);
  t->set_wrapped_number(true);
  EXPECT_TRUE(t->is_wrapped_number());
}

TEST(TensorImpl, DimOutOfRangeMessage) {
  auto t = make_cpu({2, 3});
  try {
    t->size(2);
    FAIL();
  } catch (const c10::IndexError& e) {
    EXPECT_STREQ(e.what(), "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  }
  EXPECT_THROW(t->stride(-3), c10::IndexError);
}

TEST(TensorImpl, EmptyAndNegativeSizes) {
  auto t = make_cpu({0, 3});
  EXPECT_EQ(t->numel(), 0);
  EXPECT_EQ(t->strides(), IntArrayRef({3, 1}));
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_EQ(t->data(), nullptr);
  try {
    t->set_sizes_contiguous({2, -1});
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_STREQ(e.what(), "Trying to create tensor with negative dimension -1: [2, -1]");
  }
  EXPECT_THROW(t->set_sizes_contiguous({int64_t(1) << 40, int64_t(1) << 40}), c10::Error);
  EXPECT_THROW(t->set_sizes_contiguous({0, int64_t(1) << 40, int64_t(1) << 40}), c10::Error);  // strides overflow
  // A rejected geometry leaves the tensor as it was.
  EXPECT_EQ(t->sizes(), IntArrayRef({0, 3}));
  EXPECT_THROW(t->set_sizes_and_strides({2, 3}, {1}), c10::Error);
}

TEST(TensorImpl, ManyDimsSpillToTheHeapAndBack) {
  auto t = make_cpu({1, 2, 1, 2, 1, 2, 1, 2});
  EXPECT_EQ(t->dim(), 8);
  EXPECT_EQ(t->numel(), 16);
  // torch.empty(1, 2, 1, 2, 1, 2, 1, 2).stride(): size-1 dims take the next dim's extent.
  EXPECT_EQ(t->strides(), IntArrayRef({16, 8, 8, 4, 4, 2, 2, 1}));
  t->set_sizes_contiguous({4, 4});
  EXPECT_EQ(t->strides(), IntArrayRef({4, 1}));
  t->set_sizes_and_strides({2, 2, 2, 2, 2, 2}, {32, 16, 8, 4, 2, 1});
  EXPECT_EQ(t->stride(0), 32);
  EXPECT_TRUE(t->is_contiguous());
}

// Contiguity flags for torch's own verdicts on each (sizes, strides) case.
TEST(TensorImpl, ContiguityMatchesTorch) {
  auto t = make_cpu({1});
  for (const auto& line : tessera_test::reference_lines("contiguity.txt")) {
    auto bar1 = line.find('|'), bar2 = line.find('|', bar1 + 1);
    auto sizes = tessera_test::parse_ints(line.substr(0, bar1));
    auto strides = tessera_test::parse_ints(line.substr(bar1 + 1, bar2 - bar1 - 1));
    std::istringstream flags(line.substr(bar2 + 1));
    int contiguous = -1, channels_last = -1;
    flags >> contiguous >> channels_last;
    t->set_sizes_and_strides(sizes, strides);
    EXPECT_EQ(t->is_contiguous(), contiguous == 1) << line;
    EXPECT_EQ(t->is_contiguous(c10::MemoryFormat::ChannelsLast), channels_last == 1) << line;
  }
}

TEST(TensorImpl, KeySetFromDeviceAndLayout) {
  auto cpu = make_cpu({2});
  EXPECT_TRUE(cpu->key_set().has(DispatchKey::CPU));
  EXPECT_TRUE(cpu->key_set().has(DispatchKey::AutogradCPU));
  EXPECT_TRUE(cpu->key_set().has(DispatchKey::ADInplaceOrView));
  EXPECT_EQ(cpu->key_set().highestPriorityBackendTypeId(), DispatchKey::CPU);

  c10::Storage meta_storage(c10::StorageImpl::use_byte_size_t{}, 1 << 20, c10::GetAllocator(c10::DeviceType::Meta));
  auto meta = c10::make_intrusive<TensorImpl>(meta_storage, c10::kHalf);
  meta->set_sizes_contiguous({512, 1024});
  EXPECT_TRUE(meta->is_meta());
  EXPECT_TRUE(meta->key_set().has(DispatchKey::Meta));
  EXPECT_EQ(meta->data(), nullptr);
  EXPECT_EQ(meta->numel(), 512 * 1024);

  auto sparse = c10::make_intrusive<TensorImpl>(c10::Storage(), c10::kDouble, c10::kSparse);
  EXPECT_TRUE(sparse->key_set().has(DispatchKey::SparseCPU));
  EXPECT_EQ(sparse->layout(), c10::kSparse);
}

TEST(TensorImpl, VersionCounterIsSharedByViews) {
  auto base = make_cpu({4});
  auto view = c10::make_intrusive<TensorImpl>(base->storage(), base->scalar_type());
  view->set_version_counter(base->version_counter());
  EXPECT_TRUE(view->version_counter().shares_with(base->version_counter()));
  EXPECT_EQ(base->version_counter().current_version(), 0u);
  view->bump_version();
  view->bump_version();
  EXPECT_EQ(base->version_counter().current_version(), 2u);
  auto other = make_cpu({4});
  EXPECT_FALSE(other->version_counter().shares_with(base->version_counter()));
  EXPECT_EQ(other->version_counter().current_version(), 0u);
}

struct FakeAutogradMeta final : c10::AutogradMetaInterface {
  explicit FakeAutogradMeta(int* destroyed) : destroyed_(destroyed) {}
  ~FakeAutogradMeta() override { ++*destroyed_; }
  void set_requires_grad(bool r, TensorImpl*) override { requires_grad_ = r; }
  bool requires_grad() const override { return requires_grad_; }
  bool requires_grad_ = false;
  int* destroyed_;
};

TEST(TensorImpl, AutogradMetaSlot) {
  int destroyed = 0;
  {
    auto t = make_cpu({3});
    EXPECT_EQ(t->autograd_meta(), nullptr);
    EXPECT_FALSE(t->requires_grad());
    t->set_autograd_meta(std::make_unique<FakeAutogradMeta>(&destroyed));
    t->autograd_meta()->set_requires_grad(true, t.get());
    EXPECT_TRUE(t->requires_grad());
  }
  EXPECT_EQ(destroyed, 1);  // the tensor owns its autograd metadata
}

TEST(TensorImpl, StorageIsSharedAndFreedWithTheLastTensor) {
  auto a = make_cpu({8});
  c10::Storage s = a->storage();
  EXPECT_EQ(s.use_count(), 2u);
  a.reset();
  EXPECT_EQ(s.use_count(), 1u);
  EXPECT_NE(s.data(), nullptr);
}

}  // namespace
