// Concurrency: the scenarios users run from several threads at once, written to be run
// under ThreadSanitizer (scripts/test.sh's TSan job builds and runs this program) as well
// as in the normal build. Each checks its numbers too, so a lost update fails even where
// no sanitizer watches: backward from 8 threads on separate graphs and into one shared
// leaf, set_num_threads while other threads run parallel kernels, operator registration
// and library load/unload while other threads call operators, and the caching allocator
// with blocks freed on threads other than the one that allocated them.
#include <aten/aten.h>
#include <aten/core/Parallel.h>
#include <autograd/autograd.h>
#include <c10/core/CachingCPUAllocator.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 8;

at::Tensor filled(int64_t n, double value, bool requires_grad = false) {
  at::Tensor t = at::empty({n}, at::TensorOptions(at::kDouble));
  t.fill_(value);
  t.set_requires_grad(requires_grad);
  return t;
}

double at_index(const at::Tensor& t, int64_t i) {
  at::Tensor c = at::empty(t.sizes(), at::TensorOptions(at::kDouble));
  c.copy_(t);
  return c.data_ptr<double>()[i];
}

template <class Fn>
void run_threads(int n, Fn fn) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(fn, t);
  for (auto& th : threads) th.join();
}

// Large enough (1 << 17 elements) that the kernels split their loops over the OpenMP pool.
constexpr int64_t kBig = 1 << 17;

TEST(Concurrency, BackwardOnSeparateGraphsFromEightThreads) {
  at::set_num_threads(2);
  std::atomic<int> wrong{0};
  run_threads(kThreads, [&](int t) {
    for (int round = 0; round < 10; ++round) {
      const double v = 0.01 * (t + 1);
      at::Tensor x = filled(kBig, v, true);
      // d/dx sum(tanh(x) * x) = tanh(x) + x * (1 - tanh(x)^2)
      at::sum(at::tanh(x) * x).backward();
      const double expected = std::tanh(v) + v * (1 - std::tanh(v) * std::tanh(v));
      if (std::abs(at_index(x.grad(), kBig - 1) - expected) > 1e-12) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, BackwardIntoOneSharedLeafAccumulatesEveryThread) {
  at::set_num_threads(2);
  constexpr int kRounds = 10;
  at::Tensor w = filled(kBig, 0.5, true);
  run_threads(kThreads, [&](int t) {
    for (int round = 0; round < kRounds; ++round) {
      // Each graph is the thread's own; only the leaf (and so its .grad) is shared.
      at::Tensor scale = filled(kBig, t + 1.0);
      at::sum(w * scale).backward();
    }
  });
  // sum over threads and rounds of (t + 1): kRounds * (1 + ... + 8).
  const double expected = kRounds * kThreads * (kThreads + 1) / 2.0;
  EXPECT_DOUBLE_EQ(at_index(w.grad(), 0), expected);
  EXPECT_DOUBLE_EQ(at_index(w.grad(), kBig - 1), expected);
}

TEST(Concurrency, SetNumThreadsWhileOtherThreadsRunParallelKernels) {
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::thread changer([&] {
    for (int i = 0; !stop.load(); ++i) {
      at::set_num_threads(1 + i % 4);
      std::this_thread::yield();
    }
  });
  run_threads(4, [&](int t) {
    at::Tensor x = filled(kBig, 1.0 + t);
    for (int round = 0; round < 40; ++round) {
      at::Tensor y = at::add(x, x, 1);  // elementwise, split across the pool
      const double total = at::sum(y).item().toDouble();  // a parallel reduction
      if (total != 2.0 * (1.0 + t) * kBig) ++wrong;
    }
  });
  stop = true;
  changer.join();
  at::set_num_threads(2);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, RegistrationAndLibraryLoadWhileOtherThreadsCallOperators) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::atomic<int64_t> calls{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      at::Tensor x = filled(64, t);
      auto mul = dispatcher.findSchemaOrThrow("aten::mul", "Tensor").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
      while (!stop.load()) {
        if (at_index(at::add(x, x, 1), 3) != 2.0 * t) ++wrong;
        if (at_index(mul.call(x, x), 5) != 1.0 * t * t) ++wrong;
        // Looking operators up by name races with the tables changing underneath.
        if (!dispatcher.findSchema({"aten::sub", "Tensor"}).has_value()) ++wrong;
        calls.fetch_add(1);
      }
    });
  }
  while (calls.load() < 4) std::this_thread::yield();
  for (int round = 0; round < 20; ++round) {
    torch::load_library(TESSERA_MYOPS_PATH);
    auto scale = dispatcher.findSchemaOrThrow("myops::scale", "").typed<at::Tensor(const at::Tensor&, double)>();
    at::Tensor y = scale.call(at::ones({4}), 3.0);
    if (y.data_ptr<float>()[0] != 3.0f) ++wrong;
    {
      // New schemas and kernels in a namespace of their own, defined and removed again.
      torch::Library lib(torch::Library::DEF, "tconc", std::nullopt, "test_concurrency.cpp", round);
      lib.def("twice(Tensor a) -> Tensor");
      lib.impl("twice", [](const at::Tensor& a) { return at::add(a, a, 1); });
      auto twice = dispatcher.findSchemaOrThrow("tconc::twice", "").typed<at::Tensor(const at::Tensor&)>();
      if (at_index(twice.call(filled(4, 2.0)), 0) != 4.0) ++wrong;
    }
    torch::unload_library(TESSERA_MYOPS_PATH);
  }
  const int64_t during = calls.load();
  while (calls.load() < during + 4) std::this_thread::yield();
  stop = true;
  for (auto& th : callers) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_FALSE(dispatcher.findSchema({"myops::scale", ""}).has_value());
  EXPECT_FALSE(dispatcher.findSchema({"tconc::twice", ""}).has_value());
}

