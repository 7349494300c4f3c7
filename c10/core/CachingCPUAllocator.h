// A caching CPU allocator: freed blocks are kept in size classes and handed back to the
// next request of that class, so a large output that is allocated, filled and freed over
// and over pays the kernel's page faults (and zeroing) once instead of on every call.
//
//   request                  block                               from the system
//   < small_threshold (off)  n rounded up to 64 (not cached)     posix_memalign, 64-byte header
//   < large_threshold        size class: 64-byte steps up to      posix_memalign (64-aligned)
//                            256, then 4 classes per power of 2
//   >= large_threshold       n rounded up to 2 MiB                mmap, 2 MiB aligned,
//                                                                 madvise(MADV_HUGEPAGE)
//
// A large request takes the smallest cached block that fits within 1/8 of its rounded size.
// Cached bytes are capped (TESSERA_CPU_CACHE_LIMIT): a free that would exceed the cap
// releases the oldest cached blocks first (a block larger than the cap is released at
// once). When the system refuses memory the allocator empties its cache and retries once
// before raising c10::OutOfMemoryError with the size asked for.
//
// The process-wide instance (GetCachingCPUAllocator) is the default CPU allocator unless
// TESSERA_CPU_ALLOCATOR=plain. Under AddressSanitizer cached blocks are poisoned while they
// sit in the cache, so a use after free still reports (as use-after-poison).
#pragma once

#include <c10/core/Allocator.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace c10::inline tessera {

struct C10_API CachingCPUAllocatorOptions {
  // Freed blocks beyond this many cached bytes are released to the system.
  size_t cache_limit_bytes = size_t{4} << 30;
  // Requests below this bypass the cache (posix_memalign/free, a 64-byte header for the
  // statistics). 0 by default: measured, a cached 64-byte or 1000-byte block costs ~29 ns
  // allocate+free against 60-110 ns for the bypass (glibc's posix_memalign plus the lock).
  size_t small_threshold = 0;
  // Requests from this size up are mmap'ed, 2 MiB aligned, in 2 MiB multiples.
  size_t large_threshold = size_t{1} << 20;
  // madvise(MADV_HUGEPAGE) on large blocks (transparent huge pages in "madvise" mode).
  bool huge_pages = true;

  // The defaults, overridden by the environment:
  //   TESSERA_CPU_CACHE_LIMIT  bytes, with an optional K/M/G suffix (binary); 0 caches
  //                            nothing. Default: a quarter of physical memory, at most 4 GiB.
  //   TESSERA_CPU_HUGEPAGES    0 turns madvise(MADV_HUGEPAGE) off.
  static CachingCPUAllocatorOptions from_env();
};

// A snapshot of the counters (every byte figure is block sizes, as the allocator rounds).
struct C10_API CachingCPUAllocatorStats {
  struct Stat {
    int64_t current = 0;
    int64_t peak = 0;
    int64_t allocated = 0;  // total added
    int64_t freed = 0;      // total removed
  };
  Stat allocated_bytes;  // in blocks handed out and not yet freed
  Stat reserved_bytes;   // held from the system: handed out + cached
  Stat requested_bytes;  // what callers asked for (unrounded), of blocks handed out
  Stat allocation;       // count of blocks handed out
  Stat segment;          // count of blocks held from the system
  Stat cached_bytes;     // in the cache, ready for reuse
  Stat cached_blocks;
  int64_t num_cache_hits = 0;    // requests served from the cache
  int64_t num_cache_misses = 0;  // cacheable requests that went to the system
  int64_t num_small_allocs = 0;  // requests below small_threshold (never cached)
  int64_t num_alloc_retries = 0;  // system failures answered by emptying the cache
  int64_t num_ooms = 0;           // OutOfMemoryErrors raised
  int64_t num_empty_cache = 0;    // empty_cache() calls (including the retry path's)
  int64_t num_cache_limit_releases = 0;  // cached blocks released to honour the cap
  int64_t cache_limit_bytes = 0;
};

class C10_API CachingCPUAllocator final : public Allocator {
 public:
  using Options = CachingCPUAllocatorOptions;
  using Stats = CachingCPUAllocatorStats;

  explicit CachingCPUAllocator(Options options = Options::from_env());
  // Releases the cache. Blocks still handed out must be freed before (their deleter
  // refers to this allocator); the process-wide instance is never destroyed.
  ~CachingCPUAllocator() override;
  CachingCPUAllocator(const CachingCPUAllocator&) = delete;
  CachingCPUAllocator& operator=(const CachingCPUAllocator&) = delete;

  // 64-byte aligned (large blocks 2 MiB aligned); zero bytes gives an empty CPU DataPtr.
  DataPtr allocate(size_t nbytes) override;

  // Releases every cached block to the system.
  void empty_cache();
  Stats stats() const;
  // Sets every peak to its current value.
  void reset_peak_stats();
  // Zeroes the totals (allocated/freed) and event counts; current values and peaks stay.
  void reset_accumulated_stats();
  size_t cache_limit() const;
  // Releases oldest cached blocks at once if the cache is over the new limit.
  void set_cache_limit(size_t bytes);
  const Options& options() const { return options_; }

  // The block size a request of `nbytes` gets.
  size_t block_size(size_t nbytes) const;

  // Test hook: the next `n` requests to the system fail as if out of memory.
  void fail_next_system_allocations(int n);

  // pthread_atfork handlers of the process-wide instance.
  void lock_for_fork();
  void unlock_after_fork();

 private:
  struct Block;
  struct List {
    Block* head = nullptr;
    Block* tail = nullptr;
  };

  static void delete_block(void* ctx);
  static void delete_small(void* ctx);
  DataPtr allocate_small(size_t nbytes);
  void free_block(Block* b);
  Block* take_cached(size_t size, bool large);  // under mu_
  void cache_block(Block* b);                  // under mu_
  void uncache(Block* b);                      // under mu_
  Block* evict_until(size_t limit, bool for_limit);  // under mu_; returns a chain to release
  void release_chain(Block* chain);            // not under mu_
  void* system_alloc(size_t size, bool large);
  void system_free(void* ptr, size_t size, bool large);
  [[noreturn]] void raise_oom(size_t nbytes);
  void count_alloc(size_t size, size_t requested);  // under mu_

  const Options options_;
  mutable std::mutex mu_;
  std::vector<List> class_bins_;          // medium blocks, by size class index
  std::map<size_t, List> large_bins_;     // large blocks, by size
  List lru_;                              // every cached block, newest at head
  size_t cached_bytes_ = 0;
  size_t cache_limit_;
  Stats stats_;
  std::atomic<int> fail_next_{0};
};

// The process-wide caching allocator (created on first use, never destroyed), whether or
// not it is the installed CPU allocator.
C10_API CachingCPUAllocator* GetCachingCPUAllocator();

}  // namespace c10::inline tessera
