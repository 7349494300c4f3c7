#include <c10/core/Allocator.h>
#include <c10/core/AllocationFaults.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/CachingCPUAllocator.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace c10::inline tessera {

Allocator::~Allocator() = default;

void* alloc_cpu(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  check_allocation_fault(nbytes);
  // posix_memalign rejects nothing below this bound itself, but sizes near SIZE_MAX would
  // wrap inside the allocator; refuse them up front with the same error.
  void* ptr = nullptr;
  int err = nbytes > std::numeric_limits<size_t>::max() / 2 ? ENOMEM : posix_memalign(&ptr, kCPUAlignment, nbytes);
  if (C10_UNLIKELY(err != 0 || ptr == nullptr)) {
    TORCH_ERROR_WITH(OutOfMemoryError,
                     fmt::format("DefaultCPUAllocator: not enough memory: you tried to allocate {} bytes.", nbytes));
  }
  return ptr;
}

void free_cpu(void* ptr) { std::free(ptr); }

namespace {

class DefaultCPUAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    void* p = alloc_cpu(nbytes);
    return DataPtr(p, p, &free_cpu, Device(DeviceType::CPU));
  }
  DeleterFnPtr raw_deleter() const override { return &free_cpu; }
};

// Meta tensors carry shape and dtype only: their storage has a size but no memory.
class MetaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t) override { return DataPtr(nullptr, Device(DeviceType::Meta)); }
  DeleterFnPtr raw_deleter() const override { return &DataPtr::noop_delete; }
};

DefaultCPUAllocator g_cpu_allocator;
MetaAllocator g_meta_allocator;

// The CPU allocator installed at start-up: the caching one, unless
// TESSERA_CPU_ALLOCATOR=plain asks for posix_memalign/free on every call.
Allocator* initial_cpu_allocator() {
  const char* choice = std::getenv("TESSERA_CPU_ALLOCATOR");
  if (choice != nullptr && std::strcmp(choice, "plain") == 0) return &g_cpu_allocator;
  if (choice != nullptr && *choice != '\0' && std::strcmp(choice, "caching") != 0) {
    std::fprintf(stderr, "[tessera] ignoring TESSERA_CPU_ALLOCATOR=%s: expected 'caching' or 'plain'\n", choice);
  }
  return GetCachingCPUAllocator();
}

std::array<std::atomic<Allocator*>, kNumDeviceTypes>& registry() {
  // Indexed by DeviceType: CPU, CUDA (registered by the CUDA library), Meta.
  static_assert(static_cast<int>(DeviceType::CPU) == 0 && static_cast<int>(DeviceType::Meta) == 2);
  static std::array<std::atomic<Allocator*>, kNumDeviceTypes> table{initial_cpu_allocator(), nullptr,
                                                                     &g_meta_allocator};
  return table;
}

}  // namespace

Allocator* GetCPUAllocator() { return GetAllocator(DeviceType::CPU); }

Allocator* GetPlainCPUAllocator() { return &g_cpu_allocator; }

Allocator* GetAllocator(DeviceType type) {
  Allocator* a = registry()[static_cast<size_t>(type)].load(std::memory_order_acquire);
  TORCH_CHECK(a != nullptr, "no allocator is registered for ", type,
              " tensors: Tessera was built without support for that device, or its library is not loaded");
  return a;
}

Allocator* SetAllocator(DeviceType type, Allocator* allocator) {
  return registry()[static_cast<size_t>(type)].exchange(allocator, std::memory_order_acq_rel);
}

}  // namespace c10::inline tessera
