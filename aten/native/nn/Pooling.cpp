// max_pool2d and avg_pool2d over [C, H, W] or [N, C, H, W] inputs, with their backward
// kernels (CPU and Meta share the shape checks); the 1-D forms view their input as 2-D
// with H = 1. Each plane (one n, c) is pooled by one thread; inputs are read as
// contiguous NCHW (channels-last inputs are converted first, their outputs back).
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/Pooling.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {

namespace {

// Geometry of one pooling call: sizes, window, output.
struct Pool2d {
  int64_t batch, planes, in_h, in_w, out_h, out_w;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool batched;

  std::vector<int64_t> output_sizes() const {
    if (batched) return {batch, planes, out_h, out_w};
    return {planes, out_h, out_w};
  }
};

int64_t pair_at(IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

Pool2d pool2d_geometry(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                       IntArrayRef dilation, bool ceil_mode, const char* op, bool max) {
  TORCH_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2, op,
              ": kernel_size must either be a single int, or a tuple of two ints");
  TORCH_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2, op,
              ": stride must either be omitted, a single int, or a tuple of two ints");
  TORCH_CHECK(padding.size() == 1 || padding.size() == 2, op,
              ": padding must either be a single int, or a tuple of two ints");
  TORCH_CHECK(dilation.size() == 1 || dilation.size() == 2, op,
              ": dilation must be either a single int, or a tuple of two ints");
  Pool2d g{};
  g.kh = pair_at(kernel_size, 0), g.kw = pair_at(kernel_size, 1);
  g.sh = stride.empty() ? g.kh : pair_at(stride, 0), g.sw = stride.empty() ? g.kw : pair_at(stride, 1);
  g.ph = pair_at(padding, 0), g.pw = pair_at(padding, 1);
  g.dh = pair_at(dilation, 0), g.dw = pair_at(dilation, 1);
  if (max) {
    TORCH_CHECK(self.dim() == 3 || self.dim() == 4, "non-empty 3D or 4D (batch mode) tensor expected for input");
  }
  g.batched = self.dim() == 4;
  g.batch = g.batched ? self.size(0) : 1;
  g.planes = self.size(-3);
  g.in_h = self.size(-2), g.in_w = self.size(-1);
  g.out_h = pooled_size(g.in_h, g.kh, g.ph, g.sh, g.dh, ceil_mode);
  g.out_w = pooled_size(g.in_w, g.kw, g.pw, g.sw, g.dw, ceil_mode);
  TORCH_CHECK(g.kw > 0 && g.kh > 0, "kernel size should be greater than zero, but got kH: ", g.kh, " kW: ", g.kw);
  TORCH_CHECK(g.sw > 0 && g.sh > 0, "stride should be greater than zero, but got dH: ", g.sh, " dW: ", g.sw);
  TORCH_CHECK(g.dh > 0 && g.dw > 0, "dilation should be greater than zero, but got dilationH: ", g.dh,
              " dilationW: ", g.dw);
  const bool dims_ok = self.size(-1) != 0 && self.size(-2) != 0 && self.size(-3) != 0;
  TORCH_CHECK((self.dim() == 3 || self.dim() == 4) && dims_ok, "Expected 3D or 4D (batch mode) tensor with optional "
              "0 dim batch size for input, but got:", self.sizes());
  TORCH_CHECK(g.out_w >= 1 && g.out_h >= 1, "Given input size: (", g.planes, "x", g.in_h, "x", g.in_w,
              "). Calculated output size: (", g.planes, "x", g.out_h, "x", g.out_w, "). Output size is too small");
  return g;
}


// The common 2x2, stride 2 window (every window whole) without the general loop's
// branches: the four candidates in torch's scan order, each taken when larger, or when it
// is the first NaN (a NaN wins and the first one stays).
template <typename O, typename T>
void max_pool_2x2_plane(const T* plane, int64_t in_w, int64_t out_h, int64_t out_w, T* out, int64_t* indices) {
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const T* r0 = plane + 2 * oh * in_w;
    const T* r1 = r0 + in_w;
    T* o = out + oh * out_w;
    int64_t* ix = indices + oh * out_w;
    const int64_t row_base = 2 * oh * in_w;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t w = 2 * ow;
      O best = static_cast<O>(r0[w]);
      int64_t at = row_base + w;
      auto consider = [&](O v, int64_t k) {
        const bool take = v > best || (v != v && best == best);
        best = take ? v : best;
        at = take ? k : at;
      };
      consider(static_cast<O>(r0[w + 1]), row_base + w + 1);
      consider(static_cast<O>(r1[w]), row_base + in_w + w);
      consider(static_cast<O>(r1[w + 1]), row_base + in_w + w + 1);
      o[ow] = static_cast<T>(best);
      ix[ow] = at;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------- max pooling

static void check_1d_input(const Tensor& self, const char* op) {
  TORCH_CHECK(self.dim() == 2 || self.dim() == 3, op, ": Expected 2D or 3D (batch mode) tensor with optional 0 dim "
              "batch size for input, but got:", self.sizes());
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const Pool2d g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d", true);
  Tensor out = make_empty(g.output_sizes(), self.scalar_type(), self.device());
  Tensor indices = make_empty(g.output_sizes(), c10::kLong, self.device());
  if (self.is_meta() || out.numel() == 0) return {like_input_layout(out, self), like_input_layout(indices, self)};
  const Tensor x = self.contiguous();
  dispatch_types<kPoolFloatTypes>(self.scalar_type(), "max_pool2d", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    const bool two_by_two = g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 &&
                            g.dh == 1 && g.dw == 1 && 2 * g.out_h <= g.in_h && 2 * g.out_w <= g.in_w;
    for_each_plane(g.batch * g.planes, [&](int64_t p) {
      const T* plane = in + p * g.in_h * g.in_w;
      if (two_by_two) {
        max_pool_2x2_plane<O>(plane, g.in_w, g.out_h, g.out_w, o + p * g.out_h * g.out_w,
                              idx + p * g.out_h * g.out_w);
        return;
      }
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        int64_t h0 = oh * g.sh - g.ph;
        const int64_t h1 = std::min(h0 + (g.kh - 1) * g.dh + 1, g.in_h);
        while (h0 < 0) h0 += g.dh;
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          int64_t w0 = ow * g.sw - g.pw;
          const int64_t w1 = std::min(w0 + (g.kw - 1) * g.dw + 1, g.in_w);
          while (w0 < 0) w0 += g.dw;
          const auto [best, best_at] = window_max<O>(plane, g.in_w, h0, h1, g.dh, w0, w1, g.dw);
          const int64_t k = (p * g.out_h + oh) * g.out_w + ow;
          o[k] = static_cast<T>(best);
          idx[k] = best_at;
        }
      }
    });
  });
  return {like_input_layout(out, self), like_input_layout(indices, self)};
}

