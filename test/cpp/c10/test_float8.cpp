// Tests of c10::Float8_e4m3fn and c10::Float8_e5m2 against a reference built here from
// the OCP FP8 definitions: decode from the fields with ldexp, encode by searching for the
// nearest representable value (ties to the even mantissa) with each format's overflow rule.
#include <c10/util/Float8_e4m3fn.h>
#include <c10/util/Float8_e5m2.h>
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

using c10::Float8_e4m3fn;
using c10::Float8_e5m2;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// E4M3FN: bias 7; exponent 1111 is an ordinary binade except mantissa 111, the only NaN.
double decode_e4m3fn(uint32_t code) {
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int e = (code >> 3) & 0xF;
  const int m = code & 0x7;
  if (e == 0xF && m == 0x7) return kNaN;
  if (e == 0) return sign * std::ldexp(m, -6 - 3);
  return sign * std::ldexp(8 + m, e - 7 - 3);
}

// E5M2: bias 15; exponent 11111 is inf (mantissa 0) or NaN, as in IEEE 754.
double decode_e5m2(uint32_t code) {
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int e = (code >> 2) & 0x1F;
  const int m = code & 0x3;
  if (e == 0x1F) return m == 0 ? sign * kInf : kNaN;
  if (e == 0) return sign * std::ldexp(m, -14 - 2);
  return sign * std::ldexp(4 + m, e - 15 - 2);
}

// Nearest-value encoder over the finite non-negative codes. One virtual entry past the
// max, at max + (max - previous), carries the code right after max: 0x7F (NaN) for
// e4m3fn, 0x7C (inf) for e5m2. Anything that rounds to it, or lies beyond it, overflows.
class Reference {
 public:
  explicit Reference(double (*decode)(uint32_t)) {
    for (uint32_t c = 0; c < 0x80; ++c) {
      const double v = decode(c);
      if (std::isfinite(v)) table_.emplace_back(v, c);
    }
    std::sort(table_.begin(), table_.end());
    const auto [mx, mx_code] = table_.back();
    table_.emplace_back(mx + (mx - table_[table_.size() - 2].first), mx_code + 1);
  }
  uint8_t encode(float xf) const {
    if (std::isnan(xf)) return static_cast<uint8_t>(0x7F | (std::signbit(xf) ? 0x80 : 0));
    const double x = std::fabs(static_cast<double>(xf));
    uint32_t code;
    if (x >= table_.back().first) {
      code = table_.back().second;
    } else {
      auto hi = std::lower_bound(table_.begin(), table_.end(), std::make_pair(x, 0u));
      auto lo = hi - (hi->first == x ? 0 : 1);
      const double dl = x - lo->first, dh = hi->first - x;
      code = dl < dh ? lo->second : dh < dl ? hi->second : ((lo->second & 1) ? hi->second : lo->second);
    }
    return static_cast<uint8_t>(code | (std::signbit(xf) ? 0x80 : 0));
  }
  // Finite non-negative values in increasing order, with the virtual overflow value last.
  const std::vector<std::pair<double, uint32_t>>& table() const { return table_; }

 private:
  std::vector<std::pair<double, uint32_t>> table_;
};

template <typename T>
void check_decode_all(double (*decode)(uint32_t)) {
  for (uint32_t c = 0; c < 256; ++c) {
    const float got = T(static_cast<uint8_t>(c), T::from_bits());
    const double want = decode(c);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << c;
      EXPECT_EQ(std::signbit(got), bool(c & 0x80)) << std::hex << c;
    } else {
      EXPECT_EQ(bits(got), bits(static_cast<float>(want))) << std::hex << c;
    }
  }
}

// Representable values, midpoints between neighbours and the floats either side of each
// midpoint, for both signs.
std::vector<float> interesting_floats(const Reference& ref) {
  std::vector<float> out;
  const auto& t = ref.table();
  for (size_t i = 0; i < t.size(); ++i) {
    out.push_back(static_cast<float>(t[i].first));
    if (i + 1 < t.size()) {
      const float mid = static_cast<float>((t[i].first + t[i + 1].first) / 2);
      EXPECT_EQ(static_cast<double>(mid), (t[i].first + t[i + 1].first) / 2);  // exact
      out.push_back(mid);
      out.push_back(std::nextafter(mid, 0.0f));
      out.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f, inf, std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), 1e-30f, 1e30f, 1e5f, 65536.0f, 500.0f,
                  std::nextafter(inf, 0.0f)}) {
    out.push_back(f);
  }
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) out.push_back(-out[i]);
  return out;
}

template <typename T>
void check_encode(const Reference& ref) {
  for (float f : interesting_floats(ref)) {
    ASSERT_EQ(T(f).x, ref.encode(f)) << "x = " << f << " (float bits " << std::hex << bits(f) << ")";
  }
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 997) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(i));
    ASSERT_EQ(T(f).x, ref.encode(f)) << "float bits " << std::hex << i;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float f : {nan, -nan, std::bit_cast<float>(0x7F800001u), std::bit_cast<float>(0xFFBFFFFFu)}) {
    ASSERT_EQ(T(f).x, std::signbit(f) ? 0xFF : 0x7F);
  }
}

