#include <c10/core/CPUAllocator.h>
#include <c10/core/CachingCPUAllocator.h>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

namespace {

using Allocator = c10::CachingCPUAllocator;
constexpr size_t KiB = 1024, MiB = 1024 * 1024;

Allocator::Options opts(size_t limit = size_t{1} << 30, size_t small_threshold = 0) {
  Allocator::Options o;
  o.cache_limit_bytes = limit;
  o.small_threshold = small_threshold;
  return o;
}

TEST(CachingCPUAllocator, IsTheInstalledDefaultUnlessPlainIsAsked) {
  const char* env = std::getenv("TESSERA_CPU_ALLOCATOR");
  if (env != nullptr && std::string(env) == "plain") {
    EXPECT_EQ(c10::GetCPUAllocator(), c10::GetPlainCPUAllocator());
  } else {
    EXPECT_EQ(c10::GetCPUAllocator(), c10::GetCachingCPUAllocator());
  }
  EXPECT_EQ(c10::GetAllocator(c10::DeviceType::CPU), c10::GetCPUAllocator());
}

TEST(CachingCPUAllocator, ReusesTheFreedBlockWithoutGrowing) {
  Allocator a(opts());
  void* first = nullptr;
  {
    c10::DataPtr p = a.allocate(100000);
    first = p.get();
  }
  const auto before = a.stats();
  EXPECT_EQ(before.reserved_bytes.current, 114688);  // 100000 -> class 7 * 16 KiB
  c10::DataPtr again = a.allocate(100000);
  EXPECT_EQ(again.get(), first);
  const auto after = a.stats();
  EXPECT_EQ(after.reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(after.segment.allocated, 1);
  EXPECT_EQ(after.num_cache_hits, 1);
  EXPECT_EQ(after.num_cache_misses, 1);

  // Large blocks too (mmap'ed, 2 MiB granules).
  void* big = nullptr;
  {
    c10::DataPtr p = a.allocate(64 * MiB);
    big = p.get();
  }
  c10::DataPtr big2 = a.allocate(64 * MiB);
  EXPECT_EQ(big2.get(), big);
  EXPECT_EQ(a.stats().reserved_bytes.current, 114688 + 64 * static_cast<int64_t>(MiB));
}

TEST(CachingCPUAllocator, SizeClasses) {
  EXPECT_EQ(Allocator::Options().small_threshold, 0u);  // by default every size is cached
  Allocator a(opts(size_t{1} << 30, 4096));
  // Small (below small_threshold): 64-byte steps, never cached.
  EXPECT_EQ(a.block_size(0), 0u);
  EXPECT_EQ(a.block_size(1), 64u);
  EXPECT_EQ(a.block_size(65), 128u);
  EXPECT_EQ(a.block_size(4095), 4096u);
  Allocator all(opts());
  EXPECT_EQ(all.block_size(1), 64u);
  EXPECT_EQ(all.block_size(200), 256u);
  EXPECT_EQ(all.block_size(257), 320u);
  EXPECT_EQ(all.block_size(1000), 1024u);
  EXPECT_EQ(all.block_size(1025), 1280u);
  {
    c10::DataPtr p = all.allocate(100);
    void* first = p.get();
    p.clear();
    EXPECT_EQ(all.allocate(128).get(), first);  // small blocks are cached too
  }
  // Medium: four classes per power of two.
  EXPECT_EQ(a.block_size(4096), 4096u);
  EXPECT_EQ(a.block_size(4097), 5120u);
  EXPECT_EQ(a.block_size(5121), 6144u);
  EXPECT_EQ(a.block_size(6145), 7168u);
  EXPECT_EQ(a.block_size(7169), 8192u);
  EXPECT_EQ(a.block_size(8193), 10240u);
  EXPECT_EQ(a.block_size(MiB - 1), MiB);
  // Large: 2 MiB granules.
  EXPECT_EQ(a.block_size(MiB), 2 * MiB);
  EXPECT_EQ(a.block_size(3 * MiB), 4 * MiB);
  EXPECT_EQ(a.block_size(64 * MiB), 64 * MiB);
  EXPECT_EQ(a.block_size(64 * MiB + 1), 66 * MiB);
  for (size_t n = 1; n < 3 * MiB; n = n * 5 / 4 + 1) {
    size_t b = a.block_size(n);
    EXPECT_GE(b, n);
    EXPECT_LE(b, n < 4096 ? n + 63 : n < MiB ? n + n / 4 + 64 : n + 2 * MiB) << n;
  }

  // Two requests of one class share a block; a different class does not.
  void* p5000 = nullptr;
  {
    c10::DataPtr p = a.allocate(5000);
    p5000 = p.get();
  }
  {
    c10::DataPtr q = a.allocate(4500);  // also 5120
    EXPECT_EQ(q.get(), p5000);
  }
  {
    c10::DataPtr r = a.allocate(6000);  // 6144: a miss
    EXPECT_NE(r.get(), p5000);
  }
  // Large: best fit within 1/8 of the rounded size.
  void* p18 = nullptr;
  {
    c10::DataPtr p = a.allocate(18 * MiB);
    p18 = p.get();
  }
  {
    c10::DataPtr q = a.allocate(16 * MiB);  // 18 <= 16 + 2: takes the 18 MiB block
    EXPECT_EQ(q.get(), p18);
  }
  {
    c10::DataPtr q = a.allocate(8 * MiB);  // 18 > 8 + 1: a new block
    EXPECT_NE(q.get(), p18);
  }
  auto s = a.stats();
  EXPECT_EQ(s.num_cache_hits, 2);
  EXPECT_EQ(s.num_cache_misses, 4);
}

TEST(CachingCPUAllocator, StatsForAScriptedSequence) {
  Allocator a(opts(size_t{1} << 30, /*small_threshold=*/4096));
  const int64_t small = 128, medium = 10240, large = 4 * MiB;
  {
    c10::DataPtr s = a.allocate(100);      // small: 128, not cached
    c10::DataPtr m = a.allocate(10000);    // medium: 10240
    c10::DataPtr l = a.allocate(3 * MiB);  // large: 4 MiB
    auto st = a.stats();
    EXPECT_EQ(st.allocated_bytes.current, small + medium + large);
    EXPECT_EQ(st.reserved_bytes.current, small + medium + large);
    EXPECT_EQ(st.requested_bytes.current, 100 + 10000 + 3 * static_cast<int64_t>(MiB));
    EXPECT_EQ(st.allocation.current, 3);
    m = c10::DataPtr();
    m = a.allocate(9000);  // same class: a hit
    l.clear();
  }
  auto st = a.stats();
  EXPECT_EQ(st.allocated_bytes.current, 0);
  EXPECT_EQ(st.allocated_bytes.peak, small + medium + large);
  EXPECT_EQ(st.allocated_bytes.allocated, small + 2 * medium + large);
  EXPECT_EQ(st.allocated_bytes.freed, small + 2 * medium + large);
  EXPECT_EQ(st.requested_bytes.current, 0);
  EXPECT_EQ(st.requested_bytes.peak, 100 + 10000 + 3 * static_cast<int64_t>(MiB));
  EXPECT_EQ(st.reserved_bytes.current, medium + large);  // both cached
  EXPECT_EQ(st.reserved_bytes.peak, small + medium + large);
  EXPECT_EQ(st.cached_bytes.current, medium + large);
  EXPECT_EQ(st.cached_blocks.current, 2);
  EXPECT_EQ(st.allocation.allocated, 4);
  EXPECT_EQ(st.allocation.peak, 3);
  EXPECT_EQ(st.segment.current, 2);
  EXPECT_EQ(st.segment.allocated, 3);
  EXPECT_EQ(st.num_small_allocs, 1);
  EXPECT_EQ(st.num_cache_hits, 1);
  EXPECT_EQ(st.num_cache_misses, 2);
  EXPECT_EQ(st.num_alloc_retries, 0);
  EXPECT_EQ(st.num_ooms, 0);
  EXPECT_EQ(st.num_empty_cache, 0);

  a.reset_peak_stats();
  EXPECT_EQ(a.stats().allocated_bytes.peak, 0);
  EXPECT_EQ(a.stats().reserved_bytes.peak, medium + large);
  a.reset_accumulated_stats();
  EXPECT_EQ(a.stats().num_cache_hits, 0);
  EXPECT_EQ(a.stats().allocation.allocated, 0);
  EXPECT_EQ(a.stats().reserved_bytes.current, medium + large);
}

TEST(CachingCPUAllocator, EmptyCacheReleasesEverythingCached) {
  Allocator a(opts());
  c10::DataPtr kept = a.allocate(2 * MiB);
  for (size_t n : {size_t{5000}, size_t{70000}, size_t{500000}, 3 * MiB, 20 * MiB}) a.allocate(n);
  EXPECT_EQ(a.stats().cached_blocks.current, 5);
  a.empty_cache();
  auto st = a.stats();
  EXPECT_EQ(st.cached_bytes.current, 0);
  EXPECT_EQ(st.cached_blocks.current, 0);
  EXPECT_EQ(st.reserved_bytes.current, 2 * static_cast<int64_t>(MiB));  // only the live block
  EXPECT_EQ(st.segment.current, 1);
  EXPECT_EQ(st.num_empty_cache, 1);
  EXPECT_EQ(st.num_cache_limit_releases, 0);
  kept.clear();
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved_bytes.current, 0);
  EXPECT_EQ(a.stats().num_empty_cache, 2);
}

TEST(CachingCPUAllocator, CapReleasesOldestCachedBlocks) {
  Allocator a(opts(8 * MiB));
  c10::DataPtr x = a.allocate(4 * MiB), y = a.allocate(4 * MiB), z = a.allocate(4 * MiB);
  void* zp = z.get();
  x.clear();
  y.clear();
  z.clear();  // 12 MiB would be cached: x, the oldest, goes back
  auto st = a.stats();
  EXPECT_EQ(st.cached_bytes.current, 8 * static_cast<int64_t>(MiB));
  EXPECT_EQ(st.reserved_bytes.current, 8 * static_cast<int64_t>(MiB));
  EXPECT_EQ(st.num_cache_limit_releases, 1);
  {
    c10::DataPtr again = a.allocate(4 * MiB);
    EXPECT_EQ(again.get(), zp);  // newest first
  }
  // A block larger than the cap is released at once.
  a.allocate(16 * MiB);
  EXPECT_EQ(a.stats().cached_bytes.current, 8 * static_cast<int64_t>(MiB));
  EXPECT_EQ(a.stats().num_cache_limit_releases, 2);
  // Lowering the cap releases at once.
  a.set_cache_limit(4 * MiB);
  EXPECT_EQ(a.stats().cached_bytes.current, 4 * static_cast<int64_t>(MiB));
  EXPECT_EQ(a.cache_limit(), 4 * MiB);
  a.set_cache_limit(0);
  EXPECT_EQ(a.stats().reserved_bytes.current, 0);
  a.allocate(100000);  // with no cache at all, frees go straight back
  EXPECT_EQ(a.stats().reserved_bytes.current, 0);
  EXPECT_EQ(a.stats().segment.current, 0);
}

TEST(CachingCPUAllocator, OptionsFromTheEnvironment) {
  auto with_env = [](const char* value) {
    setenv("TESSERA_CPU_CACHE_LIMIT", value, 1);
    auto o = Allocator::Options::from_env();
    unsetenv("TESSERA_CPU_CACHE_LIMIT");
    return o.cache_limit_bytes;
  };
  const size_t fallback = Allocator::Options::from_env().cache_limit_bytes;
  EXPECT_GT(fallback, 0u);
  EXPECT_LE(fallback, size_t{4} << 30);
  EXPECT_EQ(with_env("512M"), 512 * MiB);
  EXPECT_EQ(with_env("2G"), size_t{2} << 30);
  EXPECT_EQ(with_env("64KiB"), 64 * KiB);
  EXPECT_EQ(with_env("12345"), 12345u);
  EXPECT_EQ(with_env("0"), 0u);
  EXPECT_EQ(with_env("lots"), fallback);  // warns, keeps the default
  setenv("TESSERA_CPU_HUGEPAGES", "0", 1);
  EXPECT_FALSE(Allocator::Options::from_env().huge_pages);
  unsetenv("TESSERA_CPU_HUGEPAGES");
}

TEST(CachingCPUAllocator, SystemFailureEmptiesTheCacheAndRetriesOnce) {
  Allocator a(opts(size_t{1} << 30, /*small_threshold=*/4096));
  a.allocate(8 * MiB);  // cached
  a.allocate(5000);     // cached
  ASSERT_EQ(a.stats().cached_blocks.current, 2);

  a.fail_next_system_allocations(1);
  c10::DataPtr p = a.allocate(3 * MiB);  // a miss; the first system call fails
  ASSERT_NE(p.get(), nullptr);
  auto st = a.stats();
  EXPECT_EQ(st.num_alloc_retries, 1);
  EXPECT_EQ(st.num_empty_cache, 1);
  EXPECT_EQ(st.num_ooms, 0);
  EXPECT_EQ(st.cached_blocks.current, 0);
  EXPECT_EQ(st.reserved_bytes.current, 4 * static_cast<int64_t>(MiB));

  a.fail_next_system_allocations(2);  // the retry fails too
  try {
    a.allocate(12345678);
    FAIL() << "expected OutOfMemoryError";
  } catch (const c10::OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("12345678 bytes"), std::string::npos) << e.what();
  }
  // The small path retries the same way.
  a.fail_next_system_allocations(1);
  EXPECT_NE(a.allocate(10).get(), nullptr);
  a.fail_next_system_allocations(2);
  EXPECT_THROW(a.allocate(10), c10::OutOfMemoryError);
  st = a.stats();
  EXPECT_EQ(st.num_alloc_retries, 4);
  EXPECT_EQ(st.num_ooms, 2);
  EXPECT_EQ(st.allocation.current, 1);  // p
  // Requests that can never succeed fail without a system call.
  EXPECT_THROW(a.allocate(SIZE_MAX - 5), c10::OutOfMemoryError);
  EXPECT_THROW(a.allocate(SIZE_MAX / 4), c10::OutOfMemoryError);  // mmap refuses it
}

