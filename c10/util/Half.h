// c10::Half: IEEE 754 binary16 stored as its bits, converted in portable scalar code so
// that every CPU (with or without F16C) gives bit-identical results. Also holds the
// rounding helpers and arithmetic operators shared by BFloat16 and the Float8 types.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <ostream>

namespace c10::inline tessera {

namespace detail {

// Rounds the magnitude bits `a` of a finite float (sign cleared) to nearest-even in a
// narrower binary format with kExpBits/kManBits, including its subnormals. Overflow is the
// caller's business: each format treats it differently (inf, NaN).
template <int kExpBits, int kManBits>
constexpr uint32_t round_fp32_magnitude(uint32_t a) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr int kDrop = 23 - kManBits;
  constexpr uint32_t kMinNormal = uint32_t(127 - kBias + 1) << 23;
  if (a >= kMinNormal) {
    // Adding just under half an ulp, plus one when the kept LSB is odd, rounds ties to
    // even; a carry out of the mantissa lands in the exponent, which is what we want.
    const uint32_t r = a + ((1u << (kDrop - 1)) - 1) + ((a >> kDrop) & 1u);
    return (r >> kDrop) - (uint32_t(127 - kBias) << kManBits);
  }
  // Target subnormal: the result counts units of 2^(1 - bias - kManBits).
  const int e = static_cast<int>(a >> 23);
  if (e == 0) return 0;  // float subnormals are far below half the smallest target step
  const int shift = 151 - kBias - kManBits - e;  // >= kDrop + 1 here
  if (shift > 24) return 0;  // below half of the smallest subnormal
  const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // may become the smallest normal: fine
  return q;
}

// Widens the magnitude bits `h` of a finite narrow value (normal, subnormal or zero) to
// float bits, exactly.
template <int kExpBits, int kManBits>
constexpr uint32_t widen_to_fp32_magnitude(uint32_t h) {
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  constexpr uint32_t kManMask = (1u << kManBits) - 1;
  int e = static_cast<int>(h >> kManBits);
  uint32_t m = h & kManMask;
  if (e == 0) {
    if (m == 0) return 0;
    // Normalise: move the leading one up to the implicit-bit position.
    const int sh = std::countl_zero(m) - (31 - kManBits);
    m = (m << sh) & kManMask;
    e = 1 - sh;
  }
  return (static_cast<uint32_t>(e + 127 - kBias) << 23) | (m << (23 - kManBits));
}

// The types below are all "a float in fewer bits": they compute in float and round the
// result back. Marking them opts into the shared operators.
template <typename T>
inline constexpr bool is_reduced_float = false;
template <typename T>
concept ReducedFloat = is_reduced_float<T>;

}  // namespace detail

struct alignas(2) Half {
  uint16_t x;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  Half() = default;
  constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}

  constexpr Half(float value) : x(from_float(value)) {}
  constexpr operator float() const { return std::bit_cast<float>(to_float_bits(x)); }

  static constexpr uint16_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t a = f & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // quiet NaN, signed
    // 65520 is halfway from 65504 (odd mantissa) to 65536: ties go to even, i.e. inf.
    if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
    return static_cast<uint16_t>(sign | detail::round_fp32_magnitude<5, 10>(a));
  }

  static constexpr uint32_t to_float_bits(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t mag = h & 0x7FFFu;
    // Inf and NaN keep their payload (and so quiet/signalling), as numpy does.
    if (mag >= 0x7C00u) return sign | 0x7F800000u | ((mag & 0x3FFu) << 13);
    return sign | detail::widen_to_fp32_magnitude<5, 10>(mag);
  }
};

namespace detail {
template <>
inline constexpr bool is_reduced_float<Half> = true;
}

