// Reduction kernels, compiled once per ISA. A kernel folds the input into the accumulator
// view make_reduction built: a row along a reduced innermost dim is folded on its own
// first (sums pairwise, so a float32 sum of 16M elements keeps about log2(n) roundings),
// then combined with the accumulator. A reduction to one value splits its input into
// fixed chunks across threads and combines the chunks in order, so the result does not
// depend on the thread count.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/cpu/Loops.h>
#include <aten/native/cpu/MathScalar.h>
#include <aten/native/reduce/ReduceOps.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

constexpr int64_t kPairwiseLeaf = 1024;   // elements summed straight before splitting in two
constexpr int64_t kChunk = 1 << 18;       // elements per task of a reduction to one value

// Runs the reduction: row(const char* in, n, stride_bytes) folds one row; combine folds a
// row's result, or a chunk's, into an accumulator; fold folds one input element into an
// accumulator; vec_fold, when given, does that for a vector of accumulators at once (rows
// of contiguous accumulators: column sums). For most reductions fold is combine; a sum of
// squares folds x as acc + x * x but combines partial sums as a + b.
template <typename T, typename Row, typename Combine, typename Fold, typename VecFold = std::nullptr_t>
void run_folding(TensorIterator& iter, Row row, Combine combine, Fold fold, VecFold vec_fold = nullptr) {
  auto loop_into = [&](T* fixed) {
    return [&, fixed](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
      for (int64_t j = 0; j < n1; ++j) {
        char* out = data[0] + j * strides[2];
        const char* in = data[1] + j * strides[3];
        if (fixed || strides[0] == 0) {
          T* acc = fixed ? fixed : reinterpret_cast<T*>(out);
          *acc = combine(*acc, row(in, n0, strides[1]));
        } else {
          int64_t i = 0;
          if constexpr (!std::is_same_v<VecFold, std::nullptr_t>) {
            if (strides[0] == static_cast<int64_t>(sizeof(T)) && strides[1] == static_cast<int64_t>(sizeof(T))) {
              using V = Vectorized<T>;
              T* acc = reinterpret_cast<T*>(out);
              const T* x = reinterpret_cast<const T*>(in);
              for (; i + V::size() <= n0; i += V::size()) {
                vec_fold(V::loadu(acc + i), V::loadu(x + i)).store(acc + i);
              }
            }
          }
          for (; i < n0; ++i) {
            T* acc = reinterpret_cast<T*>(out + i * strides[0]);
            *acc = fold(*acc, *reinterpret_cast<const T*>(in + i * strides[1]));
          }
        }
      }
    };
  };
  const int64_t n = iter.numel();
  if (n <= kChunk) {
    iter.serial_for_each(loop_into(nullptr), 0, n);
    return;
  }
  if (!iter.is_scalar(0)) {
    // Threads split the kept (not reduced) outputs, so each accumulator is folded by one
    // thread in the same order at any thread count.
    const IntArrayRef shape = iter.shape(), out = iter.strides(0), in = iter.strides(1);
    const int64_t nd = static_cast<int64_t>(shape.size());
    if (out[static_cast<size_t>(nd - 1)] != 0) {
      // The outermost dim is kept: whole slices of it per task.
      const int64_t outer = shape[static_cast<size_t>(nd - 1)], inner = n / outer;
      at::parallel_for(0, outer, std::max<int64_t>(1, kChunk / std::max<int64_t>(inner, 1)),
                       [&](int64_t b, int64_t e) { iter.serial_for_each(loop_into(nullptr), b * inner, e * inner); });
    } else if (nd == 2 && out[0] != 0) {
      // Columns (the innermost dim kept, the outer one reduced): blocks of columns per task.
      const int64_t cols = shape[0], rows = shape[1];
      at::parallel_for(0, cols, std::max<int64_t>(1, kChunk / rows), [&](int64_t b, int64_t e) {
        char* data[2] = {static_cast<char*>(iter.data_ptr(0)) + b * out[0],
                         static_cast<char*>(iter.data_ptr(1)) + b * in[0]};
        const int64_t strides[4] = {out[0], in[0], out[1], in[1]};
        loop_into(nullptr)(data, strides, e - b, rows);
      });
    } else {
      iter.serial_for_each(loop_into(nullptr), 0, n);
    }
    return;
  }
  T* out = reinterpret_cast<T*>(iter.data_ptr(0));
  const T init = *out;  // the identity the caller filled in
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<T> partial(static_cast<size_t>(chunks), init);
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      T acc = init;
      iter.serial_for_each(loop_into(&acc), c * kChunk, std::min(n, (c + 1) * kChunk));
      partial[static_cast<size_t>(c)] = acc;
    }
  });
  T total = init;
  for (const T& p : partial) total = combine(total, p);
  *out = total;
}

