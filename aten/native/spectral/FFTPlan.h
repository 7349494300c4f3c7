// Fourier-transform plans for tessera.fft's CPU kernels: one-dimensional, unnormalised
// transforms of contiguous lines, complex-to-complex and real-to/from-half-complex, in
// float and double. A plan is made once per (length, precision) and shared (plan cache).
//
// Why our own: Debian's archive has no FFT library that is both licence-compatible with
// BSD-3 and within 1.5x of PyTorch's pocketfft (FFTW is GPL; kissfft is float-only and
// 2.5-3.8x slower, docs/benchmarks.md). The algorithm: Stockham self-sorting passes of
// radix 4, 2, 3, 5 and any small odd prime (spectral/cpu/FFTKernel.cpp, per ISA); lengths
// with a prime factor above kMaxDirectRadix go through Bluestein's chirp-z convolution on
// a 2^a 3^b 5^c length. Real transforms of even length run a complex one of half length
// (when that one runs on passes). A long complex line splits into an n1 x n2 grid (the
// "four-step" order): many short transforms that vectorise across lines, stay in cache
// and run across threads.
#pragma once

#include <c10/macros/Export.h>
#include <c10/util/complex.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace at::inline tessera::native::fft {

// The longest line a plan takes (Bluestein's 2n - 1 and the smooth search stay in range).
constexpr int64_t kMaxLength = int64_t{1} << 40;

// Lines from this length on (when on passes) may run as a split transform (execute_split).
constexpr int64_t kMinSplitLength = int64_t{1} << 14;

// Prime factors up to this run as direct DFT passes (cost ~p per point); larger ones make
// the whole length a Bluestein transform (cost ~ a few transforms of length >= 2n - 1).
constexpr int64_t kMaxDirectRadix = 31;

// One Stockham pass: `radix`-point DFTs over sub-transforms of size `span` already
// combined; its twiddles sit at `twiddle_offset` in the plan's table ((radix-1) * span
// of them, row r-1 holding w^(r k) for k < span) and, for a generic odd radix, its
// radix roots of unity at `root_offset`.
// The batch layout: kBatchLanes<T> lines transformed together, point j holding their W
// real parts and then their W imaginary parts (one 32-byte vector each on every ISA).
template <typename T>
constexpr int64_t kBatchLanes = 32 / static_cast<int64_t>(sizeof(T));

struct FFTPass {
  int64_t radix;
  int64_t span;
  int64_t twiddle_offset;
  int64_t root_offset;
};

// The smallest 2^a 3^b 5^c at least n (Bluestein's convolution length, and what an
// op may pad to).
TORCH_API int64_t next_smooth_length(int64_t n);

// Uninitialised work memory for the plans' many-line calls, in complex values.
template <typename T>
class LinesWork {
 public:
  explicit LinesWork(int64_t count) : reals_(new T[static_cast<size_t>(2 * count)]) {}
  c10::complex<T>* data() { return reinterpret_cast<c10::complex<T>*>(reals_.get()); }

 private:
  std::unique_ptr<T[]> reals_;
};

