// Shared by the pooling kernels (Pooling.cpp, Pooling3d.cpp, AdaptivePooling.cpp): output
// lengths, and the backward of a max pooling that recorded, per output, the flat index of
// its input element in the plane.
#pragma once

#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/core/Tensor.h>
#include <aten/native/nn/ChannelsLast.h>

#include <cmath>
#include <limits>

namespace at::inline tessera::native {

// grad_input (self's shape, zeros) with grad_output[k] added at indices[k] of plane k / plane_out.
Tensor scatter_by_indices(const Tensor& grad_output, const Tensor& self, const Tensor& indices, int64_t planes_total,
                          int64_t plane_in, int64_t plane_out, const char* op);

inline constexpr unsigned kPoolFloatTypes = kFloating | kReducedFloat;

// torch's pooling_output_shape: windows start inside the input (or its left padding).
inline int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  TORCH_CHECK(stride != 0, "stride should not be zero");
  TORCH_CHECK(pad >= 0, "pad must be non-negative, but got pad: ", pad);
  TORCH_CHECK(pad <= k / 2, "pad should be at most half of kernel size, but got pad=", pad, " and kernel_size=", k);
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Adaptive pooling's window i of n over an input of length `in`: [floor(i * in / n),
// ceil((i + 1) * in / n)), so the windows tile the input whatever the sizes.
inline int64_t window_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
inline int64_t window_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

// f(plane) for planes [0, n), a block of planes per thread.
template <typename F>
void for_each_plane(int64_t n, F f) {
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) f(p);
  });
}

// The largest element of a window of a plane (rows h0 <= h < h1 step dh, columns likewise)
// and its flat index; a NaN wins, as in torch.
template <typename O, typename T>
std::pair<O, int64_t> window_max(const T* plane, int64_t width, int64_t h0, int64_t h1, int64_t dh, int64_t w0,
                                 int64_t w1, int64_t dw) {
  O best = -std::numeric_limits<O>::infinity();
  int64_t best_at = h0 * width + w0;
  for (int64_t h = h0; h < h1; h += dh) {
    for (int64_t w = w0; w < w1; w += dw) {
      const O v = static_cast<O>(plane[h * width + w]);
      if (v > best || std::isnan(v)) {
        best = v;
        best_at = h * width + w;
        if (std::isnan(v)) return {best, best_at};
      }
    }
  }
  return {best, best_at};
}

}  // namespace at::inline tessera::native
