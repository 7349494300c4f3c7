// Scalar special functions behind torch.special, in double precision (float inputs are
// computed in double and rounded): the normal distribution's tails (ndtr, log_ndtr,
// ndtri, erfcx), modified Bessel functions, Bessel functions of the first and second
// kind, Airy Ai, the regularised incomplete gamma functions and the classical orthogonal
// polynomials. Each method is chosen for double accuracy over its range (about 1e-13 or
// better against mpmath): power series where terms do not cancel, Miller's backward
// recurrence and Taylor tables, exponentially convergent trapezoidal quadrature of
// integral representations, Temme's uniform expansion, and asymptotic expansions
// truncated long before they diverge. Known weak spots: Q(a, x) for tiny a below x = a + 1
// is 1 - P (absolute, not relative, precision).
#pragma once

#include <aten/native/cpu/MathScalar.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace at::inline tessera::native::special {
// Compiled into each per-ISA kernel file: the ISA namespace keeps the copies apart.
inline namespace CPU_CAPABILITY {

inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kEulerGamma = 0.57721566490153286061;
inline constexpr double kSqrt2 = 1.41421356237309504880;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// exp(x^2) with x^2 split into its rounded value and the rounding error, so that the
// result keeps full relative precision where x^2 is large.
inline double exp_square(double x) {
  const double hi = x * x;
  const double lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1.0 + lo);
}

// The scaled complementary error function exp(x^2) erfc(x). The direct product is exact
// to a few ulp until erfc reaches subnormal numbers near x = 26; past 25 the asymptotic
// series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k has lost nothing by its sixth term.
inline double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < -26.7) return kInf;  // exp(x^2) overflows
  if (x < 25) return exp_square(x) * std::erfc(x);
  if (x > 1e8) return (1.0 / std::sqrt(kPi)) / x;
  const double t = 1.0 / (2.0 * x * x);
  double term = 1, sum = 1;
  for (int k = 1; k < 20; ++k) {
    term *= -(2 * k - 1) * t;
    sum += term;
    if (std::abs(term) < 1e-17) break;
  }
  return sum / (x * std::sqrt(kPi));
}

// The standard normal distribution function, and its logarithm: log1p of the upper tail
// above -1, and below it the lower tail written as exp(-x^2/2) erfcx(-x/sqrt 2) / 2 so
// that no intermediate underflows.
inline double ndtr(double x) { return 0.5 * std::erfc(-x / kSqrt2); }
inline double log_ndtr(double x) {
  if (x > -1) return std::log1p(-0.5 * std::erfc(x / kSqrt2));
  return std::log(0.5 * erfcx(-x / kSqrt2)) - 0.5 * x * x;
}

// The quantile of the standard normal distribution. In the centre sqrt(2) erfinv(2p - 1);
// in the lower tail, Abramowitz and Stegun's rational guess (26.2.23, error below 5e-4)
// polished by Halley steps on log ndtr(x) = log p, which stay exact down to the smallest
// subnormal p; the upper tail by symmetry (1 - p is exact there).
inline double ndtri(double p, int halley_steps = 2) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  // The centre: 2p - 1 is exact for p in [1/4, 1], and erfinv keeps its relative
  // precision near 0 (ndtri(1/2) is exactly 0), which the log-domain polish cannot.
  if (p >= 0.25 && p <= 0.75) return kSqrt2 * erfinv_double(2.0 * p - 1.0);
  if (p > 0.5) return -ndtri(1.0 - p, halley_steps);
  const double log_p = std::log(p);
  const double t = std::sqrt(-2.0 * log_p);
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  // Halley converges cubically: 5e-4 becomes about 1e-10 (enough for float), then far
  // below double's epsilon.
  for (int i = 0; i < halley_steps; ++i) {
    const double log_cdf = log_ndtr(x);
    const double f = log_cdf - log_p;
    const double r = std::exp(-0.5 * x * x - log_cdf) / std::sqrt(2.0 * kPi);  // pdf / cdf
    const double step = f / r;
    x -= step / (1.0 + 0.5 * step * (x + r));
  }
  return x;
}

