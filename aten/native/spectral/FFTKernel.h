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

// The forward real transform of `lines` real lines of even length 2h (line i at
// in + i * in_stride, spectrum at out + i * out_stride, h + 1 complex values), kBatchLanes
// lines at a time through the half-length plan's passes; the rest of a batch one by one.
// `twiddles`: exp(-2 pi i k / 2h), k <= h. `work`: RealPlan::lines_work_size() complex
// values (6 kBatchLanes h reals; 4h for fewer lines than lanes).
struct HalfLengthPlan {
  int64_t h;
  const FFTPass* passes;
  int64_t count;
  const void* table;
  const void* twiddles;
};
using rfft_lines_fn = void (*)(bool is_double, const HalfLengthPlan& plan, const void* in, int64_t in_stride,
                               void* out, int64_t out_stride, int64_t lines, void* work);
DECLARE_DISPATCH(rfft_lines_fn, rfft_lines_stub);

}  // namespace at::inline tessera::native::fft
