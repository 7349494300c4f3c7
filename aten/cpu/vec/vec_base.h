// at::vec::Vectorized<T>, the generic definition: every operation element by element over
// a 32-byte array, through the std:: functions. It is what the DEFAULT capability runs and
// the reference the ISA specialisations (vec_avx2*.h) are tested against.
//
// Note [Vectorized lane count]
// size() is 32 / sizeof(T) on every capability (8 floats, 4 doubles, 32 int8s), so a kernel
// splits a row into the same full vectors and scalar tail whichever ISA runs it, and the
// AVX2 results can be compared lane for lane with the generic ones. An AVX-512 build would
// keep this and process two vectors per step.
//
// Note [Vectorized masks]
// Comparisons (a < b, ...) return a mask: each lane all one bits (true) or all zero bits
// (false); bool lanes use true/false. blendv looks at a lane's top bit (bool: its value).
// The eq/ne/lt/le/gt/ge members return 1/0 values of T instead.
#pragma once

// A file compiled outside the per-ISA machinery (tests, normal sources) gets the DEFAULT
// flavour, which is what the DEFAULT kernel files compile to as well.
#if !defined(CPU_CAPABILITY)
#define CPU_CAPABILITY DEFAULT
#define CPU_CAPABILITY_DEFAULT
#endif
#if defined(CPU_CAPABILITY_AVX2) && !(defined(__AVX2__) && defined(__FMA__) && defined(__F16C__))
#error "CPU_CAPABILITY_AVX2 needs -mavx2 -mfma -mf16c"
#endif

#include <c10/util/complex.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace at::inline tessera::vec {
inline namespace CPU_CAPABILITY {

inline constexpr int kVectorBytes = 32;

template <typename T>
class Vectorized;

namespace detail {

template <typename T>
inline constexpr bool is_complex_v = false;
template <typename T>
inline constexpr bool is_complex_v<c10::complex<T>> = true;

template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Unsigned arithmetic for integer lanes: wraps like torch instead of overflowing (UB).
// Narrow types compute in uint32_t so that promotion to int cannot overflow either.
template <typename T>
using wrap_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
T add(T a, T b) {
  if constexpr (is_int_v<T>) return static_cast<T>(wrap_t<T>(a) + wrap_t<T>(b));
  else return static_cast<T>(a + b);
}
template <typename T>
T sub(T a, T b) {
  if constexpr (is_int_v<T>) return static_cast<T>(wrap_t<T>(a) - wrap_t<T>(b));
  else return static_cast<T>(a - b);
}
template <typename T>
T mul(T a, T b) {
  if constexpr (is_int_v<T>) return static_cast<T>(wrap_t<T>(a) * wrap_t<T>(b));
  else return static_cast<T>(a * b);
}
// Integer division by zero gives 0 (callers raise torch's ZeroDivisionError first);
// lowest / -1 wraps to lowest.
template <typename T>
T div(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return static_cast<T>(wrap_t<T>(0) - wrap_t<T>(a));
    }
    return static_cast<T>(a / b);
  } else {
    return static_cast<T>(a / b);
  }
}
template <typename T>
T neg(T a) {
  if constexpr (is_int_v<T>) return static_cast<T>(wrap_t<T>(0) - wrap_t<T>(a));
  else return -a;
}
template <typename T>
T abs(T a) {
  if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
  else if constexpr (is_int_v<T> && std::is_signed_v<T>) return a < 0 ? neg(a) : a;
  else if constexpr (is_complex_v<T>) return T(c10::abs(a));
  else return a;
}
// torch's shifts: a count outside [0, bits) gives 0 (left), or the sign fill (right).
template <typename T>
T shl(T a, T b) {
  constexpr int64_t kBits = 8 * sizeof(T);
  if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= kBits) return 0;
  return static_cast<T>(wrap_t<T>(a) << b);
}
template <typename T>
T shr(T a, T b) {
  constexpr int64_t kBits = 8 * sizeof(T);
  if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= kBits) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    else return T(0);
  }
  return static_cast<T>(a >> b);  // arithmetic for signed types (C++20)
}