// ---- Modified Bessel functions

// I_nu(x) e^-x for nu in {0, 1}, x >= 0. Up to 30 the power series (positive terms);
// beyond, the asymptotic expansion sum (-1)^k a_k(nu) / x^k / sqrt(2 pi x), whose terms
// are below 1e-17 of the sum well before they start to grow. Both stop once a term falls
// below `tolerance` of the sum (float results need only 1e-9).
inline constexpr double kDoubleTolerance = 1e-17;
// 1 / (k (k + nu)) for the first terms (the series at x = 30 needs about 60), so that the
// loop multiplies instead of dividing.
inline constexpr int kSeriesTable = 72;
template <int Nu>
inline constexpr std::array<double, kSeriesTable> kInverseTermRatio = [] {
  std::array<double, kSeriesTable> r{};
  for (int k = 1; k < kSeriesTable; ++k) r[k] = 1.0 / (static_cast<double>(k) * (k + Nu));
  return r;
}();
inline double scaled_bessel_i(int nu, double x, double tolerance = kDoubleTolerance) {
  if (x <= 30) {
    const double q = 0.25 * x * x;
    const std::array<double, kSeriesTable>& ratio = nu == 0 ? kInverseTermRatio<0> : kInverseTermRatio<1>;
    double term = nu == 0 ? 1.0 : 0.5 * x, sum = term;
    for (int k = 1; k < 500; ++k) {
      term *= q * (k < kSeriesTable ? ratio[k] : 1.0 / (k * static_cast<double>(k + nu)));
      sum += term;
      if (term < tolerance * sum) break;
    }
    return sum * std::exp(-x);
  }
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    const double next = term * -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
    if (std::abs(next) >= std::abs(term)) break;
    term = next;
    sum += term;
    if (std::abs(term) < tolerance * std::abs(sum)) break;
  }
  return sum / (std::sqrt(2.0 * kPi) * std::sqrt(x));  // (2 pi x would overflow near 1e308)
}

// I_nu(x) itself: e^x split in two halves, so it stays finite up to where I_nu overflows.
// At the infinities torch (and scipy) give NaN, as here, and the scaled forms give 0.
inline double bessel_i(int nu, double x, double tolerance = kDoubleTolerance) {
  if (std::isnan(x)) return x;
  const double ax = std::abs(x);
  if (ax == kInf) return kNaN;
  const double half = std::exp(0.5 * ax);
  const double v = scaled_bessel_i(nu, ax, tolerance) * half * half;
  return nu == 1 && x < 0 ? -v : v;
}
inline double bessel_i_scaled(int nu, double x, double tolerance = kDoubleTolerance) {
  if (std::isnan(x)) return x;
  const double ax = std::abs(x);
  if (ax == kInf) return nu == 1 && x < 0 ? -0.0 : 0.0;
  const double v = scaled_bessel_i(nu, ax, tolerance);
  return nu == 1 && x < 0 ? -v : v;
}

// e^x K_nu(x) for x > 2 (any real order): the trapezoidal rule on
// integral_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, whose error falls as exp(x - pi^2 / h)
// (the integrand grows like e^x inside its strip of analyticity) and, with the peak of
// width 1/sqrt(x), as exp(-2 pi^2 / (x h^2)): h = min(pi^2 / (x + 40), 0.7 / sqrt x) keeps
// both below 1e-17. Past 25 the asymptotic series, as for I.
inline double scaled_bessel_k_large(double nu, double x) {
  if (x > 25) {
    const double mu = 4.0 * nu * nu;
    double term = 1, sum = 1;
    for (int k = 1; k < 60; ++k) {
      const double next = term * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
      if (std::abs(next) >= std::abs(term)) break;
      term = next;
      sum += term;
      if (std::abs(term) < 1e-17 * std::abs(sum)) break;
    }
    return sum * (std::sqrt(kPi / 2.0) / std::sqrt(x));
  }
  const double h = std::min(kPi * kPi / (x + 40.0), 0.7 / std::sqrt(x));
  double sum = 0.5;  // the t = 0 node, weighted 1/2
  for (int k = 1; k < 1000; ++k) {
    const double t = k * h;
    const double exponent = x * (std::cosh(t) - 1.0);
    if (exponent > 45) break;
    sum += std::exp(-exponent) * std::cosh(nu * t);
  }
  return sum * h;
}

