// GeneratorImpl's contract (seeding, cloning, the lock) exercised through at::Generator,
// with a toy counter generator standing in for the CPU one that comes later.
#include <aten/core/Generator.h>

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <thread>
#include <vector>

namespace {

// Draws are seed + 1, seed + 2, ...: easy to predict by hand.
class CountingGenerator final : public c10::GeneratorImpl {
 public:
  explicit CountingGenerator(c10::Device device = c10::kCPU)
      : GeneratorImpl(device, c10::DispatchKeySet(c10::DispatchKey::CPU)) {}
  void set_current_seed(uint64_t seed) override {
    seed_ = seed;
    state_ = seed;
  }
  uint64_t current_seed() const override { return seed_; }
  uint64_t next() { return ++state_; }
  CountingGenerator(const CountingGenerator&) = default;  // for clone_impl

 private:
  c10::intrusive_ptr<GeneratorImpl> clone_impl() const override {
    return c10::make_intrusive<CountingGenerator>(*this);
  }

  uint64_t seed_ = 0;
  uint64_t state_ = 0;
};

// Another kind, to check the handle's checked downcast.
class OtherGenerator final : public c10::GeneratorImpl {
 public:
  OtherGenerator() : GeneratorImpl(c10::Device("cuda:1"), c10::DispatchKeySet(c10::DispatchKey::CUDA)) {}
  void set_current_seed(uint64_t) override {}
  uint64_t current_seed() const override { return 7; }
  c10::intrusive_ptr<GeneratorImpl> clone_impl() const override { return c10::make_intrusive<OtherGenerator>(); }
};

TEST(Generator, DefaultHandleIsUndefined) {
  at::Generator g;
  EXPECT_FALSE(g.defined());
  EXPECT_EQ(g.get(), nullptr);
  EXPECT_THROW(g.current_seed(), c10::Error);
  EXPECT_THROW(g.device(), c10::Error);
  EXPECT_THROW(g.get<CountingGenerator>(), c10::Error);
  EXPECT_TRUE(g == at::Generator());
  EXPECT_FALSE(at::Generator(c10::intrusive_ptr<c10::GeneratorImpl>()).defined());
}

TEST(Generator, SeedsThroughTheHandle) {
  at::Generator g = at::make_generator<CountingGenerator>();
  ASSERT_TRUE(g.defined());
  EXPECT_EQ(g.device(), c10::Device(c10::kCPU));
  EXPECT_TRUE(g.key_set().has(c10::DispatchKey::CPU));
  g.set_current_seed(42);
  EXPECT_EQ(g.current_seed(), 42u);
  auto* impl = g.get<CountingGenerator>();
  EXPECT_EQ(impl, g.get());
  EXPECT_EQ(impl->next(), 43u);
  EXPECT_EQ(impl->next(), 44u);
  g.set_current_seed(42);  // reseeding restarts the stream
  EXPECT_EQ(impl->next(), 43u);
}

TEST(Generator, SeedPicksFreshSeedsAndKeepsThem) {
  at::Generator g = at::make_generator<CountingGenerator>();
  std::set<uint64_t> seen;
  for (int i = 0; i < 8; ++i) {
    uint64_t s = g.seed();
    EXPECT_EQ(g.current_seed(), s);
    seen.insert(s);
  }
  // 8 draws of 64 random bits colliding would mean the source is not random at all.
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_NE(c10::nondeterministic_seed(), c10::nondeterministic_seed());
}

TEST(Generator, CopiesShareStateClonesDoNot) {
  at::Generator a = at::make_generator<CountingGenerator>();
  a.set_current_seed(10);
  a.get<CountingGenerator>()->next();  // state 11

  at::Generator shared = a;
  EXPECT_TRUE(shared == a);
  EXPECT_EQ(a.use_count(), 2u);
  EXPECT_EQ(shared.get<CountingGenerator>()->next(), 12u);

  at::Generator b = a.clone();
  EXPECT_FALSE(b == a);
  EXPECT_EQ(b.use_count(), 1u);
  EXPECT_EQ(b.current_seed(), 10u);
  EXPECT_EQ(b.device(), a.device());
  EXPECT_EQ(b.get<CountingGenerator>()->next(), 13u);  // continues from the cloned state
  EXPECT_EQ(b.get<CountingGenerator>()->next(), 14u);
  EXPECT_EQ(a.get<CountingGenerator>()->next(), 13u);  // untouched by b's draws
  EXPECT_NE(&a.mutex(), &b.mutex());
  EXPECT_EQ(&a.mutex(), &shared.mutex());
}

TEST(Generator, CheckedCastRejectsOtherKinds) {
  at::Generator g = at::make_generator<OtherGenerator>();
  EXPECT_NE(g.get<OtherGenerator>(), nullptr);
  EXPECT_NE(g.get<c10::GeneratorImpl>(), nullptr);
  try {
    g.get<CountingGenerator>();
    FAIL() << "expected a TypeError";
  } catch (const c10::TypeError& e) {
    EXPECT_NE(std::string(e.msg()).find("cuda:1"), std::string::npos) << e.msg();
  }
}

TEST(Generator, MutexSerialisesDraws) {
  at::Generator g = at::make_generator<CountingGenerator>();
  g.set_current_seed(0);
  constexpr int kThreads = 4, kDraws = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([g] {
      for (int i = 0; i < kDraws; ++i) {
        std::lock_guard<std::mutex> lock(g.mutex());
        g.get<CountingGenerator>()->next();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(g.get<CountingGenerator>()->next(), uint64_t{kThreads * kDraws + 1});
}

TEST(Generator, Prints) {
  std::ostringstream os;
  os << at::make_generator<OtherGenerator>() << " " << at::Generator();
  EXPECT_EQ(os.str(), "Generator(device=cuda:1) Generator(undefined)");
}

}  // namespace