// Max/min as the x86 instructions define them (so AVX2 and generic agree bit for bit):
// a > b ? a : b, except that a NaN in either operand is returned (a's if both).
template <typename T>
T maximum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
  }
  return a > b ? a : b;
}
template <typename T>
T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
  }
  return a < b ? a : b;
}

template <typename T>
T mask_true() {
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else {
    T v;
    std::memset(static_cast<void*>(&v), 0xFF, sizeof(T));
    return v;
  }
}
template <typename T>
bool mask_set(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, static_cast<const void*>(&v), sizeof(T));
    return (bytes[sizeof(T) - 1] & 0x80) != 0;  // little endian: the top bit of the lane
  }
}

// erfinv: Giles' single-precision approximation ("Approximating the erfinv function",
// GPU Computing Gems, 2011) refined by Newton steps in double.
inline double erfinv_double(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1) return std::numeric_limits<double>::infinity();
  if (y == -1) return -std::numeric_limits<double>::infinity();
  if (y == 0) return y;  // keeps -0
  const double a = std::fabs(y);
  double w = -std::log((1.0 - a) * (1.0 + a));
  double x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    x = p * a;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
    x = p * a;
  }
  // Newton on erf(x) = a; near 1 on log(erfc(x)) = log(1 - a) instead, where erfc keeps
  // the precision and the logarithm makes the function nearly quadratic (fast convergence
  // from the approximation, which is meant for float's range).
  constexpr double kTwoOverSqrtPi = 1.1283791670955126;
  const bool tail = a >= 0.5;
  const double log_d = tail ? std::log(1.0 - a) : 0.0;
  for (int i = 0; i < 8; ++i) {
    const double d = kTwoOverSqrtPi * std::exp(-x * x);
    if (d == 0) break;
    double step;
    if (tail) {
      const double e = std::erfc(x);
      step = (std::log(e) - log_d) * e / d;  // f = log(erfc) - log(1 - a), f' = -d / erfc
      x += step;
    } else {
      step = (std::erf(x) - a) / d;
      x -= step;
    }
    if (std::fabs(step) <= 1e-17 * x) break;
  }
  return std::copysign(x, y);
}

template <typename T>
T erfinv(T y) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(erfinv_double(y));
  else return static_cast<T>(erfinv_double(static_cast<double>(y)));
}

}  // namespace detail

// The operations every Vectorized<T> has, written element by element over store()/loadu()
// of Derived. The generic Vectorized<T> is just this; a specialisation derives from it too
// and hides the members it does faster (by defining ones with the same name).
template <typename T, typename Derived>
class VectorizedOps {
 public:
  using value_type = T;
  static constexpr int size() { return kVectorBytes / static_cast<int>(sizeof(T)); }

  template <typename F>
  Derived map(F f) const {
    alignas(kVectorBytes) T v[size()];
    self().store(v);
    for (int i = 0; i < size(); ++i) v[i] = f(v[i]);
    return Derived::loadu(v);
  }
  template <typename F>
  Derived zip(const Derived& other, F f) const {
    alignas(kVectorBytes) T a[size()];
    alignas(kVectorBytes) T b[size()];
    self().store(a);
    other.store(b);
    for (int i = 0; i < size(); ++i) a[i] = f(a[i], b[i]);
    return Derived::loadu(a);
  }

