// How the CPU random kernels draw from a generator: a kernel reserves a run of Philox
// counters under the generator's lock, then element i draws from counter first + i on
// whichever thread runs it, so the numbers depend on the seed and call order only.
#pragma once

#include <c10/core/CPUGeneratorImpl.h>
#include <aten/core/Generator.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

namespace at::inline tessera::native {

inline c10::CPUGeneratorImpl* cpu_generator(const std::optional<Generator>& gen) {
  if (gen && gen->defined()) return gen->get<c10::CPUGeneratorImpl>();
  return static_cast<c10::CPUGeneratorImpl*>(c10::default_cpu_generator().get());
}

// Reserves `n` counters; returns (key, first counter).
inline std::pair<uint64_t, uint64_t> reserve_counters(const std::optional<Generator>& g, uint64_t n) {
  c10::CPUGeneratorImpl* gen = cpu_generator(g);
  std::lock_guard<std::mutex> lock(gen->mutex());
  return {gen->current_seed(), gen->reserve(n)};
}

// xoshiro256** (Blackman and Vigna): a small, fast generator of 64-bit words, usable with
// the <random> distributions. Its 256-bit state costs four words to seed, where a
// Mersenne Twister's costs hundreds: it is seeded once per element.
class ElementEngine {
 public:
  using result_type = uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }

  // The state from a 128-bit seed, spread by SplitMix64 (never all zero).
  ElementEngine(uint64_t lo, uint64_t hi) {
    uint64_t x = lo ^ (hi * 0x9E3779B97F4A7C15ull);
    for (uint64_t& word : s_) {
      x += 0x9E3779B97F4A7C15ull;
      uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      word = z ^ (z >> 31);
    }
  }

  result_type operator()() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// An engine of its own for an element whose sampler needs an unknown count of numbers (a
// rejection sampler), seeded from that element's Philox block.
inline ElementEngine element_engine(uint64_t key, uint64_t counter) {
  const auto w = c10::CPUGeneratorImpl::philox(key, counter);
  return ElementEngine((static_cast<uint64_t>(w[0]) << 32) | w[1], (static_cast<uint64_t>(w[2]) << 32) | w[3]);
}

}  // namespace at::inline tessera::native
