// Binary elementwise kernels, compiled once per ISA. Integer arithmetic wraps as torch's
// does; float and double use Vectorized where the operation has a vector form.
#include <aten/native/DispatchStubs.h>
#include <aten/native/cpu/Loops.h>
#include <aten/native/cpu/MathScalar.h>
#include <aten/native/elementwise/BinaryOps.h>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

constexpr unsigned kNumeric = kIntegral | kFloating | kReducedFloat | kComplex;

template <typename T>
constexpr bool is_vec_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

// Wrapping integer arithmetic (C++ signed overflow is undefined; torch's wraps).
template <typename T>
T wadd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = wrapping_uint_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T wsub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = wrapping_uint_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T wmul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = wrapping_uint_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// Runs a binary op in opmath (float for Half/BFloat16), vectorised for float and double.
template <unsigned Set, typename F, typename VF>
void binary_kernel(TensorIterator& iter, const char* name, F f, VF vf) {
  dispatch_types<Set>(iter.common_dtype(), name, [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (is_vec_v<T>) {
      cpu_kernel_vec(iter, [f](T a, T b) -> T { return f(a, b); },
                     [vf](Vectorized<T> a, Vectorized<T> b) { return vf(a, b); });
    } else {
      cpu_kernel(iter, [f](T a, T b) -> T { return T(f(O(a), O(b))); });
    }
  });
}
template <unsigned Set, typename F>
void binary_kernel(TensorIterator& iter, const char* name, F f) {
  dispatch_types<Set>(iter.common_dtype(), name, [&]<typename T>() {
    using O = opmath_t<T>;
    cpu_kernel(iter, [f](T a, T b) -> T { return T(f(O(a), O(b))); });
  });
}

void add_kernel(TensorIterator& iter, const c10::Scalar& alpha) {
  dispatch_types<kNumeric | kBoolType | kComplexHalf>(iter.common_dtype(), "add", [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
      // As torch: alpha converts (range-checked) to complex32 and alpha * y rounds to it.
      const O a = alpha.to<T>();
      cpu_kernel(iter, [a](T x, T y) -> T { return T(O(x) + O(T(a * O(y)))); });
    } else if constexpr (is_vec_v<T>) {
      const O a = alpha.to<O>();
      if (a == O(1)) {
        cpu_kernel_vec(iter, [](T x, T y) -> T { return x + y; }, [](Vectorized<T> x, Vectorized<T> y) { return x + y; });
      } else {
        const Vectorized<T> va(a);
        cpu_kernel_vec(iter, [a](T x, T y) -> T { return x + a * y; },
                       [va](Vectorized<T> x, Vectorized<T> y) { return x + va * y; });
      }
    } else {
      const O a = alpha.to<O>();
      cpu_kernel(iter, [a](T x, T y) -> T { return T(wadd<O>(O(x), wmul<O>(a, O(y)))); });
    }
  });
}

void sub_kernel(TensorIterator& iter, const c10::Scalar& alpha) {
  dispatch_types<kNumeric | kComplexHalf>(iter.common_dtype(), "sub", [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
      // As add: alpha converts (range-checked) to complex32 and alpha * y rounds to it.
      const O a = alpha.to<T>();
      cpu_kernel(iter, [a](T x, T y) -> T { return T(O(x) - O(T(a * O(y)))); });
      return;
    }
    const O a = alpha.to<O>();
    if constexpr (is_vec_v<T>) {
      const Vectorized<T> va(a);
      cpu_kernel_vec(iter, [a](T x, T y) -> T { return x - a * y; },
                     [va](Vectorized<T> x, Vectorized<T> y) { return x - va * y; });
    } else {
      cpu_kernel(iter, [a](T x, T y) -> T { return T(wsub<O>(O(x), wmul<O>(a, O(y)))); });
    }
  });
}

void mul_kernel(TensorIterator& iter) {
  binary_kernel<kNumeric | kBoolType | kComplexHalf>(iter, "mul", [](auto a, auto b) { return wmul(a, b); },
                                      [](auto a, auto b) { return a * b; });
}

