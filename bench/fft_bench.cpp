// The FFT plans (aten/native/spectral/FFTPlan.h) on one thread, the workloads:
// a complex64 line of 2^20, 1000 real lines of 1024, and awkward lengths (a large prime
// through Bluestein, 3^a 5^b, 1000). tessera.fft's operators will get a side-by-side with
// torch in bench/; until then docs/benchmarks.md sets these beside torch.fft timed alone.
#include <aten/native/spectral/FFTPlan.h>

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

namespace {

namespace fft = at::native::fft;

template <typename T>
void BM_c2c(benchmark::State& state) {
  using C = c10::complex<T>;
  const int64_t n = state.range(0);
  const fft::ComplexPlan<T> plan(n);
  std::vector<C> in(n), out(n), scratch(plan.scratch_size());
  std::mt19937 gen(0);
  std::normal_distribution<T> dist;
  for (auto& v : in) v = C(dist(gen), dist(gen));
  for (auto _ : state) {
    plan.execute(in.data(), out.data(), scratch.data(), true);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_c2c<float>)->Arg(1 << 20)->Arg(1024)->Arg(512)->Arg(1000)->Arg(3 * 3 * 3 * 5 * 5 * 5 * 16)->Arg(65537)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_c2c<double>)->Arg(1 << 20)->Arg(1024)->Unit(benchmark::kMicrosecond);

// rows real lines of length n, one after another (the batched rfft of a [rows, n] tensor).
template <typename T>
void BM_r2c_rows(benchmark::State& state) {
  using C = c10::complex<T>;
  const int64_t rows = state.range(0), n = state.range(1);
  const fft::RealPlan<T> plan(n);
  std::vector<T> in(rows * n);
  std::vector<C> out(rows * (n / 2 + 1)), work(plan.lines_work_size());
  std::mt19937 gen(0);
  std::normal_distribution<T> dist;
  for (auto& v : in) v = dist(gen);
  for (auto _ : state) {
    plan.forward_lines(in.data(), n, out.data(), n / 2 + 1, rows, work.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}
BENCHMARK(BM_r2c_rows<float>)->Args({1000, 1024})->Args({1000, 1000})->Unit(benchmark::kMicrosecond);

// rows complex lines of length n (the batched fft of a [rows, n] tensor).
template <typename T>
void BM_c2c_rows(benchmark::State& state) {
  using C = c10::complex<T>;
  const int64_t rows = state.range(0), n = state.range(1);
  const fft::ComplexPlan<T> plan(n);
  std::vector<C> in(rows * n), out(rows * n), work(plan.lines_work_size());
  std::mt19937 gen(0);
  std::normal_distribution<T> dist;
  for (auto& v : in) v = C(dist(gen), dist(gen));
  for (auto _ : state) {
    plan.execute_lines(in.data(), n, out.data(), n, rows, work.data(), true);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}
BENCHMARK(BM_c2c_rows<float>)->Args({1000, 1024})->Unit(benchmark::kMicrosecond);

// rows half spectra back to real lines of length n (the batched irfft).
template <typename T>
void BM_c2r_rows(benchmark::State& state) {
  using C = c10::complex<T>;
  const int64_t rows = state.range(0), n = state.range(1);
  const fft::RealPlan<T> plan(n);
  std::vector<C> in(rows * (n / 2 + 1)), work(plan.lines_work_size());
  std::vector<T> out(rows * n);
  std::mt19937 gen(0);
  std::normal_distribution<T> dist;
  for (auto& v : in) v = C(dist(gen), dist(gen));
  for (auto _ : state) {
    plan.inverse_lines(in.data(), n / 2 + 1, out.data(), n, rows, work.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * rows * n);
}
BENCHMARK(BM_c2r_rows<float>)->Args({1000, 1024})->Unit(benchmark::kMicrosecond);

}  // namespace
BENCHMARK_MAIN();