template <typename T>
class TORCH_API ComplexPlan {
 public:
  using C = c10::complex<T>;
  // `may_split`: whether a long plan prepares execute_split (its own sub-plans do not).
  explicit ComplexPlan(int64_t n, bool may_split = true);
  ~ComplexPlan();
  int64_t size() const { return n_; }
  bool is_bluestein() const { return inner_ != nullptr; }
  // Complex elements of scratch that execute() needs beside its input and output.
  int64_t scratch_size() const { return scratch_size_; }
  // out[k] = sum_j in[j] exp(-+2 pi i j k / n) (minus for forward), unnormalised. `in` is
  // read only; in, out and scratch must not overlap.
  void execute(const C* in, C* out, C* scratch, bool forward) const;
  // kBatchLanes<T> lines at once in the batch layout (n points of 2 W reals each);
  // scratch: 2 W n reals. Not for Bluestein plans.
  void execute_lanes(const T* in, T* out, T* scratch, bool forward) const;
  // execute() of `lines` lines (line i, point j at in + i * in_stride + j * in_point_stride,
  // and so for out; complex strides), kBatchLanes<T> at a time. In place (in == out, same
  // strides) is allowed, other overlaps are not. `post_twiddles`: see FFTKernel.h's LinesIO.
  // `work`: lines_work_size(lines).
  void execute_lines(const C* in, int64_t in_stride, int64_t in_point_stride, C* out, int64_t out_stride,
                     int64_t out_point_stride, int64_t lines, C* work, bool forward,
                     const C* post_twiddles = nullptr) const;
  void execute_lines(const C* in, int64_t in_stride, C* out, int64_t out_stride, int64_t lines, C* work,
                     bool forward) const {
    execute_lines(in, in_stride, 1, out, out_stride, 1, lines, work, forward);
  }
  int64_t lines_work_size(int64_t lines = kMaxLength) const;
  // Whether execute_split runs: a long line on passes, made with may_split.
  bool splits() const { return split_ != nullptr; }
  // One line (points in_point_stride / out_point_stride apart) as n2 transforms of n1
  // points, a twiddle, and n1 transforms of n2 points, across threads. `tmp`: n complex
  // values, not overlapping in or out (which may be the same line).
  void execute_split(const C* in, int64_t in_point_stride, C* out, int64_t out_point_stride, C* tmp,
                     bool forward) const;
  // The passes (empty for Bluestein), for callers that run them on real arrays read as
  // complex pairs (RealPlan).
  const std::vector<FFTPass>& passes() const { return passes_; }
  int64_t pass_count() const { return static_cast<int64_t>(passes_.size()); }
  const std::vector<C>& table() const { return table_; }

 private:
  struct Split;
  void run_passes(const C* in, C* out, C* scratch, bool forward) const;
  void run_bluestein(const C* in, int64_t in_step, C* out, int64_t out_step, C* scratch, bool forward) const;

  int64_t n_;
  int64_t scratch_size_ = 0;
  std::vector<FFTPass> passes_;
  std::vector<C> table_;  // twiddles and roots of every pass, forward direction
  // Bluestein: chirp w_k = exp(-i pi k^2 / n) for k < n, and the forward transform of the
  // conjugate chirp wrapped to length m, divided by m.
  std::unique_ptr<ComplexPlan<T>> inner_;
  std::vector<C> chirp_;
  std::vector<C> kernel_;
  std::unique_ptr<Split> split_;
};

// Real input of length n <-> its n/2 + 1 non-redundant complex outputs.
template <typename T>
class TORCH_API RealPlan {
 public:
  using C = c10::complex<T>;
  explicit RealPlan(int64_t n);
  int64_t size() const { return n_; }
  int64_t scratch_size() const { return scratch_size_; }
  // out[k] = sum_j in[j] exp(-2 pi i j k / n), k <= n/2.
  void forward(const T* in, C* out, C* scratch) const;
  // out[j] = sum_k X[k] exp(+2 pi i j k / n) over the Hermitian extension of in[0..n/2]
  // (the imaginary parts of in[0] and, for even n, in[n/2] are ignored, as pocketfft
  // and torch do). Unnormalised.
  void inverse(const C* in, T* out, C* scratch) const;
  // forward() / inverse() of `lines` lines (in + i * in_stride, out + i * out_stride, each
  // stride in its line's elements); even lengths run kBatchLanes<T> lines together.
  // `work`: lines_work_size(lines) complex values.
  void forward_lines(const T* in, int64_t in_stride, C* out, int64_t out_stride, int64_t lines, C* work) const;
  void inverse_lines(const C* in, int64_t in_stride, T* out, int64_t out_stride, int64_t lines, C* work) const;
  int64_t lines_work_size(int64_t lines = kMaxLength) const;

 private:
  // Even lengths whose half runs on passes: the kernel's lines (one or many) do the whole
  // transform through the half-length plan. Any other length (odd, or a half with a large
  // prime factor) runs the full-length complex transform of the line.
  bool on_passes() const { return 2 * complex_.size() == n_; }

  int64_t n_;
  int64_t scratch_size_;
  ComplexPlan<T> complex_;   // length n/2 when on_passes(), else n
  std::vector<C> twiddles_;  // exp(-2 pi i k / n), k <= n/2 (even n)
};

// Shared plans, made on first use; thread-safe. The cache keeps the most recent few.
template <typename T>
TORCH_API std::shared_ptr<const ComplexPlan<T>> cached_complex_plan(int64_t n);
template <typename T>
TORCH_API std::shared_ptr<const RealPlan<T>> cached_real_plan(int64_t n);

}  // namespace at::inline tessera::native::fft
