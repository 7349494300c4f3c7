// Convolution: `convolution` (ordinary and transposed, 1-3 spatial dims) and its backward
// check shapes once for CPU and Meta and send each pass to oneDNN (float32, and bfloat16
// where the CPU has it) or the im2col + GEMM path (float64, and what oneDNN refuses).
// Half and bfloat16 without native support compute in float32. conv1d/2d/3d and
// conv_transpose1d/2d and conv_tbc are composites over `convolution`, which carries the
// autograd.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/ConvUtils.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace at::inline tessera::native {

namespace {

// A single value stands for every spatial dim, as in torch's expand_param_if_needed.
std::vector<int64_t> expand_param(IntArrayRef v, const char* name, int spatial) {
  if (v.size() == 1) return std::vector<int64_t>(spatial, v[0]);
  TORCH_CHECK(static_cast<int>(v.size()) == spatial, "expected ", name, " to be a single integer value or a list of ",
              spatial, " values to match the convolution dimensions, but got ", name, "=", v);
  return v.vec();
}

std::string join(const std::vector<int64_t>& v, const char* sep) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? sep : "") << v[i];
  return s.str();
}

// "stride_height: 2 stride_width: 1", torch's wording in its transposed-convolution checks.
std::string per_dim(const char* name, const std::vector<int64_t>& v) {
  static const char* const kNames[3][3] = {{"width"}, {"height", "width"}, {"depth", "height", "width"}};
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? " " : "") << name << "_" << kNames[v.size() - 1][i] << ": " << v[i];
  return s.str();
}

// A kernel with a zero-size spatial dim, refused as torch refuses it. With an empty input
// torch 1.13 fails on its empty-input path, indexing an empty tensor (an IndexError); with
// a non-empty one its backend reports the kernel as it sees it (1-D runs as 2-D there).
void check_kernel_nonempty(const Tensor& input, const Tensor& weight, bool transposed) {
  const IntArrayRef w = weight.sizes();
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k > 0; })) return;
  TORCH_CHECK_INDEX(input.numel() != 0, "select(): index 0 out of range for tensor of size [0] at dimension 0");
  if (kernel.size() == 3) {
    TORCH_CHECK(!transposed, "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
                "kernel_width) tensor expected for weight, but got: ", w);
    TORCH_CHECK(false, "kernel size should be greater than zero, but got: ", join(kernel, " x "), " (TxHxW)");
  }
  if (kernel.size() == 1) kernel.insert(kernel.begin(), 1);
  TORCH_CHECK(false, "kernel size should be greater than zero, but got ", per_dim("kernel", kernel));
}

struct ConvSetup {
  ConvShape shape;
  std::vector<int64_t> output_sizes;
  c10::MemoryFormat format = c10::MemoryFormat::Contiguous;
};

