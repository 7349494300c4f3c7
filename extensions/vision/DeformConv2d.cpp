// torchvision::deform_conv2d (deformable convolution v1/v2): each kernel tap reads the
// input at its regular position moved by a learned (dy, dx) offset, bilinearly, optionally
// scaled by a learned mask, and the sampled columns are multiplied with the weight per
// group as in im2col convolution. Its backward gives the gradients of input, weight,
// offset, mask and bias.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <autograd/custom_function.h>

#include "VisionOps.h"

#include <cmath>

namespace tessera_vision {
namespace {

struct DeformShape {
  int64_t batch, in_channels, height, width, out_channels, kh, kw, out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups;
  int64_t taps() const { return kh * kw; }
  int64_t positions() const { return out_h * out_w; }
};

DeformShape check_deform_inputs(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
                                const at::Tensor& mask, const at::Tensor& bias, int64_t stride_h, int64_t stride_w,
                                int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups,
                                int64_t offset_groups, bool use_mask) {
  TORCH_CHECK(input.dim() == 4, "deform_conv2d: input must be 4-D [N, C, H, W], got ", input.dim(), "-D");
  TORCH_CHECK(weight.dim() == 4, "deform_conv2d: weight must be 4-D [C_out, C_in / groups, kH, kW], got ",
              weight.dim(), "-D");
  TORCH_CHECK(offset.dim() == 4, "deform_conv2d: offset must be 4-D, got ", offset.dim(), "-D");
  TORCH_CHECK(!use_mask || mask.dim() == 4, "deform_conv2d: mask must be 4-D, got ", mask.dim(), "-D");
  TORCH_CHECK(bias.dim() == 1, "deform_conv2d: bias must be 1-D, got ", bias.dim(), "-D");
  for (const at::Tensor* t : {&weight, &offset, &bias})
    TORCH_CHECK(t->scalar_type() == input.scalar_type(), "deform_conv2d: expected every tensor to have input's dtype ",
                input.scalar_type(), ", got ", t->scalar_type());
  TORCH_CHECK(!use_mask || mask.scalar_type() == input.scalar_type(), "deform_conv2d: expected every tensor to have ",
              "input's dtype ", input.scalar_type(), ", got ", mask.scalar_type());
  TORCH_CHECK(stride_h > 0 && stride_w > 0, "deform_conv2d: stride must be positive, got (", stride_h, ", ", stride_w,
              ")");
  TORCH_CHECK(dil_h > 0 && dil_w > 0, "deform_conv2d: dilation must be positive, got (", dil_h, ", ", dil_w, ")");
  TORCH_CHECK(pad_h >= 0 && pad_w >= 0, "deform_conv2d: padding must be non-negative, got (", pad_h, ", ", pad_w, ")");
  TORCH_CHECK(groups > 0 && offset_groups > 0, "deform_conv2d: groups and offset_groups must be positive");
  DeformShape s{input.size(0), input.size(1), input.size(2), input.size(3), weight.size(0), weight.size(2),
                weight.size(3), 0, 0, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups};
  TORCH_CHECK(weight.size(1) * groups == s.in_channels, "deform_conv2d: weight has ", weight.size(1),
              " input channels per group, and ", groups, " groups need ", s.in_channels / groups,
              " for an input of ", s.in_channels, " channels");
  TORCH_CHECK(s.out_channels % groups == 0, "deform_conv2d: ", s.out_channels,
              " output channels do not divide into ", groups, " groups");
  TORCH_CHECK(s.in_channels % offset_groups == 0, "deform_conv2d: ", s.in_channels,
              " input channels do not divide into ", offset_groups, " offset groups");
  TORCH_CHECK(bias.size(0) == s.out_channels, "deform_conv2d: bias has ", bias.size(0), " elements, expected ",
              s.out_channels);
  s.out_h = (s.height + 2 * pad_h - (dil_h * (s.kh - 1) + 1)) / stride_h + 1;
  s.out_w = (s.width + 2 * pad_w - (dil_w * (s.kw - 1) + 1)) / stride_w + 1;
  TORCH_CHECK(s.out_h > 0 && s.out_w > 0, "deform_conv2d: the input (", s.height, "x", s.width,
              ") is smaller than the dilated kernel after padding; computed output dims: (", s.out_h, ", ", s.out_w,
              ")");
  TORCH_CHECK(offset.size(0) == s.batch, "invalid batch size of offset: ", offset.size(0), " for an input batch of ",
              s.batch);
  TORCH_CHECK(offset.size(1) == 2 * offset_groups * s.taps(), "offset.shape[1] is not valid: got: ", offset.size(1),
              " expected: ", 2 * offset_groups * s.taps());
  TORCH_CHECK(offset.size(2) == s.out_h && offset.size(3) == s.out_w, "offset output dims: (", offset.size(2), ", ",
              offset.size(3), ") - computed output dims: (", s.out_h, ", ", s.out_w, ")");
  if (use_mask) {
    TORCH_CHECK(mask.size(0) == s.batch, "invalid batch size of mask: ", mask.size(0));
    TORCH_CHECK(mask.size(1) == offset_groups * s.taps(), "mask.shape[1] is not valid: got: ", mask.size(1),
                " expected: ", offset_groups * s.taps());
    TORCH_CHECK(mask.size(2) == s.out_h && mask.size(3) == s.out_w, "mask output dims: (", mask.size(2), ", ",
                mask.size(3), ") - computed output dims: (", s.out_h, ", ", s.out_w, ")");
  }
  return s;
}

// Deformable sampling's bilinear rule: a point within a pixel of the plane is read with
// each of its four taps that lies inside (the others count as zero).
struct DeformPoint {
  int64_t y0, x0;
  double ly, lx;
  bool inside;
};

DeformPoint deform_point(double y, double x, int64_t height, int64_t width) {
  DeformPoint p{0, 0, 0, 0, false};
  // (written so that a NaN position, from a NaN offset, reads nothing)
  if (!(y > -1 && y < static_cast<double>(height) && x > -1 && x < static_cast<double>(width))) return p;
  p.y0 = static_cast<int64_t>(std::floor(y));
  p.x0 = static_cast<int64_t>(std::floor(x));
  p.ly = y - static_cast<double>(p.y0);
  p.lx = x - static_cast<double>(p.x0);
  p.inside = true;
  return p;
}

// The plane's value at (y, x) (zero outside), with the four corner values for gradients.
template <typename T>
void corners(const T* plane, int64_t height, int64_t width, const DeformPoint& p, double v[4]) {
  const int64_t ys[2] = {p.y0, p.y0 + 1}, xs[2] = {p.x0, p.x0 + 1};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      const bool ok = ys[a] >= 0 && ys[a] < height && xs[b] >= 0 && xs[b] < width;
      v[a * 2 + b] = ok ? static_cast<double>(plane[ys[a] * width + xs[b]]) : 0.0;
    }
}

inline double interpolate(const DeformPoint& p, const double v[4]) {
  return (1 - p.ly) * (1 - p.lx) * v[0] + (1 - p.ly) * p.lx * v[1] + p.ly * (1 - p.lx) * v[2] + p.ly * p.lx * v[3];
}

// For sample (channel c, tap k, output position q) of image b: its location and mask.
template <typename T>
struct Sampler {
  const DeformShape& s;
  const T* offset;  // [B, 2 * og * taps, out_h, out_w]
  const T* mask;    // [B, og * taps, out_h, out_w] or null

