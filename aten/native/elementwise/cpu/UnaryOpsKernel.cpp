// Unary elementwise kernels, compiled once per ISA (see aten/native/DispatchStub.h):
// float and double take the Vectorized path where one exists, Half and BFloat16 compute
// in float, complex goes through std::complex.
#include <aten/native/DispatchStubs.h>
#include <aten/native/cpu/Loops.h>
#include <aten/native/cpu/MathScalar.h>
#include <aten/native/elementwise/UnaryOps.h>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

constexpr unsigned kFloatTypes = kFloating | kReducedFloat;
constexpr unsigned kFloatAndComplex = kFloating | kReducedFloat | kComplex;

template <typename T>
T sinc_any(T x) {
  if (x == T(0)) return T(1);
  const T y = x * static_cast<decltype(std::abs(x))>(3.14159265358979323846);
  return std::sin(y) / y;
}

// A floating op: f is generic over float/double/std::complex; vf the Vectorized form.
template <unsigned Set, typename F, typename VF>
void floating_kernel(TensorIterator& iter, const char* name, F f, VF vf) {
  dispatch_types<Set>(iter.common_dtype(), name, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      cpu_kernel_vec(iter, [f](T x) -> T { return f(x); }, [vf](Vectorized<T> x) { return vf(x); });
    } else {
      cpu_kernel(iter, [f](T x) -> T { return apply_math<T>(x, f); });
    }
  });
}

template <unsigned Set, typename F>
void floating_kernel(TensorIterator& iter, const char* name, F f) {
  dispatch_types<Set>(iter.common_dtype(), name,
                      [&]<typename T>() { cpu_kernel(iter, [f](T x) -> T { return apply_math<T>(x, f); }); });
}

#define TESSERA_FLOAT_UNARY_VEC(NAME, SET, EXPR, VEXPR)                                                           \
  void NAME##_kernel(TensorIterator& iter) {                                                                      \
    floating_kernel<SET>(iter, #NAME, [](auto x) { return EXPR; }, [](auto x) { return VEXPR; });                 \
  }
#define TESSERA_FLOAT_UNARY(NAME, SET, EXPR) \
  void NAME##_kernel(TensorIterator& iter) { floating_kernel<SET>(iter, #NAME, [](auto x) { return EXPR; }); }

TESSERA_FLOAT_UNARY_VEC(exp, kFloatAndComplex, std::exp(x), x.exp())
TESSERA_FLOAT_UNARY(exp2, kFloatAndComplex, std::pow(decltype(x)(2), x))
TESSERA_FLOAT_UNARY(expm1, kFloatAndComplex, expm1_any(x))
TESSERA_FLOAT_UNARY_VEC(log, kFloatAndComplex, std::log(x), x.log())
TESSERA_FLOAT_UNARY(log2, kFloatAndComplex, log2_any(x))
TESSERA_FLOAT_UNARY(log10, kFloatAndComplex, std::log10(x))
TESSERA_FLOAT_UNARY(log1p, kFloatAndComplex, log1p_any(x))
TESSERA_FLOAT_UNARY_VEC(sqrt, kFloatAndComplex, std::sqrt(x), x.sqrt())
TESSERA_FLOAT_UNARY(rsqrt, kFloatAndComplex, decltype(x)(1) / std::sqrt(x))
TESSERA_FLOAT_UNARY(reciprocal, kFloatAndComplex, decltype(x)(1) / x)
TESSERA_FLOAT_UNARY(sin, kFloatAndComplex, std::sin(x))
TESSERA_FLOAT_UNARY(cos, kFloatAndComplex, std::cos(x))
TESSERA_FLOAT_UNARY(tan, kFloatAndComplex, std::tan(x))
TESSERA_FLOAT_UNARY(asin, kFloatAndComplex, std::asin(x))
TESSERA_FLOAT_UNARY(acos, kFloatAndComplex, std::acos(x))
TESSERA_FLOAT_UNARY(atan, kFloatAndComplex, std::atan(x))
TESSERA_FLOAT_UNARY(sinh, kFloatAndComplex, std::sinh(x))
TESSERA_FLOAT_UNARY(cosh, kFloatAndComplex, std::cosh(x))
TESSERA_FLOAT_UNARY_VEC(tanh, kFloatAndComplex, std::tanh(x), x.tanh())
TESSERA_FLOAT_UNARY(asinh, kFloatAndComplex, std::asinh(x))
TESSERA_FLOAT_UNARY(acosh, kFloatAndComplex, std::acosh(x))
TESSERA_FLOAT_UNARY(atanh, kFloatAndComplex, std::atanh(x))
TESSERA_FLOAT_UNARY_VEC(sigmoid, kFloatAndComplex, sigmoid_any(x), x.sigmoid())
// Angle conversions: one multiplication by the constant rounded to the computing type, as torch's mul.
void deg2rad_kernel(TensorIterator& iter) {
  TORCH_CHECK(!c10::isComplexType(iter.common_dtype()), "deg2rad is not supported for complex tensors.");
  floating_kernel<kFloatTypes>(iter, "deg2rad", [](auto x) { return x * decltype(x)(0.017453292519943295); });
}
void rad2deg_kernel(TensorIterator& iter) {
  TORCH_CHECK(!c10::isComplexType(iter.common_dtype()), "rad2deg is not supported for complex tensors.");
  floating_kernel<kFloatTypes>(iter, "rad2deg", [](auto x) { return x * decltype(x)(57.295779513082320876); });
}
// sin(pi x) / (pi x), 1 at 0.
TESSERA_FLOAT_UNARY(sinc, kFloatAndComplex, sinc_any(x))
TESSERA_FLOAT_UNARY(erf, kFloatTypes, std::erf(x))
TESSERA_FLOAT_UNARY(erfc, kFloatTypes, std::erfc(x))
TESSERA_FLOAT_UNARY(erfinv, kFloatTypes, static_cast<decltype(x)>(erfinv_double(x)))
TESSERA_FLOAT_UNARY(lgamma, kFloatTypes, std::lgamma(x))
TESSERA_FLOAT_UNARY(digamma, kFloatTypes, static_cast<decltype(x)>(digamma_double(x)))

}  // namespace
}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::native

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

