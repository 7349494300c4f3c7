// Tests of c10::Half and c10::BFloat16. Expected values come from the formats' definitions
// (decoded with ldexp, encoded by nearest-value search) or are written by hand, never
// from the conversion code under test.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace {

using c10::BFloat16;
using c10::Half;

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
Half H(uint16_t b) { return Half(b, Half::from_bits()); }
BFloat16 B(uint16_t b) { return BFloat16(b, BFloat16::from_bits()); }

// A binary format described by its field widths only.
struct Format {
  int exp_bits;
  int man_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int max_exp_field() const { return (1 << exp_bits) - 1; }
};
constexpr Format kHalf{5, 10};
constexpr Format kBF16{8, 7};

// Value of a 16-bit pattern straight from sign/exponent/mantissa; NaN for NaN codes.
double reference_decode(Format fmt, uint32_t code) {
  const int total = 1 + fmt.exp_bits + fmt.man_bits;
  const bool neg = (code >> (total - 1)) & 1;
  const int e = static_cast<int>((code >> fmt.man_bits) & ((1u << fmt.exp_bits) - 1));
  const uint32_t m = code & ((1u << fmt.man_bits) - 1);
  double v;
  if (e == fmt.max_exp_field()) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - fmt.bias() - fmt.man_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1u << fmt.man_bits)), e - fmt.bias() - fmt.man_bits);
  }
  return neg ? -v : v;
}

// Nearest-value encoder: table of every finite non-negative value, sorted, with one
// virtual code past the max (max + its spacing) that stands for "overflow" (inf here).
class ReferenceEncoder {
 public:
  explicit ReferenceEncoder(Format fmt) : fmt_(fmt) {
    const uint32_t sign_bit = 1u << (fmt.exp_bits + fmt.man_bits);
    for (uint32_t c = 0; c < sign_bit; ++c) {
      const double v = reference_decode(fmt, c);
      if (std::isfinite(v)) table_.emplace_back(v, c);
    }
    std::sort(table_.begin(), table_.end());
    const auto [mx, mx_code] = table_.back();
    const double gap = mx - table_[table_.size() - 2].first;
    table_.emplace_back(mx + gap, mx_code + 1);  // the inf code, one past max
    sign_bit_ = sign_bit;
  }
  // Returns the code for x (not NaN): ties go to the code with an even mantissa LSB.
  uint32_t encode(float xf) const {
    const double x = std::fabs(static_cast<double>(xf));
    const uint32_t sign = std::signbit(xf) ? sign_bit_ : 0;
    uint32_t code;
    if (x >= table_.back().first) {
      code = table_.back().second;
    } else {
      auto hi = std::lower_bound(table_.begin(), table_.end(), std::make_pair(x, 0u));
      if (hi->first == x) {
        code = hi->second;
      } else {
        auto lo = hi - 1;
        const double dl = x - lo->first, dh = hi->first - x;
        code = dl < dh ? lo->second : dh < dl ? hi->second : ((lo->second & 1) ? hi->second : lo->second);
      }
    }
    return sign | code;
  }

 private:
  Format fmt_;
  uint32_t sign_bit_ = 0;
  std::vector<std::pair<double, uint32_t>> table_;
};

template <typename T>
void check_decode_all(Format fmt) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float got = static_cast<float>(T(static_cast<uint16_t>(c), T::from_bits()));
    const double want = reference_decode(fmt, c);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << c;
      ASSERT_EQ(std::signbit(got), bool(c & 0x8000)) << std::hex << c;
    } else {
      ASSERT_EQ(bits(got), bits(static_cast<float>(want))) << std::hex << c;  // want is exact in float
    }
  }
}

template <typename T>
void check_roundtrip_all(uint16_t canonical_nan) {
  for (uint32_t c = 0; c < 65536; ++c) {
    const float f = T(static_cast<uint16_t>(c), T::from_bits());
    const uint16_t back = T(f).x;
    if (std::isnan(f)) {
      ASSERT_EQ(back, canonical_nan | (c & 0x8000)) << std::hex << c;  // quiet NaN, sign kept
    } else {
      ASSERT_EQ(back, c) << std::hex << c;
    }
  }
}