TEST(Float8Test, ReferenceSanity) {
  // The reference itself, against hand-written facts from the OCP FP8 spec.
  EXPECT_EQ(decode_e4m3fn(0x7E), 448.0);
  EXPECT_EQ(decode_e4m3fn(0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(decode_e4m3fn(0x08), std::ldexp(1.0, -6));
  EXPECT_EQ(decode_e4m3fn(0x38), 1.0);
  EXPECT_EQ(decode_e4m3fn(0x78), 256.0);
  EXPECT_EQ(decode_e5m2(0x7B), 57344.0);
  EXPECT_EQ(decode_e5m2(0x7C), kInf);
  EXPECT_EQ(decode_e5m2(0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(decode_e5m2(0x3C), 1.0);
  const Reference e4(decode_e4m3fn), e5(decode_e5m2);
  EXPECT_EQ(e4.table().back().first, 480.0);
  EXPECT_EQ(e5.table().back().first, 65536.0);
  EXPECT_EQ(e4.encode(464.0f), 0x7E);
  EXPECT_EQ(e4.encode(std::nextafter(464.0f, 1e9f)), 0x7F);
  EXPECT_EQ(e5.encode(61440.0f), 0x7C);
  EXPECT_EQ(e5.encode(std::nextafter(61440.0f, 0.0f)), 0x7B);
}

TEST(Float8Test, E4M3FNDecodeAll) { check_decode_all<Float8_e4m3fn>(decode_e4m3fn); }
TEST(Float8Test, E5M2DecodeAll) { check_decode_all<Float8_e5m2>(decode_e5m2); }
TEST(Float8Test, E4M3FNEncodeMatchesReference) { check_encode<Float8_e4m3fn>(Reference(decode_e4m3fn)); }
TEST(Float8Test, E5M2EncodeMatchesReference) { check_encode<Float8_e5m2>(Reference(decode_e5m2)); }

TEST(Float8Test, E5M2IsTheTopByteOfHalf) {
  for (uint32_t c = 0; c < 256; ++c) {
    const float a = Float8_e5m2(static_cast<uint8_t>(c), Float8_e5m2::from_bits());
    const float b = c10::Half(static_cast<uint16_t>(c << 8), c10::Half::from_bits());
    EXPECT_EQ(bits(a), bits(b)) << std::hex << c;
  }
}

TEST(Float8Test, RoundTripAllPatterns) {
  for (uint32_t c = 0; c < 256; ++c) {
    const Float8_e4m3fn a(static_cast<uint8_t>(c), Float8_e4m3fn::from_bits());
    const Float8_e5m2 b(static_cast<uint8_t>(c), Float8_e5m2::from_bits());
    EXPECT_EQ(Float8_e4m3fn(static_cast<float>(a)).x, a.isnan() ? (c | 0x7F) : c) << std::hex << c;
    EXPECT_EQ(Float8_e5m2(static_cast<float>(b)).x, b.isnan() ? (c | 0x7F) : c) << std::hex << c;
  }
}

TEST(Float8Test, KnownValues) {
  EXPECT_EQ(Float8_e4m3fn(1.0f).x, 0x38);
  EXPECT_EQ(Float8_e4m3fn(-448.0f).x, 0xFE);
  EXPECT_EQ(Float8_e4m3fn(1000.0f).x, 0x7F);
  EXPECT_EQ(Float8_e4m3fn(-std::numeric_limits<float>::infinity()).x, 0xFF);
  EXPECT_EQ(Float8_e4m3fn(0.0f).x, 0x00);
  EXPECT_EQ(Float8_e4m3fn(-0.0f).x, 0x80);
  EXPECT_EQ(Float8_e4m3fn(0x1p-10f).x, 0x00);  // tie 0 | 2^-9
  EXPECT_EQ(Float8_e4m3fn(3 * 0x1p-10f).x, 0x02);
  EXPECT_EQ(Float8_e4m3fn(1.0625f).x, 0x38);   // tie 1 | 1.125
  EXPECT_EQ(Float8_e4m3fn(1.1875f).x, 0x3A);   // tie 1.125 | 1.25
  EXPECT_TRUE(Float8_e4m3fn(uint8_t{0x7F}, Float8_e4m3fn::from_bits()).isnan());
  EXPECT_FALSE(Float8_e4m3fn(uint8_t{0x7E}, Float8_e4m3fn::from_bits()).isnan());
  EXPECT_EQ(Float8_e5m2(1.0f).x, 0x3C);
  EXPECT_EQ(Float8_e5m2(57344.0f).x, 0x7B);
  EXPECT_EQ(Float8_e5m2(60000.0f).x, 0x7B);
  EXPECT_EQ(Float8_e5m2(61440.0f).x, 0x7C);
  EXPECT_EQ(Float8_e5m2(-1e10f).x, 0xFC);
  EXPECT_EQ(Float8_e5m2(std::numeric_limits<float>::infinity()).x, 0x7C);
  EXPECT_EQ(Float8_e5m2(1.125f).x, 0x3C);      // tie 1 | 1.25
  EXPECT_EQ(Float8_e5m2(1.375f).x, 0x3E);      // tie 1.25 | 1.5
  EXPECT_EQ(Float8_e5m2(0x1p-17f).x, 0x00);
  EXPECT_EQ(Float8_e5m2(3 * 0x1p-17f).x, 0x02);
  EXPECT_TRUE(Float8_e5m2(uint8_t{0x7D}, Float8_e5m2::from_bits()).isnan());
  EXPECT_TRUE(Float8_e5m2(uint8_t{0xFC}, Float8_e5m2::from_bits()).isinf());
  static_assert(Float8_e4m3fn(448.0f).x == 0x7E && Float8_e5m2(2.0f).x == 0x40);
  static_assert(sizeof(Float8_e4m3fn) == 1 && sizeof(Float8_e5m2) == 1);
}

template <typename T>
void check_limits_against_definition(double (*decode)(uint32_t)) {
  using L = std::numeric_limits<T>;
  const Reference ref(decode);
  const auto& t = ref.table();
  const double max = t[t.size() - 2].first;
  EXPECT_EQ(static_cast<float>(L::max()), max);
  EXPECT_EQ(static_cast<float>(L::lowest()), -max);
  EXPECT_EQ(static_cast<float>(L::denorm_min()), t[1].first);
  EXPECT_EQ(static_cast<float>(L::min()), std::ldexp(1.0, L::min_exponent - 1));
  // epsilon: the gap from 1 to the next value.
  auto one = std::find_if(t.begin(), t.end(), [](const auto& p) { return p.first == 1.0; });
  ASSERT_NE(one, t.end());
  EXPECT_EQ(static_cast<float>(L::epsilon()), (one + 1)->first - 1.0);
  EXPECT_EQ(static_cast<float>(L::round_error()), 0.5f);
  EXPECT_TRUE(std::isnan(static_cast<float>(L::quiet_NaN())));
  EXPECT_EQ(L::digits10, static_cast<int>(std::floor((L::digits - 1) * std::log10(2.0))));
  EXPECT_EQ(L::max_digits10, static_cast<int>(std::ceil(1 + L::digits * std::log10(2.0))));
  // max_exponent: 2^(max_exponent-1) is the largest finite power of two.
  EXPECT_LE(std::ldexp(1.0, L::max_exponent - 1), max);
  EXPECT_GT(std::ldexp(1.0, L::max_exponent), max);
  EXPECT_EQ(L::max_exponent10, static_cast<int>(std::floor(std::log10(max))));
  // min_exponent10: 10^min_exponent10 is normal, one decade lower is not.
  const double min_normal = std::ldexp(1.0, L::min_exponent - 1);
  EXPECT_GE(std::pow(10.0, L::min_exponent10), min_normal);
  EXPECT_LT(std::pow(10.0, L::min_exponent10 - 1), min_normal);
  // Subnormals span digits-1 binades below min().
  EXPECT_EQ(static_cast<float>(L::denorm_min()), std::ldexp(1.0, L::min_exponent - L::digits));
}

TEST(Float8Test, NumericLimitsE4M3FN) {
  using L = std::numeric_limits<Float8_e4m3fn>;
  static_assert(!L::has_infinity && L::has_quiet_NaN && L::digits == 4 && L::is_specialized);
  check_limits_against_definition<Float8_e4m3fn>(decode_e4m3fn);
  EXPECT_EQ(static_cast<float>(L::max()), 448.0f);
  EXPECT_EQ(L::quiet_NaN().x, 0x7F);
}

TEST(Float8Test, NumericLimitsE5M2) {
  using L = std::numeric_limits<Float8_e5m2>;
  static_assert(L::has_infinity && L::has_quiet_NaN && L::digits == 3 && L::is_specialized);
  check_limits_against_definition<Float8_e5m2>(decode_e5m2);
  EXPECT_EQ(static_cast<float>(L::max()), 57344.0f);
  EXPECT_EQ(static_cast<float>(L::infinity()), std::numeric_limits<float>::infinity());
}

TEST(Float8Test, Arithmetic) {
  const Float8_e4m3fn a(1.5f), b(0.25f);
  static_assert(std::is_same_v<decltype(a + b), Float8_e4m3fn>);
  EXPECT_EQ((a + b).x, Float8_e4m3fn(1.75f).x);
  EXPECT_EQ((a * b).x, Float8_e4m3fn(0.375f).x);
  EXPECT_EQ((-a).x, 0xBC);
  EXPECT_EQ((Float8_e4m3fn(448.0f) * 2).x, 0x7F);  // overflow is NaN in e4m3fn
  EXPECT_EQ((Float8_e5m2(57344.0f) * 2).x, 0x7C);  // and inf in e5m2
  EXPECT_EQ(a + 1.0f, 2.5f);
  EXPECT_TRUE(a > b);
  std::ostringstream os;
  os << Float8_e5m2(-3.0f);
  EXPECT_EQ(os.str(), "-3");
}

}  // namespace
