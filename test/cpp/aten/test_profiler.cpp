// The operator profiler (aten/profiler/Profiler.h) from C++: a session records each
// operator call with its nested calls inside it, record_function ranges, input shapes;
// one session at a time; no session, no events.
#include <aten/aten.h>
#include <aten/profiler/Profiler.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace prof = at::profiler;

at::Tensor ones(std::vector<int64_t> sizes) {
  at::Tensor t = at::empty(sizes, at::TensorOptions(at::kFloat));
  t.fill_(1.0);
  return t;
}

const prof::Event* find(const std::vector<prof::Event>& events, const std::string& name) {
  auto it = std::find_if(events.begin(), events.end(), [&](const prof::Event& e) { return e.name == name; });
  return it == events.end() ? nullptr : &*it;
}

bool inside(const prof::Event& inner, const prof::Event& outer) {
  return outer.start_ns <= inner.start_ns && inner.end_ns <= outer.end_ns;
}

TEST(Profiler, RecordsCallsRangesAndShapes) {
  at::Tensor a = ones({4, 3}), b = ones({3, 5});
  ASSERT_FALSE(prof::is_enabled());
  prof::enable(prof::ProfilerConfig{/*record_shapes=*/true});
  EXPECT_TRUE(prof::is_enabled());
  const uint64_t range = prof::enter_range("block");
  at::Tensor c = at::matmul(a, b).relu();
  prof::exit_range(range);
  const std::vector<prof::Event> events = prof::disable();
  EXPECT_FALSE(prof::is_enabled());
  EXPECT_FLOAT_EQ(c.sum().item().toFloat(), 4 * 5 * 3);

  const prof::Event* block = find(events, "block");
  const prof::Event* matmul = find(events, "aten::matmul");
  const prof::Event* mm = find(events, "aten::mm");
  const prof::Event* relu = find(events, "aten::relu");
  ASSERT_TRUE(block && matmul && mm && relu);
  EXPECT_TRUE(block->user_range);
  EXPECT_FALSE(matmul->user_range);
  EXPECT_TRUE(inside(*matmul, *block) && inside(*relu, *block) && inside(*mm, *matmul));
  EXPECT_LE(matmul->end_ns, relu->start_ns);
  EXPECT_LT(block->sequence, matmul->sequence);
  EXPECT_EQ(matmul->thread, block->thread);
  ASSERT_EQ(matmul->shapes.size(), 2u);
  EXPECT_EQ(matmul->shapes[0], (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(matmul->shapes[1], (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(matmul->dtypes[0], "float");
  for (size_t i = 1; i < events.size(); ++i) EXPECT_LT(events[i - 1].sequence, events[i].sequence);
}

TEST(Profiler, NoSessionNoEvents) {
  at::Tensor a = ones({2});
  a.add(a);  // recorded nowhere
  EXPECT_EQ(prof::enter_range("ignored"), 0u);
  prof::exit_range(0);  // a no-op
  EXPECT_THROW(prof::disable(), c10::Error);
  prof::enable({});
  EXPECT_THROW(prof::enable({}), c10::Error);  // one session at a time
  a.mul(a);
  const auto events = prof::disable();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].name, "aten::mul");
  EXPECT_TRUE(events[0].shapes.empty());  // record_shapes off
  a.add(a);
  prof::enable({});
  EXPECT_TRUE(prof::disable().empty());  // the earlier session's key is gone
}

}  // namespace
