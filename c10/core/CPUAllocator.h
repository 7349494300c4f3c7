// The default CPU allocator: 64-byte aligned blocks (a cache line, and the widest SIMD
// load), nullptr for zero bytes, OutOfMemoryError with the requested size on failure.
#pragma once

#include <c10/core/Allocator.h>

namespace c10::inline tessera {

constexpr size_t kCPUAlignment = 64;

C10_API Allocator* GetCPUAllocator();

// Raw aligned allocation used by the CPU allocator; exposed for kernels' scratch space.
C10_API void* alloc_cpu(size_t nbytes);
C10_API void free_cpu(void* ptr);

}  // namespace c10::inline tessera
