#include <c10/core/CPUGeneratorImpl.h>

#include <c10/util/Exception.h>

#include <cstring>

namespace c10::inline tessera {

namespace {
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr uint64_t kStateTag = 0x7465737365726131ull;  // "tessera1": identifies our state bytes

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
}  // namespace

CPUGeneratorImpl::CPUGeneratorImpl(uint64_t seed)
    : GeneratorImpl(Device(DeviceType::CPU), DispatchKeySet(DispatchKey::CPU)), seed_(seed) {}

void CPUGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

std::array<uint32_t, 4> CPUGeneratorImpl::philox(uint64_t key, uint64_t counter, uint64_t stream) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = static_cast<uint32_t>(stream), c3 = static_cast<uint32_t>(stream >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kMul0, c0, hi0, lo0);
    mulhilo(kMul1, c2, hi1, lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0;
    uint32_t n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return {c0, c1, c2, c3};
}

std::vector<uint8_t> CPUGeneratorImpl::get_state() const {
  std::vector<uint8_t> out(kStateBytes);
  put64(out.data(), kStateTag);
  put64(out.data() + 8, seed_);
  put64(out.data() + 16, offset_);
  return out;
}

void CPUGeneratorImpl::set_state(const uint8_t* data, size_t size) {
  TORCH_CHECK(size == kStateBytes && get64(data) == kStateTag,
              "Expected a CPU generator state of ", kStateBytes, " bytes (from Generator.get_state()), got ",
              size, " bytes that are not one");
  seed_ = get64(data + 8);
  offset_ = get64(data + 16);
}

intrusive_ptr<GeneratorImpl> CPUGeneratorImpl::clone_impl() const {
  auto copy = make_intrusive<CPUGeneratorImpl>(seed_);
  copy->offset_ = offset_;
  return copy;
}

const intrusive_ptr<GeneratorImpl>& default_cpu_generator() {
  static const intrusive_ptr<GeneratorImpl> gen = make_intrusive<CPUGeneratorImpl>(nondeterministic_seed());
  return gen;
}

}  // namespace c10::inline tessera
