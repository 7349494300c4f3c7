// Scalar math the elementwise kernels share: std:: functions lifted to Tessera's types
// (Half and BFloat16 computed in float, c10::complex through std::complex), and the
// special functions the standard library lacks (erfinv, digamma).
#pragma once

#include <aten/core/Dispatch.h>
#include <aten/cpu/vec/vec_base.h>

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {

template <typename T>
inline constexpr bool is_complex_v = is_complex_element_v<T>;  // complex<Half> included
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

// The Hurwitz zeta function zeta(s, q) = sum over k >= 0 of (q + k)^-s, for s > 1 (and, with
// integer s, negative non-integer q): the first terms summed directly until q + k > 9 and
// their relative size drops below machine epsilon, then the Euler-Maclaurin remainder,
// whose j-th correction divides by (2j)! / B_2j.
inline double zeta_double(double s, double q) {
  constexpr double kEpsilon = 1.11022302462515654042e-16;
  constexpr double kFactorialOverBernoulli[12] = {
      12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17,
      -7.1661652561756670113e18};
  if (s == 1) return std::numeric_limits<double>::infinity();
  if (s < 1 || std::isnan(s) || std::isnan(q)) return std::numeric_limits<double>::quiet_NaN();
  if (q == std::numeric_limits<double>::infinity()) return 0;
  if (q <= 0) {
    if (q == std::floor(q)) return std::numeric_limits<double>::infinity();  // a pole
    if (s != std::floor(s)) return std::numeric_limits<double>::quiet_NaN();  // (q + k)^-s not real
    // The direct sum walks from q up to 9 one term at a time; past a million terms the
    // answer would also have lost its digits to cancellation.
    if (q < -1e6) return std::numeric_limits<double>::quiet_NaN();
  }
  double sum = std::pow(q, -s), a = q, term = 0;
  for (int64_t k = 0; k < 9 || a <= 9; ++k) {
    a += 1;
    term = std::pow(a, -s);
    sum += term;
    if (std::abs(term / sum) < kEpsilon) return sum;
  }
  // The remainder beyond a: its integral, minus half the last term, plus the corrections.
  sum += term * a / (s - 1) - 0.5 * term;
  double rising = 1;  // s (s + 1) ... (s + 2j), built two factors at a time
  double power = term;
  double m = 0;
  for (double d : kFactorialOverBernoulli) {
    rising *= s + m;
    power /= a;
    const double correction = rising * power / d;
    sum += correction;
    if (std::abs(correction / sum) < kEpsilon) break;
    rising *= s + m + 1;
    power /= a;
    m += 2;
  }
  return sum;
}

// The n-th derivative of digamma: psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1.
// n! zeta is formed in log space: n! alone overflows for n >= 171.
inline double polygamma_double(int64_t n, double x) {
  if (n == 0) return digamma_double(x);
  const double sign = n % 2 == 1 ? 1.0 : -1.0;
  const double z = zeta_double(static_cast<double>(n) + 1.0, x);
  if (z == 0 || std::isnan(z) || std::isinf(z)) return sign * z;
  return sign * std::copysign(std::exp(std::lgamma(static_cast<double>(n) + 1.0) + std::log(std::abs(z))), z);
}

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::native
