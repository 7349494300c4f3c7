// Tests of c10::complex<float> and c10::complex<double>: arithmetic checked against
// std::complex<double> (computed in long double where rounding differences matter).
#include <c10/util/complex.h>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <type_traits>
#include <vector>

namespace {

using c10::complex;

// Relative error of a complex result, in units of the type's epsilon.
template <typename T, typename R>
double ulps(complex<T> got, std::complex<R> want) {
  const long double scale = std::abs(std::complex<long double>(want.real(), want.imag()));
  const long double err = std::abs(std::complex<long double>(got.real() - static_cast<long double>(want.real()),
                                                             got.imag() - static_cast<long double>(want.imag())));
  return static_cast<double>(err / (scale * std::numeric_limits<T>::epsilon()));
}

std::vector<std::complex<double>> samples() {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-20, 20);
  std::vector<std::complex<double>> out = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {3, 4}, {1e-3, 1e3}, {1e300, 1e300}, {1e-300, 3e-300}};
  for (int i = 0; i < 500; ++i) {
    out.emplace_back(std::ldexp(mant(rng), expo(rng)), std::ldexp(mant(rng), expo(rng)));
  }
  return out;
}

TEST(ComplexTest, ConstructionAndAccessors) {
  constexpr complex<float> a;
  static_assert(a.real() == 0.0f && a.imag() == 0.0f);
  constexpr complex<double> b(1.5, -2.0);
  static_assert(b.real() == 1.5 && b.imag() == -2.0);
  constexpr complex<double> c = 3.0;  // a real number converts implicitly
  static_assert(c.real() == 3.0 && c.imag() == 0.0);
  complex<float> d(1, 2);
  d.real(5.0f);
  d.imag(-6.0f);
  EXPECT_EQ(d.real(), 5.0f);
  EXPECT_EQ(d.imag(), -6.0f);
  EXPECT_EQ(c10::real(d), 5.0f);
  EXPECT_EQ(c10::imag(d), -6.0f);

  static_assert(sizeof(complex<float>) == sizeof(std::complex<float>));
  static_assert(sizeof(complex<double>) == sizeof(std::complex<double>));
  static_assert(std::is_trivially_copyable_v<complex<double>>);
}

TEST(ComplexTest, Conversions) {
  const std::complex<double> s(1.25, -0.5);
  const complex<double> z = s;
  EXPECT_EQ(z, complex<double>(1.25, -0.5));
  const auto back = static_cast<std::complex<double>>(z);
  EXPECT_EQ(back, s);
  static_assert(!std::is_convertible_v<complex<double>, std::complex<double>>);  // explicit
  // Widening is implicit and exact; narrowing must be explicit and rounds each part.
  static_assert(std::is_convertible_v<complex<float>, complex<double>>);
  static_assert(!std::is_convertible_v<complex<double>, complex<float>>);
  static_assert(std::is_constructible_v<complex<float>, complex<double>>);
  const complex<double> wide = complex<float>(0.1f, -0.2f);
  EXPECT_EQ(wide.real(), static_cast<double>(0.1f));
  EXPECT_EQ(wide.imag(), static_cast<double>(-0.2f));
  const complex<float> narrow(complex<double>(0.1, 1e300));
  EXPECT_EQ(narrow.real(), 0.1f);
  EXPECT_EQ(narrow.imag(), std::numeric_limits<float>::infinity());
}

template <typename T>
void check_arithmetic(double tol_mul, double tol_div) {
  const auto xs = samples();
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::complex<double> x = xs[i], y = xs[(i * 7 + 3) % xs.size()];
    const complex<T> a(static_cast<T>(x.real()), static_cast<T>(x.imag()));
    const complex<T> b(static_cast<T>(y.real()), static_cast<T>(y.imag()));
    // Reference on the exact same (possibly rounded-to-T) inputs, in long double.
    const std::complex<long double> la(a.real(), a.imag()), lb(b.real(), b.imag());
    if (!std::isfinite(a.real()) || !std::isfinite(b.real()) || !std::isfinite(a.imag()) || !std::isfinite(b.imag())) {
      continue;
    }
    // Sums and differences are single IEEE roundings, so equal to std::complex<T>'s bits.
    const std::complex<T> sa(a.real(), a.imag()), sb(b.real(), b.imag());
    EXPECT_EQ((a + b).real(), (sa + sb).real());
    EXPECT_EQ((a + b).imag(), (sa + sb).imag());
    EXPECT_EQ((a - b).real(), (sa - sb).real());
    EXPECT_EQ((a - b).imag(), (sa - sb).imag());
    const auto prod = la * lb, quot = la / lb;
    if (std::isfinite(static_cast<double>(std::abs(prod))) && std::abs(prod) < std::numeric_limits<T>::max() &&
        std::abs(prod) > std::numeric_limits<T>::min() * 1e10) {
      EXPECT_LT(ulps(a * b, prod), tol_mul) << x << " * " << y;
    }
    if (std::abs(quot) < std::numeric_limits<T>::max() && std::abs(quot) > std::numeric_limits<T>::min() * 1e10) {
      EXPECT_LT(ulps(a / b, quot), tol_div) << x << " / " << y;
    }
    // Against std::complex<double> directly, as the brief of this type asks.
    const std::complex<double> sd = std::complex<double>(a.real(), a.imag()) * std::complex<double>(b.real(), b.imag());
    if (std::is_same_v<T, double> && std::isfinite(std::abs(sd)) && std::abs(sd) > 1e-290) {
      EXPECT_LT(ulps(a * b, sd), tol_mul + 2);
    }
  }
}

