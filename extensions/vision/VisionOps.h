// What torchvision's operators share in tessera's build of them: bilinear sampling of one
// feature plane at a real-valued point (its four taps and weights, so the forward kernels
// read with them and the backward kernels scatter with the same ones), and the checks on
// rois that every roi operator makes.
#pragma once

#include <aten/aten.h>

#include <algorithm>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace tessera_vision {

// The four neighbours of (y, x) and their weights; `valid` is false when the point lies
// outside the plane by a pixel or more, where torchvision's roi kernels read zero.
struct BilinearTaps {
  int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  double w00 = 0, w01 = 0, w10 = 0, w11 = 0;
  bool valid = false;
};

// The roi family's rule (roi_align, ps_roi_align): coordinates within a pixel of the plane
// are clamped onto it; at the last row/column both taps are that row/column.
inline BilinearTaps roi_bilinear_taps(double y, double x, int64_t height, int64_t width) {
  BilinearTaps t;
  // (a NaN position, from NaN roi coordinates, reads nothing: no index is made from it)
  if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 && x <= static_cast<double>(width))) return t;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  t.y0 = static_cast<int64_t>(y);
  t.x0 = static_cast<int64_t>(x);
  if (t.y0 >= height - 1) {
    t.y0 = t.y1 = height - 1;
    y = static_cast<double>(t.y0);
  } else {
    t.y1 = t.y0 + 1;
  }
  if (t.x0 >= width - 1) {
    t.x0 = t.x1 = width - 1;
    x = static_cast<double>(t.x0);
  } else {
    t.x1 = t.x0 + 1;
  }
  const double ly = y - static_cast<double>(t.y0), lx = x - static_cast<double>(t.x0);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  t.w00 = hy * hx;
  t.w01 = hy * lx;
  t.w10 = ly * hx;
  t.w11 = ly * lx;
  t.valid = true;
  return t;
}

template <typename T>
double sample(const T* plane, int64_t width, const BilinearTaps& t) {
  if (!t.valid) return 0.0;
  return t.w00 * static_cast<double>(plane[t.y0 * width + t.x0]) + t.w01 * static_cast<double>(plane[t.y0 * width + t.x1]) +
         t.w10 * static_cast<double>(plane[t.y1 * width + t.x0]) + t.w11 * static_cast<double>(plane[t.y1 * width + t.x1]);
}

template <typename T>
void scatter(T* plane, int64_t width, const BilinearTaps& t, double grad) {
  if (!t.valid) return;
  plane[t.y0 * width + t.x0] += static_cast<T>(grad * t.w00);
  plane[t.y0 * width + t.x1] += static_cast<T>(grad * t.w01);
  plane[t.y1 * width + t.x0] += static_cast<T>(grad * t.w10);
  plane[t.y1 * width + t.x1] += static_cast<T>(grad * t.w11);
}

// One roi's sampling grid for the align operators: bin b of pooled row i samples rows
// start_h + i * bin_h + (iy + 0.5) * bin_h / grid_h for iy < grid_h, and likewise columns.
// Coordinates are computed in acc_t (float for float inputs, as torchvision does, so the
// grid counts, which round up a ratio, agree with it).
template <typename acc_t>
struct AlignGrid {
  int64_t batch = 0;
  acc_t start_h = 0, start_w = 0, bin_h = 0, bin_w = 0;
  // samples per bin along each dim (never negative: a roi flipped or shrunk by a negative
  // scale samples nothing), and the product of the counts as computed, which torchvision
  // divides by (so a grid of -2 x -3 divides an empty sum by 6)
  int64_t grid_h = 1, grid_w = 1, divisor = 1;

  acc_t y(int64_t i, int64_t iy) const { return start_h + i * bin_h + (iy + acc_t(0.5)) * bin_h / grid_h; }
  acc_t x(int64_t j, int64_t ix) const { return start_w + j * bin_w + (ix + acc_t(0.5)) * bin_w / grid_w; }
  int64_t count() const { return divisor > 1 ? divisor : 1; }  // roi_align's
};

// The roi's image, as torchvision reads it (its index truncated toward zero); an index
// outside the batch, or NaN, is an IndexError where torchvision would read out of bounds.
template <typename acc_t>
int64_t roi_batch_index(acc_t index, int64_t batch_size) {
  TORCH_CHECK_INDEX(index > acc_t(-1) && index < static_cast<acc_t>(batch_size), "roi batch index ", index,
                    " is out of range for a batch of ", batch_size);
  return static_cast<int64_t>(index);
}

// `roi` points at (batch index, x1, y1, x2, y2); `aligned` shifts by half a pixel and lets
// a roi be smaller than one pixel (torchvision's aligned=True), otherwise rois are at least
// one pixel wide and high.
template <typename acc_t>
AlignGrid<acc_t> align_grid(const acc_t* roi, double spatial_scale, int64_t pooled_h, int64_t pooled_w,
                            int64_t sampling_ratio, bool aligned, int64_t batch_size) {
  AlignGrid<acc_t> g;
  g.batch = roi_batch_index(roi[0], batch_size);
  const acc_t scale = static_cast<acc_t>(spatial_scale), offset = aligned ? acc_t(0.5) : acc_t(0);
  g.start_w = roi[1] * scale - offset;
  g.start_h = roi[2] * scale - offset;
  acc_t roi_w = roi[3] * scale - offset - g.start_w, roi_h = roi[4] * scale - offset - g.start_h;
  if (!aligned) {
    roi_w = roi_w > acc_t(1) ? roi_w : acc_t(1);
    roi_h = roi_h > acc_t(1) ? roi_h : acc_t(1);
  }
  g.bin_h = roi_h / static_cast<acc_t>(pooled_h);
  g.bin_w = roi_w / static_cast<acc_t>(pooled_w);
  auto samples = [&](acc_t extent, int64_t pooled) -> int64_t {
    if (sampling_ratio > 0) return sampling_ratio;
    const acc_t n = std::ceil(extent / static_cast<acc_t>(pooled));
    return n == n ? static_cast<int64_t>(std::clamp<acc_t>(n, acc_t(-1e9), acc_t(1e9))) : 0;  // NaN: none
  };
  const int64_t gh = samples(roi_h, pooled_h), gw = samples(roi_w, pooled_w);
  g.divisor = gh * gw;
  g.grid_h = std::max<int64_t>(gh, 0);
  g.grid_w = std::max<int64_t>(gw, 0);
  return g;
}

// The type roi coordinates are computed in.
template <typename T>
using coord_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// The position-sensitive operators' channel rule: C = C_out * pooled_h * pooled_w.
void check_position_sensitive_channels(const char* op, int64_t channels, int64_t ph, int64_t pw);

// The arguments of _ps_roi_align_backward / _ps_roi_pool_backward: grad [K, C_out, ph, pw]
// of rois' dtype, channel_mapping an int32 tensor shaped like it, C_out from `channels`.
void check_position_sensitive_backward(const char* op, const at::Tensor& grad, const at::Tensor& rois,
                                       const at::Tensor& mapping, int64_t ph, int64_t pw, int64_t channels);

// input [N, C, H, W] and rois [K, 5] (batch index, x1, y1, x2, y2) of input's dtype.
void check_roi_inputs(const at::Tensor& input, const at::Tensor& rois, const char* op);

// The operator handle of torchvision::<name> (a lookup per call: backward passes only).
c10::OperatorHandle vision_op(const char* name);

}  // namespace tessera_vision
