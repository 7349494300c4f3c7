#include <c10/core/CPUAllocator.h>
#include <c10/core/TensorImpl.h>

#include "test_data.h"

#include <sstream>
#include <string>

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
    int contiguous = -1, channels_last = -1, channels_last_3d = -1;
    flags >> contiguous >> channels_last >> channels_last_3d;
    t->set_sizes_and_strides(sizes, strides);
    EXPECT_EQ(t->is_contiguous(), contiguous == 1) << line;
    EXPECT_EQ(t->is_contiguous(c10::MemoryFormat::ChannelsLast), channels_last == 1) << line;
    EXPECT_EQ(t->is_contiguous(c10::MemoryFormat::ChannelsLast3d), channels_last_3d == 1) << line;
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

// The math bits live in the key set: no field of their own, nothing for a fresh tensor.
TEST(TensorImpl, MathBitsAreKeySetMembers) {
  auto t = make_cpu({2, 3}, c10::kComplexFloat);
  EXPECT_FALSE(t->is_conj());
  EXPECT_FALSE(t->is_neg());
  EXPECT_FALSE(t->key_set().has_any(c10::math_bits_keyset));
  t->_set_conj(true);
  EXPECT_TRUE(t->is_conj());
  EXPECT_FALSE(t->is_neg());
  EXPECT_TRUE(t->key_set().has(DispatchKey::Conjugate));
  // The backend and autograd keys stay; only the bit's own key changes.
  EXPECT_TRUE(t->key_set().has(DispatchKey::CPU));
  EXPECT_TRUE(t->key_set().has(DispatchKey::AutogradCPU));
  EXPECT_TRUE(t->key_set().has(DispatchKey::ADInplaceOrView));
  EXPECT_EQ(t->key_set().highestPriorityBackendTypeId(), DispatchKey::CPU);
  t->_set_neg(true);
  EXPECT_TRUE(t->is_conj() && t->is_neg());
  EXPECT_EQ(t->key_set() & c10::math_bits_keyset, c10::math_bits_keyset);
  t->_set_conj(false);
  EXPECT_FALSE(t->is_conj());
  EXPECT_TRUE(t->is_neg());
  t->_set_neg(false);
  EXPECT_FALSE(t->key_set().has_any(c10::math_bits_keyset));
  // Clearing a clear bit, or setting a set one, is a no-op.
  t->_set_neg(false);
  EXPECT_FALSE(t->is_neg());
  t->_set_conj(true);
  t->_set_conj(true);
  EXPECT_TRUE(t->is_conj());
  EXPECT_EQ(t->key_set(), make_cpu({1}, c10::kComplexFloat)->key_set().add(DispatchKey::Conjugate));
}

// torch: _set_conj(true) asserts a complex dtype (torch._conj of a real tensor fails an
// INTERNAL ASSERT); clearing it is allowed on any dtype.
TEST(TensorImpl, SetConjNeedsAComplexDtype) {
  for (c10::ScalarType dtype :
       {c10::kFloat, c10::kDouble, c10::kHalf, c10::kBFloat16, c10::kLong, c10::kInt, c10::kByte, c10::kBool}) {
    auto t = make_cpu({2}, dtype);
    try {
      t->_set_conj(true);
      ADD_FAILURE() << "set the conjugate bit on " << dtype;
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find("INTERNAL ASSERT FAILED"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(t->is_conj()) << dtype;
    EXPECT_NO_THROW(t->_set_conj(false)) << dtype;
  }
  for (c10::ScalarType dtype : {c10::kComplexFloat, c10::kComplexDouble}) {
    auto t = make_cpu({2}, dtype);
    t->_set_conj(true);
    EXPECT_TRUE(t->is_conj()) << dtype;
  }
}

// torch: _set_neg works for any dtype, bool and uint8 included.
TEST(TensorImpl, SetNegTakesAnyDtype) {
  for (c10::ScalarType dtype : {c10::kBool, c10::kByte, c10::kChar, c10::kShort, c10::kInt, c10::kLong, c10::kHalf,
                                c10::kBFloat16, c10::kFloat, c10::kDouble, c10::kComplexFloat, c10::kComplexDouble}) {
    auto t = make_cpu({2}, dtype);
    t->_set_neg(true);
    EXPECT_TRUE(t->is_neg()) << dtype;
    EXPECT_FALSE(t->is_conj()) << dtype;
    t->_set_neg(false);
    EXPECT_FALSE(t->is_neg()) << dtype;
  }
}

// torch: `t.data = y` makes t read y's memory as y reads it, bits included: a conj view's
// data gives a conj tensor, and a plain one clears the bits t had.
TEST(TensorImpl, SetDataFromCopiesTheMathBits) {
  auto t = make_cpu({3}, c10::kComplexDouble);
  auto src = make_cpu({2, 2}, c10::kComplexDouble);
  src->_set_conj(true);
  src->_set_neg(true);
  t->set_data_from(*src);
  EXPECT_TRUE(t->is_conj());
  EXPECT_TRUE(t->is_neg());
  EXPECT_EQ(t->sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(t->key_set(), src->key_set());
  // The source keeps its own bits.
  EXPECT_TRUE(src->is_conj() && src->is_neg());

  auto plain = make_cpu({4}, c10::kComplexDouble);
  t->set_data_from(*plain);
  EXPECT_FALSE(t->is_conj());
  EXPECT_FALSE(t->is_neg());
  EXPECT_TRUE(t->key_set().has(DispatchKey::CPU));
  EXPECT_TRUE(t->key_set().has(DispatchKey::AutogradCPU));

  // Only the Negative bit comes across from a negative real tensor.
  auto real = make_cpu({2}, c10::kFloat);
  auto neg = make_cpu({5}, c10::kFloat);
  neg->_set_neg(true);
  real->set_data_from(*neg);
  EXPECT_TRUE(real->is_neg());
  EXPECT_FALSE(real->is_conj());
  EXPECT_EQ(real->numel(), 5);
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