// K_0 and K_1 up to x = 2 from their series about 0:
// K_0 = -(log(x/2) + gamma) I_0 + sum H_k q^k / k!^2,
// K_1 = 1/x + log(x/2) I_1 - (x/4) sum (psi(k+1) + psi(k+2)) q^k / (k! (k+1)!), q = x^2/4.
inline double bessel_k_small(int nu, double x) {
  const double q = 0.25 * x * x;
  const double log_half = std::log(0.5 * x);
  if (nu == 0) {
    double term = 1, harmonic = 0, sum = 0;
    for (int k = 1; k < 60; ++k) {
      term *= q / (static_cast<double>(k) * k);
      harmonic += 1.0 / k;
      sum += term * harmonic;
      if (term * harmonic < 1e-17 * std::abs(sum)) break;
    }
    return -(log_half + kEulerGamma) * std::exp(x) * scaled_bessel_i(0, x) + sum;
  }
  double term = 1, psi_k1 = -kEulerGamma, sum = 0;  // psi(k+1), starting at k = 0
  for (int k = 0; k < 60; ++k) {
    if (k > 0) {
      term *= q / (static_cast<double>(k) * (k + 1));
      psi_k1 += 1.0 / k;
    }
    const double add = term * (2.0 * psi_k1 + 1.0 / (k + 1));
    sum += add;
    if (std::abs(add) < 1e-17 * std::abs(sum)) break;
  }
  return 1.0 / x + log_half * std::exp(x) * scaled_bessel_i(1, x) - 0.25 * x * sum;
}

// K_nu for nu in {0, 1}: infinite at 0, NaN below.
inline double bessel_k(int nu, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x <= 2) return bessel_k_small(nu, x);
  if (x == kInf) return 0.0;
  return scaled_bessel_k_large(nu, x) * std::exp(-x);
}
inline double bessel_k_scaled(int nu, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x <= 2) return bessel_k_small(nu, x) * std::exp(x);
  if (x == kInf) return 0.0;
  return scaled_bessel_k_large(nu, x);
}

// ---- Bessel functions of the first and second kind, orders 0 and 1

struct BesselPair {
  double j0, j1, y0, y1;
};

// Hankel's expansions for x > 25: sqrt(2/(pi x)) (P cos chi - Q sin chi) for J and
// (P sin chi + Q cos chi) for Y, chi = x - (nu/2 + 1/4) pi, with cos chi and sin chi
// formed from cos x and sin x (exact argument reduction, no rounded x - pi/4).
inline constexpr std::array<double, 80> kInverse = [] {
  std::array<double, 80> r{};
  for (int k = 1; k < 80; ++k) r[k] = 1.0 / k;
  return r;
}();
inline void hankel_pq(int nu, double x, double& p, double& q) {
  const double mu = 4.0 * nu * nu, inv_8x = 1.0 / (8.0 * x);
  double a = 1;  // a_k(nu) / x^k
  p = 1;
  q = 0;
  for (int k = 1; k < 80; ++k) {
    const double next = a * (mu - (2.0 * k - 1) * (2.0 * k - 1)) * inv_8x * kInverse[k];
    if (std::abs(next) >= std::abs(a) && k > 2) break;
    a = next;
    const double signed_a = (k / 2) % 2 == 0 ? a : -a;  // (-1)^floor(k/2)
    (k % 2 == 0 ? p : q) += signed_a;
    if (std::abs(a) < 1e-17) break;
  }
}

