// STREAM "add" on this machine: c[i] = a[i] + b[i] over three 128 MiB float arrays with
// `threads` OpenMP threads (default: all), best of ten passes. Prints the bandwidth in GB/s
// (bytes read and written / seconds), the ceiling elementwise kernels are measured against.
// `stream_add THREADS read` measures read bandwidth instead (a sum over one 128 MiB array,
// vectorized partial sums per thread): the ceiling of reductions.
//
// The arrays are 2 MiB aligned and madvise(MADV_HUGEPAGE)d, as the caching CPU allocator's
// large blocks are: on this VM 4 KiB pages cost about 40% of the bandwidth (measured: ~7.5
// against ~12.8 GB/s, two threads), and a ceiling below what the kernels reach says nothing.
#include <omp.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

float* huge_array(size_t bytes) {
  void* p = std::aligned_alloc(kHugePage, bytes);  // bytes is a multiple of 2 MiB
  if (p == nullptr) {
    std::perror("aligned_alloc");
    std::exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);  // advisory: without transparent huge pages it is a no-op
  return static_cast<float*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = size_t{128} << 20, n = bytes / sizeof(float);
  const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  omp_set_num_threads(threads);
  float* a = huge_array(bytes);
  float* b = huge_array(bytes);
  float* c = huge_array(bytes);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    a[i] = 1.0f;
    b[i] = 2.0f;
    c[i] = 0.0f;
  }
  const bool read_only = argc > 2 && std::string_view(argv[2]) == "read";
  double best = 1e30;
  if (read_only) {
    float total = 0;
    for (int rep = 0; rep < 10; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      float s = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : s)
      for (size_t i = 0; i < n; ++i) s += a[i];
      double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (sec < best) best = sec;
      total += s;
    }
    std::printf("%.2f\n", static_cast<double>(bytes) / best / 1e9);
    std::free(a);
    std::free(b);
    std::free(c);
    return total > 0 ? 0 : 1;
  }
  for (int rep = 0; rep < 10; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  std::printf("%.2f\n", 3.0 * static_cast<double>(bytes) / best / 1e9);
  const bool ok = c[n / 2] == 3.0f;
  std::free(a);
  std::free(b);
  std::free(c);
  return ok ? 0 : 1;
}
