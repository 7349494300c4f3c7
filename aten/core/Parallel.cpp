// OpenMP backend of at::parallel_for / parallel_reduce, and the one thread count shared
// with OpenBLAS and oneDNN.
//
// Spinning: after every parallel region libgomp's idle workers spin (300000 pause
// iterations, several ms here, when OMP_WAIT_POLICY is unset) before sleeping on a futex,
// and OpenBLAS's pthread pool spin-yields for 2^28 cycles (~0.1 s). Both read their policy
// from the environment once, in their own load-time constructors, which run before any
// constructor of libaten (and, measured, before libtessera_c10's too, in whatever order the
// libraries are linked), and neither offers a call to change it later. So the policy is
// set where it can be: `import tessera` (python/tessera/cpu.py) exports GOMP_SPINCOUNT=3000
// (a ~0.1 ms spin, enough for a training step's back-to-back regions) and
// OPENBLAS_THREAD_TIMEOUT=4 before the extension loads libgomp and OpenBLAS; C++ programs
// export them (or OMP_WAIT_POLICY=PASSIVE) themselves (ParallelTest.WorkersDoNotSpinAfterARegion
// measures both settings: ~320 ms of CPU over 50 regions + 2 ms sleeps with the defaults,
// ~1.5 ms with these).
#include <aten/core/Parallel.h>

#include <c10/core/ThreadLocalState.h>
#include <c10/macros/Export.h>

#include <omp.h>
#include <pthread.h>
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <utility>

// OpenBLAS (pthread build here): its own pool, sized separately from OpenMP's.
extern "C" void openblas_set_num_threads(int num_threads);

namespace at::inline tessera {

namespace {

// libgomp is not instrumented, so ThreadSanitizer sees neither the fork that starts a
// parallel region on pooled threads nor the barrier that ends it, and would report every
// chunk's writes as racing with the caller's later reads. The TSan build states both edges.
#if defined(__SANITIZE_THREAD__)
void tsan_release(void* token) { __tsan_release(token); }
void tsan_acquire(void* token) { __tsan_acquire(token); }
#else
void tsan_release(void*) {}
void tsan_acquire(void*) {}
#endif

std::atomic<int> g_num_threads{0};  // 0: not yet set; default_num_threads() then

thread_local bool tl_in_parallel = false;
thread_local bool tl_serial = false;  // inside a SerialScope
thread_local int tl_thread_num = 0;
thread_local int tl_omp_threads = 0;  // what this thread last gave omp_set_num_threads

int positive_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);  // OMP_NUM_THREADS may be a list: "4,2" -> 4
  if (end == v || n <= 0) return 0;
  return static_cast<int>(std::min<long>(n, 1 << 16));
}

int read_int(const std::string& path) {
  std::ifstream in(path);
  int v = -1;
  in >> v;
  return in ? v : -1;
}

// Physical cores among the CPUs this process may run on: distinct (package, core) pairs.
int physical_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return 1;
  const int logical = CPU_COUNT(&mask);
  std::set<std::pair<int, int>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &mask)) continue;
    std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    int package = read_int(dir + "physical_package_id");
    int core = read_int(dir + "core_id");
    if (package < 0 || core < 0) return std::max(logical, 1);  // no topology: count CPUs
    cores.emplace(package, core);
  }
  return std::max<int>(static_cast<int>(cores.size()), 1);
}

void sync_omp_threads(int n) {
  if (tl_omp_threads != n) {
    omp_set_num_threads(n);
    tl_omp_threads = n;
  }
}

// libgomp's thread pool does not survive fork(): a child entering a parallel region its
// parent had used waits forever for the parent's workers. Forked children (DataLoader
// workers, multiprocessing) therefore start with one thread, as torch's workers do; they
// may raise it again with set_num_threads at their own risk.
void single_thread_in_forked_child() {
  g_num_threads.store(1, std::memory_order_relaxed);
  tl_omp_threads = 0;
  sync_omp_threads(1);  // oneDNN sizes its regions by omp_get_max_threads
}

[[maybe_unused]] const int g_atfork_registered = pthread_atfork(nullptr, nullptr, single_thread_in_forked_child);

}  // namespace

