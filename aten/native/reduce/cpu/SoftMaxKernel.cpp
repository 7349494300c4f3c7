// softmax / log_softmax kernel, compiled once per ISA. A line is read three times while it
// sits in cache: its maximum, the sum of exp(x - max) (exponentials stored for softmax),
// then the normalisation, so no exponential can overflow; a line of -inf gives NaN, as in
// torch. Lines along the last dim are vectorized; lines across memory are walked a block
// of columns at a time.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/cpu/vec/vec.h>
#include <aten/native/reduce/ScanOps.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

constexpr int64_t kColumns = 256;
constexpr int64_t kWork = 1 << 14;

template <typename T>
T horizontal(const Vectorized<T>& v, T init, T (*f)(T, T)) {
  T lanes[Vectorized<T>::size()];
  v.store(lanes);
  for (T x : lanes) init = f(init, x);
  return init;
}

template <typename T>
T max_nan(T a, T b) {
  return a != a || b != b ? std::numeric_limits<T>::quiet_NaN() : std::max(a, b);
}
template <typename T>
T add(T a, T b) {
  return a + b;
}

template <typename T>
void softmax_row(const T* x, T* out, int64_t n, bool log) {
  using V = Vectorized<T>;
  constexpr int64_t w = V::size();
  int64_t i = 0;
  V vmax(-std::numeric_limits<T>::infinity());
  for (; i + w <= n; i += w) vmax = vec::maximum(vmax, V::loadu(x + i));
  T m = horizontal<T>(vmax, -std::numeric_limits<T>::infinity(), max_nan<T>);
  for (; i < n; ++i) m = max_nan(m, x[i]);

  const V vm(m);
  V vsum(T(0));
  for (i = 0; i + w <= n; i += w) {
    const V e = (V::loadu(x + i) - vm).exp();
    if (!log) e.store(out + i);
    vsum = vsum + e;
  }
  T sum = horizontal<T>(vsum, T(0), add<T>);
  for (; i < n; ++i) {
    const T e = std::exp(x[i] - m);
    if (!log) out[i] = e;
    sum += e;
  }

  if (log) {
    // (x - max) - log(sum): x - max is exact near the maximum, where the result is small.
    const T log_sum = std::log(sum);
    const V vlog(log_sum);
    for (i = 0; i + w <= n; i += w) ((V::loadu(x + i) - vm) - vlog).store(out + i);
    for (; i < n; ++i) out[i] = (x[i] - m) - log_sum;
  } else {
    const V scale(T(1) / sum);
    for (i = 0; i + w <= n; i += w) (V::loadu(out + i) * scale).store(out + i);
    for (; i < n; ++i) out[i] = out[i] * (T(1) / sum);
  }
}

// Lines across memory: columns [j0, j0 + width) of one [n, inner] block.
template <typename T>
void softmax_columns(const T* x, T* out, int64_t n, int64_t inner, int64_t width, bool log) {
  std::vector<T> m(static_cast<size_t>(width), -std::numeric_limits<T>::infinity());
  std::vector<T> sum(static_cast<size_t>(width), T(0));
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < width; ++j) m[static_cast<size_t>(j)] = max_nan(m[static_cast<size_t>(j)], x[k * inner + j]);
  }
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < width; ++j) {
      const T e = std::exp(x[k * inner + j] - m[static_cast<size_t>(j)]);
      if (!log) out[k * inner + j] = e;
      sum[static_cast<size_t>(j)] += e;
    }
  }
  for (int64_t j = 0; j < width; ++j) {
    sum[static_cast<size_t>(j)] = log ? std::log(sum[static_cast<size_t>(j)]) : T(1) / sum[static_cast<size_t>(j)];
  }
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < width; ++j) {
      T& o = out[k * inner + j];
      const T s = sum[static_cast<size_t>(j)];
      o = log ? (x[k * inner + j] - m[static_cast<size_t>(j)]) - s : o * s;
    }
  }
}

void softmax_kernel(const DimBlocks& b, const Tensor& out_t, bool log) {
  dispatch_types<kFloating>(out_t.scalar_type(), log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl",
                            [&]<typename T>() {
    const T* x = b.data.data_ptr<T>();
    T* out = out_t.data_ptr<T>();
    if (b.inner == 1) {
      at::parallel_for(0, b.outer, std::max<int64_t>(1, kWork / std::max<int64_t>(b.n, 1)), [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) softmax_row(x + o * b.n, out + o * b.n, b.n, log);
      });
      return;
    }
    const int64_t width = std::min(b.inner, kColumns);
    const int64_t blocks = (b.inner + width - 1) / width;
    const int64_t grain = std::max<int64_t>(1, kWork / std::max<int64_t>(b.n * width, 1));
    at::parallel_for(0, b.outer * blocks, grain, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t o = t / blocks, j0 = (t % blocks) * width;
        const int64_t at = o * b.n * b.inner + j0;
        softmax_columns(x + at, out + at, b.n, b.inner, std::min(width, b.inner - j0), log);
      }
    });
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(softmax_stub, &softmax_kernel);

}  // namespace at::inline tessera::native
