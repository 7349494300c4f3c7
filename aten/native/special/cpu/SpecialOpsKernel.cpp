// Kernels of torch.special's own operators, compiled once per ISA (see
// aten/native/DispatchStub.h). Every function is evaluated in double by
// special/SpecialFunctions.h and rounded to the tensor's dtype, so Half and BFloat16 come
// at no cost (torch 1.13 refuses some of them); complex is refused with torch's
// "<op>_cpu" not-implemented error. The common ones on float32 (ndtr, log_ndtr, erfcx,
// entr) have float formulas written once for a float and a Vectorized<float>, so full
// vectors run them on AVX2 lanes and the rest of a row gets the same arithmetic.
#include <aten/native/DispatchStubs.h>
#include <aten/native/cpu/Loops.h>
#include <aten/native/cpu/MathScalar.h>
#include <aten/native/special/SpecialFunctions.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

constexpr unsigned kFloatTypes = kFloating | kReducedFloat;

template <unsigned Set, typename F>
void unary_in_double(TensorIterator& iter, const char* name, F f) {
  dispatch_types<Set>(iter.common_dtype(), name, [&]<typename T>() {
    cpu_kernel(iter, [f](T x) -> T { return static_cast<T>(f(static_cast<double>(x))); });
  });
}
template <unsigned Set, typename F>
void binary_in_double(TensorIterator& iter, const char* name, F f) {
  dispatch_types<Set>(iter.common_dtype(), name, [&]<typename T>() {
    cpu_kernel(iter, [f](T a, T b) -> T { return static_cast<T>(f(static_cast<double>(a), static_cast<double>(b))); });
  });
}

// ---- float32 formulas, for a float or a Vectorized<float> (V)

inline float vexp(float x) { return std::exp(x); }
inline Vectorized<float> vexp(const Vectorized<float>& x) { return x.exp(); }
inline float vlog(float x) { return std::log(x); }
inline Vectorized<float> vlog(const Vectorized<float>& x) { return x.log(); }
inline float vabs(float x) { return std::fabs(x); }
inline Vectorized<float> vabs(const Vectorized<float>& x) { return x.abs(); }
inline float vfma(float a, float b, float c) { return std::fma(a, b, c); }
inline Vectorized<float> vfma(const Vectorized<float>& a, const Vectorized<float>& b, const Vectorized<float>& c) {
  return vec::fmadd(a, b, c);
}
// a where the mask is set, else b; min/max are the NaN-propagating ones the vector lanes use
inline float vselect(bool m, float a, float b) { return m ? a : b; }
inline Vectorized<float> vselect(const Vectorized<float>& m, const Vectorized<float>& a, const Vectorized<float>& b) {
  return Vectorized<float>::blendv(b, a, m);
}
inline float vmin(float a, float b) { return vec::detail::minimum(a, b); }
inline Vectorized<float> vmin(const Vectorized<float>& a, const Vectorized<float>& b) { return vec::minimum(a, b); }
inline float vmax(float a, float b) { return vec::detail::maximum(a, b); }
inline Vectorized<float> vmax(const Vectorized<float>& a, const Vectorized<float>& b) { return vec::maximum(a, b); }

// log(erfcx(x) / t) as a polynomial in t = 2 / (2 + x), x >= 0: fitted for Tessera by least
// squares on Chebyshev nodes of t in (0, 1]; evaluated in float it gives erfcx to 4e-7
// relative over the whole half-line.
constexpr float kLogErfcxFit[10] = {-1.265512228012085f, 1.0000237226486206f, 0.37409159541130066f,
                                    0.09678704291582108f, -0.1863001435995102f, 0.278898149728775f,
                                    -1.1352492570877075f, 1.4885562658309937f, -0.8221719264984131f,
                                    0.17087683081626892f};
template <typename V>
V log_erfcx_fit(const V& t) {
  V p(kLogErfcxFit[9]);
  for (int i = 8; i >= 0; --i) p = vfma(p, t, V(kLogErfcxFit[i]));
  return p;
}
constexpr float kSqrtHalf = 0.70710678118654752f;