  // [0, 1, ..., size() - 1] * step + base.
  static Derived arange(T base = T(0), T step = T(1)) {
    alignas(kVectorBytes) T v[size()];
    for (int i = 0; i < size(); ++i) v[i] = static_cast<T>(base + static_cast<T>(i) * step);
    return Derived::loadu(v);
  }
  // Lane i from b where the mask lane is set (Note [Vectorized masks]), else from a.
  static Derived blendv(const Derived& a, const Derived& b, const Derived& mask) {
    alignas(kVectorBytes) T va[size()];
    alignas(kVectorBytes) T vb[size()];
    alignas(kVectorBytes) T vm[size()];
    a.store(va);
    b.store(vb);
    mask.store(vm);
    for (int i = 0; i < size(); ++i) {
      if (detail::mask_set(vm[i])) va[i] = vb[i];
    }
    return Derived::loadu(va);
  }
  // Lane i from b where bit i of Mask is set, else from a.
  template <uint64_t Mask>
  static Derived blend(const Derived& a, const Derived& b) {
    alignas(kVectorBytes) T va[size()];
    alignas(kVectorBytes) T vb[size()];
    a.store(va);
    b.store(vb);
    for (int i = 0; i < size(); ++i) {
      if ((Mask >> i) & 1) va[i] = vb[i];
    }
    return Derived::loadu(va);
  }
  // The first `count` lanes from b, the rest from a.
  static Derived set(const Derived& a, const Derived& b, int64_t count = size()) {
    alignas(kVectorBytes) T va[size()];
    alignas(kVectorBytes) T vb[size()];
    a.store(va);
    b.store(vb);
    for (int64_t i = 0; i < count && i < size(); ++i) va[i] = vb[i];
    return Derived::loadu(va);
  }

  // Masks (Note [Vectorized masks]).
  Derived isnan() const {
    return map([](T x) { return x != x ? detail::mask_true<T>() : T(0); });
  }
  // 1/0 values.
  Derived eq(const Derived& o) const { return values_of(self() == o); }
  Derived ne(const Derived& o) const { return values_of(self() != o); }
  Derived lt(const Derived& o) const { return values_of(self() < o); }
  Derived le(const Derived& o) const { return values_of(self() <= o); }
  Derived gt(const Derived& o) const { return values_of(self() > o); }
  Derived ge(const Derived& o) const { return values_of(self() >= o); }

  Derived abs() const { return map([](T x) { return detail::abs(x); }); }
  Derived neg() const { return map([](T x) { return detail::neg(x); }); }
  Derived sqrt() const { return map([](T x) { return std::sqrt(x); }); }
  Derived rsqrt() const { return map([](T x) { return T(1) / std::sqrt(x); }); }
  Derived reciprocal() const { return map([](T x) { return T(1) / x; }); }
  Derived exp() const { return map([](T x) { return std::exp(x); }); }
  // exp of lanes known to be <= 0 (or NaN): a specialisation may skip the overflow clamp.
  Derived exp_nonpositive() const { return exp(); }
  Derived exp2() const { return map([](T x) { return std::exp2(x); }); }
  Derived expm1() const { return map([](T x) { return std::expm1(x); }); }
  Derived log() const { return map([](T x) { return std::log(x); }); }
  Derived log2() const { return map([](T x) { return std::log2(x); }); }
  Derived log10() const { return map([](T x) { return std::log10(x); }); }
  Derived log1p() const { return map([](T x) { return std::log1p(x); }); }
  Derived sin() const { return map([](T x) { return std::sin(x); }); }
  Derived cos() const { return map([](T x) { return std::cos(x); }); }
  Derived tan() const { return map([](T x) { return std::tan(x); }); }
  Derived asin() const { return map([](T x) { return std::asin(x); }); }
  Derived acos() const { return map([](T x) { return std::acos(x); }); }
  Derived atan() const { return map([](T x) { return std::atan(x); }); }
  Derived sinh() const { return map([](T x) { return std::sinh(x); }); }
  Derived cosh() const { return map([](T x) { return std::cosh(x); }); }
  Derived tanh() const { return map([](T x) { return std::tanh(x); }); }
  Derived asinh() const { return map([](T x) { return std::asinh(x); }); }
  Derived acosh() const { return map([](T x) { return std::acosh(x); }); }
  Derived atanh() const { return map([](T x) { return std::atanh(x); }); }
  Derived erf() const { return map([](T x) { return std::erf(x); }); }
  Derived erfc() const { return map([](T x) { return std::erfc(x); }); }
  Derived erfinv() const { return map([](T x) { return detail::erfinv(x); }); }
  Derived lgamma() const { return map([](T x) { return std::lgamma(x); }); }
  Derived floor() const { return map([](T x) { return std::floor(x); }); }
  Derived ceil() const { return map([](T x) { return std::ceil(x); }); }
  Derived round() const { return map([](T x) { return std::nearbyint(x); }); }  // half to even
  Derived trunc() const { return map([](T x) { return std::trunc(x); }); }
  Derived frac() const { return map([](T x) { return x - std::trunc(x); }); }
  // 1 / (1 + e^-x), as e^x / (1 + e^x) for x < 0 so the exponential never overflows.
  Derived sigmoid() const {
    return map([](T x) {
      const T e = std::exp(-std::fabs(x));
      return (x < T(0) ? e : T(1)) / (T(1) + e);
    });
  }
  Derived atan2(const Derived& o) const { return zip(o, [](T a, T b) { return std::atan2(a, b); }); }
  Derived pow(const Derived& o) const { return zip(o, [](T a, T b) { return std::pow(a, b); }); }
  Derived fmod(const Derived& o) const { return zip(o, [](T a, T b) { return std::fmod(a, b); }); }
  Derived hypot(const Derived& o) const { return zip(o, [](T a, T b) { return std::hypot(a, b); }); }
  Derived copysign(const Derived& o) const { return zip(o, [](T a, T b) { return std::copysign(a, b); }); }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  // A mask's lanes are all ones or all zeros, so and-ing with 1 gives 1/0.
  static Derived values_of(const Derived& mask) { return mask & Derived(T(1)); }
};