[[noreturn]] void zero_division() { TORCH_CHECK(false, "ZeroDivisionError"); }

void div_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat | kComplex>(iter, "div", [](auto a, auto b) { return a / b; },
                                                      [](auto a, auto b) { return a / b; });
}

// Division rounded toward zero; integers divide exactly as C++ does (after a zero check).
void div_trunc_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kFloating | kReducedFloat>(iter.common_dtype(), "div_trunc", [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [](T a, T b) -> T {
        if (b == 0) zero_division();
        if (std::is_signed_v<T> && b == T(-1)) return static_cast<T>(wsub<T>(T(0), a));
        return static_cast<T>(a / b);
      });
    } else {
      // The quotient is rounded to T before truncation, as torch does for Half and BFloat16.
      cpu_kernel(iter, [](T a, T b) -> T { return T(std::trunc(O(T(O(a) / O(b))))); });
    }
  });
}

// Python's floor division: for floats torch computes it from fmod so that a == b * q + r.
template <typename O>
O floor_div_float(O a, O b) {
  if (b == 0) return a / b;
  O mod = std::fmod(a, b);
  O div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= O(1);
  O floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > O(0.5)) floordiv += O(1);
  } else {
    floordiv = std::copysign(O(0), a / b);
  }
  return floordiv;
}

template <typename T>
T floor_div_int(T a, T b) {
  if (b == 0) zero_division();
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return static_cast<T>(wsub<T>(T(0), a));
    T q = static_cast<T>(a / b), r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  } else {
    return static_cast<T>(a / b);
  }
}

void div_floor_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kFloating | kReducedFloat>(iter.common_dtype(), "div_floor", [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [](T a, T b) -> T { return floor_div_int(a, b); });
    } else {
      cpu_kernel(iter, [](T a, T b) -> T { return T(floor_div_float<O>(O(a), O(b))); });
    }
  });
}

void floor_divide_kernel(TensorIterator& iter) { div_floor_kernel(iter); }

void remainder_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kFloating | kReducedFloat>(iter.common_dtype(), "remainder", [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [](T a, T b) -> T {
        if (b == 0) zero_division();
        if constexpr (std::is_signed_v<T>) {
          if (b == T(-1)) return T(0);
        }
        T r = static_cast<T>(a % b);
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
      });
    } else {
      cpu_kernel(iter, [](T a, T b) -> T {
        O x = O(a), y = O(b);
        O r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return T(r);
      });
    }
  });
}

void fmod_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kFloating | kReducedFloat>(iter.common_dtype(), "fmod", [&]<typename T>() {
    using O = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [](T a, T b) -> T {
        if (b == 0) zero_division();
        if constexpr (std::is_signed_v<T>) {
          if (b == T(-1)) return T(0);
        }
        return static_cast<T>(a % b);
      });
    } else {
      cpu_kernel(iter, [](T a, T b) -> T { return T(std::fmod(O(a), O(b))); });
    }
  });
}

// Integer powers by squaring; negative exponents give 0 except for bases 1 and -1.
template <typename T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  using U = wrapping_uint_t<T>;
  U result = 1, b = static_cast<U>(base);
  auto e = static_cast<U>(exp);
  while (e) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

