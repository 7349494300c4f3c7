// The machine's float32 FMA peak: each thread runs 12 independent chains of FMAs (12
// accumulators, enough to cover the FMA latency x throughput of two ports), so nothing but
// the FMA units limits it. Prints GFLOP/s (2 flops per lane per FMA), best of five runs,
// with `threads` OpenMP threads (default: all), for 8-lane AVX2 FMAs, or with `avx512` as
// the second argument for 16-lane AVX-512 ones (0 where the CPU lacks AVX-512F). The
// ceilings GEMM figures are measured against (bench/bench_matmul.py runs it on 1 and 2
// threads): OpenBLAS picks AVX-512 kernels (SkylakeX) on a CPU that has them.
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr int kChains = 12;
constexpr long kIters = 100'000'000 / kChains;  // FMAs per chain per run

// Returns a value that depends on every chain, so no chain can be optimised away.
__attribute__((noinline)) float run_chains(float seed) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(seed + static_cast<float>(c));
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < kIters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0] + lanes[7];
}

// The same with 16-lane AVX-512 FMAs (compiled for AVX-512F alone; called only where the
// CPU has it).
__attribute__((noinline, target("avx512f"))) float run_chains_512(float seed) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < kIters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  float lanes[16];  // (GCC 12's _mm512_reduce_add_ps trips -Wuninitialized)
  _mm512_storeu_ps(lanes, sum);
  return lanes[0] + lanes[15];
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  const bool wide = argc > 2 && std::string(argv[2]) == "avx512";
  if (wide && !__builtin_cpu_supports("avx512f")) {
    std::printf("0\n");
    return 0;
  }
  const int lanes = wide ? 16 : 8;
  omp_set_num_threads(threads);
  double best = 0;
  float sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : sink)
    sink += wide ? run_chains_512(static_cast<float>(omp_get_thread_num()))
                 : run_chains(static_cast<float>(omp_get_thread_num()));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double flops = 2.0 * lanes * kChains * static_cast<double>(kIters) * threads;
    if (flops / s > best) best = flops / s;
  }
  std::printf("%.1f\n", best / 1e9);
  std::fprintf(stderr, "(checksum %g)\n", static_cast<double>(sink));
  return 0;
}
