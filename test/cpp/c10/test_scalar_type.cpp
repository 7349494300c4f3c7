#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include "test_data.h"

#include <map>
#include <sstream>

namespace {

using c10::ScalarType;

std::vector<ScalarType> all_types() {
  std::vector<ScalarType> v;
  for (int i = 0; i < c10::kNumScalarTypes; ++i) v.push_back(static_cast<ScalarType>(i));
  return v;
}

ScalarType by_name(const std::string& name) {
  for (ScalarType t : all_types()) {
    if (name == c10::toString(t)) return t;
  }
  ADD_FAILURE() << "unknown dtype name in reference table: " << name;
  return ScalarType::Undefined;
}

TEST(ScalarType, TwentyTypesWithPyTorchNamesAndSizes) {
  // Names and item sizes as torch reports them (torch.float32.itemsize == 4, ...).
  const std::map<std::string, size_t> expected = {
      {"Byte", 1}, {"Char", 1}, {"Short", 2}, {"Int", 4}, {"Long", 8}, {"Half", 2},
      {"Float", 4}, {"Double", 8}, {"ComplexHalf", 4}, {"ComplexFloat", 8}, {"ComplexDouble", 16}, {"Bool", 1},
      {"QInt8", 1}, {"QUInt8", 1}, {"QInt32", 4}, {"BFloat16", 2}, {"QUInt4x2", 1}, {"QUInt2x4", 1},
      {"Float8_e5m2", 1}, {"Float8_e4m3fn", 1}};
  ASSERT_EQ(c10::kNumScalarTypes, 20);
  // torch's numbering from Byte (0) to QUInt2x4 (17): schema defaults carry these values
  EXPECT_EQ(static_cast<int>(c10::kComplexHalf), 8);
  EXPECT_EQ(static_cast<int>(c10::kComplexFloat), 9);
  EXPECT_EQ(static_cast<int>(c10::kBFloat16), 15);
  EXPECT_EQ(static_cast<int>(c10::kQUInt4x2), 16);
  EXPECT_EQ(static_cast<int>(c10::kQUInt2x4), 17);
  std::map<std::string, size_t> got;
  for (ScalarType t : all_types()) got[c10::toString(t)] = c10::elementSize(t);
  EXPECT_EQ(got, expected);
  EXPECT_STREQ(c10::toString(ScalarType::Undefined), "Undefined");
  std::ostringstream os;
  os << c10::kFloat;
  EXPECT_EQ(os.str(), "Float");
}

TEST(ScalarType, Categories) {
  EXPECT_TRUE(c10::isIntegralType(c10::kByte, false));
  EXPECT_TRUE(c10::isIntegralType(c10::kLong, false));
  EXPECT_FALSE(c10::isIntegralType(c10::kBool, false));
  EXPECT_TRUE(c10::isIntegralType(c10::kBool, true));
  EXPECT_FALSE(c10::isIntegralType(c10::kFloat, true));
  for (ScalarType t : {c10::kHalf, c10::kBFloat16, c10::kFloat, c10::kDouble, c10::kFloat8_e5m2, c10::kFloat8_e4m3fn}) {
    EXPECT_TRUE(c10::isFloatingType(t)) << t;
    EXPECT_FALSE(c10::isComplexType(t)) << t;
  }
  EXPECT_TRUE(c10::isComplexType(c10::kComplexFloat));
  EXPECT_TRUE(c10::isComplexType(c10::kComplexHalf));
  for (ScalarType t : {c10::kQInt8, c10::kQUInt8, c10::kQInt32, c10::kQUInt4x2, c10::kQUInt2x4}) {
    EXPECT_TRUE(c10::isQIntType(t)) << t;
    EXPECT_FALSE(c10::isIntegralType(t, true)) << t;
    EXPECT_EQ(c10::isSubByteQIntType(t), t == c10::kQUInt4x2 || t == c10::kQUInt2x4) << t;
  }
  EXPECT_FALSE(c10::isSignedType(c10::kQUInt4x2));
  EXPECT_FALSE(c10::isSignedType(c10::kQUInt2x4));
  EXPECT_TRUE(c10::isSignedType(c10::kQInt8));
  EXPECT_EQ(c10::toRealValueType(c10::kComplexHalf), c10::kHalf);
  EXPECT_EQ(c10::toComplexType(c10::kHalf), c10::kComplexHalf);
  EXPECT_FALSE(c10::isFloatingType(c10::kComplexDouble));
  EXPECT_TRUE(c10::isQIntType(c10::kQUInt8));
  EXPECT_FALSE(c10::isQIntType(c10::kByte));
  EXPECT_TRUE(c10::isFloat8Type(c10::kFloat8_e4m3fn));
  EXPECT_FALSE(c10::isSignedType(c10::kByte));
  EXPECT_TRUE(c10::isSignedType(c10::kChar));
  EXPECT_EQ(c10::toRealValueType(c10::kComplexDouble), c10::kDouble);
  EXPECT_EQ(c10::toComplexType(c10::kFloat), c10::kComplexFloat);
  EXPECT_THROW(c10::toComplexType(c10::kLong), c10::Error);
}

// Every ordered pair torch 1.13 knows, against torch.promote_types run at test time.
TEST(ScalarType, PromoteTypesMatchesTorchForEveryPair) {
  auto lines = tessera_test::reference_lines("promote_types.txt");
  EXPECT_EQ(lines.size(), 16u * 16u);  // torch 1.13 has all our types but the Float8 pair
  for (const auto& line : lines) {
    std::istringstream in(line);
    std::string a, b, result;
    in >> a >> b >> result;
    ScalarType ta = by_name(a), tb = by_name(b);
    if (result == "error") {
      EXPECT_THROW(c10::promoteTypes(ta, tb), c10::Error) << line;
    } else {
      EXPECT_EQ(c10::promoteTypes(ta, tb), by_name(result)) << line;
    }
  }
}

// Current PyTorch: a Float8 type promotes only with itself.
TEST(ScalarType, PromotionInvolvingFloat8Raises) {
  for (ScalarType f8 : {c10::kFloat8_e5m2, c10::kFloat8_e4m3fn}) {
    EXPECT_EQ(c10::promoteTypes(f8, f8), f8);
    for (ScalarType other : all_types()) {
      if (other == f8) continue;
      // Quantized operands raise too, with the quantized message.
      if (c10::isQIntType(other)) {
        EXPECT_THROW(c10::promoteTypes(f8, other), c10::Error);
        continue;
      }
      try {
        c10::promoteTypes(f8, other);
        ADD_FAILURE() << "promoting " << f8 << " with " << other << " should raise";
      } catch (const c10::Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("Promotion for Float8 Types is not supported"), std::string::npos) << msg;
      }
      EXPECT_THROW(c10::promoteTypes(other, f8), c10::Error);
    }
  }
}

TEST(ScalarType, CanCast) {
  EXPECT_TRUE(c10::canCast(c10::kLong, c10::kFloat));
  EXPECT_FALSE(c10::canCast(c10::kFloat, c10::kLong));
  EXPECT_FALSE(c10::canCast(c10::kComplexFloat, c10::kDouble));
  EXPECT_FALSE(c10::canCast(c10::kInt, c10::kBool));
  EXPECT_TRUE(c10::canCast(c10::kBool, c10::kInt));
}

}  // namespace
