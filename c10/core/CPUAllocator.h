// CPU allocation: 64-byte aligned blocks (a cache line, and the widest SIMD load), nullptr
// for zero bytes, OutOfMemoryError with the requested size on failure. The installed CPU
// allocator is the caching one (CachingCPUAllocator.h) unless TESSERA_CPU_ALLOCATOR=plain.
#pragma once

#include <c10/core/Allocator.h>

namespace c10::inline tessera {

constexpr size_t kCPUAlignment = 64;

// The installed CPU allocator (GetAllocator(DeviceType::CPU)).
C10_API Allocator* GetCPUAllocator();
// posix_memalign/free on every call, no cache: what TESSERA_CPU_ALLOCATOR=plain installs.
C10_API Allocator* GetPlainCPUAllocator();

// Raw aligned allocation used by the CPU allocator; exposed for kernels' scratch space.
C10_API void* alloc_cpu(size_t nbytes);
C10_API void free_cpu(void* ptr);

}  // namespace c10::inline tessera