// grad_input[plane][indices[...]] += grad_output[...], per plane (max pooling's backward,
// adaptive max pooling's too).
Tensor scatter_by_indices(const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                                 int64_t planes_total, int64_t plane_in, int64_t plane_out, const char* op) {
  TORCH_CHECK(grad_output.sizes() == indices.sizes(), op, ": grad_output and indices must have the same sizes, got ",
              grad_output.sizes(), " and ", indices.sizes());
  TORCH_CHECK(indices.scalar_type() == c10::kLong, op, ": expected indices of dtype Long, got ",
              indices.scalar_type());
  TORCH_CHECK(grad_output.dim() == self.dim() && grad_output.numel() == planes_total * plane_out, op,
              ": grad_output of size ", grad_output.sizes(), " does not match the input's ", self.sizes());
  Tensor grad_input = at::zeros(self.sizes(), TensorOptions().dtype(self.scalar_type()).device(self.device()));
  if (self.is_meta() || grad_input.numel() == 0 || grad_output.numel() == 0) return like_input_layout(grad_input, self);
  const Tensor go = grad_output.to(self.scalar_type()).contiguous(), ind = indices.contiguous();
  dispatch_types<kPoolFloatTypes | kIntegral>(self.scalar_type(), op, [&]<typename T>() {
    using O = opmath_t<T>;
    const T* gp = go.data_ptr<T>();
    const int64_t* ip = ind.data_ptr<int64_t>();
    T* gi = grad_input.data_ptr<T>();
    at::parallel_for(0, planes_total, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        T* plane = gi + p * plane_in;
        for (int64_t k = p * plane_out; k < (p + 1) * plane_out; ++k) {
          const int64_t at_ = ip[k];
          TORCH_CHECK_INDEX(at_ >= 0 && at_ < plane_in, op, ": index ", at_, " is out of bounds for a plane of ",
                            plane_in, " elements");
          plane[at_] = static_cast<T>(static_cast<O>(plane[at_]) + static_cast<O>(gp[k]));
        }
      }
    });
  });
  return like_input_layout(grad_input, self);
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  const Pool2d g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d", true);
  TORCH_CHECK(grad_output.sizes() == IntArrayRef(g.output_sizes()), "max_pool2d_with_indices_backward: expected "
              "grad_output of size ", IntArrayRef(g.output_sizes()), ", got ", grad_output.sizes());
  return scatter_by_indices(grad_output, self, indices, g.batch * g.planes, g.in_h * g.in_w, g.out_h * g.out_w,
                            "max_pool2d_with_indices_backward");
}

