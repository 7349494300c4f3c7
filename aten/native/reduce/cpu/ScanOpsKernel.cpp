// Scan kernels (cumsum, cumprod, logcumsumexp, cummax, cummin), compiled once per ISA.
// Lines along the scanned dim are walked a block of columns at a time, so a scan across
// memory (inner > 1) still reads rows contiguously. Running values accumulate as torch's
// CPU scans do: double for float, float for Half/BFloat16. One long line (a 1-D cumsum)
// is cut into fixed chunks: each chunk's total, then an exclusive scan of the totals, then
// every chunk scanned from its offset, in parallel; the chunking does not depend on the
// thread count, so neither does the result.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/cpu/vec/vec.h>
#include <aten/native/reduce/ScanOps.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

constexpr int64_t kColumns = 256;        // lines scanned together when inner > 1
constexpr int64_t kChunk = 1 << 16;      // elements per task of one long line
constexpr int64_t kWork = 1 << 15;       // elements per task, roughly

// Scans accumulate float and complex<float> in double precision (a running sum's error
// grows with the line), everything else as its opmath type.
template <typename T>
struct scan_acc {
  using type = opmath_t<T>;
};
template <>
struct scan_acc<float> {
  using type = double;
};
template <>
struct scan_acc<c10::complex<float>> {
  using type = c10::complex<double>;
};

// Calls visit(o, j0, width) for every block of lines, in parallel.
template <typename Visit>
void for_line_blocks(const DimBlocks& b, Visit visit) {
  const int64_t width = std::min(b.inner, kColumns);
  const int64_t blocks = (b.inner + width - 1) / std::max<int64_t>(width, 1);
  const int64_t grain = std::max<int64_t>(1, kWork / std::max<int64_t>(b.n * width, 1));
  at::parallel_for(0, b.outer * blocks, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / blocks, j0 = (t % blocks) * width;
      visit(o, j0, std::min(width, b.inner - j0));
    }
  });
}

// state[j] = op(state[j], x) down rows [k0, k1) of block (o, j0, width); writes each state.
template <typename T, typename Acc, typename Op>
void scan_rows(const T* x, T* out, int64_t base, int64_t inner, int64_t k0, int64_t k1, int64_t width, Acc* state,
               Op op) {
  for (int64_t k = k0; k < k1; ++k) {
    const T* row = x + base + k * inner;
    T* dst = out + base + k * inner;
    for (int64_t j = 0; j < width; ++j) {
      state[j] = op(state[j], static_cast<Acc>(row[j]));
      dst[j] = static_cast<T>(state[j]);
    }
  }
}

template <typename T, typename Acc, typename Op>
void scan(const DimBlocks& b, const Tensor& out_t, Acc init, Op op) {
  const T* x = b.data.data_ptr<T>();
  T* out = out_t.data_ptr<T>();
  if (b.outer * b.inner == 1 && b.n > kChunk) {
    const int64_t chunks = (b.n + kChunk - 1) / kChunk;
    std::vector<Acc> offset(static_cast<size_t>(chunks) + 1, init);
    at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        Acc total = init;
        for (int64_t i = c * kChunk, end = std::min(b.n, (c + 1) * kChunk); i < end; ++i) {
          total = op(total, static_cast<Acc>(x[i]));
        }
        offset[static_cast<size_t>(c) + 1] = total;
      }
    });
    for (int64_t c = 0; c < chunks; ++c) {
      offset[static_cast<size_t>(c) + 1] = op(offset[static_cast<size_t>(c)], offset[static_cast<size_t>(c) + 1]);
    }
    at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        Acc state = offset[static_cast<size_t>(c)];
        scan_rows<T, Acc>(x, out, 0, 1, c * kChunk, std::min(b.n, (c + 1) * kChunk), 1, &state, op);
      }
    });
    return;
  }
  for_line_blocks(b, [&](int64_t o, int64_t j0, int64_t width) {
    std::vector<Acc> state(static_cast<size_t>(width), init);
    scan_rows<T, Acc>(x, out, o * b.n * b.inner + j0, b.inner, 0, b.n, width, state.data(), op);
  });
}

template <typename T>
T wrapping(T a, T b, bool multiply) {
  using U = wrapping_uint_t<T>;
  return static_cast<T>(multiply ? static_cast<U>(a) * static_cast<U>(b) : static_cast<U>(a) + static_cast<U>(b));
}