// 0 < x <= 25. Miller's algorithm: J_m by backward recurrence from m = N > x + 32,
// normalised by J_0 + 2 sum J_2k = 1; then Neumann's series
// Y_0 = (2/pi)((log(x/2) + gamma) J_0 - 2 sum (-1)^k J_2k / k) and its derivative for Y_1.
inline BesselPair bessel_jy_miller(double x) {
  if (x < 1e-5) {
    const double l = std::log(0.5 * x) + kEulerGamma;
    return {1.0 - 0.25 * x * x, 0.5 * x * (1.0 - 0.125 * x * x), (2.0 / kPi) * (l * (1.0 - 0.25 * x * x) + 0.25 * x * x),
            -2.0 / (kPi * x) + (x / kPi) * l - x / (2.0 * kPi)};
  }
  constexpr int kMax = 64;
  double j[kMax + 2];
  const int n = 2 * (static_cast<int>(x + 33) / 2);
  j[n + 1] = 0;
  j[n] = 1e-30;
  for (int m = n; m >= 1; --m) {
    j[m - 1] = (2.0 * m / x) * j[m] - j[m + 1];
    if (std::abs(j[m - 1]) > 1e200) {
      for (int i = m - 1; i <= n; ++i) j[i] *= 1e-200;
    }
  }
  double norm = j[0];
  for (int k = 2; k <= n; k += 2) norm += 2 * j[k];
  for (int i = 0; i <= n; ++i) j[i] /= norm;
  double y0_sum = 0, y1_sum = 0;
  for (int k = 1; 2 * k + 1 <= n; ++k) {
    const double sign = k % 2 == 0 ? 1.0 : -1.0;
    y0_sum += sign * j[2 * k] / k;
    y1_sum += sign * (j[2 * k - 1] - j[2 * k + 1]) / k;
  }
  const double l = std::log(0.5 * x) + kEulerGamma;
  return {j[0], j[1], (2.0 / kPi) * (l * j[0] - 2.0 * y0_sum), (2.0 / kPi) * (l * j[1] - j[0] / x + y1_sum)};
}

// J and Y (and Ai below) are NaN at the infinities, as torch's and scipy's are.
// From 1 to 25, Taylor series about the nearest point of a table (step 1/8, filled once
// by Miller's algorithm): Bessel's equation x y'' + y' + x y = 0 gives the coefficients
// of J_0 and Y_0 about x0 by a three-term recurrence, and J_1 = -J_0', Y_1 = -Y_0'. With
// |x - x0| <= 1/16 fourteen terms leave under 1e-19: one pass of multiply-adds instead of
// the recurrence's forty steps.
inline constexpr double kTableLow = 1.0, kTableStep = 0.125;
inline constexpr int kTableSize = 193;  // x0 = 1 ... 25
inline const std::array<BesselPair, kTableSize>& bessel_table() {
  static const std::array<BesselPair, kTableSize> table = [] {
    std::array<BesselPair, kTableSize> t{};
    for (int k = 0; k < kTableSize; ++k) t[k] = bessel_jy_miller(kTableLow + k * kTableStep);
    return t;
  }();
  return table;
}
inline constexpr int kTaylorTerms = 14;
inline constexpr std::array<double, kTaylorTerms> kInverseFallingPairs = [] {
  std::array<double, kTaylorTerms> r{};  // 1 / ((m + 2) (m + 1))
  for (int m = 0; m < kTaylorTerms; ++m) r[m] = 1.0 / ((m + 2.0) * (m + 1.0));
  return r;
}();
inline BesselPair bessel_jy_taylor(double x) {
  const int k = static_cast<int>(std::lround((x - kTableLow) / kTableStep));
  const double x0 = kTableLow + k * kTableStep, t = x - x0, inv_x0 = 1.0 / x0;
  const BesselPair& at = bessel_table()[k];
  // coefficients a_m (J) and b_m (Y) of t^m; the sums of a_m t^m and of m a_m t^(m-1)
  double a_prev = 0, a = at.j0, a_next = -at.j1, b_prev = 0, b = at.y0, b_next = -at.y1;
  double j0 = a, y0 = b, dj = a_next, dy = b_next, power = 1;  // power = t^m
  for (int m = 0; m + 2 < kTaylorTerms; ++m) {
    const double scale = -inv_x0 * kInverseFallingPairs[m], sq = (m + 1.0) * (m + 1.0);
    const double a2 = scale * (sq * a_next + x0 * a + a_prev);
    const double b2 = scale * (sq * b_next + x0 * b + b_prev);
    a_prev = a;
    a = a_next;
    a_next = a2;
    b_prev = b;
    b = b_next;
    b_next = b2;
    const double next_power = power * t;  // t^(m+1)
    j0 += a * next_power;
    y0 += b * next_power;
    dj += (m + 2) * a_next * next_power;
    dy += (m + 2) * b_next * next_power;
    power = next_power;
  }
  return {j0, -dj, y0, -dy};
}

