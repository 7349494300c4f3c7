#include <c10/core/CPUAllocator.h>
#include <c10/core/CachingCPUAllocator.h>
#include <c10/core/AllocationFaults.h>

#include <fmt/format.h>

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

// Under AddressSanitizer a cached block is poisoned while it waits for reuse: touching it
// through a dangling pointer reports use-after-poison, as a freed heap block would report
// use-after-free. Handing a block out unpoisons only the bytes asked for, so an overrun
// into the size class's slack still reports; a released block is unpoisoned whole.
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_ASAN 1
#endif
#endif
#ifdef TESSERA_ASAN
#include <sanitizer/asan_interface.h>
#define TESSERA_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define TESSERA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define TESSERA_POISON(p, n) ((void)(p), (void)(n))
#define TESSERA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace c10::inline tessera {

namespace {

constexpr size_t kLargeRound = size_t{2} << 20;  // one x86-64 huge page
constexpr size_t kSmallHeader = kCPUAlignment;   // keeps the data 64-byte aligned

constexpr size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

// Medium size classes: 64-byte steps up to 256, then four classes per power of two
// (p, 1.25p, 1.5p, 1.75p), so rounding wastes at most a quarter.
size_t medium_round(size_t n) {
  if (n <= 256) return round_up(std::max<size_t>(n, 1), 64);
  size_t step = std::bit_floor(n - 1) / 4;
  return round_up(n, step);
}

size_t class_index(size_t rounded) {
  if (rounded <= 256) return rounded / 64 - 1;
  size_t p = std::bit_floor(rounded - 1);
  size_t step = p / 4;
  return 4 + (static_cast<size_t>(std::countr_zero(p)) - 8) * 4 + (rounded / step - 5);
}

// Stored in front of a small (uncached) block: its deleter finds the owner and size here.
struct SmallHeader {
  CachingCPUAllocator* owner;
  size_t size;
  size_t requested;
};
static_assert(sizeof(SmallHeader) <= kSmallHeader);

void add(CachingCPUAllocatorStats::Stat& s, int64_t v) {
  s.current += v;
  s.allocated += v;
  s.peak = std::max(s.peak, s.current);
}
void sub(CachingCPUAllocatorStats::Stat& s, int64_t v) {
  s.current -= v;
  s.freed += v;
}

size_t parse_bytes(const char* text, size_t fallback, const char* var) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  bool ok = end != text && errno == 0;
  unsigned shift = 0;
  if (ok && *end != '\0') {
    switch (*end) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: ok = false;
    }
    if (ok) {
      ++end;
      if (*end == 'i' || *end == 'I') ++end;
      if (*end == 'b' || *end == 'B') ++end;
      ok = *end == '\0' && v <= (std::numeric_limits<unsigned long long>::max() >> shift);
    }
  }
  if (!ok) {
    std::fprintf(stderr, "[tessera] ignoring %s=%s: expected a byte count such as 2G, 512M or 0\n", var, text);
    return fallback;
  }
  return static_cast<size_t>(v << shift);
}

}  // namespace

struct CachingCPUAllocator::Block {
  void* ptr;
  size_t size;
  size_t requested;
  CachingCPUAllocator* owner;
  bool large;
  Block* prev = nullptr;  // bin list (also the release chain through `next`)
  Block* next = nullptr;
  Block* lru_prev = nullptr;  // every cached block, newest first
  Block* lru_next = nullptr;
};

namespace {

template <class B, B* B::*Prev, B* B::*Next, class L>
void push_front(L& list, B* b) {
  b->*Prev = nullptr;
  b->*Next = list.head;
  if (list.head) list.head->*Prev = b; else list.tail = b;
  list.head = b;
}

template <class B, B* B::*Prev, B* B::*Next, class L>
void unlink(L& list, B* b) {
  if (b->*Prev) (b->*Prev)->*Next = b->*Next; else list.head = b->*Next;
  if (b->*Next) (b->*Next)->*Prev = b->*Prev; else list.tail = b->*Prev;
  b->*Prev = b->*Next = nullptr;
}

}  // namespace