// The generic Vectorized<T>: a 32-byte array.
template <typename T>
class Vectorized : public VectorizedOps<T, Vectorized<T>> {
 public:
  using VectorizedOps<T, Vectorized<T>>::size;

  Vectorized() : values_{} {}
  Vectorized(T v) {  // NOLINT: implicit broadcast, like a scalar operand
    for (int i = 0; i < size(); ++i) values_[i] = v;
  }
  template <typename... Args>
    requires(sizeof...(Args) == static_cast<size_t>(kVectorBytes / sizeof(T)) && sizeof...(Args) > 1)
  Vectorized(Args... vals) : values_{static_cast<T>(vals)...} {}

  // Reads min(count, size()) elements from any address; the other lanes are zero.
  static Vectorized loadu(const void* ptr, int64_t count = kVectorBytes / sizeof(T)) {
    Vectorized r;
    std::memcpy(static_cast<void*>(r.values_), ptr, static_cast<size_t>(count < size() ? count : size()) * sizeof(T));
    return r;
  }
  // Writes the first min(count, size()) lanes to any address.
  void store(void* ptr, int64_t count = kVectorBytes / sizeof(T)) const {
    std::memcpy(ptr, static_cast<const void*>(values_), static_cast<size_t>(count < size() ? count : size()) * sizeof(T));
  }
  const T& operator[](int i) const { return values_[i]; }
  T& operator[](int i) { return values_[i]; }

 private:
  alignas(kVectorBytes) T values_[kVectorBytes / sizeof(T)];
};

// Operators and free functions, element by element. A specialisation provides non-template
// overloads for its own type, which overload resolution prefers.
template <typename T>
Vectorized<T> operator+(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::add(x, y); });
}
template <typename T>
Vectorized<T> operator-(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::sub(x, y); });
}
template <typename T>
Vectorized<T> operator*(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::mul(x, y); });
}
template <typename T>
Vectorized<T> operator/(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::div(x, y); });
}
template <typename T>
Vectorized<T> operator-(const Vectorized<T>& a) {
  return a.neg();
}

#define TESSERA_VEC_GENERIC_COMPARE(op)                                                    \
  template <typename T>                                                                    \
  Vectorized<T> operator op(const Vectorized<T>& a, const Vectorized<T>& b) {              \
    return a.zip(b, [](T x, T y) { return (x op y) ? detail::mask_true<T>() : T(0); });    \
  }