  void locate(int64_t b, int64_t c, int64_t k, int64_t q, double& y, double& x, double& m, int64_t& off_at,
              int64_t& mask_at) const {
    const int64_t group = c / (s.in_channels / s.offset_groups), i = k / s.kw, j = k % s.kw;
    const int64_t ho = q / s.out_w, wo = q % s.out_w, p = s.positions();
    off_at = ((b * s.offset_groups + group) * 2 * s.taps() + 2 * k) * p + q;
    y = static_cast<double>(ho * s.stride_h - s.pad_h + i * s.dil_h) + static_cast<double>(offset[off_at]);
    x = static_cast<double>(wo * s.stride_w - s.pad_w + j * s.dil_w) + static_cast<double>(offset[off_at + p]);
    mask_at = ((b * s.offset_groups + group) * s.taps() + k) * p + q;
    m = mask ? static_cast<double>(mask[mask_at]) : 1.0;
  }
};

// columns[c * taps + k, q] = mask * input sampled at (c, k, q), for image b.
template <typename T>
void fill_columns(const DeformShape& s, const Sampler<T>& sampler, const T* input, int64_t b, T* columns) {
  at::parallel_for(0, s.in_channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const T* plane = input + (b * s.in_channels + c) * s.height * s.width;
      for (int64_t k = 0; k < s.taps(); ++k)
        for (int64_t q = 0; q < s.positions(); ++q) {
          double y, x, m, v[4];
          int64_t off_at, mask_at;
          sampler.locate(b, c, k, q, y, x, m, off_at, mask_at);
          const DeformPoint p = deform_point(y, x, s.height, s.width);
          double value = 0;
          if (p.inside) {
            corners(plane, s.height, s.width, p, v);
            value = interpolate(p, v);
          }
          columns[(c * s.taps() + k) * s.positions() + q] = static_cast<T>(m * value);
        }
    }
  });
}