int default_num_threads() {
  static const int n = [] {
    if (int v = positive_env("TESSERA_NUM_THREADS")) return v;
    if (int v = positive_env("OMP_NUM_THREADS")) return v;
    return physical_cores();
  }();
  return n;
}

namespace {
// On first use, OpenBLAS and this thread's OpenMP default take the default count too
// (they start at the number of logical CPUs, whatever TESSERA_NUM_THREADS says).
void apply_default_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const int n = default_num_threads();
    int expected = 0;
    if (g_num_threads.compare_exchange_strong(expected, n)) {
      sync_omp_threads(n);
      openblas_set_num_threads(n);
    }
  });
}
}  // namespace

int get_num_threads() {
  apply_default_once();
  return g_num_threads.load(std::memory_order_relaxed);
}

void set_num_threads(int nthreads) {
  TORCH_CHECK(nthreads > 0, "set_num_threads expects a positive integer, but got ", nthreads);
  apply_default_once();
  g_num_threads.store(nthreads, std::memory_order_relaxed);
  sync_omp_threads(nthreads);  // oneDNN (on libgomp) sizes its regions by omp_get_max_threads
  openblas_set_num_threads(nthreads);
}

void init_num_threads() {
  const int n = get_num_threads();
  sync_omp_threads(n);
}

int get_thread_num() { return tl_in_parallel ? tl_thread_num : omp_get_thread_num(); }

bool in_parallel_region() { return tl_in_parallel || omp_in_parallel(); }

SerialScope::SerialScope(bool active) : saved_(tl_serial) { tl_serial = tl_serial || active; }
SerialScope::~SerialScope() { tl_serial = saved_; }

namespace detail {

int num_chunks(int64_t range, int64_t grain_size) {
  if (range <= 1 || range <= grain_size || tl_serial || in_parallel_region()) return 1;
  int64_t n = get_num_threads();
  if (n <= 1) return 1;
  if (grain_size > 0) n = std::min<int64_t>(n, (range + grain_size - 1) / grain_size);
  return static_cast<int>(std::min<int64_t>(n, range));
}

// The block of captured variables OpenMP hands to the region's threads is written by the
// caller and read by the pool threads before either can state an edge, so this frame (and
// the region outlined from it) is left uninstrumented; the chunks it calls are not.
#if defined(__SANITIZE_THREAD__)
__attribute__((no_sanitize("thread")))
#endif
void parallel_run(int64_t begin, int64_t end, int nchunks, ChunkFn fn, void* ctx) {
  const int64_t range = end - begin;
  const c10::ThreadLocalState caller_state = c10::thread_local_state();
  std::exception_ptr error;
  std::atomic_flag failed = ATOMIC_FLAG_INIT;
  char fork_token = 0, join_token = 0;
  tsan_release(&fork_token);
#pragma omp parallel num_threads(nchunks)
  {
    tsan_acquire(&fork_token);
    const int tid = omp_get_thread_num();
    const int team = omp_get_num_threads();  // may be fewer than asked
    const bool saved_in = tl_in_parallel;
    const int saved_num = tl_thread_num;
    const c10::ThreadLocalState saved_state = c10::thread_local_state();
    tl_in_parallel = true;
    tl_thread_num = tid;
    c10::thread_local_state() = caller_state;  // grad mode, dispatch keys as on the caller
    for (int chunk = tid; chunk < nchunks; chunk += team) {
      const auto b = begin + static_cast<int64_t>(static_cast<__int128>(range) * chunk / nchunks);
      const auto e = begin + static_cast<int64_t>(static_cast<__int128>(range) * (chunk + 1) / nchunks);
      try {
        fn(ctx, b, e, chunk);
      } catch (...) {
        if (!failed.test_and_set()) error = std::current_exception();
      }
    }
    c10::thread_local_state() = saved_state;
    tl_in_parallel = saved_in;
    tl_thread_num = saved_num;
    tsan_release(&join_token);
  }
  tsan_acquire(&join_token);
  if (error) std::rethrow_exception(error);
}

}  // namespace detail

}  // namespace at::inline tessera