TESSERA_VEC_GENERIC_COMPARE(==)
TESSERA_VEC_GENERIC_COMPARE(!=)
TESSERA_VEC_GENERIC_COMPARE(<)
TESSERA_VEC_GENERIC_COMPARE(<=)
TESSERA_VEC_GENERIC_COMPARE(>)
TESSERA_VEC_GENERIC_COMPARE(>=)
#undef TESSERA_VEC_GENERIC_COMPARE

namespace detail {
// Bitwise operations work on the bytes, so they apply to masks of every type.
template <typename T, typename F>
Vectorized<T> bytewise(const Vectorized<T>& a, const Vectorized<T>& b, F f) {
  unsigned char x[kVectorBytes];
  unsigned char y[kVectorBytes];
  a.store(x);
  b.store(y);
  for (int i = 0; i < kVectorBytes; ++i) x[i] = static_cast<unsigned char>(f(x[i], y[i]));
  return Vectorized<T>::loadu(x);
}
}  // namespace detail

template <typename T>
Vectorized<T> operator&(const Vectorized<T>& a, const Vectorized<T>& b) {
  return detail::bytewise(a, b, [](unsigned char x, unsigned char y) { return x & y; });
}
template <typename T>
Vectorized<T> operator|(const Vectorized<T>& a, const Vectorized<T>& b) {
  return detail::bytewise(a, b, [](unsigned char x, unsigned char y) { return x | y; });
}
template <typename T>
Vectorized<T> operator^(const Vectorized<T>& a, const Vectorized<T>& b) {
  return detail::bytewise(a, b, [](unsigned char x, unsigned char y) { return x ^ y; });
}
template <typename T>
  requires(detail::is_int_v<T> || std::is_same_v<T, bool>)
Vectorized<T> operator~(const Vectorized<T>& a) {
  if constexpr (std::is_same_v<T, bool>) return a.map([](bool x) { return !x; });
  else return a.map([](T x) { return static_cast<T>(~x); });
}
template <typename T>
  requires detail::is_int_v<T>
Vectorized<T> operator<<(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::shl(x, y); });
}
template <typename T>
  requires detail::is_int_v<T>
Vectorized<T> operator>>(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::shr(x, y); });
}

// NaN-propagating max/min (torch.maximum/minimum); see detail::maximum for which NaN.
template <typename T>
Vectorized<T> maximum(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::maximum(x, y); });
}
template <typename T>
Vectorized<T> minimum(const Vectorized<T>& a, const Vectorized<T>& b) {
  return a.zip(b, [](T x, T y) { return detail::minimum(x, y); });
}
// torch.clamp: lo > a ? lo : a, then hi < that ? hi : that; a NaN `a` stays NaN.
template <typename T>
Vectorized<T> clamp_min(const Vectorized<T>& a, const Vectorized<T>& lo) {
  return a.zip(lo, [](T x, T l) { return l > x ? l : x; });
}
template <typename T>
Vectorized<T> clamp_max(const Vectorized<T>& a, const Vectorized<T>& hi) {
  return a.zip(hi, [](T x, T h) { return h < x ? h : x; });
}
template <typename T>
Vectorized<T> clamp(const Vectorized<T>& a, const Vectorized<T>& lo, const Vectorized<T>& hi) {
  return clamp_max(clamp_min(a, lo), hi);
}
// a * b + c, fused (one rounding) for floating types.
template <typename T>
Vectorized<T> fmadd(const Vectorized<T>& a, const Vectorized<T>& b, const Vectorized<T>& c) {
  alignas(kVectorBytes) T va[Vectorized<T>::size()];
  alignas(kVectorBytes) T vb[Vectorized<T>::size()];
  alignas(kVectorBytes) T vc[Vectorized<T>::size()];
  a.store(va);
  b.store(vb);
  c.store(vc);
  for (int i = 0; i < Vectorized<T>::size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) va[i] = std::fma(va[i], vb[i], vc[i]);
    else va[i] = detail::add(detail::mul(va[i], vb[i]), vc[i]);
  }
  return Vectorized<T>::loadu(va);
}

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::vec
