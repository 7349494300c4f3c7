#include <aten/core/Parallel.h>
#include <c10/core/ThreadLocalState.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

// Restores the thread count each test changes.
class ParallelTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = at::get_num_threads(); }
  void TearDown() override { at::set_num_threads(saved_); }
  int saved_ = 1;
};

// Symbols of the runtimes libaten loads (the test itself links neither).
template <class Fn>
Fn runtime_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

TEST_F(ParallelTest, EveryElementExactlyOnceInContiguousChunks) {
  for (int threads : {1, 2, 3, 4}) {
    at::set_num_threads(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 64, 100, 1000, 32769}) {
      for (int64_t grain : {0, 1, 2, 3, 10, 1000, 100000}) {
        for (int64_t begin : {int64_t{0}, int64_t{-5}, int64_t{1} << 40}) {
          std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
          std::mutex mu;
          std::vector<std::pair<int64_t, int64_t>> chunks;
          at::parallel_for(begin, begin + n, grain, [&](int64_t b, int64_t e) {
            {
              std::lock_guard<std::mutex> g(mu);
              chunks.emplace_back(b, e);
            }
            for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i - begin)]++;
          });
          for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " grain=" << grain << " i=" << i;
          }
          std::sort(chunks.begin(), chunks.end());
          ASSERT_EQ(chunks.empty(), n == 0);
          ASSERT_LE(static_cast<int>(chunks.size()), std::max(threads, 1));
          if (grain > 0 && n > 0) {
            ASSERT_LE(static_cast<int64_t>(chunks.size()), (n + grain - 1) / grain) << n << " " << grain;
          }
          for (size_t c = 0; c < chunks.size(); ++c) {
            EXPECT_LT(chunks[c].first, chunks[c].second);  // never an empty chunk
            if (c > 0) {
              EXPECT_EQ(chunks[c - 1].second, chunks[c].first);
            }
          }
        }
      }
    }
  }
}

TEST_F(ParallelTest, RunsInlineBelowTheGrainWithOneThreadAndWhenNested) {
  at::set_num_threads(4);
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  at::parallel_for(0, 100, 100, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 100);
    EXPECT_FALSE(at::in_parallel_region());
  });
  EXPECT_EQ(calls, 1);

  at::set_num_threads(1);
  calls = 0;
  at::parallel_for(0, 1000000, 1, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_EQ(e - b, 1000000);
  });
  EXPECT_EQ(calls, 1);

  at::set_num_threads(2);
  EXPECT_FALSE(at::in_parallel_region());
  std::atomic<int> outer{0}, inner{0}, inner_inline{0};
  at::parallel_for(0, 1000, 1, [&](int64_t b, int64_t e) {
    ++outer;
    EXPECT_TRUE(at::in_parallel_region());
    const auto me = std::this_thread::get_id();
    at::parallel_for(0, 1000, 1, [&](int64_t ib, int64_t ie) {
      ++inner;
      if (std::this_thread::get_id() == me && ib == 0 && ie == 1000) ++inner_inline;
    });
  });
  EXPECT_EQ(outer.load(), 2);
  EXPECT_EQ(inner.load(), 2);          // one call per outer chunk: the nested loop ran inline
  EXPECT_EQ(inner_inline.load(), 2);
  EXPECT_FALSE(at::in_parallel_region());
}