// A float or double raised to one scalar exponent that has a cheaper exact form, as torch
// computes them (so pow(-0.0, -0.5) is -inf and pow(-inf, 0.5) NaN, as there): squares,
// cubes, roots and reciprocals run as vector multiplies, roots and divisions instead of a
// libm pow call per element. Returns false for any other exponent.
template <typename T>
bool pow_by_scalar_exponent(TensorIterator& iter) {
  if (iter.numel() == 0 || !iter.is_scalar(2) || iter.dtype(2) != iter.dtype(1)) return false;
  using V = Vectorized<T>;
  const T e = *reinterpret_cast<const T*>(iter.data_ptr(2));
  const V one(T(1));
  if (e == T(1)) {  // (pow's backward of a square raises to 1)
    cpu_kernel_vec(iter, [](T a, T) -> T { return a; }, [](V a, V) { return a; });
  } else if (e == T(2)) {
    cpu_kernel_vec(iter, [](T a, T) -> T { return a * a; }, [](V a, V) { return a * a; });
  } else if (e == T(3)) {
    cpu_kernel_vec(iter, [](T a, T) -> T { return a * a * a; }, [](V a, V) { return a * a * a; });
  } else if (e == T(-2)) {
    cpu_kernel_vec(iter, [](T a, T) -> T { return T(1) / (a * a); }, [one](V a, V) { return one / (a * a); });
  } else if (e == T(0.5)) {
    cpu_kernel_vec(iter, [](T a, T) -> T { return std::sqrt(a); }, [](V a, V) { return a.sqrt(); });
  } else if (e == T(-0.5)) {
    cpu_kernel_vec(iter, [](T a, T) -> T { return T(1) / std::sqrt(a); }, [](V a, V) { return a.rsqrt(); });
  } else if (e == T(-1)) {
    cpu_kernel_vec(iter, [](T a, T) -> T { return T(1) / a; }, [](V a, V) { return a.reciprocal(); });
  } else {
    return false;
  }
  return true;
}

void pow_kernel(TensorIterator& iter) {
  dispatch_types<kNumeric>(iter.common_dtype(), "pow", [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (pow_by_scalar_exponent<T>(iter)) return;
    }
    if constexpr (std::is_integral_v<T>) {
      cpu_kernel(iter, [](T a, T b) -> T { return int_pow(a, b); });
    } else {
      cpu_kernel(iter, [](T a, T b) -> T {
        if constexpr (is_complex_v<T>) {
          using R = typename T::value_type;
          auto r = std::pow(std::complex<R>(a.real(), a.imag()), std::complex<R>(b.real(), b.imag()));
          return T(r.real(), r.imag());
        } else {
          using O = opmath_t<T>;
          return T(std::pow(O(a), O(b)));
        }
      });
    }
  });
}

void atan2_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat>(iter, "atan2", [](auto a, auto b) { return std::atan2(a, b); });
}
void hypot_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat>(iter, "hypot", [](auto a, auto b) { return std::hypot(a, b); });
}

// log(exp(a) + exp(b)) without overflow: the larger plus log1p(exp(-|a - b|)). Equal
// infinities are their own result (inf - inf would give NaN); a NaN propagates.
void logaddexp_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat>(iter, "logaddexp_cpu", [](auto a, auto b) {
    if (a == b && std::isinf(a)) return a;
    return std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
  });
}
// log2(2^a + 2^b), as logaddexp but in base 2.
void logaddexp2_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat>(iter, "logaddexp2_cpu", [](auto a, auto b) {
    if (a == b && std::isinf(a)) return a;
    using O = decltype(a);
    return std::max(a, b) + std::log2(O(1) + std::exp2(-std::abs(a - b)));
  });
}
void nextafter_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat>(iter, "nextafter_cpu", [](auto a, auto b) { return std::nextafter(a, b); });
}
// 0 below zero, `values` at zero, 1 above (NaN stays NaN); meta::check_heaviside checks the dtypes.
void heaviside_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(iter.common_dtype(), "heaviside_cpu",
                                                                    [&]<typename T>() {
    cpu_kernel(iter, [](T x, T values) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return x || values;  // (a bool is never below zero)
      } else {
        using O = opmath_t<T>;
        const O v = O(x);
        return v == O(0) ? values : T(v > O(0) ? 1 : (v != v ? v : O(0)));
      }
    });
  });
}
// gcd by Euclid on magnitudes (non-negative results); lcm = |a / gcd * b|, 0 with a zero.
template <typename T>
T gcd_of(T a, T b) {
  using U = std::make_unsigned_t<T>;
  U x = a < 0 ? U(0) - U(a) : U(a), y = b < 0 ? U(0) - U(b) : U(b);
  while (y != 0) {
    const U r = x % y;
    x = y, y = r;
  }
  return static_cast<T>(x);
}
void gcd_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral>(iter.common_dtype(), "gcd_cpu", [&]<typename T>() {
    cpu_kernel(iter, [](T a, T b) -> T { return gcd_of(a, b); });
  });
}
void lcm_kernel(TensorIterator& iter) {
  dispatch_types<kIntegral>(iter.common_dtype(), "lcm_cpu", [&]<typename T>() {
    cpu_kernel(iter, [](T a, T b) -> T {
      const T g = gcd_of(a, b);
      if (g == 0) return T(0);
      using U = std::make_unsigned_t<T>;
      const U m = static_cast<U>(static_cast<U>(a < 0 ? U(0) - U(a) : U(a)) / static_cast<U>(g)) *
                  static_cast<U>(b < 0 ? U(0) - U(b) : U(b));
      return static_cast<T>(m);
    });
  });
}
void copysign_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat>(iter, "copysign", [](auto a, auto b) { return std::copysign(a, b); });
}
void xlogy_kernel(TensorIterator& iter) {
  binary_kernel<kFloating | kReducedFloat>(iter, "xlogy", [](auto x, auto y) {
    using O = decltype(x);
    if (y != y) return y;
    return x == O(0) ? O(0) : x * std::log(y);
  });
}

