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

template <>
class std::numeric_limits<c10::Float8_e5m2> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = false;
  static constexpr auto has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr auto round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 3;
  static constexpr int digits10 = 0;
  static constexpr int max_digits10 = 2;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -13;
  static constexpr int min_exponent10 = -4;
  static constexpr int max_exponent = 16;
  static constexpr int max_exponent10 = 4;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr c10::Float8_e5m2 min() { return {0x04, c10::Float8_e5m2::from_bits()}; }
  static constexpr c10::Float8_e5m2 lowest() { return {0xFB, c10::Float8_e5m2::from_bits()}; }
  static constexpr c10::Float8_e5m2 max() { return {0x7B, c10::Float8_e5m2::from_bits()}; }
  static constexpr c10::Float8_e5m2 epsilon() { return {0x34, c10::Float8_e5m2::from_bits()}; }
  static constexpr c10::Float8_e5m2 round_error() { return {0x38, c10::Float8_e5m2::from_bits()}; }
  static constexpr c10::Float8_e5m2 infinity() { return {0x7C, c10::Float8_e5m2::from_bits()}; }
  static constexpr c10::Float8_e5m2 quiet_NaN() { return {0x7F, c10::Float8_e5m2::from_bits()}; }
  static constexpr c10::Float8_e5m2 denorm_min() { return {0x01, c10::Float8_e5m2::from_bits()}; }
};
