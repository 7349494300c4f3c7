// Layer norm's row kernels, compiled once per ISA. Statistics are two passes over the
// row (the mean, then the mean of squared deviations from it: no cancellation, unlike
// E[x^2] - E[x]^2), accumulated in vector lanes and summed pairwise; Half and BFloat16
// compute in float. The backward's weight and bias grads are summed per block of rows
// (a fixed number of blocks) and the blocks added in order: the same bits at any thread
// count.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/cpu/vec/vec.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/Normalization.h>

#include <cmath>
#include <vector>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

template <typename T>
inline constexpr bool kVectorized = std::is_same_v<T, float> || std::is_same_v<T, double>;

// sum over i < n of f(i) in opmath, lanes of the vector width for float/double.
template <typename T, typename O, typename F, typename VF>
O row_sum(int64_t n, F f, VF vf) {
  int64_t i = 0;
  O total = 0;
  if constexpr (kVectorized<T>) {
    constexpr int64_t kStep = Vectorized<T>::size();
    Vectorized<T> a(T(0)), b(T(0));
    for (; i + 2 * kStep <= n; i += 2 * kStep) {
      a = a + vf(i);
      b = b + vf(i + kStep);
    }
    alignas(64) T lanes[kStep];
    (a + b).store(lanes);
    for (int64_t k = 0; k < kStep; ++k) total += lanes[k];
  }
  for (; i < n; ++i) total += f(i);
  return total;
}

template <typename T>
void layer_norm_rows(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t M, int64_t N, double eps,
                     Tensor& out, Tensor& mean, Tensor& rstd) {
  using O = opmath_t<T>;
  const T* xp = x.data_ptr<T>();
  const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
  const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
  T* op = out.data_ptr<T>();
  T* mp = mean.data_ptr<T>();
  T* rp = rstd.data_ptr<T>();
  at::parallel_for(0, M, std::max<int64_t>(1, 16384 / std::max<int64_t>(N, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* row = xp + r * N;
      T* dst = op + r * N;
      const O mu = row_sum<T, O>(N, [&](int64_t i) { return static_cast<O>(row[i]); },
                                 [&](int64_t i) { return Vectorized<T>::loadu(row + i); }) / static_cast<O>(N);
      const O var = row_sum<T, O>(
                        N, [&](int64_t i) { const O d = static_cast<O>(row[i]) - mu; return d * d; },
                        [&](int64_t i) { const auto d = Vectorized<T>::loadu(row + i) - Vectorized<T>(mu); return d * d; }) /
                    static_cast<O>(N);
      const O rs = O(1) / std::sqrt(var + static_cast<O>(eps));
      mp[r] = static_cast<T>(mu);
      rp[r] = static_cast<T>(rs);
      int64_t i = 0;
      if constexpr (kVectorized<T>) {
        constexpr int64_t kStep = Vectorized<T>::size();
        const Vectorized<T> vmu(mu), vrs(rs);
        for (; i + kStep <= N; i += kStep) {
          Vectorized<T> y = (Vectorized<T>::loadu(row + i) - vmu) * vrs;
          if (wp) y = y * Vectorized<T>::loadu(wp + i);
          if (bp) y = y + Vectorized<T>::loadu(bp + i);
          y.store(dst + i);
        }
      }
      for (; i < N; ++i) {
        O y = (static_cast<O>(row[i]) - mu) * rs;
        if (wp) y *= static_cast<O>(wp[i]);
        if (bp) y += static_cast<O>(bp[i]);
        dst[i] = static_cast<T>(y);
      }
    }
  });
}

void layer_norm_kernel(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t M, int64_t N, double eps,
                       Tensor& out, Tensor& mean, Tensor& rstd) {
  dispatch_types<kFloating | kReducedFloat>(x.scalar_type(), "LayerNormKernelImpl", [&]<typename T>() {
    layer_norm_rows<T>(x, weight, bias, M, N, eps, out, mean, rstd);
  });
}

// dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy w, xhat = (x - mean) rstd;
// dw = sum over rows of dy xhat, db = sum over rows of dy.
template <typename T>
void layer_norm_backward_rows(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                              const Tensor& weight, int64_t M, int64_t N, Tensor& dx, Tensor& dw, Tensor& db) {
  using O = opmath_t<T>;
  const T* gp = dy.data_ptr<T>();
  const T* xp = x.data_ptr<T>();
  const T* mp = mean.data_ptr<T>();
  const T* rp = rstd.data_ptr<T>();
  const T* wp = weight.defined() ? weight.data_ptr<T>() : nullptr;
  const bool want_dx = dx.defined(), want_dw = dw.defined(), want_db = db.defined();
  const int64_t blocks = std::min<int64_t>(M, 16);
  std::vector<O> dw_parts(want_dw ? static_cast<size_t>(blocks * N) : 0, O(0));
  std::vector<O> db_parts(want_db ? static_cast<size_t>(blocks * N) : 0, O(0));
  at::parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t r0 = M * blk / blocks, r1 = M * (blk + 1) / blocks;
      O* dwp = want_dw ? dw_parts.data() + blk * N : nullptr;
      O* dbp = want_db ? db_parts.data() + blk * N : nullptr;
      for (int64_t r = r0; r < r1; ++r) {
        const T* g = gp + r * N;
        const T* row = xp + r * N;
        const O mu = static_cast<O>(mp[r]), rs = static_cast<O>(rp[r]);
        if (want_dw || want_db) {
          for (int64_t i = 0; i < N; ++i) {
            const O gi = static_cast<O>(g[i]);
            if (dwp) dwp[i] += gi * (static_cast<O>(row[i]) - mu) * rs;
            if (dbp) dbp[i] += gi;
          }
        }
        if (!want_dx) continue;
        auto gw = [&](int64_t i) { return static_cast<O>(g[i]) * (wp ? static_cast<O>(wp[i]) : O(1)); };
        auto vgw = [&](int64_t i) {
          auto v = Vectorized<T>::loadu(g + i);
          return wp ? v * Vectorized<T>::loadu(wp + i) : v;
        };
        const O sum_g = row_sum<T, O>(N, gw, vgw);
        const O sum_gx = row_sum<T, O>(
            N, [&](int64_t i) { return gw(i) * (static_cast<O>(row[i]) - mu) * rs; },
            [&](int64_t i) { return vgw(i) * ((Vectorized<T>::loadu(row + i) - Vectorized<T>(mu)) * Vectorized<T>(rs)); });
        const O mean_g = sum_g / static_cast<O>(N), mean_gx = sum_gx / static_cast<O>(N);
        T* out = dx.data_ptr<T>() + r * N;
        int64_t i = 0;
        if constexpr (kVectorized<T>) {
          constexpr int64_t kStep = Vectorized<T>::size();
          const Vectorized<T> vmu(mu), vrs(rs), vmg(mean_g), vmgx(mean_gx);
          for (; i + kStep <= N; i += kStep) {
            const auto xhat = (Vectorized<T>::loadu(row + i) - vmu) * vrs;
            (vrs * (vgw(i) - vmg - xhat * vmgx)).store(out + i);
          }
        }
        for (; i < N; ++i) {
          const O xhat = (static_cast<O>(row[i]) - mu) * rs;
          out[i] = static_cast<T>(rs * (gw(i) - mean_g - xhat * mean_gx));
        }
      }
    }
  });
  auto combine = [&](const std::vector<O>& parts, Tensor& dst) {
    T* d = dst.data_ptr<T>();
    for (int64_t i = 0; i < N; ++i) {
      O s = 0;
      for (int64_t blk = 0; blk < blocks; ++blk) s += parts[static_cast<size_t>(blk * N + i)];
      d[i] = static_cast<T>(s);
    }
  };
  if (want_dw) combine(dw_parts, dw);
  if (want_db) combine(db_parts, db);
}

void layer_norm_backward_kernel(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                const Tensor& weight, int64_t M, int64_t N, Tensor& dx, Tensor& dw, Tensor& db) {
  dispatch_types<kFloating | kReducedFloat>(x.scalar_type(), "LayerNormBackwardKernelImpl", [&]<typename T>() {
    layer_norm_backward_rows<T>(dy, x, mean, rstd, weight, M, N, dx, dw, db);
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(layer_norm_stub, &layer_norm_kernel);
REGISTER_DISPATCH(layer_norm_backward_stub, &layer_norm_backward_kernel);

}  // namespace at::inline tessera::native
