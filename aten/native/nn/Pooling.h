// Shared by the max pooling kernels (Pooling.cpp, AdaptivePooling.cpp): the backward of
// a pooling that recorded, per output, the flat index of its input element in the plane.
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
