// The geometry helpers behind the view operators (aten/native/shape/TensorShape.h), and a few
// views through the C++ API: shared storage and version counter.
#include <aten/aten.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/shape/TensorShape.h>

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace {

using at::native::ShapeError;
using V = std::vector<int64_t>;

TEST(ViewGeometry, WrapDim) {
  EXPECT_EQ(at::native::wrap_dim(-1, 3), 2);
  EXPECT_EQ(at::native::wrap_dim(2, 3), 2);
  EXPECT_EQ(at::native::wrap_dim(-1, 0), 0);  // a 0-dim tensor takes -1 and 0
  EXPECT_EQ(at::native::wrap_dim(0, 0), 0);
  try {
    at::native::wrap_dim(2, 2);
    FAIL();
  } catch (const c10::IndexError& e) {
    EXPECT_STREQ(e.msg().c_str(), "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  }
  EXPECT_THROW(at::native::wrap_dim(1, 0), c10::IndexError);
}

TEST(ViewGeometry, InferSize) {
  EXPECT_EQ(at::native::infer_size(V{2, -1}, 12), (V{2, 6}));
  EXPECT_EQ(at::native::infer_size(V{0, 3}, 0), (V{0, 3}));
  V out;
  auto kind = [&](V shape, int64_t numel) {
    auto e = at::native::try_infer_size(shape, numel, out);
    return e ? std::optional<ShapeError::Kind>(e->kind) : std::nullopt;
  };
  EXPECT_EQ(kind({-1, -1}, 4), ShapeError::Kind::TwoInferred);
  EXPECT_EQ(kind({2, -2}, 4), ShapeError::Kind::NegativeDim);
  EXPECT_EQ(kind({-1, 0}, 0), ShapeError::Kind::Ambiguous);
  EXPECT_EQ(kind({0, -1}, 12), ShapeError::Kind::Mismatch);
  EXPECT_EQ(kind({5, -1}, 12), ShapeError::Kind::Mismatch);
  EXPECT_EQ(kind({3, 4}, 12), std::nullopt);
  EXPECT_EQ(at::native::try_infer_size(V{5}, 12, out)->message, "shape '[5]' is invalid for input of size 12");
}

TEST(ViewGeometry, ViewStrides) {
  // contiguous: any shape of the same numel
  EXPECT_EQ(at::native::view_strides(V{3, 4}, V{4, 1}, V{2, 6}, 12), (V{6, 1}));
  // transposed: only the split of a single dim works, merging needs a copy
  EXPECT_EQ(at::native::view_strides(V{4, 3}, V{1, 4}, V{2, 2, 3}, 12), (V{2, 1, 4}));
  EXPECT_EQ(at::native::view_strides(V{4, 3}, V{1, 4}, V{12}, 12), std::nullopt);
  // size-1 dims are free
  EXPECT_EQ(at::native::view_strides(V{3, 1, 4}, V{4, 99, 1}, V{1, 12}, 12), (V{12, 1}));
  // stepped rows merge with nothing but the dims inside one row
  EXPECT_EQ(at::native::view_strides(V{2, 3}, V{8, 2}, V{6}, 6), std::nullopt);
  EXPECT_EQ(at::native::view_strides(V{2, 3}, V{8, 2}, V{2, 3, 1}, 6), (V{8, 2, 2}));
  EXPECT_EQ(at::native::view_strides(V{2, 3}, V{6, 2}, V{6}, 6), (V{2}));  // rows back to back
  // empty: same shape keeps strides, else contiguous ones
  EXPECT_EQ(at::native::view_strides(V{2, 0}, V{7, 3}, V{2, 0}, 0), (V{7, 3}));
  EXPECT_EQ(at::native::view_strides(V{2, 0}, V{7, 3}, V{0, 5}, 0), (V{5, 1}));
}

TEST(ViewGeometry, DenseAndMemoryOrder) {
  EXPECT_TRUE(at::native::is_non_overlapping_and_dense(V{3, 4}, V{4, 1}));
  EXPECT_TRUE(at::native::is_non_overlapping_and_dense(V{3, 4}, V{1, 3}));
  EXPECT_TRUE(at::native::is_non_overlapping_and_dense(V{3, 1}, V{1, 100}));
  EXPECT_FALSE(at::native::is_non_overlapping_and_dense(V{3, 4}, V{8, 2}));
  EXPECT_FALSE(at::native::is_non_overlapping_and_dense(V{3, 4}, V{0, 1}));
  // non-dense inputs keep their order of dims in a dense layout
  EXPECT_EQ(at::native::infer_dense_strides(V{3, 4}, V{2, 6}), (V{1, 3}));
  EXPECT_EQ(at::native::infer_dense_strides(V{4, 3}, V{6, 2}), (V{3, 1}));
  // zero strides say nothing: the contiguous order stays
  EXPECT_EQ(at::native::infer_dense_strides(V{3, 4}, V{1, 0}), (V{4, 1}));
}

TEST(ViewGeometry, MovedimPermutation) {
  EXPECT_EQ(at::native::movedim_permutation(3, V{0}, V{2}), (V{1, 2, 0}));
  EXPECT_EQ(at::native::movedim_permutation(4, V{3, 0}, V{0, 1}), (V{3, 0, 1, 2}));
  EXPECT_EQ(at::native::movedim_permutation(0, V{}, V{}), V{});
}

TEST(ViewGeometry, TypeString) {
  EXPECT_EQ(at::tensor_type_string(at::empty({1})), "torch.FloatTensor");
  EXPECT_EQ(at::tensor_type_string(at::empty({1}, at::TensorOptions().dtype(at::kBool))), "CPUBoolType");
  EXPECT_EQ(at::tensor_type_string(at::empty({1}, at::TensorOptions().device("meta"))), "MetaFloatType");
}

TEST(Views, ShareStorageAndVersionCounter) {
  at::Tensor base = at::empty({3, 4});
  base.fill_(1);
  at::Tensor v = base.t().select(0, 1);
  EXPECT_EQ(v.sizes(), c10::IntArrayRef({3}));
  EXPECT_EQ(v.strides(), c10::IntArrayRef({4}));
  EXPECT_EQ(v.storage_offset(), 1);
  EXPECT_EQ(v.storage().getIntrusivePtr().get(), base.storage().getIntrusivePtr().get());
  EXPECT_TRUE(v.unsafeGetTensorImpl()->version_counter().shares_with(base.unsafeGetTensorImpl()->version_counter()));
  v.fill_(5);
  EXPECT_EQ(base.data_ptr<float>()[1], 5.0f);
  EXPECT_EQ(base.data_ptr<float>()[0], 1.0f);
  auto parts = at::split(base, 2, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].storage_offset(), 2);
  EXPECT_EQ(base.reshape({12}).data_ptr(), base.data_ptr());
  EXPECT_NE(base.t().reshape({12}).data_ptr(), base.data_ptr());
  EXPECT_TRUE(base.contiguous().is_same(base));
}

TEST(Views, InPlaceViewsChangeSelfAndCountAsWrites) {
  at::Tensor base = at::empty({3, 1, 4});
  at::Tensor alias = base.view({12});
  c10::TensorImpl* impl = base.unsafeGetTensorImpl();
  const auto version = impl->version_counter().current_version();
  void* data = base.data_ptr();
  EXPECT_TRUE(base.transpose_(0, 2).is_same(base));  // self itself, new geometry
  EXPECT_EQ(base.sizes(), c10::IntArrayRef({4, 1, 3}));
  EXPECT_EQ(base.strides(), c10::IntArrayRef({1, 4, 4}));
  base.squeeze_(1).unsqueeze_(0).squeeze_();
  EXPECT_EQ(base.sizes(), c10::IntArrayRef({4, 3}));
  base.t_();
  EXPECT_EQ(base.strides(), c10::IntArrayRef({4, 1}));
  base.as_strided_({2}, {5}, 1);
  EXPECT_EQ(base.storage_offset(), 1);
  EXPECT_EQ(base.data_ptr(), static_cast<float*>(data) + 1);  // same storage throughout
  // each in-place view bumps the version counter that the other views share
  EXPECT_EQ(impl->version_counter().current_version(), version + 6);
  EXPECT_EQ(alias.unsafeGetTensorImpl()->version_counter().current_version(), version + 6);
  // a failed check leaves self as it was
  EXPECT_THROW(base.as_strided_({2}, {50}, 0), c10::Error);
  EXPECT_THROW(base.transpose_(0, 1), c10::IndexError);
  EXPECT_EQ(base.sizes(), c10::IntArrayRef({2}));
  EXPECT_EQ(impl->version_counter().current_version(), version + 6);
}

}  // namespace