// The upper tail of the standard normal distribution at |x|, erfc(|x| / sqrt 2) / 2, as
// erfcx(|x| / sqrt 2) e^(-x^2 / 2) / 2 with x^2 split exactly (hi + lo): the exponent keeps
// float's relative precision far into the tail, where a rounded x / sqrt 2 would cost 1e-5.
// Past 14.5 the tail is below float's subnormals anyway.
template <typename V>
V upper_tail(const V& x) {
  const V ax = vmin(vabs(x), V(14.5f));
  const V t = V(2.0f) / (V(2.0f) + ax * V(kSqrtHalf));
  const V hi = ax * ax, lo = vfma(ax, ax, -hi);
  return V(0.5f) * t * vexp(log_erfcx_fit(t)) * vexp(V(-0.5f) * hi) * (V(1.0f) - V(0.5f) * lo);
}
template <typename V>
V ndtr_float(const V& x) {
  const V q = upper_tail(x);
  return vselect(x < V(0.0f), q, V(1.0f) - q);
}
// Below -1: log(erfcx(z) / 2) - x^2 / 2 with z = -x / sqrt 2 (no exp, nothing underflows);
// above: log1p(-tail) for the upper tail past x, log1p written as log(u) - ((u - 1) - y) / u.
template <typename V>
V log_ndtr_float(const V& x) {
  const V t = V(2.0f) / (V(2.0f) + vmax(-x * V(kSqrtHalf), V(0.0f)));
  const V lower = vlog(V(0.5f) * t) + log_erfcx_fit(t) - V(0.5f) * x * x;
  const V q = upper_tail(x);
  const V tail = vselect(x < V(0.0f), V(1.0f) - q, q);
  const V u = V(1.0f) - tail;
  const V upper = vlog(u) - ((u - V(1.0f)) + tail) / u;
  return vselect(x < V(-1.0f), lower, upper);
}
// x >= 0 from the fit; below, 2 e^(x^2) - erfcx(-x) with e^(x^2) from the split square
// (x held at -10, where the result has long overflowed, so the split stays finite).
template <typename V>
V erfcx_float(const V& x) {
  const V a = vabs(x);
  const V t = V(2.0f) / (V(2.0f) + a);
  const V positive = t * vexp(log_erfcx_fit(t));
  const V xn = vmax(x, V(-10.0f));
  const V hi = xn * xn, lo = vfma(xn, xn, -hi);
  const V negative = V(2.0f) * vexp(hi) * (V(1.0f) + lo) - positive;
  return vselect(x < V(0.0f), negative, positive);
}
template <typename V>
V entr_float(const V& x) {
  const V r = -x * vlog(x);
  return vselect(x < V(0.0f), V(-std::numeric_limits<float>::infinity()), vselect(x == V(0.0f), V(0.0f), r));
}

// float32 through the formula f (on vectors where rows allow), every other type in double.
template <typename DoubleFn, typename FloatFn>
void unary_with_float_formula(TensorIterator& iter, const char* name, DoubleFn f, FloatFn g) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), name, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float>) {
      cpu_kernel_vec(iter, [g](float x) -> float { return g(x); },
                     [g](Vectorized<float> x) -> Vectorized<float> { return g(x); });
    } else {
      cpu_kernel(iter, [f](T x) -> T { return static_cast<T>(f(static_cast<double>(x))); });
    }
  });
}

// The series-summed functions: f(x, tolerance) stops its sums at double's precision for
// double and at 1e-9 for the narrower types.
template <typename F>
void unary_in_double_to_tolerance(TensorIterator& iter, const char* name, F f) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), name, [&]<typename T>() {
    constexpr double tolerance = std::is_same_v<T, double> ? special::kDoubleTolerance : 1e-9;
    cpu_kernel(iter, [f](T x) -> T { return static_cast<T>(f(static_cast<double>(x), tolerance)); });
  });
}

// -x log x, 0 at 0 and -inf below.
double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -std::numeric_limits<double>::infinity();
}

void special_entr_kernel(TensorIterator& iter) {
  unary_with_float_formula(iter, "entr_cpu", entr, [](auto x) { return entr_float(x); });
}
// (one Halley step leaves 3e-12, plenty for the narrower types; double takes two)
void special_ndtri_kernel(TensorIterator& iter) {
  unary_in_double_to_tolerance(iter, "ndtri_cpu", [](double p, double tolerance) {
    return special::ndtri(p, tolerance < 1e-12 ? 2 : 1);
  });
}
void special_log_ndtr_kernel(TensorIterator& iter) {
  unary_with_float_formula(iter, "log_ndtr_cpu", special::log_ndtr, [](auto x) { return log_ndtr_float(x); });
}
void special_ndtr_kernel(TensorIterator& iter) {
  unary_with_float_formula(iter, "ndtr_cpu", special::ndtr, [](auto x) { return ndtr_float(x); });
}
void special_erfcx_kernel(TensorIterator& iter) {
  unary_with_float_formula(iter, "erfcx_cpu", special::erfcx, [](auto x) { return erfcx_float(x); });
}
void i0_kernel(TensorIterator& iter) {
  unary_in_double_to_tolerance(iter, "i0_cpu",
                               [](double x, double tolerance) { return special::bessel_i(0, x, tolerance); });
}
void special_i0e_kernel(TensorIterator& iter) {
  unary_in_double_to_tolerance(iter, "i0e_cpu",
                               [](double x, double tolerance) { return special::bessel_i_scaled(0, x, tolerance); });
}
void special_i1_kernel(TensorIterator& iter) {
  unary_in_double_to_tolerance(iter, "i1_cpu",
                               [](double x, double tolerance) { return special::bessel_i(1, x, tolerance); });
}
void special_i1e_kernel(TensorIterator& iter) {
  unary_in_double_to_tolerance(iter, "i1e_cpu",
                               [](double x, double tolerance) { return special::bessel_i_scaled(1, x, tolerance); });
}
void special_bessel_j0_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "bessel_j0_cpu", special::bessel_j0);
}
void special_bessel_j1_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "bessel_j1_cpu", special::bessel_j1);
}
void special_bessel_y0_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "bessel_y0_cpu", [](double x) { return special::bessel_y(0, x); });
}
void special_bessel_y1_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "bessel_y1_cpu", [](double x) { return special::bessel_y(1, x); });
}
void special_modified_bessel_i0_kernel(TensorIterator& iter) {
  unary_in_double_to_tolerance(iter, "modified_bessel_i0_cpu",
                               [](double x, double tolerance) { return special::bessel_i(0, x, tolerance); });
}
void special_modified_bessel_i1_kernel(TensorIterator& iter) {
  unary_in_double_to_tolerance(iter, "modified_bessel_i1_cpu",
                               [](double x, double tolerance) { return special::bessel_i(1, x, tolerance); });
}
void special_modified_bessel_k0_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "modified_bessel_k0_cpu", [](double x) { return special::bessel_k(0, x); });
}
void special_modified_bessel_k1_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "modified_bessel_k1_cpu", [](double x) { return special::bessel_k(1, x); });
}
void special_scaled_modified_bessel_k0_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "scaled_modified_bessel_k0_cpu",
                             [](double x) { return special::bessel_k_scaled(0, x); });
}
void special_scaled_modified_bessel_k1_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "scaled_modified_bessel_k1_cpu",
                             [](double x) { return special::bessel_k_scaled(1, x); });
}
void special_airy_ai_kernel(TensorIterator& iter) { unary_in_double<kFloatTypes>(iter, "airy_ai_cpu", special::airy_ai); }
void special_spherical_bessel_j0_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "spherical_bessel_j0_cpu", special::spherical_bessel_j0);
}

