// Stockham passes of the complex FFT (spectral/FFTKernel.h), compiled once per ISA.
//
// A pass of radix p over n points with `span` points already combined: for block b and
// k < span, it reads x[j + r n/p] (j = b span + k, r < p), multiplies by the twiddles
// w_{span p}^{r k}, takes a p-point DFT and writes y[b span p + k + r span]. Passes run
// with span 1, p1, p1 p2, ...; the result comes out in natural order (self-sorting), so
// no bit reversal. Loads and stores are contiguous in k, the innermost loop.
#include <aten/cpu/vec/vec.h>
#include <aten/native/spectral/FFTKernel.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstring>

namespace at::inline tessera::native::fft {
inline namespace CPU_CAPABILITY {
namespace {

// A lane is what one "point" holds: a scalar (one line, (re, im) interleaved) or a
// Vectorized<T> (W lines side by side, W real parts then W imaginary parts), so the same
// passes run one line or W lines at once with the twiddles broadcast.
template <typename T>
struct ScalarLane {
  using S = T;
  using V = T;
  static constexpr int64_t W = 1;
  static V splat(T s) { return s; }
  static V loadv(const T* p) { return *p; }
  static void storev(T* p, V v) { *p = v; }
};
template <typename T>
struct VectorLane {
  using S = T;
  using V = vec::Vectorized<T>;
  static constexpr int64_t W = V::size();
  static V splat(T s) { return V(s); }
  static V loadv(const T* p) { return V::loadu(p); }
  static void storev(T* p, V v) { v.store(p); }
};

template <typename V>
struct Cx {
  V re, im;
};
template <typename L, typename T>
inline Cx<typename L::V> load(const T* p, int64_t i) {
  return {L::loadv(p + 2 * L::W * i), L::loadv(p + 2 * L::W * i + L::W)};
}
template <typename L, typename T>
inline void store(T* p, int64_t i, Cx<typename L::V> v) {
  L::storev(p + 2 * L::W * i, v.re);
  L::storev(p + 2 * L::W * i + L::W, v.im);
}
template <typename T>
inline Cx<T> load_root(const T* p, int64_t i) {
  return {p[2 * i], p[2 * i + 1]};
}
template <typename V>
inline Cx<V> operator+(Cx<V> a, Cx<V> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename V>
inline Cx<V> operator-(Cx<V> a, Cx<V> b) {
  return {a.re - b.re, a.im - b.im};
}
template <typename V>
inline Cx<V> scale(Cx<V> a, V s) {
  return {a.re * s, a.im * s};
}
// a times the table's w (forward) or conj(w) (backward); w's parts already broadcast.
template <bool Fwd, typename V>
inline Cx<V> twiddle(Cx<V> a, V wr, V wi) {
  if constexpr (Fwd) return {a.re * wr - a.im * wi, a.re * wi + a.im * wr};
  return {a.re * wr + a.im * wi, a.im * wr - a.re * wi};
}
// a times -i (forward) or +i (backward): the quarter turn of the transform's sign.
template <bool Fwd, typename V>
inline Cx<V> quarter(Cx<V> a) {
  if constexpr (Fwd) return {a.im, -a.re};
  return {-a.im, a.re};
}

template <bool Fwd, typename L>
inline void dft2(Cx<typename L::V>* v) {
  const auto a = v[0], b = v[1];
  v[0] = a + b;
  v[1] = a - b;
}
template <bool Fwd, typename L>
inline void dft4(Cx<typename L::V>* v) {
  const auto t0 = v[0] + v[2], t1 = v[0] - v[2], t2 = v[1] + v[3], t3 = quarter<Fwd>(v[1] - v[3]);
  v[0] = t0 + t2;
  v[2] = t0 - t2;
  v[1] = t1 + t3;
  v[3] = t1 - t3;
}
template <bool Fwd, typename L>
inline void dft3(Cx<typename L::V>* v) {
  using S = typename L::S;
  const auto c = L::splat(S(-0.5)), s = L::splat(S(0.86602540378443864676372317075293618));  // cos, sin(2 pi/3)
  const auto sum = v[1] + v[2];
  const auto u = v[0] + scale(sum, c);
  const auto w = quarter<Fwd>(scale(v[1] - v[2], s));
  v[0] = v[0] + sum;
  v[1] = u + w;
  v[2] = u - w;
}
template <bool Fwd, typename L>
inline void dft5(Cx<typename L::V>* v) {
  using S = typename L::S;
  // cos and sin of 2 pi / 5 and 4 pi / 5.
  const auto c1 = L::splat(S(0.30901699437494742410229341718281906));
  const auto s1 = L::splat(S(0.95105651629515357211643933337938214));
  const auto c2 = L::splat(S(-0.80901699437494742410229341718281906));
  const auto s2 = L::splat(S(0.58778525229247312916870595463907277));
  const auto a14 = v[1] + v[4], d14 = v[1] - v[4], a23 = v[2] + v[3], d23 = v[2] - v[3];
  const auto u1 = v[0] + scale(a14, c1) + scale(a23, c2);
  const auto u2 = v[0] + scale(a14, c2) + scale(a23, c1);
  const auto w1 = quarter<Fwd>(scale(d14, s1) + scale(d23, s2));
  const auto w2 = quarter<Fwd>(scale(d14, s2) - scale(d23, s1));
  v[0] = v[0] + a14 + a23;
  v[1] = u1 + w1;
  v[4] = u1 - w1;
  v[2] = u2 + w2;
  v[3] = u2 - w2;
}

template <int P, bool Fwd, bool Twiddled, typename L, typename T>
void fixed_pass(int64_t n, int64_t span, const T* tw, const T* in, T* out) {
  using V = typename L::V;
  const int64_t m = n / P, blocks = m / span;
  for (int64_t b = 0; b < blocks; ++b) {
    const T* src = in + 2 * L::W * b * span;
    T* dst = out + 2 * L::W * b * span * P;
    for (int64_t k = 0; k < span; ++k) {
      Cx<V> v[P];
      v[0] = load<L>(src, k);
      for (int r = 1; r < P; ++r) {
        v[r] = load<L>(src, k + r * m);
        if constexpr (Twiddled) {
          const Cx<T> w = load_root(tw, (r - 1) * span + k);
          v[r] = twiddle<Fwd>(v[r], L::splat(w.re), L::splat(w.im));
        }
      }
      if constexpr (P == 2) dft2<Fwd, L>(v);
      if constexpr (P == 3) dft3<Fwd, L>(v);
      if constexpr (P == 4) dft4<Fwd, L>(v);
      if constexpr (P == 5) dft5<Fwd, L>(v);
      for (int r = 0; r < P; ++r) store<L>(dst, k + r * span, v[r]);
    }
  }
}

template <int P, bool Fwd, typename L, typename T>
void fixed_pass(int64_t n, int64_t span, const T* tw, const T* in, T* out) {
  if (span == 1) {
    fixed_pass<P, Fwd, false, L>(n, span, tw, in, out);
  } else {
    fixed_pass<P, Fwd, true, L>(n, span, tw, in, out);
  }
}

// Any odd radix p <= kMaxDirectRadix: the DFT pairs inputs r and p - r, so each output
// pair (k, p - k) costs (p - 1) / 2 complex multiply-adds of each kind.
template <bool Fwd, typename L, typename T>
void generic_pass(int64_t p, int64_t n, int64_t span, const T* tw, const T* roots, const T* in, T* out) {
  using V = typename L::V;
  const int64_t m = n / p, blocks = m / span, half = (p - 1) / 2;
  Cx<V> v[kMaxDirectRadix], sums[kMaxDirectRadix], diffs[kMaxDirectRadix];
  for (int64_t b = 0; b < blocks; ++b) {
    const T* src = in + 2 * L::W * b * span;
    T* dst = out + 2 * L::W * b * span * p;
    for (int64_t k = 0; k < span; ++k) {
      v[0] = load<L>(src, k);
      for (int64_t r = 1; r < p; ++r) {
        v[r] = load<L>(src, k + r * m);
        if (span > 1) {
          const Cx<T> w = load_root(tw, (r - 1) * span + k);
          v[r] = twiddle<Fwd>(v[r], L::splat(w.re), L::splat(w.im));
        }
      }
      Cx<V> total = v[0];
      for (int64_t r = 1; r <= half; ++r) {
        sums[r] = v[r] + v[p - r];
        diffs[r] = v[r] - v[p - r];
        total = total + sums[r];
      }
      store<L>(dst, k, total);
      for (int64_t q = 1; q <= half; ++q) {
        // root^(r q) = cos + i sin with sin < 0 for the forward sign (the table's roots).
        Cx<V> even = v[0], odd{L::splat(T(0)), L::splat(T(0))};
        int64_t e = 0;
        for (int64_t r = 1; r <= half; ++r) {
          e += q;
          if (e >= p) e -= p;
          const Cx<T> w = load_root(roots, e);
          even = even + scale(sums[r], L::splat(w.re));
          odd = odd + scale(diffs[r], L::splat(Fwd ? w.im : -w.im));
        }
        const Cx<V> turn{-odd.im, odd.re};  // i * odd
        store<L>(dst, k + q * span, even + turn);
        store<L>(dst, k + (p - q) * span, even - turn);
      }
    }
  }
}

template <bool Fwd, typename L, typename T>
void one_pass(const FFTPass& pass, int64_t n, const T* table, const T* in, T* out) {
  const T* tw = table + 2 * pass.twiddle_offset;
  switch (pass.radix) {
    case 2: return fixed_pass<2, Fwd, L>(n, pass.span, tw, in, out);
    case 3: return fixed_pass<3, Fwd, L>(n, pass.span, tw, in, out);
    case 4: return fixed_pass<4, Fwd, L>(n, pass.span, tw, in, out);
    case 5: return fixed_pass<5, Fwd, L>(n, pass.span, tw, in, out);
    default: return generic_pass<Fwd, L>(pass.radix, n, pass.span, tw, table + 2 * pass.root_offset, in, out);
  }
}

template <typename L, typename T>
void run_passes(int64_t n, const FFTPass* passes, int64_t count, const T* table, const T* in, T* out, T* scratch,
                bool forward) {
  if (count == 0) {
    std::memmove(out, in, sizeof(T) * 2 * L::W * n);
    return;
  }
  // Pass i writes `out` when count - 1 - i is even, so the last one lands there.
  const T* src = in;
  for (int64_t i = 0; i < count; ++i) {
    T* dst = (count - 1 - i) % 2 == 0 ? out : scratch;
    if (forward) {
      one_pass<true, L>(passes[i], n, table, src, dst);
    } else {
      one_pass<false, L>(passes[i], n, table, src, dst);
    }
    src = dst;
  }
}

template <typename T>
void run_typed(bool lanes, int64_t n, const FFTPass* passes, int64_t count, const void* table, const void* in,
               void* out, void* scratch, bool forward) {
  const auto* t = static_cast<const T*>(table);
  const auto* i = static_cast<const T*>(in);
  auto* o = static_cast<T*>(out);
  auto* s = static_cast<T*>(scratch);
  if (lanes) {
    static_assert(VectorLane<T>::W == kBatchLanes<T>, "the batch layout is 32 bytes wide on every ISA");
    run_passes<VectorLane<T>>(n, passes, count, t, i, o, s, forward);
  } else {
    run_passes<ScalarLane<T>>(n, passes, count, t, i, o, s, forward);
  }
}

// The real transform's last step on Z = FFT_h(x_2j + i x_2j+1) (h points, lane layout):
// E_k = (Z_k + conj Z_{h-k}) / 2, O_k = (Z_k - conj Z_{h-k}) / 2i, X_k = E_k + w^k O_k;
// X_0 and X_h from Z_0 alone. emit(k, X_k) stores one output.
template <typename L, typename T, typename Emit>
void rfft_post(const T* z, int64_t h, const T* twiddles, Emit emit) {
  using V = typename L::V;
  const V half = L::splat(T(0.5)), zero = L::splat(T(0));
  const Cx<V> z0 = load<L>(z, 0);
  emit(0, Cx<V>{z0.re + z0.im, zero});
  emit(h, Cx<V>{z0.re - z0.im, zero});
  const auto one_side = [&](Cx<V> a, Cx<V> b, int64_t k) {  // X_k from a = Z_k, b = Z_{h-k}
    const Cx<V> even{(a.re + b.re) * half, (a.im - b.im) * half};
    const Cx<V> odd{(a.im + b.im) * half, (b.re - a.re) * half};
    const Cx<T> w = load_root(twiddles, k);
    return even + twiddle<true>(odd, L::splat(w.re), L::splat(w.im));
  };
  for (int64_t k = 1; k <= h / 2; ++k) {
    const Cx<V> zk = load<L>(z, k), zq = load<L>(z, h - k);
    emit(k, one_side(zk, zq, k));
    emit(h - k, one_side(zq, zk, h - k));
  }
}

// The inverse real transform's first step, from X_0..X_h (lane layout) to the packed
// half-length spectrum Z_k = (X_k + conj X_{h-k}) + i (X_k - conj X_{h-k}) conj(w^k), whose
// backward transform is n (x_2j + i x_2j+1). The imaginary parts of X_0 and X_h are
// ignored (the Hermitian extension has none).
template <typename L, typename T>
void irfft_pre(const T* x, int64_t h, const T* twiddles, T* packed) {
  using V = typename L::V;
  const Cx<V> x0 = load<L>(x, 0), xh = load<L>(x, h);
  store<L>(packed, 0, Cx<V>{x0.re + xh.re, x0.re - xh.re});
  for (int64_t k = 1; k < h; ++k) {
    const Cx<V> a = load<L>(x, k), b = load<L>(x, h - k);
    const Cx<V> sum{a.re + b.re, a.im - b.im};   // X_k + conj X_{h-k}
    const Cx<V> diff{a.re - b.re, a.im + b.im};  // X_k - conj X_{h-k}
    const Cx<T> w = load_root(twiddles, k);
    const Cx<V> turned = twiddle<false>(diff, L::splat(w.re), L::splat(w.im));
    store<L>(packed, k, Cx<V>{sum.re - turned.im, sum.im + turned.re});
  }
}

// Copies W lines of `points` complex values (line l, point j at src + 2 (l line_stride +
// j point_stride) reals) into the lane layout. The loop order follows the smaller stride.
template <int64_t W, typename T>
void to_lanes(const T* src, int64_t line_stride, int64_t point_stride, int64_t points, T* lanes) {
  if (point_stride == 1) {
    for (int64_t l = 0; l < W; ++l) {
      const T* line = src + 2 * l * line_stride;
      for (int64_t j = 0; j < points; ++j) {
        lanes[2 * W * j + l] = line[2 * j];
        lanes[2 * W * j + W + l] = line[2 * j + 1];
      }
    }
    return;
  }
  for (int64_t j = 0; j < points; ++j) {
    const T* point = src + 2 * j * point_stride;
    for (int64_t l = 0; l < W; ++l) {
      lanes[2 * W * j + l] = point[2 * l * line_stride];
      lanes[2 * W * j + W + l] = point[2 * l * line_stride + 1];
    }
  }
}

// The reverse of to_lanes; with `tw`, each value is first multiplied by the complex at its
// destination's offset in tw (conjugated for a backward transform).
template <int64_t W, typename T>
void from_lanes(const T* lanes, int64_t points, T* dst, int64_t line_stride, int64_t point_stride, const T* tw,
                bool forward) {
  const auto put = [&](int64_t l, int64_t j) {
    const int64_t at = 2 * (l * line_stride + j * point_stride);
    T re = lanes[2 * W * j + l], im = lanes[2 * W * j + W + l];
    if (tw) {
      const T wr = tw[at], wi = forward ? tw[at + 1] : -tw[at + 1];
      const T r = re * wr - im * wi;
      im = re * wi + im * wr;
      re = r;
    }
    dst[at] = re;
    dst[at + 1] = im;
  };
  if (point_stride == 1) {
    for (int64_t l = 0; l < W; ++l) {
      for (int64_t j = 0; j < points; ++j) put(l, j);
    }
  } else {
    for (int64_t j = 0; j < points; ++j) {
      for (int64_t l = 0; l < W; ++l) put(l, j);
    }
  }
}

// Strides count the line's own elements: complex for complex lines, real for real ones
// (a real line of 2h reals is read and written as h pairs).
template <typename T>
void fft_lines_typed(const LinesPlan& p, const LinesIO& io, int64_t lines, T* work) {
  using L = VectorLane<T>;
  using S = ScalarLane<T>;
  constexpr int64_t W = L::W;
  const int64_t n = p.n;
  const auto* table = static_cast<const T*>(p.table);
  const auto* twiddles = static_cast<const T*>(p.twiddles);
  const auto* in = static_cast<const T*>(io.in);
  auto* out = static_cast<T*>(io.out);
  const auto* post = static_cast<const T*>(io.post_twiddles);
  const int64_t in_stride = io.in_stride, out_stride = io.out_stride;
  const bool real_in = p.kind == LinesKind::r2c, real_out = p.kind == LinesKind::c2r;
  TORCH_INTERNAL_ASSERT(p.kind == LinesKind::c2c || (io.in_point_stride == 1 && io.out_point_stride == 1 && !post),
                        "fft lines: point strides and twiddles are for complex lines only");
  int64_t first = 0;
  if (lines >= W) {
    T* a = work;                        // lanes: the gathered input
    T* b = work + 2 * W * (n + 1);      // lanes: the passes' result
    T* c = work + 2 * W * (2 * n + 1);  // lanes: their ping-pong buffer; then the packed spectrum
    T* d = work + 2 * W * (3 * n + 1);
    for (; first + W <= lines; first += W) {
      const T* src = in + (real_in ? 1 : 2) * first * in_stride;
      T* dst = out + (real_out ? 1 : 2) * first * out_stride;
      switch (p.kind) {
        case LinesKind::c2c:
          to_lanes<W>(src, in_stride, io.in_point_stride, n, a);
          run_passes<L>(n, p.passes, p.count, table, a, b, c, p.forward);
          from_lanes<W>(b, n, dst, out_stride, io.out_point_stride, post ? post + 2 * first * out_stride : nullptr,
                        p.forward);
          break;
        case LinesKind::r2c:
          // real lines, read as n pairs each
          for (int64_t l = 0; l < W; ++l) {
            const T* line = src + l * in_stride;
            for (int64_t j = 0; j < n; ++j) {
              a[2 * W * j + l] = line[2 * j];
              a[2 * W * j + W + l] = line[2 * j + 1];
            }
          }
          run_passes<L>(n, p.passes, p.count, table, a, b, c, true);
          rfft_post<L>(b, n, twiddles, [&](int64_t k, Cx<typename L::V> x) {
            alignas(32) T re[W], im[W];
            x.re.store(re);
            x.im.store(im);
            for (int64_t l = 0; l < W; ++l) {
              dst[2 * (l * out_stride + k)] = re[l];
              dst[2 * (l * out_stride + k) + 1] = im[l];
            }
          });
          break;
        case LinesKind::c2r:
          to_lanes<W>(src, in_stride, 1, n + 1, a);
          irfft_pre<L>(a, n, twiddles, d);
          run_passes<L>(n, p.passes, p.count, table, d, b, c, false);
          for (int64_t l = 0; l < W; ++l) {
            T* line = dst + l * out_stride;
            for (int64_t j = 0; j < n; ++j) {
              line[2 * j] = b[2 * W * j + l];
              line[2 * j + 1] = b[2 * W * j + W + l];
            }
          }
          break;
      }
    }
  }
  // The lines left over, one at a time (a lone line is already in the one-lane layout).
  T* result = work;
  T* scratch = work + 2 * (n + 1);
  T* packed = work + 4 * (n + 1);
  for (; first < lines; ++first) {
    const T* src = in + (real_in ? 1 : 2) * first * in_stride;
    T* dst = out + (real_out ? 1 : 2) * first * out_stride;
    switch (p.kind) {
      case LinesKind::c2c:
        if (io.in_point_stride == 1 && io.out_point_stride == 1 && !post && src != dst) {
          run_passes<S>(n, p.passes, p.count, table, src, dst, scratch, p.forward);
        } else {
          // strided, in place or twiddled: through the work buffer as one lane
          to_lanes<1>(src, 0, io.in_point_stride, n, packed);
          run_passes<S>(n, p.passes, p.count, table, packed, result, scratch, p.forward);
          from_lanes<1>(result, n, dst, 0, io.out_point_stride, post ? post + 2 * first * out_stride : nullptr,
                        p.forward);
        }
        break;
      case LinesKind::r2c:
        run_passes<S>(n, p.passes, p.count, table, src, result, scratch, true);
        rfft_post<S>(result, n, twiddles, [&](int64_t k, Cx<T> x) {
          dst[2 * k] = x.re;
          dst[2 * k + 1] = x.im;
        });
        break;
      case LinesKind::c2r:
        irfft_pre<S>(src, n, twiddles, packed);
        run_passes<S>(n, p.passes, p.count, table, packed, dst, scratch, false);
        break;
    }
  }
}

void fft_lines_kernel(bool is_double, const LinesPlan& plan, const LinesIO& io, int64_t lines, void* work) {
  if (is_double) {
    fft_lines_typed(plan, io, lines, static_cast<double*>(work));
  } else {
    fft_lines_typed(plan, io, lines, static_cast<float*>(work));
  }
}

void fft_passes_kernel(bool is_double, bool lanes, int64_t n, const FFTPass* passes, int64_t count,
                       const void* table, const void* in, void* out, void* scratch, bool forward) {
  if (is_double) {
    run_typed<double>(lanes, n, passes, count, table, in, out, scratch, forward);
  } else {
    run_typed<float>(lanes, n, passes, count, table, in, out, scratch, forward);
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(fft_passes_stub, &fft_passes_kernel);
REGISTER_DISPATCH(fft_lines_stub, &fft_lines_kernel);

}  // namespace at::inline tessera::native::fft