template <typename T, typename Row, typename Combine, typename VecCombine = std::nullptr_t>
void run(TensorIterator& iter, Row row, Combine combine, VecCombine vec_combine = nullptr) {
  run_folding<T>(iter, row, combine, combine, vec_combine);
}

template <typename T>
T element(const char* p, int64_t i, int64_t stride) {
  return *reinterpret_cast<const T*>(p + i * stride);
}

// ---- sums

template <typename T, bool SkipNan>
T load_for_sum(const char* p, int64_t i, int64_t stride) {
  T x = element<T>(p, i, stride);
  if constexpr (SkipNan) return x != x ? T(0) : x;
  return x;
}

template <typename T, bool SkipNan>
T pairwise_sum(const char* p, int64_t n, int64_t stride) {
  if (n > kPairwiseLeaf) {
    const int64_t half = (n / 2 + 31) / 32 * 32;
    return pairwise_sum<T, SkipNan>(p, half, stride) + pairwise_sum<T, SkipNan>(p + half * stride, n - half, stride);
  }
  if constexpr (!SkipNan && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    if (stride == static_cast<int64_t>(sizeof(T))) {
      using V = Vectorized<T>;
      constexpr int64_t w = V::size();
      V a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
      const T* x = reinterpret_cast<const T*>(p);
      int64_t i = 0;
      for (; i + 4 * w <= n; i += 4 * w) {
        a0 = a0 + V::loadu(x + i);
        a1 = a1 + V::loadu(x + i + w);
        a2 = a2 + V::loadu(x + i + 2 * w);
        a3 = a3 + V::loadu(x + i + 3 * w);
      }
      T lanes[w];
      ((a0 + a1) + (a2 + a3)).store(lanes);
      T r = T(0);
      for (int64_t k = 0; k < w; ++k) r += lanes[k];
      for (; i < n; ++i) r += x[i];
      return r;
    }
  }
  T r0 = T(0), r1 = T(0), r2 = T(0), r3 = T(0);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    r0 += load_for_sum<T, SkipNan>(p, i, stride);
    r1 += load_for_sum<T, SkipNan>(p, i + 1, stride);
    r2 += load_for_sum<T, SkipNan>(p, i + 2, stride);
    r3 += load_for_sum<T, SkipNan>(p, i + 3, stride);
  }
  for (; i < n; ++i) r0 += load_for_sum<T, SkipNan>(p, i, stride);
  return (r0 + r1) + (r2 + r3);
}

