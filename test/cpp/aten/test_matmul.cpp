// The matmul family from C++: at::mm / Tensor::mm against a plain triple loop written
// here (float, double, int64; contiguous, transposed and column-major operands), the Meta
// backend's shapes, torch's error messages, beta = 0 with NaN in self, and bmm giving the
// same bits at one and two threads.
#include <aten/aten.h>
#include <aten/core/Parallel.h>

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <functional>
#include <limits>
#include <string>

namespace {

using at::Tensor;

// Deterministic small values (exact in every dtype used here).
Tensor filled(std::vector<int64_t> sizes, at::ScalarType dtype, int seed) {
  Tensor d = at::empty(sizes, at::TensorOptions(at::kDouble));
  for (int64_t i = 0; i < d.numel(); ++i) d.data_ptr<double>()[i] = static_cast<double>((i * 7 + seed * 3) % 11 - 5);
  return d.to(dtype);
}

// out[i][j] = sum_k a[i][k] * b[k][j], read through sizes and strides, in double.
// (A plain loop on purpose: the reference must not share code with the kernel under test.)
std::vector<double> naive_mm(const Tensor& a, const Tensor& b) {
  Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  std::vector<double> out(static_cast<size_t>(m * n), 0.0);
  const double* pa = ad.data_ptr<double>();
  const double* pb = bd.data_ptr<double>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        out[static_cast<size_t>(i * n + j)] += pa[i * ad.stride(0) + p * ad.stride(1)] * pb[p * bd.stride(0) + j * bd.stride(1)];
  // Rounded once to the operands' dtype, as a product computed in float (bfloat16) is.
  Tensor r = at::empty({m * n}, at::TensorOptions(at::kDouble));
  std::copy(out.begin(), out.end(), r.data_ptr<double>());
  Tensor rounded = r.to(a.scalar_type()).to(at::kDouble);
  return std::vector<double>(rounded.data_ptr<double>(), rounded.data_ptr<double>() + m * n);
}

std::vector<double> as_doubles(const Tensor& t) {
  Tensor c = at::empty(t.sizes(), at::TensorOptions(at::kDouble));
  c.copy_(t);
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const c10::Error& e) {
    return e.msg();
  }
  return "";
}

class MatmulDtypes : public ::testing::TestWithParam<at::ScalarType> {};

TEST_P(MatmulDtypes, MmMatchesANaiveProduct) {
  const at::ScalarType dt = GetParam();
  Tensor a = filled({37, 19}, dt, 1), b = filled({19, 23}, dt, 2);
  EXPECT_EQ(as_doubles(at::mm(a, b)), naive_mm(a, b));
  EXPECT_EQ(as_doubles(a.mm(b)), naive_mm(a, b));
  // Transposed operands (BLAS reads them with Trans) and a column-major out=.
  Tensor at_ = filled({19, 37}, dt, 3).t(), bt = filled({23, 19}, dt, 4).t();
  EXPECT_EQ(as_doubles(at::mm(at_, bt)), naive_mm(at_, bt));
  Tensor out = at::empty({23, 37}, at::TensorOptions(dt)).t();
  at::mm_out(out, at_, b);
  EXPECT_EQ(out.strides(), c10::IntArrayRef({1, 37}));
  EXPECT_EQ(as_doubles(out), naive_mm(at_, b));
  Tensor e = at::mm(filled({4, 0}, dt, 5), filled({0, 3}, dt, 6));  // k = 0: zeros
  EXPECT_EQ(as_doubles(e), std::vector<double>(12, 0.0));
}

INSTANTIATE_TEST_SUITE_P(Matmul, MatmulDtypes, ::testing::Values(at::kFloat, at::kDouble, at::kLong, at::kBFloat16));

TEST(Matmul, MetaShapes) {
  at::TensorOptions meta = at::TensorOptions().device("meta");
  EXPECT_EQ(at::mm(at::empty({2, 3}, meta), at::empty({3, 5}, meta)).sizes(), c10::IntArrayRef({2, 5}));
  EXPECT_EQ(at::bmm(at::empty({4, 2, 3}, meta), at::empty({4, 3, 5}, meta)).sizes(), c10::IntArrayRef({4, 2, 5}));
  EXPECT_EQ(at::matmul(at::empty({7, 1, 2, 3}, meta), at::empty({6, 3, 5}, meta)).sizes(),
            c10::IntArrayRef({7, 6, 2, 5}));
  EXPECT_TRUE(at::mm(at::empty({2, 3}, meta), at::empty({3, 5}, meta)).is_meta());
}

TEST(Matmul, ErrorsAsTorch) {
  EXPECT_EQ(error_of([] { at::mm(at::empty({2, 3}), at::empty({4, 5})); }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EQ(error_of([] { at::mm(at::empty({2, 3}), at::empty({3, 4}, at::kDouble)); }),
            "expected scalar type Float but found Double");
  EXPECT_EQ(error_of([] { at::mm(at::empty({3}), at::empty({3, 4})); }), "self must be a matrix");
  EXPECT_EQ(error_of([] { at::bmm(at::empty({2, 3}), at::empty({3, 4})); }), "batch1 must be a 3D tensor");
  EXPECT_EQ(error_of([] { at::dot(at::empty({3}), at::empty({4})); }),
            "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 "
            "and 4 elements respectively");
}

TEST(Matmul, BetaZeroIgnoresNanInSelf) {
  Tensor self = at::empty({3, 4});
  self.fill_(std::numeric_limits<double>::quiet_NaN());
  Tensor a = filled({3, 5}, at::kFloat, 1), b = filled({5, 4}, at::kFloat, 2);
  EXPECT_EQ(as_doubles(at::addmm(self, a, b, 0, 1)), naive_mm(a, b));
}

TEST(Matmul, BmmGivesTheSameBitsAtOneAndTwoThreads) {
  Tensor a = at::randn({8, 64, 128}), b = at::randn({8, 128, 128});
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  std::vector<double> one = as_doubles(at::bmm(a, b));
  at::set_num_threads(2);
  std::vector<double> two = as_doubles(at::bmm(a, b));
  at::set_num_threads(before);
  EXPECT_EQ(one, two);
}

}  // namespace
