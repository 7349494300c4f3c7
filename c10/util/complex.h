// c10::complex<T> for T = float and double: the element type of ComplexFloat and
// ComplexDouble tensors. Layout-compatible with std::complex<T> (and aligned to its full
// size, so a pair loads as one vector), and constexpr throughout where the math allows.
#pragma once

#include <cmath>
#include <complex>
#include <ostream>
#include <type_traits>

namespace c10::inline tessera {

template <typename T>
struct alignas(2 * sizeof(T)) complex {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "c10::complex is defined for float and double only");
  using value_type = T;

  T real_ = T(0);
  T imag_ = T(0);

  constexpr complex() = default;
  constexpr complex(const T& re, const T& im = T()) : real_(re), imag_(im) {}
  constexpr complex(const std::complex<T>& z) : real_(z.real()), imag_(z.imag()) {}
  // float -> double is lossless and implicit; double -> float rounds, so it must be asked for.
  template <typename U>
    requires(!std::is_same_v<U, T>)
  explicit(sizeof(U) > sizeof(T)) constexpr complex(const complex<U>& z)
      : real_(static_cast<T>(z.real())), imag_(static_cast<T>(z.imag())) {}

  explicit constexpr operator std::complex<T>() const { return std::complex<T>(real_, imag_); }

  constexpr T real() const { return real_; }
  constexpr void real(T value) { real_ = value; }
  constexpr T imag() const { return imag_; }
  constexpr void imag(T value) { imag_ = value; }

  constexpr complex& operator+=(const complex& b) {
    real_ += b.real_;
    imag_ += b.imag_;
    return *this;
  }
  constexpr complex& operator-=(const complex& b) {
    real_ -= b.real_;
    imag_ -= b.imag_;
    return *this;
  }
  // The textbook product; unlike C's Annex G it does not try to recover infinities from
  // inf*0 NaNs (nor does CUDA's, which kernels must match).
  constexpr complex& operator*=(const complex& b) {
    const T re = real_ * b.real_ - imag_ * b.imag_;
    imag_ = real_ * b.imag_ + imag_ * b.real_;
    real_ = re;
    return *this;
  }
  // Smith's algorithm: scaling by the larger component of the divisor avoids the overflow
  // and underflow of forming |b|^2 directly.
  constexpr complex& operator/=(const complex& b) {
    const T a0 = real_, a1 = imag_, c = b.real_, d = b.imag_;
    if ((c < 0 ? -c : c) >= (d < 0 ? -d : d)) {
      const T r = d / c;
      const T den = c + d * r;
      real_ = (a0 + a1 * r) / den;
      imag_ = (a1 - a0 * r) / den;
    } else {
      const T r = c / d;
      const T den = d + c * r;
      real_ = (a0 * r + a1) / den;
      imag_ = (a1 * r - a0) / den;
    }
    return *this;
  }
  constexpr complex& operator+=(const T& s) {
    real_ += s;
    return *this;
  }
  constexpr complex& operator-=(const T& s) {
    real_ -= s;
    return *this;
  }
  constexpr complex& operator*=(const T& s) {
    real_ *= s;
    imag_ *= s;
    return *this;
  }
  constexpr complex& operator/=(const T& s) {
    real_ /= s;
    imag_ /= s;
    return *this;
  }

  friend constexpr complex operator+(const complex& a) { return a; }
  friend constexpr complex operator-(const complex& a) { return complex(-a.real_, -a.imag_); }

  friend constexpr complex operator+(complex a, const complex& b) { return a += b; }
  friend constexpr complex operator-(complex a, const complex& b) { return a -= b; }
  friend constexpr complex operator*(complex a, const complex& b) { return a *= b; }
  friend constexpr complex operator/(complex a, const complex& b) { return a /= b; }
  friend constexpr complex operator+(complex a, const T& s) { return a += s; }
  friend constexpr complex operator-(complex a, const T& s) { return a -= s; }
  friend constexpr complex operator*(complex a, const T& s) { return a *= s; }
  friend constexpr complex operator/(complex a, const T& s) { return a /= s; }
  friend constexpr complex operator+(const T& s, const complex& b) { return complex(s + b.real_, b.imag_); }
  friend constexpr complex operator-(const T& s, const complex& b) { return complex(s - b.real_, -b.imag_); }
  friend constexpr complex operator*(const T& s, const complex& b) { return complex(s * b.real_, s * b.imag_); }
  friend constexpr complex operator/(const T& s, const complex& b) { return complex(s) /= b; }

  friend constexpr bool operator==(const complex& a, const complex& b) {
    return a.real_ == b.real_ && a.imag_ == b.imag_;
  }
  friend constexpr bool operator==(const complex& a, const T& s) { return a.real_ == s && a.imag_ == T(0); }
};

static_assert(sizeof(complex<float>) == 8 && alignof(complex<float>) == 8);
static_assert(sizeof(complex<double>) == 16 && alignof(complex<double>) == 16);

template <typename T>
constexpr T real(const complex<T>& z) { return z.real(); }
template <typename T>
constexpr T imag(const complex<T>& z) { return z.imag(); }
template <typename T>
constexpr complex<T> conj(const complex<T>& z) { return complex<T>(z.real(), -z.imag()); }
// |z|^2, without the square root (std::norm's meaning, not a vector norm).
template <typename T>
constexpr T norm(const complex<T>& z) { return z.real() * z.real() + z.imag() * z.imag(); }
// hypot: no spurious overflow or underflow for large or tiny components.
template <typename T>
T abs(const complex<T>& z) { return std::hypot(z.real(), z.imag()); }
template <typename T>
T arg(const complex<T>& z) { return std::atan2(z.imag(), z.real()); }
template <typename T>
complex<T> polar(const T& r, const T& theta = T()) {
  return complex<T>(r * std::cos(theta), r * std::sin(theta));
}

template <typename T>
std::ostream& operator<<(std::ostream& out, const complex<T>& z) {
  return out << '(' << z.real() << ',' << z.imag() << ')';
}

}  // namespace c10::inline tessera
