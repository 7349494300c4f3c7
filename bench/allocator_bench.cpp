// The CPU allocator: allocate+free per size (caching vs plain, small blocks cached or not),
// allocate+touch+free of 64 MiB, first touch with and without huge pages, and at::add on
// 16M floats, whose 64 MiB output is the case the caching allocator exists for.
//   build/bench/allocator_bench --benchmark_filter=Add
#include <aten/aten.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/CachingCPUAllocator.h>

#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <cstring>
#include <memory>

namespace {

constexpr size_t MiB = size_t{1} << 20;

long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

c10::CachingCPUAllocator& caching(bool cache_small, bool huge_pages) {
  auto make = [](bool small, bool huge) {
    auto o = c10::CachingCPUAllocator::Options::from_env();
    if (small) o.small_threshold = 0;
    o.huge_pages = huge;
    return new c10::CachingCPUAllocator(o);  // lives for the process
  };
  static c10::CachingCPUAllocator* table[2][2] = {{make(false, false), make(false, true)},
                                                  {make(true, false), make(true, true)}};
  return *table[cache_small][huge_pages];
}

// kind: 0 plain, 1 caching (default options), 2 caching with small blocks cached too.
c10::Allocator& pick(int kind) {
  if (kind == 0) return *c10::GetPlainCPUAllocator();
  return caching(kind == 2, true);
}

void BM_AllocFree(benchmark::State& state) {
  c10::Allocator& a = pick(static_cast<int>(state.range(0)));
  const auto n = static_cast<size_t>(state.range(1));
  for (auto _ : state) {
    c10::DataPtr p = a.allocate(n);
    benchmark::DoNotOptimize(p.get());
  }
}
BENCHMARK(BM_AllocFree)->ArgNames({"kind", "bytes"})->ArgsProduct({{0, 1, 2}, {64, 1000, 4096, 65536, 1 << 20, 64 << 20}});

void BM_AllocTouchFree64MiB(benchmark::State& state) {
  c10::Allocator& a = pick(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    c10::DataPtr p = a.allocate(64 * MiB);
    auto* bytes = static_cast<volatile char*>(p.get());
    for (size_t i = 0; i < 64 * MiB; i += 4096) bytes[i] = 1;
  }
}
BENCHMARK(BM_AllocTouchFree64MiB)->ArgNames({"kind"})->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Every iteration maps fresh memory (the cache is emptied): the cost of a first touch.
void BM_FirstTouch64MiB(benchmark::State& state) {
  c10::CachingCPUAllocator& a = caching(false, state.range(0) != 0);
  for (auto _ : state) {
    {
      c10::DataPtr p = a.allocate(64 * MiB);
      std::memset(p.get(), 0, 64 * MiB);
    }
    a.empty_cache();
  }
}
BENCHMARK(BM_FirstTouch64MiB)->ArgNames({"huge"})->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// c = a + b on 16M floats with the CPU allocator swapped: 0 plain, 1 caching (huge pages),
// 3 caching without huge pages.
void BM_Add16M(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  c10::Allocator* chosen = kind == 3 ? &caching(false, false) : &pick(kind);
  c10::Allocator* previous = c10::SetAllocator(c10::DeviceType::CPU, chosen);
  {
    at::Tensor a = at::empty({16 << 20}), b = at::empty({16 << 20});
    a.fill_(1.0);
    b.fill_(2.0);
    { at::Tensor warm = at::add(a, b); }  // the caching allocator maps its block here
    const long faults0 = minor_faults();
    for (auto _ : state) {
      at::Tensor c = at::add(a, b);
      benchmark::DoNotOptimize(c.data_ptr());
    }
    state.counters["minflt/iter"] =
        static_cast<double>(minor_faults() - faults0) / static_cast<double>(state.iterations());
    state.SetBytesProcessed(state.iterations() * 3 * (int64_t{16} << 20) * 4);
  }
  c10::SetAllocator(c10::DeviceType::CPU, previous);
}
BENCHMARK(BM_Add16M)->ArgNames({"kind"})->Arg(0)->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond)->UseRealTime();

// The kernel alone: the output is allocated (and faulted in) once, outside the loop.
void BM_AddOut16M(benchmark::State& state) {
  at::Tensor a = at::empty({16 << 20}), b = at::empty({16 << 20}), c = at::empty({16 << 20});
  a.fill_(1.0);
  b.fill_(2.0);
  c.fill_(0.0);
  for (auto _ : state) {
    at::add_out(c, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * 3 * (int64_t{16} << 20) * 4);
}
BENCHMARK(BM_AddOut16M)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