// J_nu (second = false) or Y_nu (true) for nu in {0, 1}, x > 0: Miller below 1, the
// table's Taylor series to 25, beyond it Hankel's expansion of that one function.
inline double bessel_jy(int nu, bool second, double x) {
  if (x > 25) {
    const double amp = std::sqrt(2.0 / kPi) / std::sqrt(x), s = std::sin(x), c = std::cos(x);
    double p, q;
    hankel_pq(nu, x, p, q);
    const double cos_chi = nu == 0 ? (c + s) / kSqrt2 : (s - c) / kSqrt2;
    const double sin_chi = nu == 0 ? (s - c) / kSqrt2 : -(s + c) / kSqrt2;
    return second ? amp * (p * sin_chi + q * cos_chi) : amp * (p * cos_chi - q * sin_chi);
  }
  const BesselPair b = x >= kTableLow ? bessel_jy_taylor(x) : bessel_jy_miller(x);
  return second ? (nu == 0 ? b.y0 : b.y1) : (nu == 0 ? b.j0 : b.j1);
}

inline double bessel_j0(double x) {
  if (std::isnan(x)) return x;
  x = std::abs(x);
  if (x == kInf) return kNaN;
  return x == 0 ? 1.0 : bessel_jy(0, false, x);
}
inline double bessel_j1(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::abs(x);
  if (ax == kInf) return kNaN;
  if (x == 0) return x;
  const double v = bessel_jy(1, false, ax);
  return x < 0 ? -v : v;
}
inline double bessel_y(int nu, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return -kInf;
  if (x == kInf) return kNaN;
  return bessel_jy(nu, true, x);
}

// sin(x) / x, with its Taylor series near 0 where the quotient loses digits.
inline double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0.0;
  if (std::abs(x) < 0.5) {
    const double x2 = x * x;
    double term = 1, sum = 1;
    for (int k = 1; k < 12; ++k) {
      term *= -x2 / ((2.0 * k) * (2.0 * k + 1));
      sum += term;
    }
    return sum;
  }
  return std::sin(x) / x;
}

// ---- Airy Ai

