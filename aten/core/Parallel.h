// Intra-op parallelism on OpenMP (libgomp, the runtime oneDNN uses too).
//
//   at::parallel_for(0, n, grain, [&](int64_t b, int64_t e) { for (i = b; i < e; ++i) ... });
//   float s = at::parallel_reduce(0, n, grain, 0.f,
//                                 [&](int64_t b, int64_t e, float acc) { ...; return acc; },
//                                 std::plus<float>());
//
// The range is split into at most get_num_threads() contiguous chunks, none (but the
// rounding) smaller than grain_size, each run once on its own thread; the body runs inline
// on the caller when the range is at most grain_size, when called from inside a parallel
// region (nesting never oversubscribes), or with one thread. An exception thrown by any
// chunk is rethrown on the caller (the first one thrown, after every chunk has finished).
//
// Thread count: TESSERA_NUM_THREADS, else OMP_NUM_THREADS, else the number of physical
// cores in the process's affinity mask (torch's policy: hyperthreads do not help these
// kernels). set_num_threads() also sets OpenBLAS's count and the OpenMP default that
// oneDNN reads. Idle OpenMP workers sleep instead of spinning (see Parallel.cpp).
#pragma once

#include <c10/macros/Export.h>
#include <c10/macros/Macros.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace at::inline tessera {

// Sets the number of threads parallel_for / parallel_reduce, OpenBLAS and oneDNN use (> 0).
TORCH_API void set_num_threads(int nthreads);
TORCH_API int get_num_threads();
// The calling thread's index inside a parallel region (0 outside one).
TORCH_API int get_thread_num();
TORCH_API bool in_parallel_region();
// The default count described above (what get_num_threads() starts at).
TORCH_API int default_num_threads();
// Makes the calling thread's OpenMP default (omp_get_max_threads, which oneDNN reads)
// equal get_num_threads(): for threads other than the one that called set_num_threads.
TORCH_API void init_num_threads();

// While alive, parallel_for and parallel_reduce called on this thread run inline. For the
// work just before a call that threads itself through OpenBLAS's pool (one large LAPACK
// call): an OpenMP region there leaves its workers spinning on the cores that pool needs.
// (`active` false makes a scope that changes nothing, for a choice made at run time.)
class TORCH_API SerialScope {
 public:
  explicit SerialScope(bool active = true);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  bool saved_;
};

namespace detail {
using ChunkFn = void (*)(void* ctx, int64_t begin, int64_t end, int chunk);
// Runs fn over `nchunks` contiguous chunks of [begin, end) on up to nchunks threads.
TORCH_API void parallel_run(int64_t begin, int64_t end, int nchunks, ChunkFn fn, void* ctx);
// How many chunks a range of `range` elements splits into (1: run inline).
TORCH_API int num_chunks(int64_t range, int64_t grain_size);
}  // namespace detail

template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  TORCH_CHECK(grain_size >= 0, "parallel_for: grain_size must be non-negative, got ", grain_size);
  if (begin >= end) return;
  const int nchunks = detail::num_chunks(end - begin, grain_size);
  if (nchunks <= 1) {
    f(begin, end);
    return;
  }
  detail::parallel_run(
      begin, end, nchunks,
      [](void* ctx, int64_t b, int64_t e, int) { (*static_cast<const F*>(ctx))(b, e); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

template <class T, class F, class Combine>
T parallel_reduce(int64_t begin, int64_t end, int64_t grain_size, const T& ident, const F& f,
                  const Combine& combine) {
  TORCH_CHECK(grain_size >= 0, "parallel_reduce: grain_size must be non-negative, got ", grain_size);
  if (begin >= end) return ident;
  const int nchunks = detail::num_chunks(end - begin, grain_size);
  if (nchunks <= 1) return f(begin, end, ident);
  // One partial per chunk (each on its own cache line), combined in chunk order:
  // deterministic for a given thread count.
  struct alignas(64) Slot {
    T value;
  };
  struct Ctx {
    const F& f;
    const T& ident;
    std::vector<Slot> partials;
  } ctx{f, ident, std::vector<Slot>(static_cast<size_t>(nchunks), Slot{ident})};
  detail::parallel_run(
      begin, end, nchunks,
      [](void* p, int64_t b, int64_t e, int chunk) {
        auto* c = static_cast<Ctx*>(p);
        c->partials[static_cast<size_t>(chunk)].value = c->f(b, e, c->ident);
      },
      &ctx);
  T result = ident;
  for (const Slot& partial : ctx.partials) result = combine(result, partial.value);
  return result;
}

}  // namespace at::inline tessera
