// Fault injection for tests: make the n-th CPU allocation from now fail with
// OutOfMemoryError, and count allocations, so a test can move one failure through every
// allocation of a training step and check what is left behind.
#pragma once

#include <c10/macros/Export.h>
#include <c10/macros/Macros.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace c10::inline tessera {

// n >= 1: the n-th allocation of nonzero size from now raises OutOfMemoryError (once, then
// the hook disarms itself but keeps counting); n < 0: count only; 0: off. Process-wide;
// every CPU allocator (caching, plain, kernels' scratch) checks it.
C10_API void set_allocation_fault(int64_t n);
// Allocations counted since the last set_allocation_fault call.
C10_API int64_t allocation_fault_count();

namespace detail {
C10_API extern std::atomic<bool> g_allocation_hook_on;
C10_API void allocation_fault_point(size_t nbytes);
}  // namespace detail

// One relaxed load when no test has armed the hook.
inline void check_allocation_fault(size_t nbytes) {
  if (C10_UNLIKELY(detail::g_allocation_hook_on.load(std::memory_order_relaxed))) {
    detail::allocation_fault_point(nbytes);
  }
}

}  // namespace c10::inline tessera