// Every 997th float bit pattern (plus the exhaustive Python test): rounding as the
// nearest-value search says.
template <typename T>
void check_encode_sampled(Format fmt) {
  const ReferenceEncoder ref(fmt);
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 997) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(i));
    if (std::isnan(f)) continue;
    ASSERT_EQ(T(f).x, ref.encode(f)) << "float bits " << std::hex << i;
  }
}

TEST(HalfTest, DecodeAllPatternsMatchesDefinition) { check_decode_all<Half>(kHalf); }
TEST(HalfTest, RoundTripAllPatterns) { check_roundtrip_all<Half>(0x7E00); }
TEST(HalfTest, EncodeSampledFloatsMatchesNearestValue) { check_encode_sampled<Half>(kHalf); }

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(static_cast<float>(H(0x3C00)), 1.0f);
  EXPECT_EQ(static_cast<float>(H(0xC000)), -2.0f);
  EXPECT_EQ(static_cast<float>(H(0x7BFF)), 65504.0f);
  EXPECT_EQ(static_cast<float>(H(0x0001)), 0x1p-24f);
  EXPECT_EQ(static_cast<float>(H(0x03FF)), 1023 * 0x1p-24f);
  EXPECT_EQ(static_cast<float>(H(0x0400)), 0x1p-14f);
  EXPECT_EQ(static_cast<float>(H(0x3C01)), 1.0f + 0x1p-10f);
  EXPECT_EQ(static_cast<float>(H(0x3555)), 0.333251953125f);
  EXPECT_EQ(bits(H(0x8000)), 0x80000000u);
  EXPECT_EQ(static_cast<float>(H(0x7C00)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(static_cast<float>(H(0xFC00)), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits(H(0x7C01)), 0x7F802000u);  // NaN payload kept (signalling stays signalling)
  EXPECT_EQ(bits(H(0xFE00)), 0xFFC00000u);

  EXPECT_EQ(Half(1.0f).x, 0x3C00);
  EXPECT_EQ(Half(-2.0f).x, 0xC000);
  EXPECT_EQ(Half(65504.0f).x, 0x7BFF);
  EXPECT_EQ(Half(0x1p-24f).x, 0x0001);
  EXPECT_EQ(Half(1.0f / 3.0f).x, 0x3555);
  EXPECT_EQ(Half(0.1f).x, 0x2E66);
  EXPECT_EQ(Half(-0.0f).x, 0x8000);
  EXPECT_EQ(Half(0.0f).x, 0x0000);
  EXPECT_EQ(Half(1e10f).x, 0x7C00);
  EXPECT_EQ(Half(-std::numeric_limits<float>::infinity()).x, 0xFC00);
  EXPECT_EQ(Half(std::numeric_limits<float>::quiet_NaN()).x, 0x7E00);
  EXPECT_EQ(Half(-std::numeric_limits<float>::quiet_NaN()).x, 0xFE00);
  EXPECT_EQ(Half(std::bit_cast<float>(0x7F800001u)).x, 0x7E00);  // sNaN with a low payload
  EXPECT_EQ(Half(std::bit_cast<float>(0xFFFFFFFFu)).x, 0xFE00);
  EXPECT_EQ(Half(1e-30f).x, 0x0000);
  EXPECT_EQ(Half(-1e-30f).x, 0x8000);
  EXPECT_EQ(Half(std::numeric_limits<float>::denorm_min()).x, 0x0000);
}

TEST(HalfTest, TiesToEven) {
  EXPECT_EQ(Half(1.0f + 0x1p-11f).x, 0x3C00);       // 1 | 1+2^-10: to even 1
  EXPECT_EQ(Half(1.0f + 3 * 0x1p-11f).x, 0x3C02);   // 1+2^-10 | 1+2^-9: to even
  EXPECT_EQ(Half(std::nextafter(1.0f + 0x1p-11f, 2.0f)).x, 0x3C01);
  EXPECT_EQ(Half(std::nextafter(1.0f + 3 * 0x1p-11f, 0.0f)).x, 0x3C01);
  EXPECT_EQ(Half(2049.0f).x, 0x6800);                // 2048 | 2050
  EXPECT_EQ(Half(2051.0f).x, 0x6802);                // 2050 | 2052
  EXPECT_EQ(Half(-2049.0f).x, 0xE800);
  EXPECT_EQ(Half(65520.0f).x, 0x7C00);               // 65504 (odd) | 65536=inf
  EXPECT_EQ(Half(std::nextafter(65520.0f, 0.0f)).x, 0x7BFF);
  EXPECT_EQ(Half(65519.0f).x, 0x7BFF);
  EXPECT_EQ(Half(0x1p-25f).x, 0x0000);               // 0 | 2^-24
  EXPECT_EQ(Half(std::nextafter(0x1p-25f, 1.0f)).x, 0x0001);
  EXPECT_EQ(Half(3 * 0x1p-25f).x, 0x0002);           // 1 | 2 subnormal steps
  EXPECT_EQ(Half(5 * 0x1p-25f).x, 0x0002);           // 2 | 3
  EXPECT_EQ(Half(0x1p-14f - 0x1p-25f).x, 0x0400);    // largest subnormal | smallest normal
  EXPECT_EQ(Half(0x1p-14f - 3 * 0x1p-25f).x, 0x03FE);
}

TEST(HalfTest, NumericLimits) {
  using L = std::numeric_limits<Half>;
  static_assert(L::is_specialized && L::is_signed && !L::is_integer && L::has_infinity);
  static_assert(L::digits == 11 && L::radix == 2);
  // digits10 = floor((digits-1) log10 2), max_digits10 = ceil(1 + digits log10 2).
  EXPECT_EQ(L::digits10, static_cast<int>(std::floor((L::digits - 1) * std::log10(2.0))));
  EXPECT_EQ(L::max_digits10, static_cast<int>(std::ceil(1 + L::digits * std::log10(2.0))));
  EXPECT_EQ(static_cast<float>(L::min()), std::ldexp(1.0f, L::min_exponent - 1));
  EXPECT_EQ(static_cast<float>(L::max()), std::ldexp(2.0f - std::ldexp(1.0f, 1 - L::digits), L::max_exponent - 1));
  EXPECT_EQ(static_cast<float>(L::max()), 65504.0f);
  EXPECT_EQ(static_cast<float>(L::lowest()), -65504.0f);
  EXPECT_EQ(static_cast<float>(L::epsilon()), 0x1p-10f);
  EXPECT_EQ(static_cast<float>(H(0x3C00 + 1)) - 1.0f, static_cast<float>(L::epsilon()));
  EXPECT_EQ(static_cast<float>(L::round_error()), 0.5f);
  EXPECT_EQ(static_cast<float>(L::denorm_min()), 0x1p-24f);
  EXPECT_EQ(static_cast<float>(L::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(static_cast<float>(L::quiet_NaN())));
  EXPECT_TRUE(std::isnan(static_cast<float>(L::signaling_NaN())));
  EXPECT_EQ(L::signaling_NaN().x & 0x0200, 0);  // quiet bit clear
  // min_exponent10: smallest power of ten that is normal; max_exponent10: largest finite.
  EXPECT_GE(1e-4, static_cast<float>(L::min()));
  EXPECT_LT(1e-5, static_cast<float>(L::min()));
  EXPECT_EQ(L::min_exponent10, -4);
  EXPECT_EQ(L::max_exponent10, static_cast<int>(std::floor(std::log10(65504.0))));
}

TEST(HalfTest, Arithmetic) {
  const Half a(1.5f), b(0.25f);
  static_assert(std::is_same_v<decltype(a + b), Half>);
  static_assert(std::is_same_v<decltype(a + 1.0f), float>);
  static_assert(std::is_same_v<decltype(2.0 * a), double>);
  static_assert(std::is_same_v<decltype(a * 2), Half>);
  static_assert(std::is_same_v<decltype(int64_t{3} - a), Half>);
  EXPECT_EQ((a + b).x, Half(1.75f).x);
  EXPECT_EQ((a - b).x, Half(1.25f).x);
  EXPECT_EQ((a * b).x, Half(0.375f).x);
  EXPECT_EQ((a / b).x, Half(6.0f).x);
  EXPECT_EQ((-a).x, 0xBE00);
  EXPECT_EQ((-H(0x7E00)).x, 0xFE00);
  EXPECT_EQ(a + 1.0f, 2.5f);
  EXPECT_EQ(2.0 * a, 3.0);
  EXPECT_EQ((a * 2).x, Half(3.0f).x);
  EXPECT_EQ((4 / b).x, Half(16.0f).x);
  // The sum is rounded once: 2048 + 1.5 = 2049.5 -> 2050 (not 2048 via a rounded 2049).
  EXPECT_EQ((Half(1.5f) + 2048).x, Half(2050.0f).x);
  Half c = a;
  c += b;
  EXPECT_EQ(c.x, Half(1.75f).x);
  c *= 2;
  EXPECT_EQ(c.x, Half(3.5f).x);
  c -= 0.5f;
  c /= Half(3.0f);
  EXPECT_EQ(c.x, 0x3C00);
  float f = 1.0f;
  f += a;
  EXPECT_EQ(f, 2.5f);
  // Rounding of a product back to Half: 1.00097656 * 1.00097656 = 1.00195408 -> 0x3C02.
  EXPECT_EQ((H(0x3C01) * H(0x3C01)).x, 0x3C02);
  EXPECT_EQ((H(0x7BFF) + H(0x7BFF)).x, 0x7C00);
  // Comparisons go through float.
  EXPECT_TRUE(a > b);
  EXPECT_TRUE(a == Half(1.5f));
  EXPECT_TRUE(H(0x0000) == H(0x8000));
  EXPECT_FALSE(H(0x7E00) == H(0x7E00));
  EXPECT_TRUE(a == 1.5f);
  EXPECT_TRUE(b < 1);
  std::ostringstream os;
  os << a << ' ' << H(0xC000);
  EXPECT_EQ(os.str(), "1.5 -2");
}

TEST(HalfTest, Constexpr) {
  static_assert(Half(1.0f).x == 0x3C00);
  static_assert(static_cast<float>(Half(0x0001, Half::from_bits())) == 0x1p-24f);
  static_assert((Half(1.0f) + Half(2.0f)).x == 0x4200);
  static_assert(sizeof(Half) == 2 && alignof(Half) == 2);
  static_assert(std::is_trivially_copyable_v<Half>);
  SUCCEED();
}

TEST(BFloat16Test, DecodeAllPatternsMatchesDefinition) { check_decode_all<BFloat16>(kBF16); }
TEST(BFloat16Test, RoundTripAllPatterns) { check_roundtrip_all<BFloat16>(0x7FC0); }
TEST(BFloat16Test, EncodeSampledFloatsMatchesNearestValue) { check_encode_sampled<BFloat16>(kBF16); }

TEST(BFloat16Test, KnownValues) {
  EXPECT_EQ(static_cast<float>(B(0x3F80)), 1.0f);
  EXPECT_EQ(static_cast<float>(B(0xC000)), -2.0f);
  EXPECT_EQ(static_cast<float>(B(0x7F7F)), 0x1.FEp127f);
  EXPECT_EQ(static_cast<float>(B(0x0001)), 0x1p-133f);
  EXPECT_EQ(static_cast<float>(B(0x3F81)), 1.0f + 0x1p-7f);
  EXPECT_EQ(BFloat16(1.0f).x, 0x3F80);
  EXPECT_EQ(BFloat16(3.140625f).x, 0x4049);
  EXPECT_EQ(BFloat16(0.1f).x, 0x3DCD);
  EXPECT_EQ(BFloat16(-0.0f).x, 0x8000);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).x, 0x7F80);  // rounds up to inf
  EXPECT_EQ(BFloat16(0x1.FEFFFEp127f).x, 0x7F7F);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::infinity()).x, 0x7F80);
  EXPECT_EQ(BFloat16(-std::numeric_limits<float>::infinity()).x, 0xFF80);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::quiet_NaN()).x, 0x7FC0);
  EXPECT_EQ(BFloat16(-std::numeric_limits<float>::quiet_NaN()).x, 0xFFC0);
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x7FFFFFFFu)).x, 0x7FC0);  // no carry into the sign
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x7F800001u)).x, 0x7FC0);  // not truncated to inf
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::denorm_min()).x, 0x0000);  // far below half of 2^-133
  EXPECT_EQ(BFloat16(0x1p-133f).x, 0x0001);
}

