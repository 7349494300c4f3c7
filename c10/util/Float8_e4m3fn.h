// c10::Float8_e4m3fn: the OCP FP8 E4M3 format ("fn": finite, no infinities). Bias 7,
// max 448, subnormals down to 2^-9, and a single NaN code per sign (S.1111.111).
// Conversion from float rounds to nearest-even; what would round past 448 becomes NaN.
#pragma once

#include <c10/util/Half.h>

#include <bit>
#include <cstdint>
#include <limits>

namespace c10::inline tessera {

struct alignas(1) Float8_e4m3fn {
  uint8_t x;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  Float8_e4m3fn() = default;
  constexpr Float8_e4m3fn(uint8_t bits, from_bits_t) : x(bits) {}

  constexpr Float8_e4m3fn(float value) : x(from_float(value)) {}
  constexpr operator float() const { return std::bit_cast<float>(to_float_bits(x)); }

  static constexpr uint8_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (f >> 24) & 0x80u;
    const uint32_t a = f & 0x7FFFFFFFu;
    // 464 is halfway between 448 (mantissa 110, even) and the missing 480 (the NaN code),
    // so it still rounds down; anything larger, inf and NaN have no finite home.
    if (a > 0x43E80000u) return static_cast<uint8_t>(sign | 0x7Fu);
    return static_cast<uint8_t>(sign | detail::round_fp32_magnitude<4, 3>(a));
  }

  static constexpr uint32_t to_float_bits(uint8_t b) {
    const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
    const uint32_t mag = b & 0x7Fu;
    if (mag == 0x7Fu) return sign | 0x7FC00000u;
    return sign | detail::widen_to_fp32_magnitude<4, 3>(mag);
  }

  constexpr bool isnan() const { return (x & 0x7Fu) == 0x7Fu; }
};

namespace detail {
template <>
inline constexpr bool is_reduced_float<Float8_e4m3fn> = true;
}

}  // namespace c10::inline tessera

namespace c10::inline tessera::detail {
struct Float8_e4m3fnFormat {
  static constexpr bool kHasInfinity = false, kHasSignalingNaN = false, kIec559 = false;
  static constexpr int kDigits = 4, kDigits10 = 0, kMaxDigits10 = 3, kMinExponent = -5, kMinExponent10 = -1,
                       kMaxExponent = 9, kMaxExponent10 = 2;
  static constexpr uint8_t kMin = 0x08, kLowest = 0xFE, kMax = 0x7E, kEpsilon = 0x20, kRoundError = 0x30,
                            kQuietNaN = 0x7F, kDenormMin = 0x01;
};
}  // namespace c10::inline tessera::detail

// No infinity() or signaling_NaN(): the format has neither (has_infinity says so).
template <>
class std::numeric_limits<c10::Float8_e4m3fn>
    : public c10::detail::float_format_limits<c10::Float8_e4m3fn, c10::detail::Float8_e4m3fnFormat> {
};
