// TensorIterator: shape, dtype and layout decisions (expected values from torch 1.13's
// behaviour on the same inputs), coalescing, and that loops visit every element once.
#include <aten/aten.h>
#include <aten/native/TensorIterator.h>

#include <gtest/gtest.h>

#include <vector>

namespace {

using at::Tensor;
using at::TensorIterator;
using at::TensorIteratorConfig;

Tensor t_(std::vector<int64_t> sizes, c10::ScalarType dtype = at::kFloat) {
  Tensor t = at::empty(sizes, at::TensorOptions(dtype));
  t.fill_(1);
  return t;
}

TEST(TensorIterator, BroadcastShapeAndCommonDtype) {
  auto iter = TensorIterator::binary_op(Tensor(), t_({4, 1, 3}), t_({5, 1}, at::kDouble));
  EXPECT_EQ(iter.output().sizes(), c10::IntArrayRef({4, 5, 3}));
  EXPECT_EQ(iter.common_dtype(), at::kDouble);
  EXPECT_EQ(iter.output().scalar_type(), at::kDouble);
  // torch: (torch.empty(4,1,3) + torch.empty(5,1)).stride() == (15, 3, 1)
  EXPECT_EQ(iter.output().strides(), c10::IntArrayRef({15, 3, 1}));
}

TEST(TensorIterator, OutputFollowsTheInputsMemoryOrder) {
  Tensor a = at::empty({3, 4}).as_strided({4, 3}, {1, 4});  // a transpose
  Tensor b = t_({4, 3});
  // torch: (a + a).stride() == (1, 4); (a + b) == (1, 4); (b + a) == (3, 1)
  EXPECT_EQ(TensorIterator::binary_op(Tensor(), a, a).output().strides(), c10::IntArrayRef({1, 4}));
  EXPECT_EQ(TensorIterator::binary_op(Tensor(), a, b).output().strides(), c10::IntArrayRef({1, 4}));
  EXPECT_EQ(TensorIterator::binary_op(Tensor(), b, a).output().strides(), c10::IntArrayRef({3, 1}));
  // A channels-last-like permutation: torch gives (60, 5, 1, 20).
  Tensor c = at::empty({2, 3, 4, 5}).as_strided({2, 4, 5, 3}, {60, 5, 1, 20});
  EXPECT_EQ(TensorIterator::binary_op(Tensor(), c, c).output().strides(), c10::IntArrayRef({60, 5, 1, 20}));
  // Stepped slices: torch gives (2, 1).
  Tensor x = at::empty({3, 4}).as_strided({3, 2}, {4, 2});
  EXPECT_EQ(TensorIterator::binary_op(Tensor(), x, x).output().strides(), c10::IntArrayRef({2, 1}));
}

TEST(TensorIterator, CoalescesContiguousDimensions) {
  auto iter = TensorIterator::binary_op(Tensor(), t_({2, 3, 4}), t_({2, 3, 4}));
  EXPECT_EQ(iter.ndim(), 1);
  EXPECT_EQ(iter.shape()[0], 24);
  EXPECT_TRUE(iter.is_contiguous());
  auto bcast = TensorIterator::binary_op(Tensor(), t_({2, 3, 4}), t_({4}));
  EXPECT_EQ(bcast.ndim(), 2);  // the broadcast operand breaks the run after the last dim
  EXPECT_FALSE(bcast.is_scalar(2));
  auto scalar = TensorIterator::binary_op(Tensor(), t_({2, 3}), t_({}));
  EXPECT_TRUE(scalar.is_scalar(2));
}

TEST(TensorIterator, UnsafeCastsAndShapesFailLikeTorch) {
  Tensor i = t_({3}, at::kLong);
  try {
    TensorIterator::binary_op(i, i, t_({3}));
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_STREQ(e.what(), "result type Float can't be cast to the desired output type Long");
  }
  Tensor small = t_({3});
  try {
    TensorIterator::binary_op(small, small, t_({2, 3}));
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_STREQ(e.what(), "output with shape [3] doesn't match the broadcast shape [2, 3]");
  }
  EXPECT_THROW(TensorIterator::binary_op(Tensor(), t_({2}), t_({3})), c10::Error);
}

TEST(TensorIterator, ResizesAndCastsOutputs) {
  Tensor out = at::empty({0}, at::kDouble);
  auto iter = TensorIterator::binary_op(out, t_({2, 2}), t_({2}));
  EXPECT_EQ(out.sizes(), c10::IntArrayRef({2, 2}));
  EXPECT_EQ(iter.common_dtype(), at::kFloat);
  EXPECT_EQ(iter.dtype(0), at::kFloat);  // a float temporary the loop writes
  iter.for_each([&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    for (int64_t j = 0; j < n1; ++j) {
      for (int64_t i = 0; i < n0; ++i) *reinterpret_cast<float*>(data[0] + i * strides[0] + j * strides[3]) = 2.5f;
    }
  });
  iter.cast_outputs();
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(out.data_ptr<double>()[k], 2.5);
}

TEST(TensorIterator, ComparisonsProduceBool) {
  auto iter = TensorIterator::comparison_op(Tensor(), t_({2}, at::kInt), t_({2}, at::kDouble));
  EXPECT_EQ(iter.output().scalar_type(), at::kBool);
  EXPECT_EQ(iter.common_dtype(), at::kDouble);
  EXPECT_EQ(iter.input_dtype(0), at::kDouble);  // inputs converted to the common dtype
}

TEST(TensorIterator, FloatOpsLiftIntegers) {
  auto iter = TensorIterator::unary_float_op(Tensor(), t_({2}, at::kLong));
  EXPECT_EQ(iter.output().scalar_type(), at::kFloat);
  auto keep = TensorIterator::unary_float_op(Tensor(), t_({2}, at::kDouble));
  EXPECT_EQ(keep.output().scalar_type(), at::kDouble);
}

// Every element of a non-contiguous broadcast iteration is visited exactly once, whatever
// the split of the linear range (as parallel chunks split it).
TEST(TensorIterator, SerialRangesVisitEveryElementOnce) {
  Tensor out = at::empty({5, 7, 3}, at::kInt).as_strided({5, 7, 3}, {1, 15, 5});  // scrambled order
  Tensor in = t_({7, 1});
  auto iter = TensorIteratorConfig().add_output(out).add_input(in).check_all_same_dtype(false).resize_outputs(false).build();
  ASSERT_EQ(iter.numel(), 105);
  for (int64_t chunk : {1, 2, 3, 7, 10, 21, 104, 105, 1000}) {
    out.fill_(0);
    for (int64_t b = 0; b < iter.numel(); b += chunk) {
      iter.serial_for_each(
          [&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
            for (int64_t j = 0; j < n1; ++j) {
              for (int64_t i = 0; i < n0; ++i) ++*reinterpret_cast<int32_t*>(data[0] + i * strides[0] + j * strides[2]);
            }
          },
          b, std::min(b + chunk, iter.numel()));
    }
    const int32_t* p = out.data_ptr<int32_t>();
    for (int64_t k = 0; k < 105; ++k) ASSERT_EQ(p[k], 1) << "chunk " << chunk << " element " << k;
  }
}

TEST(TensorIterator, EmptyAndZeroDim) {
  auto empty = TensorIterator::binary_op(Tensor(), t_({0, 3}), t_({3}));
  EXPECT_EQ(empty.numel(), 0);
  int calls = 0;
  empty.for_each([&](char**, const int64_t*, int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  auto zero = TensorIterator::binary_op(Tensor(), t_({}), t_({}));
  EXPECT_EQ(zero.output().dim(), 0);
  EXPECT_EQ(zero.numel(), 1);
}

TEST(TensorIterator, MetaComputesTheSameShapeWithoutData) {
  auto meta = at::TensorOptions().device("meta");
  at::meta::TensorMeta m = TensorIteratorConfig()
                               .add_output(Tensor())
                               .add_input(at::empty({4, 1, 3}, meta))
                               .add_input(at::empty({5, 1}, meta.dtype(at::kDouble)))
                               .promote_inputs_to_common_dtype(true)
                               .output_meta();
  EXPECT_EQ(m.sizes, (std::vector<int64_t>{4, 5, 3}));
  EXPECT_EQ(m.dtype, at::kDouble);
  EXPECT_EQ(m.strides, (std::vector<int64_t>{15, 3, 1}));
}

}  // namespace
