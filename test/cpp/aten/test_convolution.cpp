// Convolution from C++: at::conv2d against a direct loop written here (float through
// oneDNN, double through im2col + GEMM), and oneDNN's plan cache: a repeated shape
// builds no new plan, a new shape builds one, and a plan runs on several threads at once.
#include <aten/aten.h>
#include <aten/native/nn/ConvUtils.h>

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace {

using at::Tensor;

Tensor filled(std::vector<int64_t> sizes, at::ScalarType dtype, int seed) {
  Tensor d = at::empty(sizes, at::TensorOptions(at::kDouble));
  for (int64_t i = 0; i < d.numel(); ++i) d.data_ptr<double>()[i] = static_cast<double>((i * 7 + seed * 3) % 11 - 5);
  return d.to(dtype);
}

// out[n][o][y][x] = sum_{c, i, j} in[n][c][y*s + i - p][x*s + j - p] * w[o][c][i][j], in double.
std::vector<double> naive_conv2d(const Tensor& input, const Tensor& weight, int64_t s, int64_t p) {
  Tensor in = input.to(at::kDouble).contiguous(), w = weight.to(at::kDouble).contiguous();
  const int64_t N = in.size(0), C = in.size(1), H = in.size(2), W = in.size(3);
  const int64_t O = w.size(0), K = w.size(2);
  const int64_t OH = (H + 2 * p - K) / s + 1, OW = (W + 2 * p - K) / s + 1;
  std::vector<double> out;
  const double* a = in.data_ptr<double>();
  const double* b = w.data_ptr<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          double acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t i = 0; i < K; ++i)
              for (int64_t j = 0; j < K; ++j) {
                const int64_t h = y * s + i - p, v = x * s + j - p;
                if (h < 0 || h >= H || v < 0 || v >= W) continue;
                acc += a[((n * C + c) * H + h) * W + v] * b[((o * C + c) * K + i) * K + j];
              }
          out.push_back(acc);
        }
  return out;
}

void expect_matches(const Tensor& got, const std::vector<double>& want) {
  Tensor g = got.to(at::kDouble).contiguous();
  ASSERT_EQ(g.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(g.data_ptr<double>()[i], want[i], 1e-3) << "at " << i;
}

TEST(Convolution, Conv2dMatchesADirectLoop) {
  for (at::ScalarType t : {at::kFloat, at::kDouble}) {
    for (int64_t channels : {3, 32}) {  // plain and blocked oneDNN layouts
      Tensor x = filled({2, channels, 7, 6}, t, 1), w = filled({5, channels, 3, 3}, t, 2);
      expect_matches(at::conv2d(x, w, std::nullopt, {2}, {1}), naive_conv2d(x, w, 2, 1));
      expect_matches(at::conv2d(x, w), naive_conv2d(x, w, 1, 0));
    }
  }
}

TEST(Convolution, OneDnnPlansAreCachedByShape) {
  Tensor x = filled({2, 16, 9, 9}, at::kFloat, 3), w = filled({8, 16, 3, 3}, at::kFloat, 4);
  at::conv2d(x, w, std::nullopt, {1}, {1});
  const size_t after_first = at::native::onednn::cached_plan_count();
  for (int i = 0; i < 3; ++i) at::conv2d(x, w, std::nullopt, {1}, {1});
  EXPECT_EQ(at::native::onednn::cached_plan_count(), after_first);
  at::conv2d(filled({2, 16, 11, 9}, at::kFloat, 3), w, std::nullopt, {1}, {1});
  EXPECT_EQ(at::native::onednn::cached_plan_count(), after_first + 1);
}

// One cached plan run from several threads at once (each brings its own scratch memory).
TEST(Convolution, CachedPlansRunOnManyThreads) {
  Tensor x = filled({4, 32, 12, 12}, at::kFloat, 5), w = filled({16, 32, 3, 3}, at::kFloat, 6);
  const std::vector<double> want = naive_conv2d(x, w, 1, 1);
  std::vector<Tensor> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) results[t] = at::conv2d(x, w, std::nullopt, {1}, {1});
    });
  }
  for (auto& t : threads) t.join();
  for (const Tensor& r : results) expect_matches(r, want);
}

TEST(Convolution, MetaShapes) {
  Tensor x = at::empty({4, 3, 32, 32}, at::TensorOptions(at::kFloat).device(c10::kMeta));
  Tensor w = at::empty({64, 3, 3, 3}, at::TensorOptions(at::kFloat).device(c10::kMeta));
  Tensor y = at::conv2d(x, w, std::nullopt, {2}, {1});
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.sizes(), at::IntArrayRef({4, 64, 16, 16}));
}

}  // namespace
