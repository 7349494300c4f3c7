// c10::Scalar: one number of any Tessera type, held as bool, int64, double or
// complex<double>. Conversions to a narrower type are checked and raise on overflow with
// PyTorch's message ("value cannot be converted to type int8_t without overflow").
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
#include <ostream>
#include <string>
#include <type_traits>

namespace c10::inline tessera {

namespace detail {
template <typename T>
constexpr bool is_complex_v =
    std::is_same_v<T, complex<Half>> || std::is_same_v<T, complex<float>> || std::is_same_v<T, complex<double>>;
// The type of a complex type's parts; T itself otherwise.
template <typename T>
struct real_of {
  using type = T;
};
template <typename R>
struct real_of<complex<R>> {
  using type = R;
};
template <typename T>
constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
                                    std::is_same_v<T, Float8_e4m3fn> || std::is_same_v<T, Float8_e5m2>;

// The name used in overflow messages, as PyTorch spells it.
template <typename T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
  else if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
  else if constexpr (std::is_same_v<T, int16_t>) return "int16_t";
  else if constexpr (std::is_same_v<T, int32_t>) return "int";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64_t";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, Half>) return "at::Half";
  else if constexpr (std::is_same_v<T, BFloat16>) return "at::BFloat16";
  else if constexpr (std::is_same_v<T, Float8_e4m3fn>) return "at::Float8_e4m3fn";
  else if constexpr (std::is_same_v<T, Float8_e5m2>) return "at::Float8_e5m2";
  else if constexpr (std::is_same_v<T, complex<Half>>) return "c10::complex<c10::Half>";
  else if constexpr (std::is_same_v<T, complex<float>>) return "c10::complex<float>";
  else return "c10::complex<double>";
}

[[noreturn]] C10_API void throw_overflow(const char* type_name);

// Whether a real value is out of To's range, by PyTorch's rules: unsigned targets accept
// negative integers down to -max (two's-complement wrap, so uint8 takes -1 as 255);
// infinities convert to types that have them; NaN converts only to floating types.
template <typename To>
bool overflows(int64_t v) {
  if constexpr (std::is_same_v<To, bool> || is_complex_v<To> || std::is_floating_point_v<To>) {
    return false;
  } else if constexpr (is_reduced_float_v<To>) {
    double lim = static_cast<double>(static_cast<float>(std::numeric_limits<To>::max()));
    return v < -lim || v > lim;
  } else if constexpr (std::is_unsigned_v<To>) {
    constexpr int64_t max = std::numeric_limits<To>::max();
    return v > max || v < -max;
  } else {
    return v < std::numeric_limits<To>::lowest() || v > std::numeric_limits<To>::max();
  }
}
template <typename To>
bool overflows(double v) {
  if constexpr (std::is_same_v<To, bool> || std::is_same_v<To, double> || std::is_same_v<To, complex<double>>) {
    return false;
  } else if constexpr (std::is_integral_v<To>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    // int64's max rounds up to 2^63 as a double, which itself does not fit: compare
    // strictly there. (NaN fails both comparisons and so overflows.)
    return !(v >= lo && (sizeof(To) == 8 ? v < hi : v <= hi));
  } else {
    using Real = typename real_of<To>::type;
    if (v != v) return false;
    if (v == std::numeric_limits<double>::infinity() || v == -std::numeric_limits<double>::infinity()) {
      return !std::numeric_limits<Real>::has_infinity;
    }
    double lim = static_cast<double>(static_cast<float>(std::numeric_limits<Real>::max()));
    return v < -lim || v > lim;
  }
}

template <typename To>
To convert_real(double v) {
  if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    return To(static_cast<R>(v), R(0));
  } else if constexpr (is_reduced_float_v<To>) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}
}  // namespace detail