// Integer sums wrap as torch's do (C++ signed overflow is undefined).
template <typename T>
T wrapping_add(T a, T b) {
  using U = wrapping_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T wrapping_mul(T a, T b) {
  using U = wrapping_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

template <bool SkipNan>
void sum_kernel_impl(TensorIterator& iter) {
  dispatch_types<kIntegral | kFloating | kComplex>(iter.dtype(0), "sum_cpu", [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      run<T>(
          iter,
          [](const char* p, int64_t n, int64_t stride) {
            T r = 0;
            for (int64_t i = 0; i < n; ++i) r = wrapping_add(r, element<T>(p, i, stride));
            return r;
          },
          [](T a, T b) { return wrapping_add(a, b); });
    } else if constexpr (is_complex_v<T>) {
      run<T>(iter, [](const char* p, int64_t n, int64_t stride) { return pairwise_sum<T, false>(p, n, stride); },
             [](T a, T b) { return a + b; });
    } else if constexpr (SkipNan) {
      run<T>(iter, [](const char* p, int64_t n, int64_t stride) { return pairwise_sum<T, true>(p, n, stride); },
             [](T a, T b) { return b != b ? a : a + b; });
    } else {
      run<T>(iter, [](const char* p, int64_t n, int64_t stride) { return pairwise_sum<T, false>(p, n, stride); },
             [](T a, T b) { return a + b; },
             [](const Vectorized<T>& a, const Vectorized<T>& b) { return a + b; });
    }
  });
}
void sum_kernel(TensorIterator& iter) { sum_kernel_impl<false>(iter); }

// Sum of squares (the 2-norm's radicand) in one pass over float or double input, split
// pairwise as sums are; a contiguous row takes four vector FMA chains.
template <typename T>
T pairwise_sum_of_squares(const char* p, int64_t n, int64_t stride) {
  if (n > kPairwiseLeaf) {
    const int64_t half = (n / 2 + 31) / 32 * 32;
    return pairwise_sum_of_squares<T>(p, half, stride) + pairwise_sum_of_squares<T>(p + half * stride, n - half, stride);
  }
  T r = T(0);
  int64_t i = 0;
  if (stride == static_cast<int64_t>(sizeof(T))) {
    using V = Vectorized<T>;
    constexpr int64_t w = V::size();
    V a0(T(0)), a1(T(0)), a2(T(0)), a3(T(0));
    const T* x = reinterpret_cast<const T*>(p);
    for (; i + 4 * w <= n; i += 4 * w) {
      const V x0 = V::loadu(x + i), x1 = V::loadu(x + i + w), x2 = V::loadu(x + i + 2 * w), x3 = V::loadu(x + i + 3 * w);
      a0 = vec::fmadd(x0, x0, a0);
      a1 = vec::fmadd(x1, x1, a1);
      a2 = vec::fmadd(x2, x2, a2);
      a3 = vec::fmadd(x3, x3, a3);
    }
    T lanes[w];
    ((a0 + a1) + (a2 + a3)).store(lanes);
    for (int64_t k = 0; k < w; ++k) r += lanes[k];
  }
  for (; i < n; ++i) {
    const T x = element<T>(p, i, stride);
    r += x * x;
  }
  return r;
}

void sum_of_squares_kernel(TensorIterator& iter) {
  dispatch_types<kFloating>(iter.dtype(0), "sum_of_squares_cpu", [&]<typename T>() {
    run_folding<T>(
        iter, [](const char* p, int64_t n, int64_t stride) { return pairwise_sum_of_squares<T>(p, n, stride); },
        [](T a, T b) { return a + b; }, [](T a, T x) { return a + x * x; },
        [](const Vectorized<T>& a, const Vectorized<T>& x) { return vec::fmadd(x, x, a); });
  });
}
void nansum_kernel(TensorIterator& iter) { sum_kernel_impl<true>(iter); }

void prod_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kFloating | kComplex>(iter.dtype(0), "prod_cpu", [&]<typename T>() {
    auto mul = [](T a, T b) {
      if constexpr (std::is_integral_v<T>) return wrapping_mul(a, b);
      else return a * b;
    };
    run<T>(
        iter,
        [mul](const char* p, int64_t n, int64_t stride) {
          T r = T(1);
          for (int64_t i = 0; i < n; ++i) r = mul(r, element<T>(p, i, stride));
          return r;
        },
        mul);
  });
}

// ---- extrema: a NaN anywhere makes the result NaN.

template <bool Max>
void extremum_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(iter.dtype(0), Max ? "amax" : "amin",
                                                                     [&]<typename T>() {
    using O = opmath_t<T>;
    auto pick = [](T a, T b) -> T {
      const O x = O(a), y = O(b);
      if constexpr (!std::is_integral_v<O>) {
        if (x != x) return a;
        if (y != y) return b;
      }
      return (Max ? y > x : y < x) ? b : a;
    };
    run<T>(
        iter,
        [pick](const char* p, int64_t n, int64_t stride) {
          T r = element<T>(p, 0, stride);
          for (int64_t i = 1; i < n; ++i) r = pick(r, element<T>(p, i, stride));
          return r;
        },
        pick);
  });
}
void amax_kernel(TensorIterator& iter) { extremum_kernel<true>(iter); }
void amin_kernel(TensorIterator& iter) { extremum_kernel<false>(iter); }

// ---- any / all over Bool

template <bool Any>
void logical_kernel(TensorIterator& iter) {
  auto combine = [](bool a, bool b) { return Any ? (a || b) : (a && b); };
  run<bool>(
      iter,
      [](const char* p, int64_t n, int64_t stride) {
        for (int64_t i = 0; i < n; ++i) {
          if (element<bool>(p, i, stride) == Any) return Any;
        }
        return !Any;
      },
      combine);
}
void or_kernel(TensorIterator& iter) { logical_kernel<true>(iter); }
void and_kernel(TensorIterator& iter) { logical_kernel<false>(iter); }

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(sum_stub, &sum_kernel);
REGISTER_DISPATCH(nansum_stub, &nansum_kernel);
REGISTER_DISPATCH(sum_of_squares_stub, &sum_of_squares_kernel);
REGISTER_DISPATCH(prod_stub, &prod_kernel);
REGISTER_DISPATCH(amax_stub, &amax_kernel);
REGISTER_DISPATCH(amin_stub, &amin_kernel);
REGISTER_DISPATCH(or_stub, &or_kernel);
REGISTER_DISPATCH(and_stub, &and_kernel);

}  // namespace at::inline tessera::native