// maximum/minimum propagate NaN; fmax/fmin ignore it. Complex has no order.
template <bool Max, bool PropagateNan>
void extremum_kernel(TensorIterator& iter, const char* name) {
  TORCH_CHECK(!c10::isComplexType(iter.common_dtype()), name, " not implemented for complex tensors.");
  dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(iter.common_dtype(), name, [&]<typename T>() {
    using O = opmath_t<T>;
    cpu_kernel(iter, [](T a, T b) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return Max ? (a || b) : (a && b);
      } else {
        O x = O(a), y = O(b);
        if constexpr (!std::is_integral_v<T>) {
          if (x != x || y != y) {
            if (PropagateNan) return T(x != x ? x : y);
            return T(x != x ? y : x);
          }
        }
        return T(Max ? (x > y ? x : y) : (x < y ? x : y));
      }
    });
  });
}
void maximum_kernel(TensorIterator& iter) { extremum_kernel<true, true>(iter, "maximum"); }
void minimum_kernel(TensorIterator& iter) { extremum_kernel<false, true>(iter, "minimum"); }
void fmax_kernel(TensorIterator& iter) { extremum_kernel<true, false>(iter, "fmax"); }
void fmin_kernel(TensorIterator& iter) { extremum_kernel<false, false>(iter, "fmin"); }

// Comparisons and logical ops read the common dtype and write bool.
template <bool Ordered, typename T, typename F>
bool compare_values(F f, T a, T b) {
  if constexpr (is_complex_v<T> && Ordered) {
    return false;  // unreachable: compare_kernel rejects complex for ordered comparisons
  } else if constexpr (is_complex_v<T> || std::is_integral_v<T>) {
    return f(a, b);
  } else {
    return f(opmath_t<T>(a), opmath_t<T>(b));
  }
}