TEST(CachingCPUAllocator, AlignmentAndZeroBytes) {
  Allocator a(opts());
  c10::DataPtr zero = a.allocate(0);
  EXPECT_EQ(zero.get(), nullptr);
  EXPECT_EQ(zero.device().type(), c10::DeviceType::CPU);
  std::vector<c10::DataPtr> live;
  for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}, size_t{4095}, size_t{4096},
                   size_t{4097}, size_t{70000}, MiB - 1, MiB, 3 * MiB + 7}) {
    for (int rep = 0; rep < 2; ++rep) {  // fresh, then (after the free below) cached
      c10::DataPtr p = a.allocate(n);
      ASSERT_NE(p.get(), nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u) << n;
      if (n >= MiB) {
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % (2 * MiB), 0u) << n;
      }
      EXPECT_EQ(p.device(), c10::Device("cpu"));
      std::memset(p.get(), 0x5A, n);  // every byte asked for is writable (ASan checks)
    }
  }
}

TEST(CachingCPUAllocator, ManyThreads) {
  Allocator a(opts(64 * MiB));
  constexpr int kThreads = 8, kIters = 3000;
  const size_t sizes[] = {8, 200, 3000, 5000, 40000, 300000, MiB + 5, 3 * MiB};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<std::pair<c10::DataPtr, size_t>> live;
      for (int i = 0; i < kIters; ++i) {
        if (live.size() < 6 && (live.empty() || rng() % 2)) {
          size_t n = sizes[rng() % std::size(sizes)];
          c10::DataPtr p = a.allocate(n);
          // A block handed to two owners at once would have its tag overwritten.
          std::memset(p.get(), t + 1, std::min<size_t>(n, 256));
          live.emplace_back(std::move(p), n);
        } else {
          size_t k = rng() % live.size();
          auto* bytes = static_cast<unsigned char*>(live[k].first.get());
          for (size_t j = 0; j < std::min<size_t>(live[k].second, 256); ++j) {
            if (bytes[j] != t + 1) {
              ++bad;
              break;
            }
          }
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  auto st = a.stats();
  EXPECT_EQ(st.allocation.current, 0);
  EXPECT_EQ(st.allocated_bytes.current, 0);
  EXPECT_EQ(st.requested_bytes.current, 0);
  EXPECT_EQ(st.allocation.allocated, st.allocation.freed);
  EXPECT_EQ(st.allocation.allocated, st.num_cache_hits + st.num_cache_misses + st.num_small_allocs);
  EXPECT_EQ(st.reserved_bytes.current, st.cached_bytes.current);
  EXPECT_EQ(st.segment.current, st.cached_blocks.current);
  EXPECT_LE(st.cached_bytes.current, 64 * static_cast<int64_t>(MiB));
  EXPECT_GT(st.num_cache_hits, 0);
  a.empty_cache();
  EXPECT_EQ(a.stats().reserved_bytes.current, 0);
}

// The process-wide allocator holds its lock across fork(): a child forked while another
// thread is inside the allocator can still allocate (without the atfork handlers it would
// hang on the copied, locked mutex; alarm() turns a hang into a failure).
TEST(CachingCPUAllocator, ForkWhileAnotherThreadAllocates) {
  c10::CachingCPUAllocator* a = c10::GetCachingCPUAllocator();
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop.load()) a->allocate(100000);
  });
  for (int i = 0; i < 20; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(10);
      c10::DataPtr p = a->allocate(100000);
      _exit(p ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  stop = true;
  churn.join();
}

long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

// Allocates, touches every page of and frees a 64 MiB block `rounds` times; the minor
// page faults of each round.
std::vector<long> fault_rounds(c10::Allocator& a, int rounds) {
  const size_t n = 64 * MiB;
  std::vector<long> faults;
  faults.reserve(rounds);
  for (int r = 0; r < rounds; ++r) {
    long before = minor_faults();
    {
      c10::DataPtr p = a.allocate(n);
      auto* bytes = static_cast<volatile char*>(p.get());
      for (size_t i = 0; i < n; i += 4096) bytes[i] = static_cast<char>(r);
    }
    faults.push_back(minor_faults() - before);
  }
  return faults;
}

TEST(CachingCPUAllocator, NoNewPageFaultsOnceCached) {
  Allocator a(opts());
  std::vector<long> cached = fault_rounds(a, 5);
  std::vector<long> plain = fault_rounds(*c10::GetPlainCPUAllocator(), 3);
  std::string report = "minor faults per 64 MiB round: caching";
  for (long f : cached) report.append(" ").append(std::to_string(f));  // not " " + string: GCC 12 -Wrestrict
  report += "; plain";
  for (long f : plain) report.append(" ").append(std::to_string(f));
  std::printf("%s\n", report.c_str());
  for (size_t r = 1; r < cached.size(); ++r) EXPECT_LE(cached[r], 16) << report;
  // The plain allocator maps fresh memory each time: at least one fault per huge page.
  for (long f : plain) EXPECT_GE(f, 32) << report;
}

#ifdef TEST_ASAN
TEST(CachingCPUAllocatorDeathTest, UseOfACachedBlockIsReported) {
  Allocator a(opts());
  c10::DataPtr p = a.allocate(100000);
  char* dangling = static_cast<char*>(p.get());
  p.clear();  // cached, poisoned
  EXPECT_DEATH({ dangling[10] = 1; }, "use-after-poison");
  c10::DataPtr again = a.allocate(100000);
  ASSERT_EQ(again.get(), dangling);
  dangling[10] = 1;  // unpoisoned on reuse
  dangling[99999] = 1;
}

TEST(CachingCPUAllocatorDeathTest, OverrunIntoTheSizeClassSlackIsReported) {
  Allocator a(opts());
  for (int rep = 0; rep < 2; ++rep) {  // a fresh block, then the same block from the cache
    c10::DataPtr p = a.allocate(100);  // a 128-byte block
    char* bytes = static_cast<char*>(p.get());
    bytes[99] = 1;
    EXPECT_DEATH({ bytes[100] = 1; }, "use-after-poison");
    c10::DataPtr big = a.allocate(3 * MiB + 5);  // a 4 MiB block
    static_cast<char*>(big.get())[3 * MiB + 4] = 1;
    EXPECT_DEATH({ static_cast<char*>(big.get())[3 * MiB + 8] = 1; }, "use-after-poison");
  }
}
#endif

}  // namespace
