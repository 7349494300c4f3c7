// Runs a templated kernel body for a runtime dtype: dispatch_types<Set>(dtype, "op",
// [&]<typename scalar_t>() { ... }). Each set names exactly the dtypes a kernel is
// instantiated for, so kernels compile only the types they support; others get torch's
// "\"op\" not implemented for 'QInt8'" NotImplementedError.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/BFloat16.h>
#include <c10/util/ComplexHalf.h>
#include <c10/util/Exception.h>
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>
#include <c10/util/Half.h>
#include <c10/util/complex.h>

#include <cstdint>
#include <type_traits>

namespace at::inline tessera {

enum TypeSet : unsigned {
  kIntegral = 1,        // uint8, int8, int16, int32, int64
  kBoolType = 2,
  kFloating = 4,        // float, double
  kReducedFloat = 8,    // Half, BFloat16
  kComplex = 16,        // complex<float>, complex<double>
  kFloat8 = 32,
  // complex<Half> (complex32): a storage type, as in torch, that only the kernels torch
  // gives it (copy, fill, add/sub/mul, comparisons, where, ...) are instantiated for.
  kComplexHalf = 64,
  kArithmetic = kIntegral | kBoolType | kFloating | kReducedFloat | kComplex,
  kAllTypes = kArithmetic | kFloat8 | kComplexHalf,
};

[[noreturn]] TORCH_API void dtype_not_implemented(const char* op, c10::ScalarType t);

template <unsigned Set, typename F>
decltype(auto) dispatch_types(c10::ScalarType t, const char* op, F&& f) {
#define TESSERA_DTYPE_CASE(set, enumerator, type)    \
  case c10::ScalarType::enumerator:                  \
    if constexpr ((Set & (set)) != 0) {              \
      return f.template operator()<type>();          \
    }                                                \
    break;
  switch (t) {
    TESSERA_DTYPE_CASE(kIntegral, Byte, uint8_t)
    TESSERA_DTYPE_CASE(kIntegral, Char, int8_t)
    TESSERA_DTYPE_CASE(kIntegral, Short, int16_t)
    TESSERA_DTYPE_CASE(kIntegral, Int, int32_t)
    TESSERA_DTYPE_CASE(kIntegral, Long, int64_t)
    TESSERA_DTYPE_CASE(kBoolType, Bool, bool)
    TESSERA_DTYPE_CASE(kFloating, Float, float)
    TESSERA_DTYPE_CASE(kFloating, Double, double)
    TESSERA_DTYPE_CASE(kReducedFloat, Half, c10::Half)
    TESSERA_DTYPE_CASE(kReducedFloat, BFloat16, c10::BFloat16)
    TESSERA_DTYPE_CASE(kComplexHalf, ComplexHalf, c10::complex<c10::Half>)
    TESSERA_DTYPE_CASE(kComplex, ComplexFloat, c10::complex<float>)
    TESSERA_DTYPE_CASE(kComplex, ComplexDouble, c10::complex<double>)
    TESSERA_DTYPE_CASE(kFloat8, Float8_e4m3fn, c10::Float8_e4m3fn)
    TESSERA_DTYPE_CASE(kFloat8, Float8_e5m2, c10::Float8_e5m2)
    default:
      break;
  }
#undef TESSERA_DTYPE_CASE
  dtype_not_implemented(op, t);
}

// The type arithmetic on T is carried out in: reduced floats compute in float.
// The unsigned type integer kernels wrap in, as torch's do: at least unsigned int, so that
// uint8/uint16 operands are not promoted to a signed int that could overflow (undefined).
template <typename T>
using wrapping_uint_t = std::make_unsigned_t<std::common_type_t<T, int>>;

template <typename T>
struct opmath {
  using type = T;
};
template <>
struct opmath<c10::Half> {
  using type = float;
};
template <>
struct opmath<c10::BFloat16> {
  using type = float;
};
template <>
struct opmath<c10::Float8_e4m3fn> {
  using type = float;
};
template <>
struct opmath<c10::Float8_e5m2> {
  using type = float;
};
template <>
struct opmath<c10::complex<c10::Half>> {
  using type = c10::complex<float>;
};
template <typename T>
using opmath_t = typename opmath<T>::type;

template <typename T>
inline constexpr bool is_complex_element_v = std::is_same_v<T, c10::complex<c10::Half>> ||
                                            std::is_same_v<T, c10::complex<float>> ||
                                            std::is_same_v<T, c10::complex<double>>;

// Converts between any two element types as torch's casts do: complex to real keeps the
// real part, anything to bool tests for nonzero, reduced floats and complex<Half> go
// through float.
template <typename To, typename From>
inline To cast(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, c10::complex<c10::Half>>) {
    return cast<To>(static_cast<c10::complex<float>>(v));
  } else if constexpr (std::is_same_v<To, c10::complex<c10::Half>>) {
    return To(cast<c10::complex<float>>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_element_v<From>) {
      return v.real() != 0 || v.imag() != 0;
    } else {
      return static_cast<double>(v) != 0;
    }
  } else if constexpr (is_complex_element_v<From>) {
    if constexpr (is_complex_element_v<To>) {
      using R = typename To::value_type;
      return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return cast<To>(v.real());
    }
  } else if constexpr (is_complex_element_v<To>) {
    using R = typename To::value_type;
    return To(cast<R>(v), R(0));
  } else if constexpr (std::is_same_v<From, c10::Half> || std::is_same_v<From, c10::BFloat16> ||
                       std::is_same_v<From, c10::Float8_e4m3fn> || std::is_same_v<From, c10::Float8_e5m2>) {
    return cast<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, c10::Half> || std::is_same_v<To, c10::BFloat16> ||
                       std::is_same_v<To, c10::Float8_e4m3fn> || std::is_same_v<To, c10::Float8_e5m2>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Out-of-range float -> int is undefined in C++; torch's result there is unspecified
    // too, so pin it: convert through int64 with saturation, then wrap to the target.
    if (!(v == v)) return To(0);
    if (v >= 9.2233720368547758e18) return static_cast<To>(INT64_MAX);
    if (v <= -9.2233720368547758e18) return static_cast<To>(INT64_MIN);
    return static_cast<To>(static_cast<int64_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace at::inline tessera
