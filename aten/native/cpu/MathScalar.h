// Scalar math the elementwise kernels share: std:: functions lifted to Tessera's types
// (Half and BFloat16 computed in float, c10::complex through std::complex), and the
// special functions the standard library lacks (erfinv, digamma).
#pragma once

#include <aten/cpu/vec/vec_base.h>
#include <aten/native/Dispatch.h>

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {

template <typename T>
inline constexpr bool is_complex_v = std::is_same_v<T, c10::complex<float>> || std::is_same_v<T, c10::complex<double>>;
template <typename T>
inline constexpr bool is_reduced_v = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;

// Applies f (generic over float, double and std::complex) to x of any floating type.
template <typename T, typename F>
inline T apply_math(T x, F f) {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    std::complex<R> r = f(std::complex<R>(x.real(), x.imag()));
    return T(r.real(), r.imag());
  } else if constexpr (is_reduced_v<T>) {
    return T(static_cast<float>(f(static_cast<float>(x))));
  } else {
    return f(x);
  }
}

template <typename T>
struct is_std_complex : std::false_type {};
template <typename R>
struct is_std_complex<std::complex<R>> : std::true_type {};

// expm1, log2 and log1p have no std::complex overloads; these fill the gap.
template <typename T>
inline T expm1_any(T x) {
  if constexpr (is_std_complex<T>::value) {
    return std::exp(x) - T(1);
  } else {
    return std::expm1(x);
  }
}
template <typename T>
inline T log2_any(T x) {
  if constexpr (is_std_complex<T>::value) {
    return std::log(x) / std::log(typename T::value_type(2));
  } else {
    return std::log2(x);
  }
}
template <typename T>
inline T log1p_any(T x) {
  if constexpr (is_std_complex<T>::value) {
    return std::log(T(1) + x);
  } else {
    return std::log1p(x);
  }
}

// 1 / (1 + e^-x) without overflow: for x < 0, e^-x overflows below about -88 (float) and
// the quotient collapses to 0 instead of the tiny e^x / (1 + e^x); so negatives use that
// second form (as Vectorized<T>::sigmoid does, keeping tails and strided rows in step with
// the vector lanes). Complex keeps the direct form, as torch computes it.
template <typename T>
inline T sigmoid_any(T x) {
  if constexpr (is_std_complex<T>::value) {
    return T(1) / (T(1) + std::exp(-x));
  } else {
    const T e = std::exp(-std::fabs(x));
    return (x < T(0) ? e : T(1)) / (T(1) + e);
  }
}

// The inverse error function (shared with the vector kernels' element-wise fallback).
using vec::detail::erfinv_double;

// The digamma function: reflection for negatives, recurrence up to 6, then the
// asymptotic series. digamma(0) is -inf with the sign of -0 as torch has it.
inline double digamma_double(double x) {
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) return std::numeric_limits<double>::quiet_NaN();
  if (x < 0) {
    if (x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    const double pi = 3.14159265358979323846;
    return digamma_double(1.0 - x) - pi / std::tan(pi * x);
  }
  double result = 0;
  while (x < 6) {
    result -= 1.0 / x;
    x += 1.0;
  }
  const double f = 1.0 / (x * x);
  const double series =
      f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
  return result + std::log(x) - 0.5 / x - series;
}

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::native
