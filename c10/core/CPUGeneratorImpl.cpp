#include <c10/core/CPUGeneratorImpl.h>

#include <c10/util/Exception.h>

#include <cstring>

namespace c10::inline tessera {

namespace {
constexpr uint64_t kStateTag = 0x7465737365726131ull;  // "tessera1": identifies our state bytes

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
