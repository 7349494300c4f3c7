#include <c10/core/GeneratorImpl.h>

#include <atomic>
#include <chrono>
#include <random>

namespace c10::inline tessera {

GeneratorImpl::~GeneratorImpl() = default;

uint64_t GeneratorImpl::seed() {
  uint64_t s = nondeterministic_seed();
  set_current_seed(s);
  return s;
}

intrusive_ptr<GeneratorImpl> GeneratorImpl::clone() const {
  intrusive_ptr<GeneratorImpl> copy = clone_impl();
  TORCH_INTERNAL_ASSERT(copy.defined() && copy.get() != this, "GeneratorImpl::clone_impl() must return a new object");
  TORCH_INTERNAL_ASSERT(copy->device() == device_, "GeneratorImpl::clone_impl() changed the device");
  return copy;
}

namespace {
// splitmix64's finaliser: spreads the few changing bits of a clock reading over the word.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

uint64_t nondeterministic_seed() {
  try {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ static_cast<uint64_t>(rd());
  } catch (const std::exception&) {
    // No entropy device (some containers): time plus a counter, so two calls in the same
    // clock tick still differ.
    static std::atomic<uint64_t> counter{0};
    auto now = static_cast<uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
    return mix(now + 0x9e3779b97f4a7c15ull * counter.fetch_add(1, std::memory_order_relaxed));
  }
}

}  // namespace c10::inline tessera
