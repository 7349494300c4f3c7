#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <string>

namespace {

template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return {};
}

TEST(Exception, CheckConcatenatesArguments) {
  int got = 3;
  EXPECT_EQ(message_of<c10::Error>([&] { TORCH_CHECK(got == 2, "expected 2 dims but got ", got, " (", 1.5, ")"); }),
            "expected 2 dims but got 3 (1.5)");
}

TEST(Exception, CheckWithoutMessageNamesCondition) {
  int dims = 3;
  EXPECT_EQ(message_of<c10::Error>([&] { TORCH_CHECK(dims < 2); }), "Expected dims < 2 to be true, but got false.");
}

TEST(Exception, PassingCheckEvaluatesMessageNever) {
  int evaluated = 0;
  auto side_effect = [&] { return ++evaluated; };
  TORCH_CHECK(true, "never built ", side_effect());
  EXPECT_EQ(evaluated, 0);
}

TEST(Exception, EachMacroThrowsItsClass) {
  EXPECT_THROW(TORCH_CHECK_INDEX(false, "i"), c10::IndexError);
  EXPECT_THROW(TORCH_CHECK_VALUE(false, "v"), c10::ValueError);
  EXPECT_THROW(TORCH_CHECK_TYPE(false, "t"), c10::TypeError);
  EXPECT_THROW(TORCH_CHECK_NOT_IMPLEMENTED(false, "n"), c10::NotImplementedError);
  // Every class is a c10::Error, so one catch handles them all.
  EXPECT_THROW(TORCH_CHECK_INDEX(false, "i"), c10::Error);
  EXPECT_THROW(TORCH_CHECK(false, "r"), c10::Error);
  try {
    TORCH_CHECK(false, "plain");
  } catch (const c10::IndexError&) {
    ADD_FAILURE() << "TORCH_CHECK must not raise IndexError";
  } catch (const c10::Error&) {
  }
}

TEST(Exception, RecordsWhereItWasRaised) {
  try {
    TORCH_CHECK(false, "here");
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.where().file).find("test_exception.cpp"), std::string::npos);
    EXPECT_GT(e.where().line, 0);
    EXPECT_EQ(e.msg(), "here");
  }
}

TEST(Exception, ContextIsAppended) {
  c10::Error e("first", C10_HERE_);
  e.add_context("while doing b");
  EXPECT_EQ(std::string(e.what()), "first\nwhile doing b");
  EXPECT_EQ(e.msg(), "first");
}

TEST(Exception, InternalAssertNamesLocationAndAsksForReport) {
  std::string msg = message_of<c10::Error>([] { TORCH_INTERNAL_ASSERT(1 + 1 == 3, "math is off by ", 1); });
  EXPECT_NE(msg.find("INTERNAL ASSERT FAILED"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test_exception.cpp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 + 1 == 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("math is off by 1"), std::string::npos) << msg;
}

TEST(Exception, ErrorWithRaisesUnconditionally) {
  EXPECT_EQ(message_of<c10::TypeError>([] { TORCH_ERROR_WITH(TypeError, "bad ", "type"); }), "bad type");
}

TEST(StringUtil, StrAndJoin) {
  EXPECT_EQ(c10::str(), "");
  EXPECT_EQ(c10::str("a", 1, 'b', 2.5), "a1b2.5");
  EXPECT_EQ(c10::join(", ", std::vector<int>{1, 2, 3}), "1, 2, 3");
  EXPECT_EQ(c10::join(", ", std::vector<int>{}), "");
}

}  // namespace