// Shared operators for every ReducedFloat (found by ADL). Same-type arithmetic stays in
// the type; mixing with float/double yields float/double; with integers it stays in the
// type, computed once in float (so it is correctly rounded for |int| <= 2^24).
#define TESSERA_REDUCED_FLOAT_BINARY_OP(op)                                                  \
  template <detail::ReducedFloat T>                                                          \
  constexpr T operator op(T a, T b) { return T(static_cast<float>(a) op static_cast<float>(b)); } \
  template <detail::ReducedFloat T>                                                          \
  constexpr float operator op(T a, float b) { return static_cast<float>(a) op b; }           \
  template <detail::ReducedFloat T>                                                          \
  constexpr float operator op(float a, T b) { return a op static_cast<float>(b); }           \
  template <detail::ReducedFloat T>                                                          \
  constexpr double operator op(T a, double b) { return static_cast<double>(static_cast<float>(a)) op b; } \
  template <detail::ReducedFloat T>                                                          \
  constexpr double operator op(double a, T b) { return a op static_cast<double>(static_cast<float>(b)); } \
  template <detail::ReducedFloat T>                                                          \
  constexpr T operator op(T a, int b) { return T(static_cast<float>(a) op static_cast<float>(b)); } \
  template <detail::ReducedFloat T>                                                          \
  constexpr T operator op(int a, T b) { return T(static_cast<float>(a) op static_cast<float>(b)); } \
  template <detail::ReducedFloat T>                                                          \
  constexpr T operator op(T a, int64_t b) { return T(static_cast<float>(a) op static_cast<float>(b)); } \
  template <detail::ReducedFloat T>                                                          \
  constexpr T operator op(int64_t a, T b) { return T(static_cast<float>(a) op static_cast<float>(b)); } \
  template <detail::ReducedFloat T>                                                          \
  constexpr T& operator op##=(T & a, float b) { return a = T(static_cast<float>(a) op b); }

TESSERA_REDUCED_FLOAT_BINARY_OP(+)
TESSERA_REDUCED_FLOAT_BINARY_OP(-)
TESSERA_REDUCED_FLOAT_BINARY_OP(*)
TESSERA_REDUCED_FLOAT_BINARY_OP(/)
#undef TESSERA_REDUCED_FLOAT_BINARY_OP

// Negation only flips the sign bit: exact, and it keeps NaN payloads.
template <detail::ReducedFloat T>
constexpr T operator-(T a) {
  using Bits = decltype(a.x);
  constexpr Bits kSign = static_cast<Bits>(Bits(1) << (8 * sizeof(Bits) - 1));
  return T(static_cast<Bits>(a.x ^ kSign), T::from_bits());
}
template <detail::ReducedFloat T>
constexpr T operator+(T a) { return a; }

// Comparisons need nothing: the implicit conversion to float selects the built-in ones,
// so NaN compares unequal and -0 == +0, as for float.

template <detail::ReducedFloat T>
std::ostream& operator<<(std::ostream& out, T value) { return out << static_cast<float>(value); }

namespace detail {

// What std::numeric_limits says of a binary float format: the parts every format here
// shares, plus its parameters and the bit patterns of its special values from Format.
// Each format's specialisation derives from this and adds infinity() and
// signaling_NaN() where the format has them.
template <typename T, typename Format>
struct float_format_limits {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = Format::kHasInfinity;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = Format::kHasSignalingNaN;
  static constexpr auto has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr auto round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = Format::kIec559;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = Format::kDigits;
  static constexpr int digits10 = Format::kDigits10;
  static constexpr int max_digits10 = Format::kMaxDigits10;
  static constexpr int radix = 2;
  static constexpr int min_exponent = Format::kMinExponent;
  static constexpr int min_exponent10 = Format::kMinExponent10;
  static constexpr int max_exponent = Format::kMaxExponent;
  static constexpr int max_exponent10 = Format::kMaxExponent10;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr T min() { return bits(Format::kMin); }
  static constexpr T lowest() { return bits(Format::kLowest); }
  static constexpr T max() { return bits(Format::kMax); }
  static constexpr T epsilon() { return bits(Format::kEpsilon); }
  static constexpr T round_error() { return bits(Format::kRoundError); }
  static constexpr T quiet_NaN() { return bits(Format::kQuietNaN); }
  static constexpr T denorm_min() { return bits(Format::kDenormMin); }

 protected:
  static constexpr T bits(decltype(T::x) b) { return T(b, T::from_bits()); }
};

}  // namespace detail

}  // namespace c10::inline tessera

namespace c10::inline tessera::detail {
struct HalfFormat {
  static constexpr bool kHasInfinity = true, kHasSignalingNaN = true, kIec559 = true;
  static constexpr int kDigits = 11, kDigits10 = 3, kMaxDigits10 = 5, kMinExponent = -13, kMinExponent10 = -4,
                       kMaxExponent = 16, kMaxExponent10 = 4;
  static constexpr uint16_t kMin = 0x0400, kLowest = 0xFBFF, kMax = 0x7BFF, kEpsilon = 0x1400, kRoundError = 0x3800,
                            kQuietNaN = 0x7E00, kDenormMin = 0x0001;
};
}  // namespace c10::inline tessera::detail

template <>
class std::numeric_limits<c10::Half>
    : public c10::detail::float_format_limits<c10::Half, c10::detail::HalfFormat> {
 public:
  static constexpr c10::Half infinity() { return bits(0x7C00); }
  static constexpr c10::Half signaling_NaN() { return bits(0x7D00); }
};
