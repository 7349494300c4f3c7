// The per-ISA half of the FFT plans (FFTPlan.h): the Stockham passes of one complex
// transform, over interleaved (re, im) arrays of float or double.
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/spectral/FFTPlan.h>

namespace at::inline tessera::native::fft {

// Runs `count` passes over n complex values: reads `in`, ping-pongs between `out` and
// `scratch` so that the last pass writes `out`. `table` holds the plan's forward twiddles
// and roots (interleaved, of the same precision); a backward transform conjugates them.
// With `lanes`, every point is kBatchLanes<T> lines' values (the batch layout,
// FFTPlan.h); without, one (re, im) pair. `in` may be misaligned for the complex type (a
// real line read as pairs), so everything here indexes the real type.
using fft_passes_fn = void (*)(bool is_double, bool lanes, int64_t n, const FFTPass* passes, int64_t count,
                               const void* table, const void* in, void* out, void* scratch, bool forward);
DECLARE_DISPATCH(fft_passes_fn, fft_passes_stub);

// Many lines through one plan's passes, kBatchLanes<T> at a time in the lane layout (the
// rest one by one): complex to complex (n points), real to half spectrum (a real line of
// 2n to n + 1 complex values), and half spectrum to real (n + 1 to 2n, unnormalised,
// the imaginary parts of the first and last value ignored). `twiddles`: exp(-2 pi i k /
// 2n), k <= n (the real kinds). `work`: 2 kBatchLanes (4n + 1) reals for many lines, 6 (n
// + 1) for fewer than kBatchLanes.
enum class LinesKind { c2c, r2c, c2r };
struct LinesPlan {
  LinesKind kind;
  bool forward;  // c2c only; r2c is forward and c2r backward
  int64_t n;
  const FFTPass* passes;
  int64_t count;
  const void* table;
  const void* twiddles;
};
// Where the lines are: line i, point j at in + i * in_stride + j * in_point_stride (and so
// for out), counted in the line's own elements (real or complex). The real kinds take
// point strides of 1; c2c takes any, and may run in place (in == out, same strides), but
// other overlaps are not allowed. c2c may also multiply each output by `post_twiddles`
// at the output's own offset (conjugated for a backward transform): the middle step of a
// long transform split in two (FFTPlan.cpp).
struct LinesIO {
  const void* in;
  int64_t in_stride, in_point_stride;
  void* out;
  int64_t out_stride, out_point_stride;
  const void* post_twiddles;
};
using fft_lines_fn = void (*)(bool is_double, const LinesPlan& plan, const LinesIO& io, int64_t lines, void* work);
DECLARE_DISPATCH(fft_lines_fn, fft_lines_stub);

}  // namespace at::inline tessera::native::fft