// Integer arithmetic wraps as torch's does (no signed-overflow UB).
template <typename T>
T wrapping_neg(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = wrapping_uint_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(x));
  } else {
    return -x;
  }
}

void abs_kernel(TensorIterator& iter) {
  // Complex magnitudes are computed in the complex type and cast to the real output.
  dispatch_types<kIntegral | kFloatAndComplex | kComplexHalf>(iter.common_dtype(), "abs", [&]<typename T>() {
    if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
      cpu_kernel(iter, [](T x) -> T {
        const c10::complex<float> z = x;
        return T(c10::complex<float>(std::hypot(z.real(), z.imag()), 0.0f));
      });
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      cpu_kernel_vec(iter, [](T x) -> T { return std::abs(x); }, [](Vectorized<T> x) { return x.abs(); });
    } else if constexpr (is_complex_v<T>) {
      cpu_kernel(iter, [](T x) -> T { return T(std::abs(std::complex<typename T::value_type>(x.real(), x.imag()))); });
    } else if constexpr (is_reduced_v<T>) {
      cpu_kernel(iter, [](T x) -> T { return T(std::fabs(static_cast<float>(x))); });
    } else {
      cpu_kernel(iter, [](T x) -> T { return x < 0 ? wrapping_neg(x) : x; });
    }
  });
}

void neg_kernel(TensorIterator& iter) {
  TORCH_CHECK(iter.common_dtype() != c10::kBool,
              "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
              "use the `~` or `logical_not()` operator instead.");
  dispatch_types<kIntegral | kFloatAndComplex | kComplexHalf>(iter.common_dtype(), "neg", [&]<typename T>() {
    if constexpr (is_complex_v<T>) {
      cpu_kernel(iter, [](T x) -> T { return T(-x.real(), -x.imag()); });
    } else if constexpr (is_reduced_v<T>) {
      cpu_kernel(iter, [](T x) -> T { return T(-static_cast<float>(x)); });
    } else {
      cpu_kernel(iter, [](T x) -> T { return wrapping_neg(x); });
    }
  });
}

void sign_kernel(TensorIterator& iter) {
  TORCH_CHECK(!c10::isComplexType(iter.common_dtype()),
              "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.");
  dispatch_types<kIntegral | kBoolType | kFloatTypes>(iter.common_dtype(), "sign", [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel(iter, [](bool x) -> bool { return x; });
    } else {
      using O = opmath_t<T>;
      cpu_kernel(iter, [](T x) -> T {
        O v = static_cast<O>(x);
        return T(static_cast<O>((O(0) < v) - (v < O(0))));
      });
    }
  });
}

void sgn_kernel(TensorIterator& iter) {
  if (!c10::isComplexType(iter.common_dtype())) return sign_kernel(iter);
  dispatch_types<kComplex | kComplexHalf>(iter.common_dtype(), "sgn", [&]<typename T>() {
    if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
      cpu_kernel(iter, [](T x) -> T {
        const c10::complex<float> z = x;
        const float m = std::hypot(z.real(), z.imag());
        return m == 0 ? T(c10::complex<float>(0.0f, 0.0f)) : T(c10::complex<float>(z.real() / m, z.imag() / m));
      });
    } else {
      cpu_kernel(iter, [](T x) -> T {
        auto m = std::abs(std::complex<typename T::value_type>(x.real(), x.imag()));
        return m == 0 ? T(0, 0) : T(x.real() / m, x.imag() / m);
      });
    }
  });
}

