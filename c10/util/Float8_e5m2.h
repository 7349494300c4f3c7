// c10::Float8_e5m2: the OCP FP8 E5M2 format, IEEE-like (bias 15, inf S.11111.00, NaNs,
// subnormals), i.e. the top byte of a binary16. Max 57344; conversion from float rounds
// to nearest-even and overflows to inf.
#pragma once

#include <c10/util/Half.h>

#include <bit>
#include <cstdint>
#include <limits>

namespace c10::inline tessera {

struct alignas(1) Float8_e5m2 {
  uint8_t x;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  Float8_e5m2() = default;
  constexpr Float8_e5m2(uint8_t bits, from_bits_t) : x(bits) {}

  constexpr Float8_e5m2(float value) : x(from_float(value)) {}
  constexpr operator float() const { return std::bit_cast<float>(to_float_bits(x)); }

  // Rounded directly from float: going through Half would round twice.
  static constexpr uint8_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (f >> 24) & 0x80u;
    const uint32_t a = f & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return static_cast<uint8_t>(sign | 0x7Fu);
    // 61440 is halfway between 57344 (mantissa 11, odd) and 65536: ties go to inf.
    if (a >= 0x47700000u) return static_cast<uint8_t>(sign | 0x7Cu);
    return static_cast<uint8_t>(sign | detail::round_fp32_magnitude<5, 2>(a));
  }

  static constexpr uint32_t to_float_bits(uint8_t b) {
    const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
    const uint32_t mag = b & 0x7Fu;
    // Inf and NaN keep their payload, as Half's do (e5m2 is binary16's top byte).
    if (mag >= 0x7Cu) return sign | 0x7F800000u | ((mag & 0x3u) << 21);
    return sign | detail::widen_to_fp32_magnitude<5, 2>(mag);
  }

  constexpr bool isnan() const { return (x & 0x7Fu) > 0x7Cu; }
  constexpr bool isinf() const { return (x & 0x7Fu) == 0x7Cu; }
};

namespace detail {
template <>
inline constexpr bool is_reduced_float<Float8_e5m2> = true;
}

}  // namespace c10::inline tessera

namespace c10::inline tessera::detail {
struct Float8_e5m2Format {
  static constexpr bool kHasInfinity = true, kHasSignalingNaN = false, kIec559 = false;
  static constexpr int kDigits = 3, kDigits10 = 0, kMaxDigits10 = 2, kMinExponent = -13, kMinExponent10 = -4,
                       kMaxExponent = 16, kMaxExponent10 = 4;
  static constexpr uint8_t kMin = 0x04, kLowest = 0xFB, kMax = 0x7B, kEpsilon = 0x34, kRoundError = 0x38,
                            kQuietNaN = 0x7F, kDenormMin = 0x01;
};
}  // namespace c10::inline tessera::detail

template <>
class std::numeric_limits<c10::Float8_e5m2>
    : public c10::detail::float_format_limits<c10::Float8_e5m2, c10::detail::Float8_e5m2Format> {
 public:
  static constexpr c10::Float8_e5m2 infinity() { return bits(0x7C); }
};