// A SerialScope runs every loop on the caller, nests, and ends with its scope; other threads
// keep their parallelism meanwhile.
TEST_F(ParallelTest, SerialScopeRunsLoopsInlineUntilItEnds) {
  at::set_num_threads(2);
  const auto caller = std::this_thread::get_id();
  auto chunks = [] {
    std::atomic<int> n{0};
    at::parallel_for(0, 1000, 1, [&](int64_t, int64_t) { ++n; });
    return n.load();
  };
  {
    const at::SerialScope serial;
    int calls = 0;
    at::parallel_for(0, 1000, 1, [&](int64_t b, int64_t e) {
      ++calls;
      EXPECT_EQ(std::this_thread::get_id(), caller);
      EXPECT_EQ(e - b, 1000);
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(at::parallel_reduce(0, 1000, 1, int64_t{0},
                                  [](int64_t b, int64_t e, int64_t acc) { return acc + (e - b); },
                                  std::plus<int64_t>()),
              1000);
    {
      const at::SerialScope nested;
      EXPECT_EQ(chunks(), 1);
    }
    EXPECT_EQ(chunks(), 1);  // the outer scope still holds
    {
      const at::SerialScope inactive(false);  // does not lift the outer scope
      EXPECT_EQ(chunks(), 1);
    }
    int elsewhere = 0;
    std::thread([&] { elsewhere = chunks(); }).join();
    EXPECT_EQ(elsewhere, 2);
    EXPECT_FALSE(at::in_parallel_region());
  }
  EXPECT_EQ(chunks(), 2);
  {
    const at::SerialScope inactive(false);
    EXPECT_EQ(chunks(), 2);
  }
}

TEST_F(ParallelTest, ChunksRunOnDistinctThreads) {
  at::set_num_threads(2);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::set<int> nums;
  at::parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // both are in flight at once
    std::lock_guard<std::mutex> g(mu);
    ids.insert(std::this_thread::get_id());
    nums.insert(at::get_thread_num());
  });
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(nums, (std::set<int>{0, 1}));
  EXPECT_EQ(at::get_thread_num(), 0);
}

TEST_F(ParallelTest, WorkerExceptionsReachTheCaller) {
  at::set_num_threads(2);
  std::atomic<int64_t> done{0};
  try {
    at::parallel_for(0, 1000, 1, [&](int64_t b, int64_t e) {
      if (b <= 700 && 700 < e) TORCH_CHECK_VALUE(false, "bad element ", 700);
      done += e - b;
    });
    FAIL() << "expected the worker's exception";
  } catch (const c10::ValueError& err) {
    EXPECT_NE(std::string(err.what()).find("bad element 700"), std::string::npos) << err.what();
  }
  EXPECT_EQ(done.load(), 500);  // the other chunk still ran to its end
  // Also from a reduction, and from an inline run.
  EXPECT_THROW(at::parallel_reduce(
                   0, 1000, 1, 0, [](int64_t b, int64_t, int) -> int { throw std::runtime_error("r"); }, std::plus<>()),
               std::runtime_error);
  EXPECT_THROW(at::parallel_for(0, 10, 100, [](int64_t, int64_t) { throw std::out_of_range("x"); }),
               std::out_of_range);
  EXPECT_THROW(at::parallel_for(0, 10, -1, [](int64_t, int64_t) {}), c10::Error);
}

TEST_F(ParallelTest, Reduce) {
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    for (int64_t n : {0, 1, 5, 1000, 123457}) {
      for (int64_t grain : {0, 1, 7, 5000}) {
        int64_t sum = at::parallel_reduce(
            0, n, grain, int64_t{0},
            [](int64_t b, int64_t e, int64_t acc) {
              for (int64_t i = b; i < e; ++i) acc += i;
              return acc;
            },
            std::plus<int64_t>());
        EXPECT_EQ(sum, n * (n - 1) / 2) << n << " " << grain;
        double mx = at::parallel_reduce(
            0, n, grain, -std::numeric_limits<double>::infinity(),
            [](int64_t b, int64_t e, double acc) {
              for (int64_t i = b; i < e; ++i) acc = std::max(acc, std::sin(static_cast<double>(i)) * i);
              return acc;
            },
            [](double x, double y) { return std::max(x, y); });
        double want = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < n; ++i) want = std::max(want, std::sin(static_cast<double>(i)) * i);
        EXPECT_EQ(mx, want);
        bool all_small = at::parallel_reduce(
            0, n, grain, true,
            [](int64_t b, int64_t e, bool acc) { return acc && (e - 1 < 200000); },
            [](bool x, bool y) { return x && y; });
        EXPECT_TRUE(all_small);
      }
    }
  }
  // Partials combine in range order (a non-commutative combine sees chunks in order).
  at::set_num_threads(3);
  std::string order = at::parallel_reduce(
      0, 9, 1, std::string(), [](int64_t b, int64_t e, std::string acc) { return acc + std::to_string(b) + "-" + std::to_string(e) + ";"; },
      [](const std::string& x, const std::string& y) { return x + y; });
  EXPECT_EQ(order, "0-3;3-6;6-9;");
}