// torch's check_shape_forward, then the forward convolution's geometry. For a transposed
// convolution the forward convolution runs from the output back to the input.
ConvSetup setup_convolution(const Tensor& input, const Tensor& weight, std::optional<IntArrayRef> bias_sizes,
                            IntArrayRef stride_, IntArrayRef padding_, IntArrayRef dilation_, bool transposed,
                            IntArrayRef output_padding_, int64_t groups) {
  TORCH_CHECK(weight.dim() >= 3, "weight should have at least three dimensions");
  const int spatial = static_cast<int>(weight.dim()) - 2;
  TORCH_CHECK(spatial <= 3, "convolution: only 1, 2 or 3 spatial dimensions are supported, but got weight of size ",
              weight.sizes());
  const auto stride = expand_param(stride_, "stride", spatial), padding = expand_param(padding_, "padding", spatial);
  const auto dilation = expand_param(dilation_, "dilation", spatial);
  const auto output_padding = expand_param(output_padding_, "output_padding", spatial);
  const IntArrayRef w = weight.sizes();
  TORCH_CHECK(groups > 0, "non-positive groups is not supported");
  for (int i = 0; i < spatial; ++i) {
    TORCH_CHECK(padding[i] >= 0, "negative padding is not supported");
    TORCH_CHECK(output_padding[i] >= 0, "negative output_padding is not supported");
    TORCH_CHECK(stride[i] > 0, "non-positive stride is not supported");
    // torch refuses a zero dilation only where there is work to do (in its backends), so an
    // empty input passes; a negative one always (current torch; 1.13 passed it when empty).
    TORCH_CHECK(dilation[i] > 0 || (dilation[i] == 0 && input.numel() == 0),
                "dilation should be greater than zero, but got ", IntArrayRef(dilation));
  }
  TORCH_CHECK(weight.dim() == input.dim(), "Expected ", weight.dim(), "-dimensional input for ", weight.dim(),
              "-dimensional weight ", w, ", but got ", input.dim(), "-dimensional input of size ", input.sizes(),
              " instead");
  TORCH_CHECK(w[0] >= groups, "Given groups=", groups, ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", w, " instead");
  TORCH_CHECK(w[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size [", w, "] instead");  // torch's doubled brackets
  ConvSetup c;
  ConvShape& s = c.shape;
  s.batch = input.size(0), s.groups = groups, s.spatial = spatial;
  for (int i = 0; i < spatial; ++i) {
    s.kernel[i] = w[i + 2], s.stride[i] = stride[i], s.padding[i] = padding[i], s.dilation[i] = dilation[i];
  }
  if (!transposed) {
    TORCH_CHECK(input.size(1) == w[1] * groups, "Given groups=", groups, ", weight of size ", w, ", expected input",
                input.sizes(), " to have ", w[1] * groups, " channels, but got ", input.size(1), " channels instead");
    TORCH_CHECK(!bias_sizes || (bias_sizes->size() == 1 && (*bias_sizes)[0] == w[0]), "Given weight of size ", w,
                ", expected bias to be 1-dimensional with ", w[0], " elements, but got bias of size ",
                bias_sizes.value_or(IntArrayRef()), " instead");
    std::vector<int64_t> padded, span;
    bool fits = true;
    for (int i = 0; i < spatial; ++i) {
      padded.push_back(input.size(i + 2) + 2 * padding[i]);
      span.push_back(dilation[i] * (w[i + 2] - 1) + 1);
      fits = fits && padded.back() >= span.back();
    }
    TORCH_CHECK(fits, "Calculated padded input size per channel: (", join(padded, " x "), "). Kernel size: (",
                join(span, " x "), "). Kernel size can't be greater than actual input size");
    s.src_channels = input.size(1), s.dst_channels = w[0];
    c.output_sizes = {input.size(0), w[0]};
    for (int i = 0; i < spatial; ++i) {
      s.src[i] = input.size(i + 2);
      s.dst[i] = conv_output_length(s.src[i], s.kernel[i], padding[i], stride[i], dilation[i]);
      c.output_sizes.push_back(s.dst[i]);
    }
  } else {
    TORCH_CHECK(input.size(1) == w[0], "Given transposed=1, weight of size ", w, ", expected input", input.sizes(),
                " to have ", w[0], " channels, but got ", input.size(1), " channels instead");
    TORCH_CHECK(!bias_sizes || (bias_sizes->size() == 1 && (*bias_sizes)[0] == w[1] * groups),
                "Given transposed=1, weight of size ", w, ", expected bias to be 1-dimensional with ", w[1] * groups,
                " elements, but got bias of size ", bias_sizes.value_or(IntArrayRef()), " instead");
    std::vector<int64_t> in_sizes, out_sizes;
    for (int i = 0; i < spatial; ++i) {
      // torch checks this in its backends, which an empty batch never reaches.
      TORCH_CHECK(input.numel() == 0 || output_padding[i] < stride[i] || output_padding[i] < dilation[i],
                  "output padding must be smaller than either stride or dilation, but got ",
                  per_dim("output_padding", output_padding), " ", per_dim("stride", stride), " ",
                  per_dim("dilation", dilation));
      s.dst[i] = input.size(i + 2);
      s.src[i] = conv_transpose_output_length(s.dst[i], s.kernel[i], padding[i], stride[i], dilation[i],
                                              output_padding[i]);
      in_sizes.push_back(s.dst[i]), out_sizes.push_back(s.src[i]);
    }
    bool positive = true;
    for (int64_t v : out_sizes) positive = positive && v > 0;
    TORCH_CHECK(positive, "Given input size per channel: (", join(in_sizes, " x "),
                "). Calculated output size per channel: (", join(out_sizes, " x "), "). Output size is too small");
    s.src_channels = w[1] * groups, s.dst_channels = w[0];
    c.output_sizes = {input.size(0), w[1] * groups};
    c.output_sizes.insert(c.output_sizes.end(), out_sizes.begin(), out_sizes.end());
  }
  check_kernel_nonempty(input, weight, transposed);
  if (input.dim() == 4 && (suggest_memory_format(input) == c10::MemoryFormat::ChannelsLast ||
                           suggest_memory_format(weight) == c10::MemoryFormat::ChannelsLast)) {
    c.format = c10::MemoryFormat::ChannelsLast;
  }
  return c;
}

void check_devices(const Tensor& a, const Tensor& b) {
  TORCH_CHECK(!b.defined() || a.device() == b.device(), "Expected all tensors to be on the same device, but found at "
              "least two devices, ", a.device(), " and ", b.device(), "!");
}

void check_dtypes(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  check_devices(input, weight);
  check_devices(input, bias);
  // torch 1.13's words; the weight (or bias) is the tensor found of the wrong type
  TORCH_CHECK(input.scalar_type() == weight.scalar_type(), "expected scalar type ", toString(input.scalar_type()),
              " but found ", toString(weight.scalar_type()));
  TORCH_CHECK(!bias.defined() || bias.scalar_type() == input.scalar_type(), "expected scalar type ",
              toString(input.scalar_type()), " but found ", toString(bias.scalar_type()));
  const c10::ScalarType t = input.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(!c10::isComplexType(t), "convolution: complex inputs are not supported in tessera yet");
  TORCH_CHECK(c10::isFloatingType(t), "\"convolution\" not implemented for '", toString(t), "'");
}

Tensor empty_in(IntArrayRef sizes, const Tensor& like, c10::MemoryFormat format) {
  return at::empty(sizes, TensorOptions().dtype(like.scalar_type()).device(like.device()), format);
}

Tensor as_float(const Tensor& t) { return t.defined() ? t.to(c10::kFloat) : t; }

// Runs a pass: oneDNN in the tensors' dtype first (float32, native bfloat16); what it
// refuses goes to the GEMM path, Half and BFloat16 in a float32 copy.
template <typename OneDnn, typename Gemm>
void run_pass(const Tensor& out, const Tensor& a, const Tensor& b, OneDnn onednn_pass, Gemm gemm_pass) {
  if (onednn_pass(out, a, b)) return;
  if (!c10::isReducedFloatingType(out.scalar_type())) {
    gemm_pass(out, a, b);
    return;
  }
  Tensor tmp = at::empty(out.sizes(), TensorOptions().dtype(c10::kFloat), suggest_memory_format(out));
  const Tensor fa = as_float(a), fb = as_float(b);
  if (!onednn_pass(tmp, fa, fb)) gemm_pass(tmp, fa, fb);
  out.copy_(tmp);
}

std::vector<int64_t> channel_view(const ConvShape& s, int64_t channels) {
  std::vector<int64_t> v(s.spatial + 2, 1);
  v[1] = channels;
  return v;
}

void forward_pass(const Tensor& dst, const Tensor& src, const Tensor& weight, const Tensor& bias,
                  const ConvShape& s) {
  run_pass(
      dst, src, weight,
      [&](const Tensor& out, const Tensor& x, const Tensor& w) {
        return onednn::conv_forward(out, x, w, bias.defined() ? bias.to(out.scalar_type()) : bias, s);
      },
      [&](const Tensor& out, const Tensor& x, const Tensor& w) {
        gemm_conv::conv_forward(out, x, w, s);
        if (bias.defined()) out.add_(bias.to(out.scalar_type()).view(channel_view(s, s.dst_channels)));
      });
}

void backward_data_pass(const Tensor& src_grad, const Tensor& dst_grad, const Tensor& weight, const ConvShape& s) {
  run_pass(
      src_grad, dst_grad, weight,
      [&](const Tensor& out, const Tensor& gy, const Tensor& w) { return onednn::conv_backward_data(out, gy, w, s); },
      [&](const Tensor& out, const Tensor& gy, const Tensor& w) { gemm_conv::conv_backward_data(out, gy, w, s); });
}

void backward_weights_pass(const Tensor& weight_grad, const Tensor& dst_grad, const Tensor& src, const ConvShape& s) {
  run_pass(
      weight_grad, dst_grad, src,
      [&](const Tensor& out, const Tensor& gy, const Tensor& x) { return onednn::conv_backward_weights(out, gy, x, s); },
      [&](const Tensor& out, const Tensor& gy, const Tensor& x) { gemm_conv::conv_backward_weights(out, gy, x, s); });
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias_opt,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  const Tensor bias = bias_opt.value_or(Tensor());
  std::optional<IntArrayRef> bias_sizes;
  if (bias.defined()) bias_sizes = bias.sizes();
  const ConvSetup c =
      setup_convolution(input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups);
  check_dtypes(input, weight, bias);
  Tensor out = empty_in(c.output_sizes, input, c.format);
  if (input.is_meta() || out.numel() == 0) return out;
  const ConvShape& s = c.shape;
  if (input.numel() == 0 || weight.numel() == 0) {  // no input channels: only the bias
    out.zero_();
    if (bias.defined()) out.add_(bias.view(channel_view(s, out.size(1))));
    return out;
  }
  const Tensor x = input.contiguous(c.format), w = weight.contiguous();
  if (!transposed) {
    forward_pass(out, x, w, bias, s);
  } else {
    backward_data_pass(out, x, w, s);
    if (bias.defined()) out.add_(bias.view(channel_view(s, out.size(1))));
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& weight, std::optional<IntArrayRef> bias_sizes,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool transposed, IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> output_mask) {
  const ConvSetup c =
      setup_convolution(input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups);
  check_dtypes(input, weight, Tensor());
  check_devices(input, grad_output);
  TORCH_CHECK(grad_output.sizes() == IntArrayRef(c.output_sizes), "convolution_backward: expected grad_output of size ",
              IntArrayRef(c.output_sizes), " (the convolution's output), but got ", grad_output.sizes());
  TORCH_CHECK(grad_output.scalar_type() == input.scalar_type(), "convolution_backward: grad_output type (",
              toString(grad_output.scalar_type()), ") and input type (", toString(input.scalar_type()),
              ") should be the same");
  Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = empty_in(input.sizes(), input, c.format);
  if (output_mask[1]) grad_weight = empty_in(weight.sizes(), weight, c10::MemoryFormat::Contiguous);
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < grad_output.dim(); ++d) dims.push_back(d);
    grad_bias = grad_output.sum(dims);
  }
  if (input.is_meta()) return {grad_input, grad_weight, grad_bias};
  const ConvShape& s = c.shape;
  if (input.numel() == 0 || grad_output.numel() == 0 || weight.numel() == 0) {
    if (grad_input.defined()) grad_input.zero_();
    if (grad_weight.defined()) grad_weight.zero_();
    return {grad_input, grad_weight, grad_bias};
  }
  const Tensor x = input.contiguous(c.format), w = weight.contiguous(), gy = grad_output.contiguous(c.format);
  if (!transposed) {
    if (grad_input.defined()) backward_data_pass(grad_input, gy, w, s);
    if (grad_weight.defined()) backward_weights_pass(grad_weight, gy, x, s);
  } else {  // the forward convolution runs from grad_output's shape to input's
    if (grad_input.defined()) forward_pass(grad_input, gy, w, Tensor(), s);
    if (grad_weight.defined()) backward_weights_pass(grad_weight, x, gy, s);
  }
  return {grad_input, grad_weight, grad_bias};
}

// ---------------------------------------------------------------- nn.functional forms

namespace {

// An unbatched input gets a batch dim of 1 (removed again from the result).
template <typename F>
Tensor batchified(const Tensor& input, int spatial, const char* op, F conv) {
  TORCH_CHECK(input.dim() == spatial + 1 || input.dim() == spatial + 2, "Expected ", spatial + 1,
              "D (unbatched) or ", spatial + 2, "D (batched) input to ", op, ", but got input of size: ",
              input.sizes());
  if (input.dim() == spatial + 2) return conv(input);
  return conv(input.unsqueeze(0)).squeeze(0);
}

Tensor conv_nd(int spatial, const char* op, const Tensor& input, const Tensor& weight,
               const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
               int64_t groups) {
  return batchified(input, spatial, op, [&](const Tensor& x) {
    const std::vector<int64_t> no_output_padding(static_cast<size_t>(spatial), 0);  // as torch spells it
    return at::convolution(x, weight, bias, stride, padding, dilation, false, no_output_padding, groups);
  });
}

// padding='same' (stride 1: output size = input size) or 'valid' (no padding). An odd
// total padding puts the extra element on the right, by padding the input first.
Tensor conv_nd_padding(int spatial, const char* op, const Tensor& input, const Tensor& weight,
                       const std::optional<Tensor>& bias, IntArrayRef stride, std::string_view padding,
                       IntArrayRef dilation, int64_t groups) {
  if (padding == "valid") {
    const std::vector<int64_t> zeros(static_cast<size_t>(spatial), 0);
    return conv_nd(spatial, op, input, weight, bias, stride, zeros, dilation, groups);
  }
  TORCH_CHECK(padding == "same", "Invalid padding string: '", padding, "'");
  return batchified(input, spatial, op, [&](const Tensor& x) {
    const auto strides = expand_param(stride, "stride", spatial), dilations = expand_param(dilation, "dilation", spatial);
    for (int64_t v : strides) TORCH_CHECK(v == 1, "padding='same' is not supported for strided convolutions");
    TORCH_CHECK(weight.dim() == spatial + 2, op, ": expected a ", spatial + 2, "-dimensional weight, but got weight "
                "of size ", weight.sizes());
    std::vector<int64_t> left(spatial), extra_right;
    bool symmetric = true;
    for (int i = spatial - 1; i >= 0; --i) {
      const int64_t total = dilations[i] * (weight.size(i + 2) - 1);
      left[i] = total / 2;
      extra_right.insert(extra_right.end(), {0, total - 2 * left[i]});
      symmetric = symmetric && total % 2 == 0;
    }
    const Tensor padded = symmetric ? x : at::constant_pad_nd(x, extra_right, 0);
    const std::vector<int64_t> no_output_padding(static_cast<size_t>(spatial), 0);
    return at::convolution(padded, weight, bias, stride, left, dilation, false, no_output_padding, groups);
  });
}

Tensor conv_transpose_nd(int spatial, const char* op, const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return batchified(input, spatial, op, [&](const Tensor& x) {
    return at::convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups);
  });
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv1d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd_padding(1, "conv1d", input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd_padding(2, "conv2d", input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd_padding(3, "conv3d", input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return conv_transpose_nd(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation);
}
Tensor conv_transpose2d_input(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                              IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                              IntArrayRef dilation) {
  return conv_transpose_nd(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation);
}
Tensor conv_transpose3d_input(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                              IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                              IntArrayRef dilation) {
  return conv_transpose_nd(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation);
}

// conv_tbc: a 1-D convolution over time-major (time, batch, channels) input with a
// (kernel width, in, out) weight, as conv1d on the permuted operands.
Tensor conv_tbc(const Tensor& self, const Tensor& weight, const Tensor& bias, int64_t pad) {
  TORCH_CHECK(self.dim() == 3, "Input must have 3 dims: time, batch, in_channel");
  TORCH_CHECK(weight.dim() == 3, "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.");
  TORCH_CHECK(bias.dim() == 1, "Bias must be 1-D");
  TORCH_CHECK(self.size(2) == weight.size(1), "Input dim 2 (input channels) is not == dim 1 in the weight tensor");
  TORCH_CHECK(weight.size(2) == bias.size(0), "Bias size must equal dim 2 in the weight tensor (output channels).");
  const int64_t out_time = self.size(0) + 2 * pad - weight.size(0) + 1;
  TORCH_CHECK(out_time >= 0, "Trying to create tensor with negative dimension ", out_time, ": [", out_time, ", ",
              self.size(1), ", ", weight.size(2), "]");
  const int64_t stride[1] = {1}, padding[1] = {pad}, dilation[1] = {1};
  return at::conv1d(self.permute({1, 2, 0}), weight.permute({2, 1, 0}), bias, stride, padding, dilation, 1)
      .permute({2, 0, 1})
      .contiguous();
}

}  // namespace at::inline tessera::native