CachingCPUAllocatorOptions CachingCPUAllocatorOptions::from_env() {
  CachingCPUAllocatorOptions o;
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    o.cache_limit_bytes = std::min(o.cache_limit_bytes, static_cast<size_t>(pages) * static_cast<size_t>(page) / 4);
  }
  if (const char* v = std::getenv("TESSERA_CPU_CACHE_LIMIT"); v && *v) {
    o.cache_limit_bytes = parse_bytes(v, o.cache_limit_bytes, "TESSERA_CPU_CACHE_LIMIT");
  }
  if (const char* v = std::getenv("TESSERA_CPU_HUGEPAGES"); v && *v) o.huge_pages = std::strcmp(v, "0") != 0;
  return o;
}

CachingCPUAllocator::CachingCPUAllocator(Options options) : options_(options), cache_limit_(options.cache_limit_bytes) {
  TORCH_CHECK(options_.small_threshold <= options_.large_threshold && options_.large_threshold >= 64,
              "CachingCPUAllocator: small_threshold (", options_.small_threshold,
              ") must not exceed large_threshold (", options_.large_threshold, ")");
  class_bins_.resize(class_index(medium_round(options_.large_threshold - 1)) + 1);
}

CachingCPUAllocator::~CachingCPUAllocator() { empty_cache(); }

size_t CachingCPUAllocator::block_size(size_t nbytes) const {
  if (nbytes == 0) return 0;
  if (nbytes < options_.small_threshold) return round_up(nbytes, kCPUAlignment);
  if (nbytes < options_.large_threshold) return medium_round(nbytes);
  return round_up(nbytes, kLargeRound);
}

void CachingCPUAllocator::count_alloc(size_t size, size_t requested) {
  add(stats_.allocated_bytes, static_cast<int64_t>(size));
  add(stats_.requested_bytes, static_cast<int64_t>(requested));
  add(stats_.allocation, 1);
}

DataPtr CachingCPUAllocator::allocate(size_t nbytes) {
  const Device cpu(DeviceType::CPU);
  if (nbytes == 0) return DataPtr(nullptr, cpu);
  check_allocation_fault(nbytes);
  // Sizes this large cannot be rounded without wrapping, nor ever be served.
  if (C10_UNLIKELY(nbytes > std::numeric_limits<size_t>::max() / 2)) raise_oom(nbytes);
  if (nbytes < options_.small_threshold) return allocate_small(nbytes);

  const bool large = nbytes >= options_.large_threshold;
  const size_t size = block_size(nbytes);
  {
    std::lock_guard<std::mutex> g(mu_);
    if (Block* b = take_cached(size, large)) {
      ++stats_.num_cache_hits;
      b->requested = nbytes;
      count_alloc(b->size, nbytes);
      TESSERA_UNPOISON(b->ptr, nbytes);  // the rounding slack stays poisoned
      return DataPtr(b->ptr, b, &delete_block, cpu);
    }
    ++stats_.num_cache_misses;
  }
  auto block = std::make_unique<Block>(Block{nullptr, size, nbytes, this, large});
  void* p = system_alloc(size, large);
  if (C10_UNLIKELY(p == nullptr)) {
    {
      std::lock_guard<std::mutex> g(mu_);
      ++stats_.num_alloc_retries;
    }
    empty_cache();
    p = system_alloc(size, large);
    if (p == nullptr) raise_oom(nbytes);
  }
  block->ptr = p;
  TESSERA_POISON(static_cast<char*>(p) + nbytes, size - nbytes);  // overruns into the slack report
  std::lock_guard<std::mutex> g(mu_);
  add(stats_.reserved_bytes, static_cast<int64_t>(size));
  add(stats_.segment, 1);
  count_alloc(size, nbytes);
  return DataPtr(p, block.release(), &delete_block, cpu);
}

DataPtr CachingCPUAllocator::allocate_small(size_t nbytes) {
  const size_t size = round_up(nbytes, kCPUAlignment);
  void* base = system_alloc(kSmallHeader + size, false);
  if (C10_UNLIKELY(base == nullptr)) {
    {
      std::lock_guard<std::mutex> g(mu_);
      ++stats_.num_alloc_retries;
    }
    empty_cache();
    base = system_alloc(kSmallHeader + size, false);
    if (base == nullptr) raise_oom(nbytes);
  }
  new (base) SmallHeader{this, size, nbytes};
  {
    std::lock_guard<std::mutex> g(mu_);
    ++stats_.num_small_allocs;
    add(stats_.reserved_bytes, static_cast<int64_t>(size));
    add(stats_.segment, 1);
    count_alloc(size, nbytes);
  }
  return DataPtr(static_cast<char*>(base) + kSmallHeader, base, &delete_small, Device(DeviceType::CPU));
}