at::Tensor deform_conv2d_cpu(const at::Tensor& input_, const at::Tensor& weight_, const at::Tensor& offset_,
                             const at::Tensor& mask_, const at::Tensor& bias_, int64_t stride_h, int64_t stride_w,
                             int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups,
                             int64_t offset_groups, bool use_mask) {
  const DeformShape s = check_deform_inputs(input_, weight_, offset_, mask_, bias_, stride_h, stride_w, pad_h, pad_w,
                                            dil_h, dil_w, groups, offset_groups, use_mask);
  const at::Tensor input = input_.contiguous(), offset = offset_.contiguous();
  const at::Tensor mask = use_mask ? mask_.contiguous() : at::Tensor();
  const at::Tensor weight = weight_.contiguous().view({groups, s.out_channels / groups, -1});
  at::Tensor out = at::empty({s.batch, s.out_channels, s.out_h, s.out_w}, input.options());
  at::Tensor columns = at::empty({groups, s.in_channels / groups * s.taps(), s.positions()}, input.options());
  at::dispatch_types<at::kFloating>(input.scalar_type(), "deform_conv2d", [&]<typename T>() {
    const Sampler<T> sampler{s, offset.data_ptr<T>(), use_mask ? mask.data_ptr<T>() : nullptr};
    for (int64_t b = 0; b < s.batch; ++b) {
      fill_columns(s, sampler, input.data_ptr<T>(), b, columns.data_ptr<T>());
      out.select(0, b).copy_(at::matmul(weight, columns).view({s.out_channels, s.out_h, s.out_w}));
    }
  });
  return out.add_(bias_.view({1, s.out_channels, 1, 1}));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> deform_conv2d_backward_cpu(
    const at::Tensor& grad_, const at::Tensor& input_, const at::Tensor& weight_, const at::Tensor& offset_,
    const at::Tensor& mask_, const at::Tensor& bias_, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
    int64_t dil_h, int64_t dil_w, int64_t groups, int64_t offset_groups, bool use_mask) {
  const DeformShape s = check_deform_inputs(input_, weight_, offset_, mask_, bias_, stride_h, stride_w, pad_h, pad_w,
                                            dil_h, dil_w, groups, offset_groups, use_mask);
  TORCH_CHECK(grad_.dim() == 4 && grad_.size(0) == s.batch && grad_.size(1) == s.out_channels &&
                  grad_.size(2) == s.out_h && grad_.size(3) == s.out_w,
              "deform_conv2d backward: grad must be [N, C_out, out_h, out_w]");
  const at::Tensor grad = grad_.contiguous(), input = input_.contiguous(), offset = offset_.contiguous();
  const at::Tensor mask = use_mask ? mask_.contiguous() : at::Tensor();
  const at::Tensor weight = weight_.contiguous().view({groups, s.out_channels / groups, -1});
  at::Tensor grad_input = at::zeros_like(input), grad_offset = at::zeros_like(offset);
  at::Tensor grad_mask = use_mask ? at::zeros_like(mask) : at::zeros_like(mask_);
  at::Tensor grad_weight = at::zeros_like(weight);
  at::Tensor columns = at::empty({groups, s.in_channels / groups * s.taps(), s.positions()}, input.options());
  at::dispatch_types<at::kFloating>(input.scalar_type(), "deform_conv2d_backward", [&]<typename T>() {
    const Sampler<T> sampler{s, offset.data_ptr<T>(), use_mask ? mask.data_ptr<T>() : nullptr};
    const T* in = input.data_ptr<T>();
    T* g_in = grad_input.data_ptr<T>();
    T* g_off = grad_offset.data_ptr<T>();
    T* g_mask = use_mask ? grad_mask.data_ptr<T>() : nullptr;
    for (int64_t b = 0; b < s.batch; ++b) {
      const at::Tensor grad_b = grad.select(0, b).view({groups, s.out_channels / groups, s.positions()});
      // d(loss)/d(columns) = weight^T grad, per group
      const at::Tensor grad_columns = at::matmul(weight.transpose(1, 2), grad_b).contiguous();
      const T* g_col = grad_columns.data_ptr<T>();
      // offset and mask grads sum over the channels of one offset group; a thread owns
      // whole offset groups, so no two threads write one element
      at::parallel_for(0, s.offset_groups, 1, [&](int64_t begin, int64_t end) {
        const int64_t per_group = s.in_channels / s.offset_groups;
        for (int64_t og = begin; og < end; ++og)
          for (int64_t c = og * per_group; c < (og + 1) * per_group; ++c) {
            const T* plane = in + (b * s.in_channels + c) * s.height * s.width;
            T* g_plane = g_in + (b * s.in_channels + c) * s.height * s.width;
            for (int64_t k = 0; k < s.taps(); ++k)
              for (int64_t q = 0; q < s.positions(); ++q) {
                double y, x, m, v[4];
                int64_t off_at, mask_at;
                sampler.locate(b, c, k, q, y, x, m, off_at, mask_at);
                const DeformPoint p = deform_point(y, x, s.height, s.width);
                if (!p.inside) continue;
                const double gc = static_cast<double>(g_col[(c * s.taps() + k) * s.positions() + q]);
                corners(plane, s.height, s.width, p, v);
                const double w[4] = {(1 - p.ly) * (1 - p.lx), (1 - p.ly) * p.lx, p.ly * (1 - p.lx), p.ly * p.lx};
                const int64_t ys[2] = {p.y0, p.y0 + 1}, xs[2] = {p.x0, p.x0 + 1};
                for (int a = 0; a < 2; ++a)
                  for (int e = 0; e < 2; ++e)
                    if (ys[a] >= 0 && ys[a] < s.height && xs[e] >= 0 && xs[e] < s.width)
                      g_plane[ys[a] * s.width + xs[e]] += static_cast<T>(m * gc * w[a * 2 + e]);
                const double dy = (1 - p.lx) * (v[2] - v[0]) + p.lx * (v[3] - v[1]);
                const double dx = (1 - p.ly) * (v[1] - v[0]) + p.ly * (v[3] - v[2]);
                g_off[off_at] += static_cast<T>(m * gc * dy);
                g_off[off_at + s.positions()] += static_cast<T>(m * gc * dx);
                if (g_mask) g_mask[mask_at] += static_cast<T>(gc * interpolate(p, v));
              }
          }
      });
      fill_columns(s, sampler, in, b, columns.data_ptr<T>());
      grad_weight.add_(at::matmul(grad_b, columns.transpose(1, 2)));
    }
  });
  at::Tensor grad_bias = grad.sum({0, 2, 3});
  return {grad_input, grad_weight.view(weight_.sizes()), grad_offset, grad_mask, grad_bias};
}

at::Tensor deform_conv2d_meta(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
                              const at::Tensor& mask, const at::Tensor& bias, int64_t stride_h, int64_t stride_w,
                              int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups,
                              int64_t offset_groups, bool use_mask) {
  const DeformShape s = check_deform_inputs(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h,
                                            dil_w, groups, offset_groups, use_mask);
  return at::empty({s.batch, s.out_channels, s.out_h, s.out_w}, input.options());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> deform_conv2d_backward_meta(
    const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
    const at::Tensor& mask, const at::Tensor& bias, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
    int64_t dil_h, int64_t dil_w, int64_t groups, int64_t offset_groups, bool use_mask) {
  check_deform_inputs(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups,
                      offset_groups, use_mask);
  return {at::empty_like(input), at::empty_like(weight), at::empty_like(offset), at::empty_like(mask),
          at::empty_like(bias)};
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using ForwardSig = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                              const at::Tensor&, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                              bool);
using BackwardSig = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>(
    const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
    int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool);

struct DeformConv2dFunction : torch::autograd::Function<DeformConv2dFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& weight,
                            const at::Tensor& offset, const at::Tensor& mask, const at::Tensor& bias, int64_t stride_h,
                            int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w,
                            int64_t groups, int64_t offset_groups, bool use_mask) {
    ctx->saved_data["args"] = std::vector<int64_t>{stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups};
    ctx->saved_data["use_mask"] = use_mask;
    ctx->save_for_backward({input, weight, offset, mask, bias});
    at::AutoDispatchBelowADInplaceOrView guard;
    return vision_op("deform_conv2d")
        .typed<ForwardSig>()
        .call(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, offset_groups,
              use_mask);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto a = ctx->saved_data["args"].toIntVector();
    auto [gi, gw, go, gm, gb] = vision_op("_deform_conv2d_backward")
                                    .typed<BackwardSig>()
                                    .call(grads[0], saved[0], saved[1], saved[2], saved[3], saved[4], a[0], a[1], a[2],
                                          a[3], a[4], a[5], a[6], a[7], ctx->saved_data["use_mask"].toBool());
    variable_list out{gi, gw, go, gm, gb};
    out.resize(14);
    return out;
  }
};

