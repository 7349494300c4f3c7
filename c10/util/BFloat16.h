// c10::BFloat16: the top 16 bits of an IEEE float (8-bit exponent, 7-bit mantissa), the
// training format of choice. Converting from float rounds to nearest-even in plain integer
// code; converting back is a shift and exact. Operators come from Half.h.
#pragma once

#include <c10/util/Half.h>

#include <bit>
#include <cstdint>
#include <limits>

namespace c10::inline tessera {

struct alignas(2) BFloat16 {
  uint16_t x;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}

  constexpr BFloat16(float value) : x(from_float(value)) {}
  constexpr operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(x) << 16); }

  static constexpr uint16_t from_float(float value) {
    const uint32_t f = std::bit_cast<uint32_t>(value);
    // The rounding add below could carry a NaN's payload into the sign or clear it into
    // inf, so NaN gets a canonical quiet NaN that keeps its sign.
    if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(((f >> 16) & 0x8000u) | 0x7FC0u);
    // Ties to even: add 0x7FFF plus the LSB that survives. Overflow to inf falls out of
    // the carry (FLT_MAX rounds up to inf, as IEEE says it should).
    const uint32_t rounded = f + 0x7FFFu + ((f >> 16) & 1u);
    return static_cast<uint16_t>(rounded >> 16);
  }
};

namespace detail {
template <>
inline constexpr bool is_reduced_float<BFloat16> = true;
}

}  // namespace c10::inline tessera

template <>
class std::numeric_limits<c10::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr auto has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr auto round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr c10::BFloat16 min() { return {0x0080, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 lowest() { return {0xFF7F, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 max() { return {0x7F7F, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 epsilon() { return {0x3C00, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 round_error() { return {0x3F00, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 infinity() { return {0x7F80, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 quiet_NaN() { return {0x7FC0, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 signaling_NaN() { return {0x7FA0, c10::BFloat16::from_bits()}; }
  static constexpr c10::BFloat16 denorm_min() { return {0x0001, c10::BFloat16::from_bits()}; }
};