// Ai(x): for x >= 1, sqrt(x/3) K_{1/3}(zeta) / pi with zeta = 2 x^(3/2) / 3 (the scaled K
// keeps e^-zeta apart, so nothing underflows before Ai does); from -8 to 1 the Maclaurin
// series Ai(0) f(x) + Ai'(0) g(x), summed in long double against its cancellation; below
// -8 the oscillating asymptotic expansion with u_k = u_{k-1} (6k-5)(6k-3)(6k-1) /
// ((2k-1) 216 k).
inline double airy_ai(double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  if (x >= 1) {
    const double zeta = 2.0 / 3.0 * x * std::sqrt(x);
    return std::sqrt(x / 3.0) / kPi * scaled_bessel_k_large(1.0 / 3.0, zeta) * std::exp(-zeta);
  }
  if (x > -8) {
    const long double ai0 = 0.355028053887817239260063186004183176L;
    const long double dai0 = -0.258819403792806798405183560189203963L;
    const long double lx = x, x3 = lx * lx * lx;
    long double f = 1, g = lx, tf = 1, tg = lx;
    for (int k = 1; k < 200; ++k) {
      tf *= x3 / ((3.0L * k - 1) * (3.0L * k));
      tg *= x3 / ((3.0L * k) * (3.0L * k + 1));
      f += tf;
      g += tg;
      if (std::abs(tf) + std::abs(tg) < 1e-22L * (std::abs(f) + std::abs(g))) break;
    }
    return static_cast<double>(ai0 * f + dai0 * g);
  }
  const double ax = -x, zeta = 2.0 / 3.0 * ax * std::sqrt(ax);
  double u = 1, power = 1, even = 1, odd = 0;
  for (int k = 1; k < 200; ++k) {
    const double next_u = u * (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k);
    const double next = next_u * power / zeta;
    if (std::abs(next) >= std::abs(u * power) && k > 2) break;
    u = next_u;
    power /= zeta;
    const double signed_term = (k / 2) % 2 == 0 ? u * power : -u * power;  // (-1)^floor(k/2)
    (k % 2 == 0 ? even : odd) += signed_term;
    if (std::abs(u * power) < 1e-17) break;
  }
  // sin and cos of zeta + pi/4 from those of zeta (no rounded sum in the argument)
  const double sz = std::sin(zeta), cz = std::cos(zeta);
  const double s = (sz + cz) / kSqrt2, c = (cz - sz) / kSqrt2;
  return (s * even - c * odd) / (std::sqrt(kPi) * std::sqrt(std::sqrt(ax)));
}


// ---- The regularised incomplete gamma functions P(a, x) (gammainc) and Q(a, x) (gammaincc)

// P by its power series (for x < a + 1) or Q by Legendre's continued fraction (modified
// Lentz), each times the prefactor x^a e^-x / Gamma(a); the other one as the complement.
// (The series is sum x^n / ((a+1)...(a+n)) times x^a e^-x / Gamma(a + 1): no 1/a term to
// overflow for the tiniest a.)
inline double incomplete_gamma_series(double a, double x) {
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 100000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  return std::min(1.0, sum * std::exp(a * std::log(x) - x - std::lgamma(a + 1.0)));
}
inline double incomplete_gamma_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / (std::abs(b) < tiny ? tiny : b), h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-16) break;
  }
  return std::min(1.0, h * std::exp(a * std::log(x) - x - std::lgamma(a)));
}

