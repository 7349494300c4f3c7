// CPUGeneratorImpl: Philox4x32-10 against the Random123 known-answer vectors, seeding,
// counter reservation, state round trips and cloning.
#include <c10/core/CPUGeneratorImpl.h>

#include <gtest/gtest.h>

#include <array>

namespace {

using c10::CPUGeneratorImpl;
using Words = std::array<uint32_t, 4>;

TEST(CPUGenerator, PhiloxKnownAnswers) {
  // Random123's kat_vectors for philox4x32_10 (counter words c0..c3, key words k0, k1).
  EXPECT_EQ(CPUGeneratorImpl::philox(0, 0, 0), (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(CPUGeneratorImpl::philox(~0ull, ~0ull, ~0ull), (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(CPUGeneratorImpl::philox(0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x0370734413198a2eull),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(CPUGenerator, SeedingRestartsTheStream) {
  CPUGeneratorImpl g;
  EXPECT_EQ(g.current_seed(), CPUGeneratorImpl::kDefaultSeed);
  g.set_current_seed(42);
  EXPECT_EQ(g.reserve(10), 0u);
  EXPECT_EQ(g.reserve(5), 10u);
  EXPECT_EQ(g.offset(), 15u);
  g.set_current_seed(42);
  EXPECT_EQ(g.offset(), 0u);
  EXPECT_EQ(g.current_seed(), 42u);
}

TEST(CPUGenerator, StateRoundTripAndClone) {
  CPUGeneratorImpl g(7);
  g.reserve(123);
  auto state = g.get_state();
  EXPECT_EQ(state.size(), CPUGeneratorImpl::kStateBytes);
  CPUGeneratorImpl h;
  h.set_state(state.data(), state.size());
  EXPECT_EQ(h.current_seed(), 7u);
  EXPECT_EQ(h.offset(), 123u);
  std::vector<uint8_t> bad(state.size(), 0);
  EXPECT_THROW(h.set_state(bad.data(), bad.size()), c10::Error);
  EXPECT_THROW(h.set_state(state.data(), state.size() - 1), c10::Error);

  auto copy = g.clone();
  auto* c = dynamic_cast<CPUGeneratorImpl*>(copy.get());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->offset(), 123u);
  c->reserve(1);
  EXPECT_EQ(g.offset(), 123u);  // independent
}

TEST(CPUGenerator, DefaultGeneratorIsOneObject) {
  auto& a = c10::default_cpu_generator();
  auto& b = c10::default_cpu_generator();
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->device(), c10::Device(c10::DeviceType::CPU));
}

TEST(CPUGenerator, UniformHelpersStayInTheUnitInterval) {
  EXPECT_EQ(c10::uniform_float24(0), 0.0f);
  EXPECT_LT(c10::uniform_float24(0xffffffffu), 1.0f);
  EXPECT_EQ(c10::uniform_double53(0, 0), 0.0);
  EXPECT_LT(c10::uniform_double53(0xffffffffu, 0xffffffffu), 1.0);
}

}  // namespace
