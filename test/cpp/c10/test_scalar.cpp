#include <c10/core/Scalar.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace {

using c10::Scalar;

std::string overflow_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const c10::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Scalar, KindsAndTypes) {
  EXPECT_EQ(Scalar(true).type(), c10::kBool);
  EXPECT_EQ(Scalar(3).type(), c10::kLong);
  EXPECT_EQ(Scalar(int8_t{3}).type(), c10::kLong);
  EXPECT_EQ(Scalar(2.5f).type(), c10::kDouble);
  EXPECT_EQ(Scalar(c10::Half(1.5f)).type(), c10::kDouble);
  EXPECT_EQ(Scalar(c10::complex<float>(1, 2)).type(), c10::kComplexDouble);
  EXPECT_TRUE(Scalar(true).isBoolean());
  EXPECT_TRUE(Scalar(true).isIntegral(true));
  EXPECT_FALSE(Scalar(true).isIntegral(false));
  EXPECT_TRUE(Scalar(1.0).isFloatingPoint());
  EXPECT_TRUE(Scalar(c10::complex<double>(0, 1)).isComplex());
  EXPECT_EQ(Scalar().toLong(), 0);
}

TEST(Scalar, ConversionsThatFit) {
  EXPECT_EQ(Scalar(200).toByte(), 200);
  EXPECT_EQ(Scalar(-1).toByte(), 255);   // torch wraps negative ints into uint8...
  EXPECT_EQ(Scalar(-255).toByte(), 1);   // ...down to -255
  EXPECT_EQ(Scalar(2.75).toLong(), 2);
  EXPECT_EQ(Scalar(-2.75).toInt(), -2);
  EXPECT_EQ(Scalar(1.5).toHalf(), c10::Half(1.5f));
  EXPECT_EQ(static_cast<float>(Scalar(65504.0).toHalf()), 65504.0f);
  EXPECT_TRUE(std::isinf(Scalar(std::numeric_limits<double>::infinity()).toFloat()));
  EXPECT_TRUE(std::isnan(Scalar(std::nan("")).toHalf()));
  EXPECT_TRUE(Scalar(2).toBool());
  EXPECT_TRUE(Scalar(0.5).toBool());
  EXPECT_FALSE(Scalar(0).toBool());
  EXPECT_EQ(Scalar(c10::complex<double>(3, 0)).toLong(), 3);
  EXPECT_EQ(Scalar(7).toComplexDouble(), c10::complex<double>(7, 0));
  EXPECT_EQ(Scalar(c10::complex<double>(1.5, -2)).toComplexFloat(), c10::complex<float>(1.5f, -2.0f));
  EXPECT_EQ(Scalar(true).toDouble(), 1.0);
  EXPECT_EQ(Scalar(std::numeric_limits<int64_t>::min()).toLong(), std::numeric_limits<int64_t>::min());
}

// The overflow cases and messages torch 1.13 gives for torch.full((1,), v, dtype=d).
TEST(Scalar, OverflowRaisesWithTorchsMessage) {
  EXPECT_EQ(overflow_message([] { Scalar(-256).toByte(); }), "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(-1.0).toByte(); }), "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(255.9).toByte(); }), "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(128).toChar(); }), "value cannot be converted to type int8_t without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(-129).toChar(); }), "value cannot be converted to type int8_t without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(1e300).toFloat(); }), "value cannot be converted to type float without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(std::nan("")).toInt(); }), "value cannot be converted to type int without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(70000.0).toHalf(); }), "value cannot be converted to type at::Half without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(65519.0).toHalf(); }), "value cannot be converted to type at::Half without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(1e39).toBFloat16(); }),
            "value cannot be converted to type at::BFloat16 without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(c10::complex<double>(1, 2)).toDouble(); }),
            "value cannot be converted to type double without overflow");
  EXPECT_EQ(overflow_message([] { Scalar(1 << 16).toShort(); }), "value cannot be converted to type int16_t without overflow");
  // Where torch 1.13 silently wraps 2^63 to INT64_MIN, Tessera refuses: never wrong data.
  EXPECT_EQ(overflow_message([] { Scalar(9223372036854775808.0).toLong(); }),
            "value cannot be converted to type int64_t without overflow");
  // Float8 e4m3fn has no infinity, so inf overflows it; e5m2 has one.
  EXPECT_THROW(Scalar(std::numeric_limits<double>::infinity()).to<c10::Float8_e4m3fn>(), c10::Error);
  EXPECT_TRUE(std::isinf(static_cast<float>(Scalar(std::numeric_limits<double>::infinity()).to<c10::Float8_e5m2>())));
  EXPECT_THROW(Scalar(uint64_t{1} << 63), c10::Error);
}

TEST(Scalar, NegationEqualityPrinting) {
  EXPECT_TRUE((-Scalar(3)).equal(Scalar(-3)));
  EXPECT_TRUE((-Scalar(2.5)).equal(Scalar(-2.5)));
  EXPECT_TRUE((-Scalar(c10::complex<double>(1, -1))).equal(Scalar(c10::complex<double>(-1, 1))));
  EXPECT_THROW(-Scalar(true), c10::Error);
  EXPECT_FALSE(Scalar(1).equal(Scalar(1.0)));
  EXPECT_FALSE(Scalar(true).equal(Scalar(1)));
  EXPECT_EQ(c10::toString(Scalar(3)), "3");
  EXPECT_EQ(c10::toString(Scalar(2.5)), "2.5");
  EXPECT_EQ(c10::toString(Scalar(false)), "false");
  EXPECT_EQ(c10::toString(Scalar(c10::complex<double>(1, 2))), "(1,2)");
}

}  // namespace
