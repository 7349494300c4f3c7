// SmallVector: inline storage up to N, the heap beyond, std::vector's semantics for
// copies, moves, resizing and element lifetimes (counted with a probe type).
#include <c10/util/SmallVector.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

using c10::SmallVector;

TEST(SmallVector, StaysInlineUpToNThenGrows) {
  SmallVector<int64_t, 4> v;
  const int64_t* inline_data = v.data();
  for (int64_t i = 0; i < 4; ++i) v.push_back(i);
  EXPECT_EQ(v.data(), inline_data);
  EXPECT_EQ(v.capacity(), 4u);
  v.push_back(4);
  EXPECT_NE(v.data(), inline_data);
  EXPECT_GE(v.capacity(), 5u);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(v[i], i);
  c10::IntArrayRef ref = v;
  EXPECT_EQ(ref.size(), 5u);
  EXPECT_EQ(ref[4], 4);
  EXPECT_EQ(v.vec(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(SmallVector, ResizeValueInitialisesAndShrinks) {
  c10::DimVector v(3);
  EXPECT_EQ(v.vec(), (std::vector<int64_t>{0, 0, 0}));
  v.resize(8, 7);
  EXPECT_EQ(v[7], 7);
  EXPECT_EQ(v[2], 0);
  v.resize(2);
  EXPECT_EQ(v.size(), 2u);
  c10::DimVector w{5, 6};
  c10::DimVector from_ref(c10::IntArrayRef({1, 2, 3}));
  EXPECT_EQ(from_ref.vec(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(w == (c10::DimVector{5, 6}));
  EXPECT_FALSE(w == from_ref);
}

TEST(SmallVector, OwnElementsAsArgumentsWhileGrowing) {
  SmallVector<std::string, 2> v{"alpha", "beta"};
  v.push_back(v[0]);  // the argument lives in the buffer being replaced
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[2], "alpha");
  v.resize(v.capacity() + 3, v[1]);  // on the heap now, and growing again
  EXPECT_EQ(v.back(), "beta");
  EXPECT_EQ(v[0], "alpha");
}

struct Probe {
  static inline int alive = 0;
  int value;
  explicit Probe(int v = 0) : value(v) { ++alive; }
  Probe(const Probe& o) : value(o.value) { ++alive; }
  Probe(Probe&& o) noexcept : value(o.value) { ++alive; }
  Probe& operator=(const Probe&) = default;
  ~Probe() { --alive; }
};

TEST(SmallVector, ElementsAreDestroyedExactlyOnce) {
  {
    SmallVector<Probe, 2> a;
    for (int i = 0; i < 5; ++i) a.emplace_back(i);  // crosses to the heap
    EXPECT_EQ(Probe::alive, 5);
    SmallVector<Probe, 2> b = a;  // copy
    EXPECT_EQ(Probe::alive, 10);
    SmallVector<Probe, 2> c = std::move(b);  // steals the heap buffer
    EXPECT_EQ(Probe::alive, 10);
    EXPECT_TRUE(b.empty());
    SmallVector<Probe, 2> small;
    small.emplace_back(1);
    SmallVector<Probe, 2> moved = std::move(small);  // inline: moved element by element
    EXPECT_EQ(moved[0].value, 1);
    EXPECT_EQ(Probe::alive, 11);
    c = moved;  // copy-assign over a heap vector
    EXPECT_EQ(c.size(), 1u);
    EXPECT_EQ(Probe::alive, 7);
    a.pop_back();
    a.resize(1);
    EXPECT_EQ(Probe::alive, 3);
  }
  EXPECT_EQ(Probe::alive, 0);
}

TEST(SmallVector, HoldsMoveOnlyTypes) {
  SmallVector<std::unique_ptr<int>, 1> v;
  v.push_back(std::make_unique<int>(1));
  v.push_back(std::make_unique<int>(2));
  SmallVector<std::unique_ptr<int>, 1> w = std::move(v);
  EXPECT_EQ(*w[1], 2);
}

}  // namespace
