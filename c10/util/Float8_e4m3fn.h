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

// No infinity() or signaling_NaN(): the format has neither (has_infinity says so).
template <>
class std::numeric_limits<c10::Float8_e4m3fn> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = false;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = false;
  static constexpr auto has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr auto round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 4;
  static constexpr int digits10 = 0;
  static constexpr int max_digits10 = 3;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -5;
  static constexpr int min_exponent10 = -1;
  static constexpr int max_exponent = 9;
  static constexpr int max_exponent10 = 2;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr c10::Float8_e4m3fn min() { return {0x08, c10::Float8_e4m3fn::from_bits()}; }
  static constexpr c10::Float8_e4m3fn lowest() { return {0xFE, c10::Float8_e4m3fn::from_bits()}; }
  static constexpr c10::Float8_e4m3fn max() { return {0x7E, c10::Float8_e4m3fn::from_bits()}; }
  static constexpr c10::Float8_e4m3fn epsilon() { return {0x20, c10::Float8_e4m3fn::from_bits()}; }
  static constexpr c10::Float8_e4m3fn round_error() { return {0x30, c10::Float8_e4m3fn::from_bits()}; }
  static constexpr c10::Float8_e4m3fn quiet_NaN() { return {0x7F, c10::Float8_e4m3fn::from_bits()}; }
  static constexpr c10::Float8_e4m3fn denorm_min() { return {0x01, c10::Float8_e4m3fn::from_bits()}; }
};