// x log1p(y), 0 where x is 0 unless y is NaN (as xlogy).
void special_xlog1py_kernel(TensorIterator& iter) {
  binary_in_double<kFloatTypes>(iter, "xlog1py_cpu", [](double x, double y) {
    if (std::isnan(y)) return y;
    return x == 0 ? 0.0 : x * std::log1p(y);
  });
}
void special_zeta_kernel(TensorIterator& iter) { binary_in_double<kFloatTypes>(iter, "zeta_cpu", special::hurwitz_zeta); }
void igamma_kernel(TensorIterator& iter) { binary_in_double<kFloatTypes>(iter, "igamma_cpu", special::gammainc); }
void igammac_kernel(TensorIterator& iter) { binary_in_double<kFloatTypes>(iter, "igammac_cpu", special::gammaincc); }

// A floating degree truncated to an integer as torch's cast does; one that no int64_t
// holds (NaN, infinities) becomes the lowest value, a negative degree (result 0), as the
// x86 conversion torch relies on gives.
int64_t degree(double n) {
  if (!(n >= -9223372036854775808.0 && n < 9223372036854775808.0)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(n);
}

#define TESSERA_POLYNOMIAL_KERNEL(NAME, FN)                                                      \
  void special_##NAME##_kernel(TensorIterator& iter) {                                          \
    binary_in_double<kFloatTypes>(iter, #NAME "_cpu",                                              \
                                [](double x, double n) { return special::FN(x, degree(n)); }); \
  }
TESSERA_POLYNOMIAL_KERNEL(chebyshev_polynomial_t, chebyshev_t)
TESSERA_POLYNOMIAL_KERNEL(chebyshev_polynomial_u, chebyshev_u)
TESSERA_POLYNOMIAL_KERNEL(chebyshev_polynomial_v, chebyshev_v)
TESSERA_POLYNOMIAL_KERNEL(chebyshev_polynomial_w, chebyshev_w)
TESSERA_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_t, shifted_chebyshev_t)
TESSERA_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_u, shifted_chebyshev_u)
TESSERA_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_v, shifted_chebyshev_v)
TESSERA_POLYNOMIAL_KERNEL(shifted_chebyshev_polynomial_w, shifted_chebyshev_w)
TESSERA_POLYNOMIAL_KERNEL(laguerre_polynomial_l, laguerre_l)
TESSERA_POLYNOMIAL_KERNEL(legendre_polynomial_p, legendre_p)
#undef TESSERA_POLYNOMIAL_KERNEL

// Hermite's degree limit by dtype, as current PyTorch's (its terms overflow long before).
template <typename F>
void hermite_kernel(TensorIterator& iter, const char* name, F f) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), name, [&]<typename T>() {
    constexpr int64_t limit = std::is_same_v<T, double> ? 512 : std::is_same_v<T, float> ? 128 : 1024;
    cpu_kernel(iter, [f](T x, T n) -> T {
      return static_cast<T>(f(static_cast<double>(x), degree(static_cast<double>(n)), limit));
    });
  });
}
void special_hermite_polynomial_h_kernel(TensorIterator& iter) {
  hermite_kernel(iter, "hermite_polynomial_h_cpu", special::hermite_h);
}
void special_hermite_polynomial_he_kernel(TensorIterator& iter) {
  hermite_kernel(iter, "hermite_polynomial_he_cpu", special::hermite_he);
}

}  // namespace
}  // namespace CPU_CAPABILITY

// The stubs of ops.yaml's iterator operators, generated from it (each runs its <op>_kernel).
#include <aten/native/cpu/RegisterSpecialOpsKernel.h>

}  // namespace at::inline tessera::native