TEST(Concurrency, CachingAllocatorWithCrossThreadFreesAndCacheReleases) {
  c10::CachingCPUAllocator::Options options;
  options.cache_limit_bytes = size_t{32} << 20;
  options.small_threshold = 0;
  c10::CachingCPUAllocator allocator(options);
  constexpr int kProducers = 4, kItems = 2000;
  const size_t sizes[] = {64, 4096, 70000, 300000, (size_t{1} << 20) + 64, size_t{3} << 20};
  std::mutex mu;
  struct Handed {
    c10::DataPtr block;
    size_t tagged;
    unsigned char tag;
  };
  std::vector<Handed> handed_over;  // producers -> consumer
  std::atomic<int> producing{kProducers};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      std::mt19937 rng(p);
      for (int i = 0; i < kItems; ++i) {
        const size_t n = sizes[rng() % std::size(sizes)];
        c10::DataPtr block = allocator.allocate(n);
        const auto tag = static_cast<unsigned char>(1 + (p * kItems + i) % 251);
        const size_t tagged = std::min<size_t>(n, 128);
        std::memset(block.get(), tag, tagged);
        std::lock_guard<std::mutex> g(mu);
        handed_over.push_back({std::move(block), tagged, tag});
      }
      producing.fetch_sub(1);
    });
  }
  // The consumer frees what the producers allocated; another thread keeps emptying the
  // cache and reading the statistics.
  threads.emplace_back([&] {
    for (;;) {
      std::vector<Handed> batch;
      {
        std::lock_guard<std::mutex> g(mu);
        batch.swap(handed_over);
      }
      for (const Handed& item : batch) {
        const auto* bytes = static_cast<const unsigned char*>(item.block.get());
        for (size_t j = 0; j < item.tagged; ++j) {
          if (bytes[j] != item.tag) {
            ++wrong;
            break;
          }
        }
      }
      if (batch.empty() && producing.load() == 0) {
        std::lock_guard<std::mutex> g(mu);
        if (handed_over.empty()) return;
      }
    }
  });
  std::atomic<bool> stop{false};
  std::thread releaser([&] {
    while (!stop.load()) {
      allocator.empty_cache();
      if (allocator.stats().allocation.current < 0) ++wrong;
      std::this_thread::yield();
    }
  });
  for (auto& th : threads) th.join();
  stop = true;
  releaser.join();
  EXPECT_EQ(wrong.load(), 0);
  const auto stats = allocator.stats();
  EXPECT_EQ(stats.allocation.current, 0);
  EXPECT_EQ(stats.allocated_bytes.current, 0);
}

TEST(Concurrency, OneInputReadByManyThreads) {
  // A tensor shared read-only (a model's weights at inference): results agree, the
  // version counter is untouched.
  at::set_num_threads(2);
  at::Tensor weights = filled(kBig, 0.25);
  const auto version = weights.unsafeGetTensorImpl()->version_counter().current_version();
  std::atomic<int> wrong{0};
  run_threads(kThreads, [&](int t) {
    for (int round = 0; round < 10; ++round) {
      at::Tensor y = at::mul(weights, filled(kBig, t));
      if (at::sum(y).item().toDouble() != 0.25 * t * kBig) ++wrong;
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(weights.unsafeGetTensorImpl()->version_counter().current_version(), version);
}

}  // namespace

// The profiler while other threads call operators: the profiling thread's events are its
// own; a thread that joins the session records too; ending the session while a joined
// thread is still calling operators neither loses the profiling thread's events nor races.
#include <aten/profiler/Profiler.h>

namespace {

TEST(Concurrency, ProfilerWithOtherThreads) {
  namespace prof = at::profiler;
  std::atomic<bool> stop{false};
  std::atomic<int> joined{0};
  std::vector<std::thread> workers;
  prof::enable({});
  prof::exit_range(prof::enter_range("main"));  // marks this thread in the events
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&, i] {
      at::Tensor t = filled(64, 1.0);
      if (i % 2 == 0) {
        prof::enable_on_this_thread();
        t = t.add(t).mul(0.5);  // joined means "has recorded", not only "has enabled"
        ++joined;
      }
      while (!stop.load()) t = t.add(t).mul(0.5);
      EXPECT_DOUBLE_EQ(t.sum().item().toDouble(), 64.0);
    });
  }
  while (joined.load() < 2) std::this_thread::yield();
  at::Tensor x = filled(16, 2.0), one = filled(16, 1.0);
  for (int k = 0; k < 50; ++k) x = x.mul(one);
  const auto events = prof::disable();
  stop = true;
  for (auto& w : workers) w.join();
  auto main_range = std::find_if(events.begin(), events.end(), [](const auto& e) { return e.name == "main"; });
  ASSERT_NE(main_range, events.end());
  int mine = 0;
  std::vector<uint64_t> threads;
  for (const auto& e : events) {
    mine += e.thread == main_range->thread && e.name == "aten::mul";
    if (std::find(threads.begin(), threads.end(), e.thread) == threads.end()) threads.push_back(e.thread);
  }
  EXPECT_EQ(mine, 50);
  EXPECT_EQ(threads.size(), 3u);  // this thread and the two that joined
  EXPECT_FALSE(prof::is_enabled());
}

}  // namespace