struct DeformConv2dBackwardFunction : torch::autograd::Function<DeformConv2dBackwardFunction> {
  static variable_list forward(AutogradContext*, const at::Tensor& grad, const at::Tensor& input,
                               const at::Tensor& weight, const at::Tensor& offset, const at::Tensor& mask,
                               const at::Tensor& bias, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                               int64_t dil_h, int64_t dil_w, int64_t groups, int64_t offset_groups, bool use_mask) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [gi, gw, go, gm, gb] = vision_op("_deform_conv2d_backward")
                                    .typed<BackwardSig>()
                                    .call(grad, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                                          dil_h, dil_w, groups, offset_groups, use_mask);
    return {gi, gw, go, gm, gb};
  }
  static variable_list backward(AutogradContext*, variable_list) {
    TORCH_CHECK(false, "double backwards on deform_conv2d not supported");
  }
};

at::Tensor deform_conv2d_autograd(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
                                  const at::Tensor& mask, const at::Tensor& bias, int64_t stride_h, int64_t stride_w,
                                  int64_t pad_h, int64_t pad_w, int64_t dil_h, int64_t dil_w, int64_t groups,
                                  int64_t offset_groups, bool use_mask) {
  return DeformConv2dFunction::apply(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                                     groups, offset_groups, use_mask);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> deform_conv2d_backward_autograd(
    const at::Tensor& grad, const at::Tensor& input, const at::Tensor& weight, const at::Tensor& offset,
    const at::Tensor& mask, const at::Tensor& bias, int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
    int64_t dil_h, int64_t dil_w, int64_t groups, int64_t offset_groups, bool use_mask) {
  auto r = DeformConv2dBackwardFunction::apply(grad, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
                                               dil_h, dil_w, groups, offset_groups, use_mask);
  return {r[0], r[1], r[2], r[3], r[4]};
}

}  // namespace
}  // namespace tessera_vision

TORCH_LIBRARY_IMPL(torchvision, CPU, m) {
  m.impl("deform_conv2d", TORCH_FN(tessera_vision::deform_conv2d_cpu));
  m.impl("_deform_conv2d_backward", TORCH_FN(tessera_vision::deform_conv2d_backward_cpu));
}
TORCH_LIBRARY_IMPL(torchvision, Meta, m) {
  m.impl("deform_conv2d", TORCH_FN(tessera_vision::deform_conv2d_meta));
  m.impl("_deform_conv2d_backward", TORCH_FN(tessera_vision::deform_conv2d_backward_meta));
}
TORCH_LIBRARY_IMPL(torchvision, Autograd, m) {
  m.impl("deform_conv2d", TORCH_FN(tessera_vision::deform_conv2d_autograd));
  m.impl("_deform_conv2d_backward", TORCH_FN(tessera_vision::deform_conv2d_backward_autograd));
}