class C10_API Scalar {
 public:
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : tag_(Tag::Bool) { v_.i = v; }  // NOLINT: implicit, as in torch
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(Tag::Int) {  // NOLINT
    if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
      TORCH_CHECK(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                  "value ", v, " does not fit a Scalar's int64");
    }
    v_.i = static_cast<int64_t>(v);
  }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T> || detail::is_reduced_float_v<T>, int> = 0>
  Scalar(T v) : tag_(Tag::Double) {  // NOLINT
    if constexpr (std::is_floating_point_v<T>) v_.d = static_cast<double>(v);
    else v_.d = static_cast<double>(static_cast<float>(v));
  }
  template <typename T, std::enable_if_t<detail::is_complex_v<T>, int> = 0>
  Scalar(T v) : tag_(Tag::Complex) {  // NOLINT
    v_.z = complex<double>(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  }

  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isIntegral(bool includeBool) const { return tag_ == Tag::Int || (includeBool && tag_ == Tag::Bool); }
  bool isComplex() const { return tag_ == Tag::Complex; }
  bool isBoolean() const { return tag_ == Tag::Bool; }
  // The type a 0-dim tensor made from this value would have: Bool, Long, Double, ComplexDouble.
  ScalarType type() const;

  // Checked conversion to any Tessera element type.
  template <typename T>
  T to() const;

  bool toBool() const { return to<bool>(); }
  uint8_t toByte() const { return to<uint8_t>(); }
  int8_t toChar() const { return to<int8_t>(); }
  int16_t toShort() const { return to<int16_t>(); }
  int32_t toInt() const { return to<int32_t>(); }
  int64_t toLong() const { return to<int64_t>(); }
  float toFloat() const { return to<float>(); }
  double toDouble() const { return to<double>(); }
  Half toHalf() const { return to<Half>(); }
  BFloat16 toBFloat16() const { return to<BFloat16>(); }
  complex<float> toComplexFloat() const { return to<complex<float>>(); }
  complex<double> toComplexDouble() const { return to<complex<double>>(); }

  Scalar operator-() const;
  // Same kind and same value (1 and 1.0 differ; so do true and 1).
  bool equal(const Scalar& other) const;

 private:
  enum class Tag : uint8_t { Bool, Int, Double, Complex };
  Tag tag_;
  union Value {
    int64_t i;
    double d;
    complex<double> z;
    Value() : i(0) {}
  } v_;
};

template <typename T>
T Scalar::to() const {
  switch (tag_) {
    case Tag::Bool:
      if constexpr (std::is_same_v<T, bool>) return v_.i != 0;
      else return detail::convert_real<T>(static_cast<double>(v_.i));
    case Tag::Int:
      if (detail::overflows<T>(v_.i)) detail::throw_overflow(detail::type_name<T>());
      if constexpr (std::is_same_v<T, bool>) return v_.i != 0;
      else if constexpr (std::is_integral_v<T>) return static_cast<T>(v_.i);
      else return detail::convert_real<T>(static_cast<double>(v_.i));
    case Tag::Double:
      if (detail::overflows<T>(v_.d)) detail::throw_overflow(detail::type_name<T>());
      if constexpr (std::is_same_v<T, bool>) return v_.d != 0;
      else return detail::convert_real<T>(v_.d);
    case Tag::Complex:
      if constexpr (detail::is_complex_v<T>) {
        if (detail::overflows<T>(v_.z.real()) || detail::overflows<T>(v_.z.imag())) {
          detail::throw_overflow(detail::type_name<T>());
        }
        using R = typename T::value_type;
        return T(static_cast<R>(v_.z.real()), static_cast<R>(v_.z.imag()));
      } else {
        if constexpr (std::is_same_v<T, bool>) return v_.z.real() != 0 || v_.z.imag() != 0;
        // A complex number converts to a real type only when its imaginary part is zero.
        if (v_.z.imag() != 0 || detail::overflows<T>(v_.z.real())) detail::throw_overflow(detail::type_name<T>());
        return detail::convert_real<T>(v_.z.real());
      }
  }
  TORCH_INTERNAL_ASSERT(false, "corrupt Scalar tag");
}

C10_API std::ostream& operator<<(std::ostream& os, const Scalar& s);
C10_API std::string toString(const Scalar& s);

}  // namespace c10::inline tessera