void cumsum_kernel(const DimBlocks& b, const Tensor& out) {
  dispatch_types<kIntegral | kFloating | kReducedFloat | kComplex>(out.scalar_type(), "cumsum_out_cpu", [&]<typename T>() {
    using Acc = typename scan_acc<T>::type;
    if constexpr (std::is_integral_v<T>) scan<T, Acc>(b, out, Acc(0), [](Acc a, Acc x) { return wrapping(a, x, false); });
    else scan<T, Acc>(b, out, Acc(0), [](Acc a, Acc x) { return a + x; });
  });
}

void cumprod_kernel(const DimBlocks& b, const Tensor& out) {
  dispatch_types<kIntegral | kFloating | kReducedFloat | kComplex>(out.scalar_type(), "cumprod_out_cpu", [&]<typename T>() {
    using Acc = typename scan_acc<T>::type;
    if constexpr (std::is_integral_v<T>) scan<T, Acc>(b, out, Acc(1), [](Acc a, Acc x) { return wrapping(a, x, true); });
    else scan<T, Acc>(b, out, Acc(1), [](Acc a, Acc x) { return a * x; });
  });
}

// log(e^a + e^b) without overflow; -inf is its identity, a NaN stays.
template <typename A>
A log_add_exp(A a, A b) {
  if (a != a || b != b) return std::numeric_limits<A>::quiet_NaN();
  const A hi = std::max(a, b), lo = std::min(a, b);
  if (std::isinf(hi)) return hi;  // +inf absorbs; -inf with -inf stays -inf
  return hi + std::log1p(std::exp(lo - hi));
}

void logcumsumexp_kernel(const DimBlocks& b, const Tensor& out) {
  dispatch_types<kFloating | kReducedFloat>(out.scalar_type(), "logcumsumexp_out_cpu", [&]<typename T>() {
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, typename scan_acc<T>::type>;
    scan<T, Acc>(b, out, -std::numeric_limits<Acc>::infinity(), [](Acc a, Acc x) { return log_add_exp(a, x); });
  });
}

// ---- cummax / cummin: a new value is taken when it ties or beats the running one (the
// last index wins), or when it is a NaN (a NaN then stays, but a later NaN moves the index).

template <bool Max>
void cum_extremum_kernel(const DimBlocks& b, const Tensor& values_t, const Tensor& indices_t) {
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(
      b.data.scalar_type(), Max ? "cummax_cpu" : "cummin_cpu", [&]<typename T>() {
        using O = opmath_t<T>;
        const T* x = b.data.data_ptr<T>();
        T* values = values_t.data_ptr<T>();
        int64_t* indices = indices_t.data_ptr<int64_t>();
        for_line_blocks(b, [&](int64_t o, int64_t j0, int64_t width) {
          // (std::unique_ptr, not std::vector: O may be bool.)
          std::unique_ptr<O[]> best(new O[static_cast<size_t>(width)]());
          std::vector<int64_t> where(static_cast<size_t>(width), 0);
          const int64_t base = o * b.n * b.inner + j0;
          for (int64_t k = 0; k < b.n; ++k) {
            const int64_t at = base + k * b.inner;
            for (int64_t j = 0; j < width; ++j) {
              const O v = static_cast<O>(x[at + j]);
              O& cur = best[j];
              bool take = k == 0;
              if constexpr (std::is_floating_point_v<O>) take = take || v != v || (cur == cur && (Max ? v >= cur : v <= cur));
              else take = take || (Max ? v >= cur : v <= cur);
              if (take) {
                cur = v;
                where[static_cast<size_t>(j)] = k;
              }
              values[at + j] = static_cast<T>(cur);
              indices[at + j] = where[static_cast<size_t>(j)];
            }
          }
        });
      });
}

void cummax_kernel(const DimBlocks& b, const Tensor& v, const Tensor& i) { cum_extremum_kernel<true>(b, v, i); }
void cummin_kernel(const DimBlocks& b, const Tensor& v, const Tensor& i) { cum_extremum_kernel<false>(b, v, i); }

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(cumsum_stub, &cumsum_kernel);
REGISTER_DISPATCH(cumprod_stub, &cumprod_kernel);
REGISTER_DISPATCH(logcumsumexp_stub, &logcumsumexp_kernel);
REGISTER_DISPATCH(cummax_stub, &cummax_kernel);
REGISTER_DISPATCH(cummin_stub, &cummin_kernel);

}  // namespace at::inline tessera::native
