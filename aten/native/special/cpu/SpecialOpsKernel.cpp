// Kernels of torch.special's own operators, compiled once per ISA (see
// aten/native/DispatchStub.h). Every function is evaluated in double by
// special/SpecialFunctions.h and rounded to the tensor's dtype, so Half and BFloat16 come
// at no cost (torch 1.13 refuses some of them); complex is refused with torch's
// "<op>_cpu" not-implemented error.
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

// -x log x, 0 at 0 and -inf below.
double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -std::numeric_limits<double>::infinity();
}

void special_entr_kernel(TensorIterator& iter) { unary_in_double<kFloatTypes>(iter, "entr_cpu", entr); }
void special_ndtri_kernel(TensorIterator& iter) { unary_in_double<kFloatTypes>(iter, "ndtri_cpu", special::ndtri); }
void special_log_ndtr_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "log_ndtr_cpu", special::log_ndtr);
}
void special_ndtr_kernel(TensorIterator& iter) { unary_in_double<kFloatTypes>(iter, "ndtr_cpu", special::ndtr); }
void special_erfcx_kernel(TensorIterator& iter) { unary_in_double<kFloatTypes>(iter, "erfcx_cpu", special::erfcx); }
void i0_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "i0_cpu", [](double x) { return special::bessel_i(0, x); });
}
void special_i0e_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "i0e_cpu", [](double x) { return special::bessel_i_scaled(0, x); });
}
void special_i1_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "i1_cpu", [](double x) { return special::bessel_i(1, x); });
}
void special_i1e_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "i1e_cpu", [](double x) { return special::bessel_i_scaled(1, x); });
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
  unary_in_double<kFloatTypes>(iter, "modified_bessel_i0_cpu", [](double x) { return special::bessel_i(0, x); });
}
void special_modified_bessel_i1_kernel(TensorIterator& iter) {
  unary_in_double<kFloatTypes>(iter, "modified_bessel_i1_cpu", [](double x) { return special::bessel_i(1, x); });
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
  if (!(n > -9.2e18 && n < 9.2e18)) return std::numeric_limits<int64_t>::min();
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
TESSERA_POLYNOMIAL_KERNEL(hermite_polynomial_h, hermite_h)
TESSERA_POLYNOMIAL_KERNEL(hermite_polynomial_he, hermite_he)
TESSERA_POLYNOMIAL_KERNEL(laguerre_polynomial_l, laguerre_l)
TESSERA_POLYNOMIAL_KERNEL(legendre_polynomial_p, legendre_p)
#undef TESSERA_POLYNOMIAL_KERNEL

}  // namespace
}  // namespace CPU_CAPABILITY

// The stubs of ops.yaml's iterator operators, generated from it (each runs its <op>_kernel).
#include <aten/native/cpu/RegisterSpecialOpsKernel.h>

}  // namespace at::inline tessera::native
