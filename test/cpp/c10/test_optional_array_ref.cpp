// OptionalArrayRef: what an optional list argument of the public API accepts, and that it
// points at the caller's storage: a single number (std::optional<IntArrayRef> made from one
// kept a pointer to a temporary that died inside its constructor; the ASan job reads these
// through), lists, vectors, arrays, SmallVectors and optionals.
#include <c10/util/OptionalArrayRef.h>
#include <c10/util/SmallVector.h>

#include <gtest/gtest.h>

#include <optional>
#include <type_traits>
#include <vector>

namespace {

using c10::IntArrayRef;
using c10::OptionalIntArrayRef;

static_assert(std::is_convertible_v<int, OptionalIntArrayRef>);
static_assert(std::is_convertible_v<const int64_t&, OptionalIntArrayRef>);
static_assert(std::is_convertible_v<double, c10::OptionalArrayRef<double>>);
static_assert(std::is_convertible_v<IntArrayRef, OptionalIntArrayRef>);
static_assert(std::is_convertible_v<const c10::SmallVector<int64_t, 4>&, OptionalIntArrayRef>);
static_assert(std::is_convertible_v<const std::vector<int64_t>&, OptionalIntArrayRef>);
static_assert(std::is_convertible_v<std::nullopt_t, OptionalIntArrayRef>);
static_assert(std::is_convertible_v<OptionalIntArrayRef, std::optional<IntArrayRef>>);

// What a kernel sees: the dispatcher's std::optional<IntArrayRef>.
std::vector<int64_t> seen(OptionalIntArrayRef dims) {
  std::optional<IntArrayRef> inner = dims;
  if (!inner) return {-100};
  return inner->vec();
}

TEST(OptionalArrayRef, EmptyByDefaultAndFromNullopt) {
  EXPECT_FALSE(OptionalIntArrayRef().has_value());
  EXPECT_FALSE(static_cast<bool>(OptionalIntArrayRef(std::nullopt)));
  EXPECT_EQ(seen(std::nullopt), std::vector<int64_t>{-100});
  const std::vector<int64_t> fallback{7};
  EXPECT_EQ(seen(OptionalIntArrayRef(fallback)), fallback);
}

// One number, converted or not, lives as long as the call (the old type read it after death).
TEST(OptionalArrayRef, OneNumberLastsTheCall) {
  EXPECT_EQ(seen(-2), std::vector<int64_t>{-2});
  EXPECT_EQ(seen(int64_t{5}), std::vector<int64_t>{5});
  const int64_t d = 3;
  OptionalIntArrayRef from_variable = d;
  EXPECT_EQ(from_variable->data(), &d);
  EXPECT_EQ(from_variable->size(), 1u);
}

TEST(OptionalArrayRef, ListsKeepTheCallersStorage) {
  EXPECT_EQ(seen({-2}), std::vector<int64_t>{-2});
  EXPECT_EQ(seen({0, 1, 2}), (std::vector<int64_t>{0, 1, 2}));
  const std::vector<int64_t> v{3, 4};
  OptionalIntArrayRef from_vector = v;
  EXPECT_EQ(from_vector->data(), v.data());
  const int64_t arr[] = {5, 6, 7};
  OptionalIntArrayRef from_array = arr;
  EXPECT_EQ((*from_array).data(), arr);
  c10::SmallVector<int64_t, 4> small{1, 2, 3};
  OptionalIntArrayRef from_small = small;
  EXPECT_EQ(from_small->data(), small.data());
  EXPECT_EQ(from_small->size(), 3u);
  EXPECT_EQ(seen(std::vector<int64_t>{4, 5}), (std::vector<int64_t>{4, 5}));  // a temporary lasts the call
}

TEST(OptionalArrayRef, OptionalsPassThrough) {
  const std::vector<int64_t> v{1, 2};
  const std::optional<IntArrayRef> some = IntArrayRef(v), none;
  EXPECT_EQ(seen(some), v);
  EXPECT_EQ(seen(none), std::vector<int64_t>{-100});
  OptionalIntArrayRef copy = OptionalIntArrayRef(some);
  EXPECT_EQ(copy->data(), v.data());
  EXPECT_EQ(copy->size(), 2u);
}

}  // namespace
