// The two float32 GEMM libraries side by side on the shapes tessera's products hit
// (Note [float GEMM backend] in aten/native/linalg/Blas.cpp): OpenBLAS's cblas_sgemm and
// oneDNN's dnnl_sgemm, row-major, at the OpenMP/OpenBLAS thread count given by
// --threads=N (default 2, the project's benchmark setting). The crossover where oneDNN
// starts winning is what Blas.cpp's size threshold encodes.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Problem {
  bool ta, tb;
  int m, n, k;
  std::vector<float> a, b, c;
  Problem(const benchmark::State& state)
      : ta(state.range(3) & 1), tb(state.range(3) & 2), m(static_cast<int>(state.range(0))),
        n(static_cast<int>(state.range(1))), k(static_cast<int>(state.range(2))),
        a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(k) * n, 0.25f), c(static_cast<size_t>(m) * n) {}
  int lda() const { return ta ? m : k; }
  int ldb() const { return tb ? k : n; }
  void report(benchmark::State& state) const {
    state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  }
};

void BM_openblas(benchmark::State& state) {
  Problem p(state);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, p.ta ? CblasTrans : CblasNoTrans, p.tb ? CblasTrans : CblasNoTrans, p.m, p.n, p.k,
                1.f, p.a.data(), p.lda(), p.b.data(), p.ldb(), 0.f, p.c.data(), p.n);
    benchmark::DoNotOptimize(p.c.data());
  }
  p.report(state);
}

void BM_onednn(benchmark::State& state) {
  Problem p(state);
  for (auto _ : state) {
    if (dnnl_sgemm(p.ta ? 'T' : 'N', p.tb ? 'T' : 'N', p.m, p.n, p.k, 1.f, p.a.data(), p.lda(), p.b.data(), p.ldb(),
                   0.f, p.c.data(), p.n) != dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
    }
    benchmark::DoNotOptimize(p.c.data());
  }
  p.report(state);
}

// (m, n, k, transposes: 1 = A, 2 = B): cubes through the crossover, then the MLP train
// step's products (Linear forward NT, weight grads TN, input grads NN) and a vector product.
void shapes(benchmark::internal::Benchmark* b) {
  for (int s : {8, 16, 32, 64, 128, 256, 1024}) b->Args({s, s, s, 0});
  b->Args({128, 512, 784, 2})->Args({512, 784, 128, 1})->Args({128, 784, 512, 0});
  b->Args({1, 1000, 1000, 0});
}
BENCHMARK(BM_openblas)->Apply(shapes)->UseRealTime();
BENCHMARK(BM_onednn)->Apply(shapes)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
  }
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) != 0) rest.push_back(argv[i]);
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