TEST_F(ParallelTest, WorkersSeeTheCallersThreadLocalState) {
  at::set_num_threads(2);
  c10::AutoGradMode no_grad(false);
  std::atomic<int> enabled{0};
  at::parallel_for(0, 2, 1, [&](int64_t, int64_t) { enabled += c10::GradMode::is_enabled(); });
  EXPECT_EQ(enabled.load(), 0);
  EXPECT_FALSE(c10::GradMode::is_enabled());
}

TEST_F(ParallelTest, ThreadCountIsSharedWithOpenMPAndOpenBLAS) {
  EXPECT_GE(at::default_num_threads(), 1);
  auto omp_max = runtime_symbol<int (*)()>("omp_get_max_threads");
  auto blas_threads = runtime_symbol<int (*)()>("openblas_get_num_threads");
  ASSERT_NE(omp_max, nullptr);
  ASSERT_NE(blas_threads, nullptr);
  for (int n : {1, 3, 2}) {
    at::set_num_threads(n);
    EXPECT_EQ(at::get_num_threads(), n);
    EXPECT_EQ(omp_max(), n);       // what oneDNN (on libgomp) sizes its regions by
    EXPECT_EQ(blas_threads(), n);  // OpenBLAS's own pool
  }
  // Another thread picks the count up for OpenMP on request.
  std::thread([&] {
    at::init_num_threads();
    EXPECT_EQ(omp_max(), 2);
  }).join();
  EXPECT_THROW(at::set_num_threads(0), c10::Error);
  EXPECT_EQ(at::get_num_threads(), 2);
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// After a region, idle workers must sleep, not spin. libgomp and OpenBLAS fix their wait
// policies from the environment when they load, so a process started without
// OMP_WAIT_POLICY / GOMP_SPINCOUNT reruns this test in a child with OMP_WAIT_POLICY=PASSIVE
// and OPENBLAS_THREAD_TIMEOUT=4 (what `import tessera` sets): that checks the policy takes
// effect for our regions. Measured here, 50 x (region + 2 ms sleep) on 2 threads: ~320 ms
// of CPU in ~700 ms with libgomp's default policy; ~28 ms in ~105 ms passive but with
// OpenBLAS's default timeout (its pool, woken by openblas_set_num_threads, spin-yields
// ~0.1 s); ~1.5 ms with both.
TEST_F(ParallelTest, WorkersDoNotSpinAfterARegion) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    std::string policy = "OMP_WAIT_POLICY=PASSIVE", blas = "OPENBLAS_THREAD_TIMEOUT=4";
    env.push_back(policy.data());
    if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr) env.push_back(blas.data());
    env.push_back(nullptr);
    std::string arg0 = "aten_tests", arg1 = "--gtest_filter=ParallelTest.WorkersDoNotSpinAfterARegion";
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      execve("/proc/self/exe", argv, env.data());
      _exit(127);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child run with OMP_WAIT_POLICY=PASSIVE failed";
    return;
  }
  at::set_num_threads(2);
  std::atomic<int64_t> sink{0};
  const double before = cpu_seconds();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 50; ++rep) {
    at::parallel_for(0, 2, 1, [&](int64_t b, int64_t e) { sink += e - b; });
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const double used = cpu_seconds() - before;
  std::printf("50 x (parallel region + 2 ms sleep): %.1f ms wall, %.1f ms CPU (OMP_WAIT_POLICY=%s)\n", wall * 1e3,
              used * 1e3, std::getenv("OMP_WAIT_POLICY") ? std::getenv("OMP_WAIT_POLICY") : "unset");
  EXPECT_LT(used, 0.25 * wall) << "idle OpenMP workers spin after each region";
  EXPECT_EQ(sink.load(), 100);
}

}  // namespace