// floor, ceil, round, trunc: identity on integers, as in torch.
template <typename F, typename VF>
void rounding_kernel(TensorIterator& iter, const char* name, F f, VF vf) {
  dispatch_types<kIntegral | kFloatTypes>(iter.common_dtype(), name, [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [](T x) -> T { return x; });
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      cpu_kernel_vec(iter, [f](T x) -> T { return f(x); }, [vf](Vectorized<T> x) { return vf(x); });
    } else {
      cpu_kernel(iter, [f](T x) -> T { return T(f(static_cast<float>(x))); });
    }
  });
}

void floor_kernel(TensorIterator& iter) {
  rounding_kernel(iter, "floor", [](auto x) { return std::floor(x); }, [](auto x) { return x.floor(); });
}
void ceil_kernel(TensorIterator& iter) {
  rounding_kernel(iter, "ceil", [](auto x) { return std::ceil(x); }, [](auto x) { return x.ceil(); });
}
void round_kernel(TensorIterator& iter) {
  rounding_kernel(iter, "round", [](auto x) { return std::nearbyint(x); }, [](auto x) { return x.round(); });
}
void trunc_kernel(TensorIterator& iter) {
  rounding_kernel(iter, "trunc", [](auto x) { return std::trunc(x); }, [](auto x) { return x.trunc(); });
}

void round_decimals_kernel(TensorIterator& iter, int64_t decimals) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "round", [&]<typename T>() {
    using O = opmath_t<T>;
    const bool negative = decimals < 0;
    const O ten = static_cast<O>(std::pow(O(10), static_cast<O>(negative ? -decimals : decimals)));
    cpu_kernel(iter, [=](T x) -> T {
      O v = static_cast<O>(x);
      return T(negative ? std::nearbyint(v / ten) * ten : std::nearbyint(v * ten) / ten);
    });
  });
}

void frac_kernel(TensorIterator& iter) {
  floating_kernel<kFloatTypes>(iter, "frac", [](auto x) { return x - std::trunc(x); });
}

// x < 0 ? 0 : x, as torch's clamp_min(0): NaN and -0.0 come back as they are.
void relu_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kFloatTypes>(iter.common_dtype(), "relu", [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      cpu_kernel_vec(iter, [](T x) -> T { return x < T(0) ? T(0) : x; },
                     [](Vectorized<T> x) { return clamp_min(x, Vectorized<T>(T(0))); });
    } else {
      cpu_kernel(iter, [](T x) -> T {
        return static_cast<O>(x) < O(0) ? T(O(0)) : x;
      });
    }
  });
}

void bitwise_not_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kBoolType>(iter.common_dtype(), "bitwise_not", [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel(iter, [](bool x) -> bool { return !x; });
    } else {
      cpu_kernel(iter, [](T x) -> T { return static_cast<T>(~x); });
    }
  });
}

void square_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kBoolType | kFloatAndComplex>(iter.common_dtype(), "square", [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel(iter, [](bool x) -> bool { return x; });
    } else if constexpr (std::is_integral_v<T>) {
      using U = wrapping_uint_t<T>;
      cpu_kernel(iter, [](T x) -> T { return static_cast<T>(static_cast<U>(x) * static_cast<U>(x)); });
    } else {
      floating_kernel<kFloatAndComplex>(iter, "square", [](auto x) { return x * x; });
    }
  });
}

void logit_kernel(TensorIterator& iter, std::optional<double> eps) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "logit", [&]<typename T>() {
    using O = opmath_t<T>;
    const bool clamp = eps.has_value();
    const O lo = static_cast<O>(eps.value_or(0)), hi = O(1) - lo;
    cpu_kernel(iter, [=](T x) -> T {
      O v = static_cast<O>(x);
      if (clamp) v = v < lo ? lo : (v > hi ? hi : v);
      return T(std::log(v / (O(1) - v)));
    });
  });
}

void polygamma_kernel(TensorIterator& iter, int64_t n) {
  dispatch_types<kFloatTypes>(iter.common_dtype(), "polygamma", [&]<typename T>() {
    cpu_kernel(iter, [=](T x) -> T { return static_cast<T>(polygamma_double(n, static_cast<double>(x))); });
  });
}

template <typename T>
struct real_of {
  using type = T;
};
template <typename R>
struct real_of<c10::complex<R>> {
  using type = R;
};