template <bool Ordered, typename F>
void compare_kernel(TensorIterator& iter, const char* name, F f) {
  if (Ordered) {
    TORCH_CHECK(!c10::isComplexType(iter.common_dtype()), name, " is not supported for complex tensors");
  }
  dispatch_types<kAllTypes>(iter.common_dtype(), name, [&]<typename T>() {
    cpu_kernel(iter, [f](T a, T b) -> bool { return compare_values<Ordered>(f, a, b); });
  });
}
void eq_kernel(TensorIterator& iter) { compare_kernel<false>(iter, "eq", [](auto a, auto b) { return a == b; }); }
void ne_kernel(TensorIterator& iter) { compare_kernel<false>(iter, "ne", [](auto a, auto b) { return a != b; }); }
void lt_kernel(TensorIterator& iter) { compare_kernel<true>(iter, "lt", [](auto a, auto b) { return a < b; }); }
void le_kernel(TensorIterator& iter) { compare_kernel<true>(iter, "le", [](auto a, auto b) { return a <= b; }); }
void gt_kernel(TensorIterator& iter) { compare_kernel<true>(iter, "gt", [](auto a, auto b) { return a > b; }); }
void ge_kernel(TensorIterator& iter) { compare_kernel<true>(iter, "ge", [](auto a, auto b) { return a >= b; }); }

template <typename T>
bool truthy(T x) {
  if constexpr (is_complex_v<T>) {
    return x.real() != 0 || x.imag() != 0;
  } else {
    return static_cast<double>(x) != 0;
  }
}
template <typename F>
void logical_kernel(TensorIterator& iter, const char* name, F f) {
  dispatch_types<kAllTypes>(iter.common_dtype(), name,
                            [&]<typename T>() { cpu_kernel(iter, [f](T a, T b) -> bool { return f(truthy(a), truthy(b)); }); });
}
void logical_and_kernel(TensorIterator& iter) { logical_kernel(iter, "logical_and", [](bool a, bool b) { return a && b; }); }
void logical_or_kernel(TensorIterator& iter) { logical_kernel(iter, "logical_or", [](bool a, bool b) { return a || b; }); }
void logical_xor_kernel(TensorIterator& iter) { logical_kernel(iter, "logical_xor", [](bool a, bool b) { return a != b; }); }

template <typename F>
void bitwise_kernel(TensorIterator& iter, const char* name, F f) {
  dispatch_types<kIntegral | kBoolType>(iter.common_dtype(), name, [&]<typename T>() {
    cpu_kernel(iter, [f](T a, T b) -> T { return static_cast<T>(f(a, b)); });
  });
}
void bitwise_and_kernel(TensorIterator& iter) { bitwise_kernel(iter, "bitwise_and", [](auto a, auto b) { return a & b; }); }
void bitwise_or_kernel(TensorIterator& iter) { bitwise_kernel(iter, "bitwise_or", [](auto a, auto b) { return a | b; }); }
void bitwise_xor_kernel(TensorIterator& iter) { bitwise_kernel(iter, "bitwise_xor", [](auto a, auto b) { return a ^ b; }); }

// Shifts by at least the width give 0 (or -1 for right shifts of negatives), as torch's.
template <bool Left>
void shift_kernel(TensorIterator& iter, const char* name) {
  dispatch_types<kIntegral>(iter.common_dtype(), name, [&]<typename T>() {
    cpu_kernel(iter, [](T a, T b) -> T {
      constexpr int64_t bits = sizeof(T) * 8;
      using U = wrapping_uint_t<T>;
      if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= bits) {
        if constexpr (Left) {
          return T(0);
        } else {
          return a < T(0) ? T(-1) : T(0);
        }
      }
      if constexpr (Left) {
        return static_cast<T>(static_cast<U>(a) << b);
      } else {
        return static_cast<T>(a >> b);
      }
    });
  });
}
void bitwise_left_shift_kernel(TensorIterator& iter) { shift_kernel<true>(iter, "bitwise_left_shift"); }
void bitwise_right_shift_kernel(TensorIterator& iter) { shift_kernel<false>(iter, "bitwise_right_shift"); }

}  // namespace
}  // namespace CPU_CAPABILITY

// The stubs of ops.yaml's iterator operators, generated from it (each runs its <op>_kernel).
#include <aten/native/cpu/RegisterBinaryOpsKernel.h>

REGISTER_DISPATCH(div_trunc_stub, &div_trunc_kernel);
REGISTER_DISPATCH(div_floor_stub, &div_floor_kernel);

}  // namespace at::inline tessera::native
