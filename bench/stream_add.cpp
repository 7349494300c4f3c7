// STREAM "add" on this machine: c[i] = a[i] + b[i] over three 128 MiB float arrays with
// every OpenMP thread, best of ten passes. Prints the bandwidth in GB/s (bytes read and
// written / seconds), the ceiling elementwise kernels are measured against.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

int main(int argc, char** argv) {
  const size_t n = (128u << 20) / sizeof(float);
  int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  omp_set_num_threads(threads);
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    a[i] = 1.0f;
    b[i] = 2.0f;
    c[i] = 0.0f;
  }
  double best = 1e30;
  for (int rep = 0; rep < 10; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  std::printf("%.2f\n", 3.0 * n * sizeof(float) / best / 1e9);
  return c[n / 2] == 3.0f ? 0 : 1;
}
