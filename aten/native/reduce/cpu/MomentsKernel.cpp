// Variance and mean per line (var_mean_stub), compiled once per ISA. Each line is cut into
// cache-sized pieces; a piece is read twice (its mean, then the squared deviations from
// it), which keeps full float precision where a one-pass sum of squares would cancel, and
// pieces are merged in order with Chan et al.'s update. Statistics accumulate in double
// (complex<double>), as torch's CPU variance does, so the piece layout fixes the result
// whatever the thread count.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/cpu/vec/vec.h>
#include <aten/native/reduce/ReduceOps.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;
using vec::detail::is_complex_v;

constexpr int64_t kPiece = 16384;  // elements of one line read twice while in L2
constexpr int64_t kLeaf = 1024;    // elements summed in vector lanes before joining the line total
constexpr int64_t kLanes = 256;    // columns handled together when lines run across memory

template <typename T>
struct real_of {
  using type = T;
};
template <typename T>
struct real_of<c10::complex<T>> {
  using type = T;
};

template <typename T>
using acc_of = std::conditional_t<is_complex_v<T>, c10::complex<double>, double>;

template <typename A>
double norm2(A d) {
  if constexpr (is_complex_v<A>) return d.real() * d.real() + d.imag() * d.imag();
  else return d * d;
}

// Count, mean and sum of squared deviations of a set of elements.
template <typename A>
struct Stats {
  double n = 0;
  A mean = A(0);
  double m2 = 0;

  void merge(const Stats& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    const double total = n + o.n;
    const A delta = o.mean - mean;
    mean = mean + delta * (o.n / total);
    m2 += o.m2 + norm2(delta) * (n * o.n / total);
    n = total;
  }
};

// Four lanes of x from x[0], widened to double. float sums and squares are taken in
// double, as torch's do: a float square overflows above |x - mean| ~ 1.8e19, and a float
// sum above 3.4e38, where torch's var and std stay finite.
template <typename T>
Vectorized<double> load_as_double(const T* x) {
  if constexpr (std::is_same_v<T, double>) {
    return Vectorized<double>::loadu(x);
  } else {
#if defined(CPU_CAPABILITY_AVX2)
    return _mm256_cvtps_pd(_mm_loadu_ps(x));
#else
    double d[Vectorized<double>::size()];
    for (int64_t k = 0; k < Vectorized<double>::size(); ++k) d[k] = static_cast<double>(x[k]);
    return Vectorized<double>::loadu(d);
#endif
  }
}

// Sum of x[0..len) (Square: of |x - mu|^2), in double vector lanes per leaf, leaves summed
// in order.
template <bool Square, typename T>
double leaf_sums(const T* x, int64_t len, double mu) {
  using V = Vectorized<double>;
  constexpr int64_t w = V::size();
  const V m(mu);
  double total = 0;
  for (int64_t start = 0; start < len; start += kLeaf) {
    const int64_t end = std::min(len, start + kLeaf);
    int64_t i = start;
    V a0(0.0), a1(0.0);
    for (; i + 2 * w <= end; i += 2 * w) {
      V v0 = load_as_double(x + i), v1 = load_as_double(x + i + w);
      if constexpr (Square) {
        v0 = v0 - m;
        v1 = v1 - m;
        v0 = v0 * v0;
        v1 = v1 * v1;
      }
      a0 = a0 + v0;
      a1 = a1 + v1;
    }
    double lanes[w];
    (a0 + a1).store(lanes);
    double part = 0;
    for (int64_t k = 0; k < w; ++k) part += lanes[k];
    for (; i < end; ++i) {
      const double d = Square ? static_cast<double>(x[i]) - mu : static_cast<double>(x[i]);
      part += Square ? d * d : d;
    }
    total += part;
  }
  return total;
}

// Statistics of a contiguous piece.
template <typename T>
Stats<acc_of<T>> piece_stats(const T* x, int64_t len) {
  using A = acc_of<T>;
  Stats<A> s;
  s.n = static_cast<double>(len);
  if (len == 0) return s;
  if constexpr (is_complex_v<T>) {
    A sum(0);
    for (int64_t i = 0; i < len; ++i) sum += A(x[i]);
    s.mean = sum / s.n;
    for (int64_t i = 0; i < len; ++i) s.m2 += norm2(A(x[i]) - s.mean);
  } else {
    s.mean = leaf_sums<false>(x, len, 0.0) / s.n;
    s.m2 = leaf_sums<true>(x, len, s.mean);
  }
  return s;
}

template <typename T>
Stats<acc_of<T>> row_stats(const T* x, int64_t n) {
  Stats<acc_of<T>> s;
  for (int64_t p = 0; p < n; p += kPiece) s.merge(piece_stats(x + p, std::min(kPiece, n - p)));
  return s;
}