// For large a near the transition (a > 1e4, |x - a| < 0.3 a), where the series and the
// fraction need about sqrt(a) terms and their prefactor loses a log(x) ulps, Temme's
// uniform expansion: with lambda = x / a and eta = sign(lambda - 1) sqrt(2 (lambda - 1 -
// log lambda)), Q = erfc(eta sqrt(a/2)) / 2 + R and P = erfc(-eta sqrt(a/2)) / 2 - R,
// R = exp(-a eta^2 / 2) / sqrt(2 pi a) (c0(eta) + c1(eta) / a), the next term below 1e-12.
// c0 = 1/(lambda-1) - 1/eta and c1 = 1/eta^3 - 1/(lambda-1)^3 - 1/(lambda-1)^2 -
// 1/(12 (lambda-1)) cancel near eta = 0, where their Taylor series take over.
inline constexpr double kTemmeShape = 1e4;
inline double log1p_minus_x(double u) {  // log(1 + u) - u, without cancellation for small u
  if (std::abs(u) > 0.25) return std::log1p(u) - u;
  double power = u, sum = 0;
  for (int k = 2; k < 60; ++k) {
    power *= -u;
    const double term = power / k;
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  return sum;
}
inline double temme_remainder(double a, double x, double& eta) {
  const double u = (x - a) / a;
  eta = std::copysign(std::sqrt(-2.0 * log1p_minus_x(u)), u);
  double c0, c1;
  if (std::abs(eta) < 1e-3) {
    c0 = -1.0 / 3.0 + eta / 12.0 - 2.0 * eta * eta / 135.0;
  } else {
    c0 = 1.0 / u - 1.0 / eta;
  }
  if (std::abs(eta) < 0.01) {
    c1 = -1.0 / 540.0 - eta / 288.0 + eta * eta / 378.0;
  } else {
    c1 = 1.0 / (eta * eta * eta) - 1.0 / (u * u * u) - 1.0 / (u * u) - 1.0 / (12.0 * u);
  }
  return std::exp(-0.5 * a * eta * eta) / (std::sqrt(2.0 * kPi) * std::sqrt(a)) * (c0 + c1 / a);
}
inline bool use_temme(double a, double x) { return a > kTemmeShape && std::abs(x - a) < 0.3 * a; }

// The edges as torch has them, in its order (so one NaN argument can still meet a rule
// that does not read it): NaN for a negative argument, a = 0 is the limit (P = 1) for
// x > 0, and infinities decide the answer where only one argument is infinite.
inline double gammainc(double a, double x) {
  if (a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 1.0 : kNaN;
  if (x == 0) return 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 0.0;
  if (std::isinf(x)) return 1.0;
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  if (use_temme(a, x)) {
    double eta;
    const double r = temme_remainder(a, x, eta);
    return std::clamp(0.5 * std::erfc(-eta * std::sqrt(0.5 * a)) - r, 0.0, 1.0);
  }
  return x < a + 1 ? incomplete_gamma_series(a, x) : std::max(0.0, 1.0 - incomplete_gamma_fraction(a, x));
}
inline double gammaincc(double a, double x) {
  if (a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 0.0 : kNaN;
  if (x == 0) return 1.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 1.0;
  if (std::isinf(x)) return 0.0;
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  if (use_temme(a, x)) {
    double eta;
    const double r = temme_remainder(a, x, eta);
    return std::clamp(0.5 * std::erfc(eta * std::sqrt(0.5 * a)) + r, 0.0, 1.0);
  }
  return x < a + 1 ? std::max(0.0, 1.0 - incomplete_gamma_series(a, x)) : incomplete_gamma_fraction(a, x);
}

// The Hurwitz zeta function with torch's edges, checked in its order: the pole at s = 1,
// NaN below it, and a pole at each non-positive integer q (even for a NaN s). At
// q = +inf the limit 0 (scipy's answer; torch's summation meets 0/0 and gives NaN).
inline double hurwitz_zeta(double s, double q) {
  if (s == 1) return kInf;
  if (s < 1) return kNaN;
  if (q <= 0 && q == std::floor(q)) return kInf;
  return zeta_double(s, q);
}

// ---- Classical orthogonal polynomials of degree n (torch truncates a floating n to an
// integer; negative degrees give 0). Three-term recurrences, with torch's closed forms
// at the end points and, for high degrees inside (-1, 1), its trigonometric forms.

// The recurrence all four kinds share, P_{k+1} = 2x P_k - P_{k-1}, from P_0 = 1 and the
// kind's own P_1.
inline double chebyshev_recurrence(double x, int64_t n, double first) {
  if (n == 0) return 1;
  double p = 1, q = first;
  for (int64_t k = 2; k <= n; ++k) {
    const double r = (x + x) * q - p;
    p = q;
    q = r;
    if (std::isnan(q)) break;  // (overflowed to inf - inf: nothing more to compute)
  }
  return q;
}
inline double chebyshev_t(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return x > 0 || n % 2 == 0 ? 1.0 : -1.0;
  if (n > 6 && std::abs(x) < 1) return std::cos(n * std::acos(x));
  return chebyshev_recurrence(x, n, x);
}
inline double chebyshev_u(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return x > 0 || n % 2 == 0 ? n + 1.0 : -(n + 1.0);
  if (n > 8 && std::abs(x) < 1) {
    const double theta = std::acos(x);
    if (std::sin(theta) != 0) return std::sin((n + 1) * theta) / std::sin(theta);
    return (n + 1) * std::cos((n + 1) * theta) / x;
  }
  return chebyshev_recurrence(x, n, x + x);
}
inline double chebyshev_v(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) {
    if (x > 0) return 1;
    return n % 2 == 0 ? n + n + 1.0 : -(n + n + 1.0);
  }
  if (n > 8 && std::abs(x) < 1) {
    const double theta = std::acos(x);
    if (std::sin(theta / 2) != 1) return std::cos((n + 0.5) * theta) / std::cos(theta / 2);
    return n % 2 == 0 ? n + n + 1.0 : -(n + n + 1.0);
  }
  return chebyshev_recurrence(x, n, x + x - 1);
}
inline double chebyshev_w(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) {
    if (x > 0) return n + n + 1.0;
    return n % 2 == 0 ? 1.0 : -1.0;
  }
  if (n > 8 && std::abs(x) < 1) {
    const double theta = std::acos(x);
    if (std::cos(theta / 2) != 1) return std::sin((n + 0.5) * theta) / std::sin(theta / 2);
    if (x > 0) return n + n + 1.0;
    return n % 2 == 0 ? 1.0 : -1.0;
  }
  return chebyshev_recurrence(x, n, x + x + 1);
}
// The shifted polynomials are the plain ones at 2x - 1, on [0, 1].
inline double shifted_chebyshev_t(double x, int64_t n) { return chebyshev_t(x + x - 1, n); }
inline double shifted_chebyshev_u(double x, int64_t n) { return chebyshev_u(x + x - 1, n); }
inline double shifted_chebyshev_v(double x, int64_t n) { return chebyshev_v(x + x - 1, n); }
inline double shifted_chebyshev_w(double x, int64_t n) { return chebyshev_w(x + x - 1, n); }

// Physicists' H (H_{k+1} = 2x H_k - 2k H_{k-1}) and probabilists' He (x He_k - k He_{k-1}).
// Past max_degree (current PyTorch's limits: 512 for double, 128 for float) the result is
// NaN rather than a recurrence of n steps.
inline double hermite_h(double x, int64_t n, int64_t max_degree) {
  if (n < 0) return 0;
  if (n > max_degree) return kNaN;
  if (n == 0) return 1;
  double p = 1, q = x + x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = (x + x) * q - 2.0 * k * p;
    p = q;
    q = r;
  }
  return q;
}
inline double hermite_he(double x, int64_t n, int64_t max_degree) {
  if (n < 0) return 0;
  if (n > max_degree) return kNaN;
  if (n == 0) return 1;
  double p = 1, q = x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = x * q - static_cast<double>(k) * p;
    p = q;
    q = r;
  }
  return q;
}
// L_{k+1} = ((2k + 1 - x) L_k - k L_{k-1}) / (k + 1).
inline double laguerre_l(double x, int64_t n) {
  if (n < 0) return 0;
  if (x == 0 || n == 0) return 1;
  double p = 1, q = 1 - x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = ((2.0 * k + 1 - x) * q - static_cast<double>(k) * p) / (k + 1.0);
    p = q;
    q = r;
    if (std::isnan(q)) break;
  }
  return q;
}
// P_{k+1} = ((2k + 1) x P_k - k P_{k-1}) / (k + 1).
inline double legendre_p(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return x > 0 || n % 2 == 0 ? 1.0 : -1.0;
  if (n == 0) return 1;
  double p = 1, q = x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = ((2.0 * k + 1) * x * q - static_cast<double>(k) * p) / (k + 1.0);
    p = q;
    q = r;
    if (std::isnan(q)) break;
  }
  return q;
}

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::native::special
