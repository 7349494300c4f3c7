// Vectorized<float> on each CPU capability: exp, tanh, sigmoid and add over 4M floats,
// one thread. Run: build/bench/vectorized_bench (names end in /default or /avx2).
#include "vectorized_bench.h"

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

namespace at::inline tessera::native {
DEFINE_DISPATCH(vec_bench_stub);
}  // namespace at::inline tessera::native

namespace {

using at::CPUCapability;
using at::native::VecBenchOp;

constexpr int64_t kN = 4 << 20;

void run(benchmark::State& state, VecBenchOp op, CPUCapability cap) {
  auto kernel = at::native::vec_bench_stub.kernel_for(cap);
  if (kernel == nullptr || cap > at::native::detail::best_cpu_capability()) {
    state.SkipWithError("capability not compiled or not supported here");
    return;
  }
  std::vector<float> a(kN), b(kN), out(kN);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (int64_t i = 0; i < kN; ++i) {
    a[i] = dist(rng);
    b[i] = dist(rng);
  }
  for (auto _ : state) {
    kernel(op, a.data(), b.data(), out.data(), kN);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kN);
}

#define TESSERA_VEC_BENCH(op)                                                                         \
  BENCHMARK_CAPTURE(run, op##_default, VecBenchOp::op, CPUCapability::DEFAULT)->Unit(benchmark::kMicrosecond); \
  BENCHMARK_CAPTURE(run, op##_avx2, VecBenchOp::op, CPUCapability::AVX2)->Unit(benchmark::kMicrosecond);
TESSERA_VEC_BENCH(exp)
TESSERA_VEC_BENCH(tanh)
TESSERA_VEC_BENCH(sigmoid)
TESSERA_VEC_BENCH(add)

}  // namespace

BENCHMARK_MAIN();