TEST(BFloat16Test, TiesToEven) {
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3F808000u)).x, 0x3F80);  // 1 | 1+2^-7
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3F818000u)).x, 0x3F82);
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3F808001u)).x, 0x3F81);
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3F807FFFu)).x, 0x3F80);
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x00008000u)).x, 0x0000);  // subnormal tie
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x00018000u)).x, 0x0002);
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x007F8000u)).x, 0x0080);  // into the normals
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x7F7F8000u)).x, 0x7F80);  // max (odd) | inf
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0xFF7F7FFFu)).x, 0xFF7F);
}

TEST(BFloat16Test, NumericLimits) {
  using L = std::numeric_limits<BFloat16>;
  static_assert(L::digits == 8 && L::radix == 2 && L::has_infinity && L::has_quiet_NaN);
  EXPECT_EQ(L::digits10, static_cast<int>(std::floor((L::digits - 1) * std::log10(2.0))));
  EXPECT_EQ(L::max_digits10, static_cast<int>(std::ceil(1 + L::digits * std::log10(2.0))));
  EXPECT_EQ(static_cast<float>(L::min()), std::ldexp(1.0f, L::min_exponent - 1));
  EXPECT_EQ(static_cast<float>(L::min()), std::numeric_limits<float>::min());
  EXPECT_EQ(static_cast<float>(L::max()), std::ldexp(2.0f - std::ldexp(1.0f, 1 - L::digits), L::max_exponent - 1));
  EXPECT_EQ(static_cast<float>(L::lowest()), -static_cast<float>(L::max()));
  EXPECT_EQ(static_cast<float>(L::epsilon()), 0x1p-7f);
  EXPECT_EQ(static_cast<float>(B(0x3F81)) - 1.0f, static_cast<float>(L::epsilon()));
  EXPECT_EQ(static_cast<float>(L::round_error()), 0.5f);
  EXPECT_EQ(static_cast<float>(L::denorm_min()), 0x1p-133f);
  EXPECT_EQ(static_cast<float>(L::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(static_cast<float>(L::quiet_NaN())));
  EXPECT_TRUE(std::isnan(static_cast<float>(L::signaling_NaN())));
  EXPECT_EQ(L::signaling_NaN().x & 0x0040, 0);
  EXPECT_EQ(L::min_exponent10, std::numeric_limits<float>::min_exponent10);
  EXPECT_EQ(L::max_exponent10, static_cast<int>(std::floor(std::log10(static_cast<double>(static_cast<float>(L::max()))))));
}

TEST(BFloat16Test, Arithmetic) {
  const BFloat16 a(1.5f), b(0.25f);
  static_assert(std::is_same_v<decltype(a + b), BFloat16>);
  static_assert(std::is_same_v<decltype(a * 1.0f), float>);
  EXPECT_EQ((a + b).x, BFloat16(1.75f).x);
  EXPECT_EQ((a / b).x, BFloat16(6.0f).x);
  EXPECT_EQ((-a).x, 0xBFC0);
  EXPECT_EQ((B(0x3F81) * B(0x3F81)).x, 0x3F82);  // 1 + 2^-6 + 2^-14 rounds to 1 + 2^-6
  EXPECT_EQ((a * 2).x, BFloat16(3.0f).x);
  BFloat16 c = a;
  c -= b;
  EXPECT_EQ(c.x, BFloat16(1.25f).x);
  EXPECT_TRUE(a > b && a == 1.5f);
  std::ostringstream os;
  os << BFloat16(-0.5f);
  EXPECT_EQ(os.str(), "-0.5");
  static_assert(BFloat16(1.0f).x == 0x3F80);
}

}  // namespace
