// c10::CPUGeneratorImpl: the CPU random-number generator behind torch.Generator('cpu')
// and the process's default generator (tessera.manual_seed).
//
// It is counter-based (Philox4x32-10, Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC'11): the whole state is a 64-bit key (the seed) and a 64-bit counter
// (the offset). A kernel that needs n draws reserves n counter values under the
// generator's mutex and then computes draw i as philox(seed, first + i) on any thread, so
// results depend only on the seed and the order of calls, never on the thread count.
#pragma once

#include <c10/core/GeneratorImpl.h>

#include <array>
#include <cstdint>
#include <vector>

namespace c10::inline tessera {

class C10_API CPUGeneratorImpl final : public GeneratorImpl {
 public:
  // torch's default seed for a fresh torch.Generator().
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;
  // Bytes of get_state(): a tag, the seed and the offset.
  static constexpr size_t kStateBytes = 24;

  explicit CPUGeneratorImpl(uint64_t seed = kDefaultSeed);

  void set_current_seed(uint64_t seed) override;  // restarts the stream (offset 0)
  uint64_t current_seed() const override { return seed_; }

  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  // Reserves `n` consecutive counter values and returns the first. The caller holds mutex().
  uint64_t reserve(uint64_t n) {
    uint64_t first = offset_;
    offset_ += n;
    return first;
  }

  // The serialised state (torch.Generator.get_state()) and its inverse; set_state raises
  // on bytes that get_state did not produce.
  std::vector<uint8_t> get_state() const;
  void set_state(const uint8_t* data, size_t size);

  // One Philox4x32-10 block: four independent 32-bit words for (key, counter). Inline:
  // kernels call it once per one to four elements.
  static std::array<uint32_t, 4> philox(uint64_t key, uint64_t counter, uint64_t stream = 0) {
    constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
    constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // golden ratio, sqrt(3) - 1
    uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
    uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
    uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
    for (int round = 0; round < 10; ++round) {
      uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
      uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
      uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
      uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
      c1 = static_cast<uint32_t>(p1);
      c3 = static_cast<uint32_t>(p0);
      c0 = n0;
      c2 = n2;
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    return {c0, c1, c2, c3};
  }

 private:
  intrusive_ptr<GeneratorImpl> clone_impl() const override;

  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process's default CPU generator (seeded nondeterministically when first used, as
// torch seeds its own at import); never null.
C10_API const intrusive_ptr<GeneratorImpl>& default_cpu_generator();

// Draws built on philox words: uniform in [0, 1) with `bits` random bits (<= 32 or 53).
inline float uniform_float24(uint32_t w) { return static_cast<float>(w >> 8) * (1.0f / 16777216.0f); }
inline double uniform_double53(uint32_t hi, uint32_t lo) {
  uint64_t v = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  return static_cast<double>(v) * (1.0 / 9007199254740992.0);
}
inline uint64_t combine64(uint32_t hi, uint32_t lo) { return static_cast<uint64_t>(hi) << 32 | lo; }

}  // namespace c10::inline tessera