TEST(ComplexTest, ArithmeticDouble) { check_arithmetic<double>(4, 8); }
TEST(ComplexTest, ArithmeticFloat) { check_arithmetic<float>(4, 8); }

TEST(ComplexTest, ScalarOperandsAndCompound) {
  using C = complex<double>;
  const C a(1, 2);
  EXPECT_EQ(a + 1.0, C(2, 2));
  EXPECT_EQ(1.0 + a, C(2, 2));
  EXPECT_EQ(a - 1.0, C(0, 2));
  EXPECT_EQ(1.0 - a, C(0, -2));
  EXPECT_EQ(a * 2.0, C(2, 4));
  EXPECT_EQ(2 * a, C(2, 4));  // int converts to the scalar type, not to complex
  EXPECT_EQ(a / 2.0, C(0.5, 1));
  EXPECT_EQ(5.0 / C(1, 2), C(1, -2));  // 5 / (1+2i) = (1-2i)
  EXPECT_EQ(a * C(0, 1), C(-2, 1));
  EXPECT_EQ(C(-5, 10) / C(3, 4), C(1, 2));
  EXPECT_EQ(-a, C(-1, -2));
  EXPECT_EQ(+a, a);
  C c = a;
  c += C(1, 1);
  c -= 0.5;
  c *= C(2, 0);
  c /= 3.0;
  EXPECT_EQ(c, C(1, 2));
  c *= 2.0;
  c /= C(0, 1);
  EXPECT_EQ(c, C(4, -2));
  c += 1.0;
  c -= C(0, -2);
  EXPECT_EQ(c, 5.0);
  EXPECT_TRUE(5.0 == c);
  EXPECT_TRUE(c != C(5, 1e-300));
  EXPECT_FALSE(C(std::nan(""), 0) == C(std::nan(""), 0));
  static_assert(C(1, 2) * C(3, 4) == C(-5, 10));
  static_assert(C(-5, 10) / C(3, 4) == C(1, 2));
}

TEST(ComplexTest, DivisionAvoidsOverflow) {
  // |b|^2 would overflow for the naive formula; Smith's scaling keeps the result exact-ish.
  const complex<double> a(1e300, 1e300), b(1e300, 1e300);
  const auto q = a / b;
  EXPECT_DOUBLE_EQ(q.real(), 1.0);
  EXPECT_DOUBLE_EQ(q.imag(), 0.0);
  const complex<float> c(1e-30f, 2e-30f), d(1e-30f, 0.0f);
  const auto r = c / d;
  EXPECT_FLOAT_EQ(r.real(), 1.0f);
  EXPECT_FLOAT_EQ(r.imag(), 2.0f);
}

TEST(ComplexTest, FreeFunctions) {
  const complex<double> z(3, -4);
  EXPECT_EQ(c10::abs(z), 5.0);
  EXPECT_EQ(c10::norm(z), 25.0);
  EXPECT_EQ(c10::conj(z), complex<double>(3, 4));
  EXPECT_DOUBLE_EQ(c10::arg(complex<double>(0, 1)), std::numbers::pi / 2);
  EXPECT_DOUBLE_EQ(c10::arg(complex<double>(-1, 0)), std::numbers::pi);
  EXPECT_EQ(c10::abs(complex<double>(1e300, 1e300)), std::hypot(1e300, 1e300));  // no overflow
  for (const auto& x : samples()) {
    const complex<double> w(x);
    EXPECT_DOUBLE_EQ(c10::abs(w), std::abs(x));
    EXPECT_DOUBLE_EQ(c10::arg(w), std::arg(x));
    const auto p = c10::polar(std::abs(x), std::arg(x));
    const auto sp = std::polar(std::abs(x), std::arg(x));
    EXPECT_DOUBLE_EQ(p.real(), sp.real());
    EXPECT_DOUBLE_EQ(p.imag(), sp.imag());
  }
  const auto f = c10::polar(2.0f, std::numbers::pi_v<float>);
  static_assert(std::is_same_v<decltype(f), const complex<float>>);
  EXPECT_FLOAT_EQ(f.real(), -2.0f);
  EXPECT_NEAR(f.imag(), 0.0f, 1e-6f);
}

TEST(ComplexTest, Printing) {
  std::ostringstream os;
  os << complex<double>(1.5, -2) << ' ' << complex<float>(0, 1);
  EXPECT_EQ(os.str(), "(1.5,-2) (0,1)");
}

}  // namespace
