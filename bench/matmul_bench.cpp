// at::mm and at::bmm from C++ (dispatcher, structured wrapper, OpenBLAS), float32, at the
// default thread count; reports GFLOP/s as a counter. bench/bench_matmul.py has the
// side-by-side with torch.
#include <aten/aten.h>

#include <benchmark/benchmark.h>

namespace {

void BM_mm(benchmark::State& state) {
  const int64_t n = state.range(0);
  at::Tensor a = at::randn({n, n}), b = at::randn({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(at::mm(a, b));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * n) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_mm)->Arg(128)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// a.t() @ b: the transposed operand goes to BLAS as it is.
void BM_mm_transposed(benchmark::State& state) {
  const int64_t n = state.range(0);
  at::Tensor a = at::randn({n, n}).t(), b = at::randn({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(at::mm(a, b));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * n) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_mm_transposed)->Arg(128)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_bmm(benchmark::State& state) {
  const int64_t batch = state.range(0), n = state.range(1);
  at::Tensor a = at::randn({batch, n, n}), b = at::randn({batch, n, n});
  for (auto _ : state) benchmark::DoNotOptimize(at::bmm(a, b));
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(batch * n * n * n) / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_bmm)->Args({64, 128})->Args({8, 128})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
BENCHMARK_MAIN();
