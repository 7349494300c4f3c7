#include <c10/core/AllocationFaults.h>
#include <c10/util/Exception.h>

#include <fmt/format.h>

namespace c10::inline tessera {

namespace {
std::atomic<int64_t> g_countdown{0};  // > 0: allocations left until the failing one
std::atomic<int64_t> g_count{0};
}  // namespace

namespace detail {

std::atomic<bool> g_allocation_hook_on{false};

void allocation_fault_point(size_t nbytes) {
  g_count.fetch_add(1, std::memory_order_relaxed);
  if (g_countdown.load(std::memory_order_relaxed) > 0 && g_countdown.fetch_sub(1, std::memory_order_relaxed) == 1) {
    TORCH_ERROR_WITH(OutOfMemoryError,
                     fmt::format("not enough memory: you tried to allocate {} bytes (failure injected by "
                                 "set_allocation_fault for a test).",
                                 nbytes));
  }
}

}  // namespace detail

void set_allocation_fault(int64_t n) {
  g_count.store(0, std::memory_order_relaxed);
  g_countdown.store(n > 0 ? n : 0, std::memory_order_relaxed);
  detail::g_allocation_hook_on.store(n != 0, std::memory_order_relaxed);
}

int64_t allocation_fault_count() { return g_count.load(std::memory_order_relaxed); }

}  // namespace c10::inline tessera