void nan_to_num_kernel(TensorIterator& iter, std::optional<double> nan, std::optional<double> posinf,
                       std::optional<double> neginf) {
  dispatch_types<kIntegral | kBoolType | kFloatAndComplex>(iter.common_dtype(), "nan_to_num", [&]<typename T>() {
    if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool>) {
      cpu_kernel(iter, [](T x) -> T { return x; });  // integers have no NaN or infinity
    } else {
      using R = typename real_of<T>::type;
      using O = opmath_t<R>;
      // Defaults as torch's: NaN -> 0, +inf -> the dtype's max, -inf -> its lowest.
      const O n = static_cast<O>(nan.value_or(0.0));
      const O p = posinf ? static_cast<O>(*posinf) : static_cast<O>(std::numeric_limits<R>::max());
      const O m = neginf ? static_cast<O>(*neginf) : static_cast<O>(std::numeric_limits<R>::lowest());
      auto fix = [=](R r) -> R {
        O v = static_cast<O>(r);
        return R(v != v ? n : (std::isinf(v) ? (v > 0 ? p : m) : v));
      };
      if constexpr (is_complex_v<T>) {
        cpu_kernel(iter, [=](T x) -> T { return T(fix(x.real()), fix(x.imag())); });
      } else {
        cpu_kernel(iter, [=](T x) -> T { return fix(x); });
      }
    }
  });
}

// Predicates with a Bool result: the loop reads the common dtype and writes bool.
template <typename F>
void predicate_kernel(TensorIterator& iter, const char* name, unsigned set_mask, F f) {
  (void)set_mask;
  dispatch_types<kAllTypes>(iter.common_dtype(), name, [&]<typename T>() {
    cpu_kernel(iter, [f](T x) -> bool { return f(x); });
  });
}

template <typename T>
bool any_nan(T x) {
  if constexpr (is_complex_v<T>) {
    return x.real() != x.real() || x.imag() != x.imag();
  } else if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool>) {
    return false;
  } else {
    float f = static_cast<float>(x);
    return f != f;
  }
}
template <typename T>
bool any_inf(T x) {
  if constexpr (is_complex_v<T>) {
    return std::isinf(x.real()) || std::isinf(x.imag());
  } else if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool>) {
    return false;
  } else {
    return std::isinf(static_cast<double>(x));
  }
}

void isposinf_kernel(TensorIterator& iter) {
  TORCH_CHECK(!c10::isComplexType(iter.common_dtype()), "isposinf does not support complex inputs.");
  predicate_kernel(iter, "isposinf", 0, []<typename T>(T x) {
    if constexpr (std::is_integral_v<T> || is_complex_v<T>) {
      return false;
    } else {
      return static_cast<double>(x) == std::numeric_limits<double>::infinity();
    }
  });
}
void isneginf_kernel(TensorIterator& iter) {
  TORCH_CHECK(!c10::isComplexType(iter.common_dtype()), "isneginf does not support complex inputs.");
  predicate_kernel(iter, "isneginf", 0, []<typename T>(T x) {
    if constexpr (std::is_integral_v<T> || is_complex_v<T>) {
      return false;
    } else {
      return static_cast<double>(x) == -std::numeric_limits<double>::infinity();
    }
  });
}
void isnan_kernel(TensorIterator& iter) {
  predicate_kernel(iter, "isnan", 0, []<typename T>(T x) { return any_nan(x); });
}
void isinf_kernel(TensorIterator& iter) {
  predicate_kernel(iter, "isinf", 0, []<typename T>(T x) { return any_inf(x); });
}
void isfinite_kernel(TensorIterator& iter) {
  predicate_kernel(iter, "isfinite", 0, []<typename T>(T x) { return !any_nan(x) && !any_inf(x); });
}
void signbit_kernel(TensorIterator& iter) {
  TORCH_CHECK(!c10::isComplexType(iter.common_dtype()), "signbit is not implemented for complex tensors.");
  predicate_kernel(iter, "signbit", 0, []<typename T>(T x) {
    if constexpr (is_complex_v<T>) {
      return false;
    } else if constexpr (std::is_same_v<T, bool>) {
      return false;
    } else if constexpr (std::is_integral_v<T>) {
      return x < 0;
    } else {
      return std::signbit(static_cast<double>(x));
    }
  });
}
void logical_not_kernel(TensorIterator& iter) {
  predicate_kernel(iter, "logical_not", 0, []<typename T>(T x) {
    if constexpr (is_complex_v<T>) {
      return x.real() == 0 && x.imag() == 0;
    } else {
      return !static_cast<bool>(static_cast<double>(x) != 0);
    }
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

// The stubs of ops.yaml's iterator operators, generated from it (each runs its <op>_kernel).
#include <aten/native/cpu/RegisterUnaryOpsKernel.h>

REGISTER_DISPATCH(isfinite_stub, &isfinite_kernel);

}  // namespace at::inline tessera::native