// The values of max_pool2d_with_indices (torch skips the indices when nothing needs a grad;
// tessera fills them too for now).
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  if (self.is_mkldnn()) return at::mkldnn_max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode);
  if (self.is_quantized()) return quantized_max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode);
  return std::get<0>(at::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

static std::vector<int64_t> with_unit_height(IntArrayRef v, int64_t unit) {
  if (v.empty()) return {};
  return {unit, v[0]};
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  check_1d_input(self, "max_pool1d");
  TORCH_CHECK(kernel_size.size() == 1, "max_pool1d() kernel_size must be an int or int list of size 1 but got size ",
              kernel_size.size());
  auto [out, indices] = at::max_pool2d_with_indices(self.unsqueeze(-2), with_unit_height(kernel_size, 1),
                                                    with_unit_height(stride, 1), with_unit_height(padding, 0),
                                                    with_unit_height(dilation, 1), ceil_mode);
  return {out.squeeze(-2), indices.squeeze(-2)};
}

// Like torch, the values-only form accepts windows that leave no output (an empty result)
// when there is no grad to record; with_indices refuses them.
Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  if (self.is_quantized()) {
    check_1d_input(self, "max_pool1d");
    return quantized_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode);
  }
  const bool recording = self.requires_grad() && c10::GradMode::is_enabled();
  if (!recording && self.dim() >= 1 && kernel_size.size() == 1 && padding.size() == 1 && dilation.size() == 1 &&
      stride.size() <= 1 && kernel_size[0] > 0 && dilation[0] > 0 && (stride.empty() || stride[0] > 0)) {
    const int64_t s = stride.empty() ? kernel_size[0] : stride[0];
    if (padding[0] >= 0 && padding[0] <= kernel_size[0] / 2 &&
        pooled_size(self.size(-1), kernel_size[0], padding[0], s, dilation[0], ceil_mode) == 0) {
      check_1d_input(self, "max_pool1d");
      std::vector<int64_t> sizes = self.sizes().vec();
      sizes.back() = 0;
      return make_empty(sizes, self.scalar_type(), self.device());
    }
  }
  return std::get<0>(at::max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

// ---------------------------------------------------------------- average pooling

namespace {

// The window of output (oh, ow) clipped to the input, and what its sum is divided by.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

AvgWindow avg_window(const Pool2d& g, int64_t oh, int64_t ow, bool count_include_pad,
                     std::optional<int64_t> divisor_override) {
  int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  int64_t h1 = std::min(h0 + g.kh, g.in_h + g.ph), w1 = std::min(w0 + g.kw, g.in_w + g.pw);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.in_h), w1 = std::min(w1, g.in_w);
  const int64_t divisor = divisor_override ? *divisor_override : (count_include_pad ? padded : (h1 - h0) * (w1 - w0));
  return {h0, h1, w0, w1, divisor};
}

Pool2d avg_geometry(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                    bool ceil_mode, std::optional<int64_t> divisor_override) {
  TORCH_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  (void)self.size(-3);  // a rank below 3 raises torch's IndexError here
  const int64_t one = 1;
  return pool2d_geometry(self, kernel_size, stride, padding, IntArrayRef(&one, 1), ceil_mode, "avg_pool2d", false);
}

}  // namespace

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Pool2d g = avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  Tensor out = make_empty(g.output_sizes(), self.scalar_type(), self.device());
  if (self.is_meta() || out.numel() == 0) return like_input_layout(out, self);
  const Tensor x = self.contiguous();
  dispatch_types<kPoolFloatTypes | kIntegral>(self.scalar_type(), "avg_pool2d", [&]<typename T>() {
    using A = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
    const T* in = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for_each_plane(g.batch * g.planes, [&](int64_t p) {
      const T* plane = in + p * g.in_h * g.in_w;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const AvgWindow win = avg_window(g, oh, ow, count_include_pad, divisor_override);
          A sum = 0;
          for (int64_t h = win.h0; h < win.h1; ++h) {
            for (int64_t w = win.w0; w < win.w1; ++w) sum += static_cast<A>(plane[h * g.in_w + w]);
          }
          const bool empty = win.h0 >= win.h1 || win.w0 >= win.w1;
          o[(p * g.out_h + oh) * g.out_w + ow] = empty ? T(0) : static_cast<T>(sum / static_cast<A>(win.divisor));
        }
      }
    });
  });
  return like_input_layout(out, self);
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const Pool2d g = avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  TORCH_CHECK(grad_output.sizes() == IntArrayRef(g.output_sizes()), "avg_pool2d_backward: expected grad_output of "
              "size ", IntArrayRef(g.output_sizes()), ", got ", grad_output.sizes());
  Tensor grad_input = at::zeros(self.sizes(), TensorOptions().dtype(self.scalar_type()).device(self.device()));
  if (self.is_meta() || grad_input.numel() == 0) return like_input_layout(grad_input, self);
  const Tensor go = grad_output.to(self.scalar_type()).contiguous();
  dispatch_types<kPoolFloatTypes | kIntegral>(self.scalar_type(), "avg_pool2d_backward", [&]<typename T>() {
    using A = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;
    const T* gp = go.data_ptr<T>();
    T* gi = grad_input.data_ptr<T>();
    for_each_plane(g.batch * g.planes, [&](int64_t p) {
      T* plane = gi + p * g.in_h * g.in_w;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const AvgWindow win = avg_window(g, oh, ow, count_include_pad, divisor_override);
          const A share = static_cast<A>(gp[(p * g.out_h + oh) * g.out_w + ow]) / static_cast<A>(win.divisor);
          for (int64_t h = win.h0; h < win.h1; ++h) {
            for (int64_t w = win.w0; w < win.w1; ++w) {
              plane[h * g.in_w + w] = static_cast<T>(static_cast<A>(plane[h * g.in_w + w]) + share);
            }
          }
        }
      }
    });
  });
  return like_input_layout(grad_input, self);
}

Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad) {
  check_1d_input(self, "avg_pool1d");
  TORCH_CHECK(kernel_size.size() == 1, "avg_pool1d() argument 'kernel_size' should contain one int (got ",
              kernel_size.size(), ")");
  return at::avg_pool2d(self.unsqueeze(-2), with_unit_height(kernel_size, 1), with_unit_height(stride, 1),
                        with_unit_height(padding, 0), ceil_mode, count_include_pad, std::nullopt)
      .squeeze(-2);
}

}  // namespace at::inline tessera::native