void CachingCPUAllocator::delete_small(void* ctx) {
  auto* h = static_cast<SmallHeader*>(ctx);
  CachingCPUAllocator* self = h->owner;
  {
    std::lock_guard<std::mutex> g(self->mu_);
    auto& s = self->stats_;
    sub(s.allocated_bytes, static_cast<int64_t>(h->size));
    sub(s.requested_bytes, static_cast<int64_t>(h->requested));
    sub(s.allocation, 1);
    sub(s.reserved_bytes, static_cast<int64_t>(h->size));
    sub(s.segment, 1);
  }
  std::free(ctx);
}

void CachingCPUAllocator::delete_block(void* ctx) {
  auto* b = static_cast<Block*>(ctx);
  b->owner->free_block(b);
}

void CachingCPUAllocator::free_block(Block* b) {
  TESSERA_POISON(b->ptr, b->size);  // before another thread can take it from the cache
  Block* chain = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    sub(stats_.allocated_bytes, static_cast<int64_t>(b->size));
    sub(stats_.requested_bytes, static_cast<int64_t>(b->requested));
    sub(stats_.allocation, 1);
    if (b->size > cache_limit_) {
      // Too big to cache at all: straight back to the system.
      ++stats_.num_cache_limit_releases;
      sub(stats_.reserved_bytes, static_cast<int64_t>(b->size));
      sub(stats_.segment, 1);
      b->next = nullptr;
      chain = b;
    } else {
      chain = evict_until(cache_limit_ - b->size, /*for_limit=*/true);
      cache_block(b);
    }
  }
  release_chain(chain);
}

CachingCPUAllocator::Block* CachingCPUAllocator::take_cached(size_t size, bool large) {
  Block* b = nullptr;
  if (!large) {
    b = class_bins_[class_index(size)].head;
  } else {
    // Best fit among blocks at most 1/8 larger than asked.
    auto it = large_bins_.lower_bound(size);
    if (it != large_bins_.end() && it->first <= size + size / 8) b = it->second.head;
  }
  if (b) uncache(b);
  return b;
}

void CachingCPUAllocator::cache_block(Block* b) {
  List& bin = b->large ? large_bins_[b->size] : class_bins_[class_index(b->size)];
  push_front<Block, &Block::prev, &Block::next>(bin, b);
  push_front<Block, &Block::lru_prev, &Block::lru_next>(lru_, b);
  cached_bytes_ += b->size;
  add(stats_.cached_bytes, static_cast<int64_t>(b->size));
  add(stats_.cached_blocks, 1);
}

void CachingCPUAllocator::uncache(Block* b) {
  if (b->large) {
    auto it = large_bins_.find(b->size);
    unlink<Block, &Block::prev, &Block::next>(it->second, b);
    if (it->second.head == nullptr) large_bins_.erase(it);
  } else {
    unlink<Block, &Block::prev, &Block::next>(class_bins_[class_index(b->size)], b);
  }
  unlink<Block, &Block::lru_prev, &Block::lru_next>(lru_, b);
  cached_bytes_ -= b->size;
  sub(stats_.cached_bytes, static_cast<int64_t>(b->size));
  sub(stats_.cached_blocks, 1);
}

CachingCPUAllocator::Block* CachingCPUAllocator::evict_until(size_t limit, bool for_limit) {
  Block* chain = nullptr;
  while (cached_bytes_ > limit && lru_.tail != nullptr) {
    Block* b = lru_.tail;  // the block cached longest ago
    uncache(b);
    sub(stats_.reserved_bytes, static_cast<int64_t>(b->size));
    sub(stats_.segment, 1);
    if (for_limit) ++stats_.num_cache_limit_releases;
    b->next = chain;
    chain = b;
  }
  return chain;
}

