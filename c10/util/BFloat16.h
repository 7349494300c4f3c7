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

namespace c10::inline tessera::detail {
struct BFloat16Format {
  static constexpr bool kHasInfinity = true, kHasSignalingNaN = true, kIec559 = false;
  static constexpr int kDigits = 8, kDigits10 = 2, kMaxDigits10 = 4, kMinExponent = -125, kMinExponent10 = -37,
                       kMaxExponent = 128, kMaxExponent10 = 38;
  static constexpr uint16_t kMin = 0x0080, kLowest = 0xFF7F, kMax = 0x7F7F, kEpsilon = 0x3C00, kRoundError = 0x3F00,
                            kQuietNaN = 0x7FC0, kDenormMin = 0x0001;
};
}  // namespace c10::inline tessera::detail

template <>
class std::numeric_limits<c10::BFloat16>
    : public c10::detail::float_format_limits<c10::BFloat16, c10::detail::BFloat16Format> {
 public:
  static constexpr c10::BFloat16 infinity() { return bits(0x7F80); }
  static constexpr c10::BFloat16 signaling_NaN() { return bits(0x7FA0); }
};