template <typename T, typename R>
void store(const Stats<acc_of<T>>& s, double correction, bool take_sqrt, R* var, T* mean) {
  const double divisor = std::max(s.n - correction, 0.0);
  // The root is taken in double: a float variance above 3.4e38 is inf, its root need not be.
  const double v = s.m2 / divisor;
  *var = static_cast<R>(take_sqrt ? std::sqrt(v) : v);
  if (s.n == 0) {
    *mean = T(std::numeric_limits<R>::quiet_NaN());
  } else {
    *mean = static_cast<T>(s.mean);
  }
}

// Lines along the middle of [outer, n, inner] with inner > 1: kLanes columns at a time,
// pieces of rows merged per column.
template <typename T, typename R>
void column_stats(const T* x, int64_t n, int64_t inner, int64_t j0, int64_t width, double correction,
                  bool take_sqrt, R* var, T* mean) {
  using A = acc_of<T>;
  std::vector<Stats<A>> total(static_cast<size_t>(width));
  std::vector<A> sum(static_cast<size_t>(width));
  std::vector<double> m2(static_cast<size_t>(width));
  const int64_t rows = std::max<int64_t>(1, kPiece / width);
  for (int64_t k0 = 0; k0 < n; k0 += rows) {
    const int64_t k1 = std::min(n, k0 + rows);
    std::fill(sum.begin(), sum.end(), A(0));
    std::fill(m2.begin(), m2.end(), 0.0);
    for (int64_t k = k0; k < k1; ++k) {
      const T* row = x + k * inner + j0;
      for (int64_t j = 0; j < width; ++j) sum[static_cast<size_t>(j)] += A(row[j]);
    }
    const double count = static_cast<double>(k1 - k0);
    for (int64_t j = 0; j < width; ++j) sum[static_cast<size_t>(j)] /= count;  // now the means
    for (int64_t k = k0; k < k1; ++k) {
      const T* row = x + k * inner + j0;
      for (int64_t j = 0; j < width; ++j) m2[static_cast<size_t>(j)] += norm2(A(row[j]) - sum[static_cast<size_t>(j)]);
    }
    for (int64_t j = 0; j < width; ++j) {
      total[static_cast<size_t>(j)].merge(Stats<A>{count, sum[static_cast<size_t>(j)], m2[static_cast<size_t>(j)]});
    }
  }
  for (int64_t j = 0; j < width; ++j) {
    store<T, R>(total[static_cast<size_t>(j)], correction, take_sqrt, var + j, mean + j);
  }
}

void var_mean_kernel(const DimBlocks& b, double correction, bool take_sqrt, const Tensor& var_t,
                     const Tensor& mean_t) {
  dispatch_types<kFloating | kComplex>(b.data.scalar_type(), "var_mean_cpu", [&]<typename T>() {
    using R = typename real_of<T>::type;
    using A = acc_of<T>;
    const T* x = b.data.data_ptr<T>();
    R* var = var_t.data_ptr<R>();
    T* mean = mean_t.data_ptr<T>();
    if (b.inner == 1 && b.outer == 1) {
      // One line: its pieces in parallel, merged in order.
      const int64_t pieces = std::max<int64_t>(1, (b.n + kPiece - 1) / kPiece);
      std::vector<Stats<A>> part(static_cast<size_t>(pieces));
      at::parallel_for(0, pieces, 4, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          part[static_cast<size_t>(p)] = piece_stats(x + p * kPiece, std::min(kPiece, b.n - p * kPiece));
        }
      });
      Stats<A> s;
      for (const auto& p : part) s.merge(p);
      store<T, R>(s, correction, take_sqrt, var, mean);
    } else if (b.inner == 1) {
      const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(b.n, 1));
      at::parallel_for(0, b.outer, grain, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          store<T, R>(row_stats(x + o * b.n, b.n), correction, take_sqrt, var + o, mean + o);
        }
      });
    } else {
      const int64_t blocks = (b.inner + kLanes - 1) / kLanes;
      const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(b.n * std::min(b.inner, kLanes), 1));
      at::parallel_for(0, b.outer * blocks, grain, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t o = t / blocks, j0 = (t % blocks) * kLanes;
          const int64_t width = std::min(kLanes, b.inner - j0);
          const int64_t at_out = o * b.inner + j0;
          column_stats<T, R>(x + o * b.n * b.inner, b.n, b.inner, j0, width, correction, take_sqrt,
                             var + at_out, mean + at_out);
        }
      });
    }
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(var_mean_stub, &var_mean_kernel);

}  // namespace at::inline tessera::native