void CachingCPUAllocator::release_chain(Block* chain) {
  while (chain != nullptr) {
    Block* next = chain->next;
    TESSERA_UNPOISON(chain->ptr, chain->size);
    system_free(chain->ptr, chain->size, chain->large);
    delete chain;
    chain = next;
  }
}

void* CachingCPUAllocator::system_alloc(size_t size, bool large) {
  if (C10_UNLIKELY(fail_next_.load(std::memory_order_relaxed) > 0) &&
      fail_next_.fetch_sub(1, std::memory_order_relaxed) > 0) {
    return nullptr;
  }
  if (!large) {
    void* p = nullptr;
    return posix_memalign(&p, kCPUAlignment, size) == 0 ? p : nullptr;
  }
  // Over-map by one huge page, then trim both ends so the block starts on a 2 MiB boundary
  // (the kernel can then back it with whole huge pages).
  if (size > std::numeric_limits<size_t>::max() - kLargeRound) return nullptr;
  const size_t len = size + kLargeRound;
  void* raw = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = round_up(start, kLargeRound);
  if (aligned > start) munmap(raw, aligned - start);
  const size_t tail = start + len - (aligned + size);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + size), tail);
  auto* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  if (options_.huge_pages) madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

void CachingCPUAllocator::system_free(void* ptr, size_t size, bool large) {
  if (large) {
    munmap(ptr, size);
  } else {
    std::free(ptr);
  }
}

void CachingCPUAllocator::raise_oom(size_t nbytes) {
  {
    std::lock_guard<std::mutex> g(mu_);
    ++stats_.num_ooms;
  }
  TORCH_ERROR_WITH(OutOfMemoryError,
                   fmt::format("CachingCPUAllocator: not enough memory: you tried to allocate {} bytes.", nbytes));
}

void CachingCPUAllocator::empty_cache() {
  Block* chain = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    ++stats_.num_empty_cache;
    chain = evict_until(0, /*for_limit=*/false);
  }
  release_chain(chain);
}

CachingCPUAllocatorStats CachingCPUAllocator::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  Stats s = stats_;
  s.cache_limit_bytes = static_cast<int64_t>(cache_limit_);
  return s;
}

void CachingCPUAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> g(mu_);
  for (Stats::Stat* s : {&stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.requested_bytes, &stats_.allocation,
                         &stats_.segment, &stats_.cached_bytes, &stats_.cached_blocks}) {
    s->peak = s->current;
  }
}

void CachingCPUAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> g(mu_);
  for (Stats::Stat* s : {&stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.requested_bytes, &stats_.allocation,
                         &stats_.segment, &stats_.cached_bytes, &stats_.cached_blocks}) {
    s->allocated = s->freed = 0;
  }
  stats_.num_cache_hits = stats_.num_cache_misses = stats_.num_small_allocs = 0;
  stats_.num_alloc_retries = stats_.num_ooms = stats_.num_empty_cache = stats_.num_cache_limit_releases = 0;
}

size_t CachingCPUAllocator::cache_limit() const {
  std::lock_guard<std::mutex> g(mu_);
  return cache_limit_;
}

void CachingCPUAllocator::set_cache_limit(size_t bytes) {
  Block* chain = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    cache_limit_ = bytes;
    chain = evict_until(bytes, /*for_limit=*/true);
  }
  release_chain(chain);
}

void CachingCPUAllocator::fail_next_system_allocations(int n) { fail_next_.store(n, std::memory_order_relaxed); }

void CachingCPUAllocator::lock_for_fork() { mu_.lock(); }
void CachingCPUAllocator::unlock_after_fork() { mu_.unlock(); }

CachingCPUAllocator* GetCachingCPUAllocator() {
  static CachingCPUAllocator* instance = [] {
    auto* a = new CachingCPUAllocator();  // never destroyed: DataPtrs may outlive statics
    // fork() while another thread holds the lock would leave the child's copy locked for
    // ever: hold it across fork, so both sides start with it free and the cache consistent.
    pthread_atfork([] { GetCachingCPUAllocator()->lock_for_fork(); },
                   [] { GetCachingCPUAllocator()->unlock_after_fork(); },
                   [] { GetCachingCPUAllocator()->unlock_after_fork(); });
    return a;
  }();
  return instance;
}

}  // namespace c10::inline tessera
