// The norms on quantized tensors, as torch 1.13 computes them (QuantizedCPU and
// QuantizedMeta). quantized::batch_norm, batch_norm1d/2d/3d and their _relu forms: the running
// statistics, the affine terms and both scales fold into one float map per channel, computed
// here as torch's Normalization.cpp computes it and applied by the per-ISA loop,
// Note [Quantized batch norm arithmetic]; the 2-d and 3-d results are channels-last whatever
// the input's layout, the 1-d one is contiguous (it runs as a [N, C, L, 1] image).
// quantized::layer_norm normalizes each row of the contiguous input from its integer
// statistics, Note [Quantized layer norm arithmetic]; its result is contiguous.
// quantized::group_norm and instance_norm (a group per channel) run torch's channels-last
// kernel on a 4-d channels-last input (result channels-last) and its contiguous one on the
// rest (result contiguous), Note [Quantized group norm arithmetic].
#include <aten/core/QTensorImpl.h>
#include <aten/library.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/nn/Normalization.h>
#include <aten/native/quantized/QuantizedNorm.h>
#include <aten/native/quantized/QuantizedOps.h>

#include <cmath>
#include <optional>
#include <vector>

namespace at::inline tessera::native {

DEFINE_DISPATCH(qbatch_norm_stub);
DEFINE_DISPATCH(qlayer_norm_stub);
DEFINE_DISPATCH(qgroup_norm_stub);

namespace {

void check_channels(const Tensor& t, int64_t channels, const char* message) {
  TORCH_CHECK(t.numel() == channels, message);
}

// A norm's float parameter (weight, bias, running statistics): float32, on the input's device.
void check_param(const Tensor& t, const Tensor& input) {
  if (!t.defined()) return;
  TORCH_CHECK(t.scalar_type() == c10::kFloat, "expected scalar type Float but found ", t.scalar_type());
  TORCH_CHECK(t.device() == input.device(),
              "Expected all tensors to be on the same device, but found at least two "
              "devices, ",
              input.device(), " and ", t.device(), "!");
}

std::vector<float> floats_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

// alpha and beta per channel, in torch's precision: inv_sigma in float from a double
// reciprocal, the scale ratio and the division by the output scale in double.
void fused_params(const Tensor& weight, const Tensor& bias, const Tensor& mean, const Tensor& var, double eps,
                  double in_scale, double out_scale, std::vector<float>& alpha, std::vector<float>& beta) {
  const std::vector<float> w = floats_of(weight), b = floats_of(bias), m = floats_of(mean), v = floats_of(var);
  alpha.resize(w.size());
  beta.resize(w.size());
  for (size_t c = 0; c < w.size(); ++c) {
    const auto inv_sigma = static_cast<float>(1.0 / static_cast<double>(std::sqrt(v[c] + static_cast<float>(eps))));
    alpha[c] = static_cast<float>(static_cast<double>(inv_sigma * w[c]) * (in_scale / out_scale));
    beta[c] = static_cast<float>(static_cast<double>(b[c] - (m[c] * inv_sigma) * w[c]) / out_scale);
  }
}

// The spatial rank the op runs at: its own, or (quantized::batch_norm) the input's.
int64_t spatial_rank(int64_t op_dims, const Tensor& qx) {
  if (op_dims == 1) {
    TORCH_CHECK(qx.dim() == 2 || qx.dim() == 3, "Expecting the input tensor of rank 2 or 3.");
    return 1;
  }
  if (op_dims > 1) {
    TORCH_CHECK(qx.dim() == op_dims + 2, "Expecting the input tensor of rank ", op_dims + 2, ".");
    return op_dims;
  }
  TORCH_CHECK(qx.dim() >= 2 && qx.dim() <= 5, "quantized::batch_norm only support 2d, 3d, 4d or 5d inputs.");
  return qx.dim() <= 3 ? 1 : qx.dim() - 2;
}

Tensor batch_norm_impl(int64_t op_dims, bool relu, const Tensor& qx, const std::optional<Tensor>& weight,
                       const std::optional<Tensor>& bias, const Tensor& mean, const Tensor& var, double eps,
                       double output_scale, int64_t output_zero_point) {
  TORCH_CHECK(weight.has_value() && weight->defined(), "Weight must be provided");
  TORCH_CHECK(bias.has_value() && bias->defined(), "Bias must be provided");
  if (qx.numel() == 0) return qx.clone();  // torch's early return: the input's qparams and layout
  const int64_t rank = spatial_rank(op_dims, qx);
  const int64_t channels = qx.size(1);
  check_channels(*weight, channels, "Expect weight size to match C");
  check_channels(*bias, channels, "Expect weight size to match C");  // torch's words for the bias too
  check_channels(mean, channels, "Mean size must match channel dimension");
  check_channels(var, channels, "Variance size must match channel dimension");
  for (const Tensor* t : {&*weight, &*bias, &mean, &var}) check_param(*t, qx);
  const PerTensorAffineQuantizer& xq = checked_per_tensor(qx, "q_batch_norm");
  // the 1-d form runs as an image [N, C, L, 1]
  Tensor x = qx;
  while (rank == 1 && x.dim() < 4) x = x.unsqueeze(-1);
  const MemoryFormat layout = x.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
  x = x.contiguous(layout);
  Tensor out = new_qtensor(
      x.sizes(), layout,
      c10::make_intrusive<PerTensorAffineQuantizer>(qx.scalar_type(), output_scale, output_zero_point), qx.device());
  if (!out.is_meta()) {
    std::vector<float> alpha, beta;
    fused_params(*weight, *bias, mean, var, eps, xq.scale(), output_scale, alpha, beta);
    // [pixels, C] views of the channels-last integers
    std::vector<int64_t> to_last{0};
    for (int64_t d = 2; d < x.dim(); ++d) to_last.push_back(d);
    to_last.push_back(1);
    const Tensor x_rows = integer_alias(x).permute(to_last).reshape({-1, channels});
    const Tensor out_rows = integer_alias(out).permute(to_last).reshape({-1, channels});
    qbatch_norm_stub(c10::DeviceType::CPU, out_rows, x_rows, xq.zero_point(), alpha.data(), beta.data(),
                     output_zero_point, relu);
  }
  if (rank > 1) return out;
  // back to the input's rank, strides as the [N, C, L, 1] result has them (as torch returns
  // it: a one-channel result keeps them), then contiguous
  while (out.dim() > qx.dim()) out = out.squeeze(-1);
  return out.contiguous();
}

template <int64_t Dims, bool Relu>
Tensor batch_norm_op(Tensor qx, std::optional<Tensor> weight, std::optional<Tensor> bias, Tensor mean, Tensor var,
                     double eps, double output_scale, int64_t output_zero_point) {
  return batch_norm_impl(Dims, Relu, qx, weight, bias, mean, var, eps, output_scale, output_zero_point);
}

Tensor layer_norm(Tensor input, std::vector<int64_t> normalized_shape, std::optional<Tensor> weight,
                  std::optional<Tensor> bias, double eps, double output_scale, int64_t output_zero_point) {
  const auto [rows, n] = layer_norm_rows(input, normalized_shape, weight, bias, c10::kFloat);
  for (const std::optional<Tensor>* t : {&weight, &bias}) {
    if (*t) check_param(**t, input);
  }
  const PerTensorAffineQuantizer& xq = checked_per_tensor(input, "quantized_layer_norm_kernel_impl");
  const Tensor x = input.contiguous();
  Tensor out = new_qtensor(
      x.sizes(), MemoryFormat::Contiguous,
      c10::make_intrusive<PerTensorAffineQuantizer>(x.scalar_type(), output_scale, output_zero_point), x.device());
  if (out.is_meta() || rows == 0) return out;
  const Tensor gamma = weight && weight->defined() ? weight->contiguous() : Tensor();
  const Tensor beta = bias && bias->defined() ? bias->contiguous() : Tensor();
  qlayer_norm_stub(c10::DeviceType::CPU, integer_alias(out).view({rows, n}), integer_alias(x).view({rows, n}),
                   xq.zero_point(), static_cast<float>(xq.scale()), gamma.defined() ? gamma.data_ptr<float>() : nullptr,
                   beta.defined() ? beta.data_ptr<float>() : nullptr, eps, static_cast<float>(output_scale),
                   output_zero_point);
  return out;
}

Tensor group_norm_impl(const Tensor& input, int64_t groups, const std::optional<Tensor>& weight,
                       const std::optional<Tensor>& bias, double eps, double output_scale, int64_t output_zero_point) {
  TORCH_CHECK(input.dim() >= 3, "Expected normalized_shape to be at least 3-dimensional");
  const auto quantizer = [&] {
    return c10::make_intrusive<PerTensorAffineQuantizer>(input.scalar_type(), output_scale, output_zero_point);
  };
  // torch returns an empty batch before looking at the rest
  if (input.size(0) == 0) return new_qtensor(input.sizes(), MemoryFormat::Contiguous, quantizer(), input.device());
  TORCH_CHECK(groups > 0, "Expected num_groups to be positive");
  const int64_t channels = input.size(1);
  TORCH_CHECK(channels > 0, "Expected 2nd dimension to be positive");
  TORCH_CHECK(channels % groups == 0, "Expected channels to be divisible by groups");
  const Tensor gamma = weight && weight->defined() ? weight->contiguous() : Tensor();
  const Tensor beta = bias && bias->defined() ? bias->contiguous() : Tensor();
  TORCH_CHECK(!gamma.defined() || gamma.numel() == channels, "Unexpected size of gamma");
  TORCH_CHECK(!beta.defined() || beta.numel() == channels, "Unexpected size of beta");
  for (const Tensor* t : {&gamma, &beta}) check_param(*t, input);
  const PerTensorAffineQuantizer& xq = checked_per_tensor(input, "quantized_groupnorm_nhwc_kernel");
  // torch's channels-last kernel takes every 4-d input that is channels-last contiguous
  const bool nhwc = input.dim() == 4 && input.is_contiguous(MemoryFormat::ChannelsLast);
  const Tensor x = nhwc ? input : input.contiguous();
  const MemoryFormat layout = nhwc && !input.is_contiguous() ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  Tensor out = new_qtensor(x.sizes(), layout, quantizer(), x.device());
  if (out.is_meta() || out.numel() == 0) return out;
  const int64_t batch = x.size(0), hw = x.numel() / (batch * channels);
  // [B, HxW, C] or [B, C, HxW] views of the integers (a one-channel or one-pixel tensor's
  // layouts are the same bytes)
  auto rows = [&](const Tensor& t) {
    const Tensor ints = integer_alias(t);
    return nhwc ? ints.permute({0, 2, 3, 1}).view({batch, hw, channels}) : ints.view({batch, channels, hw});
  };
  qgroup_norm_stub(c10::DeviceType::CPU, rows(out), rows(x), nhwc, groups, xq.zero_point(),
                   static_cast<float>(xq.scale()), gamma.defined() ? gamma.data_ptr<float>() : nullptr,
                   beta.defined() ? beta.data_ptr<float>() : nullptr, eps, static_cast<float>(output_scale),
                   output_zero_point);
  return out;
}

Tensor group_norm(Tensor input, int64_t num_groups, std::optional<Tensor> weight, std::optional<Tensor> bias,
                  double eps, double output_scale, int64_t output_zero_point) {
  return group_norm_impl(input, num_groups, weight, bias, eps, output_scale, output_zero_point);
}

Tensor instance_norm(Tensor input, std::optional<Tensor> weight, std::optional<Tensor> bias, double eps,
                     double output_scale, int64_t output_zero_point) {
  TORCH_CHECK(input.dim() >= 3, "Expected normalized_shape to be at least 3-dimensional");
  TORCH_CHECK(input.size(1) > 0, "Expected 2nd dimension to be positive");
  return group_norm_impl(input, input.size(1), weight, bias, eps, output_scale, output_zero_point);
}

void register_norms(torch::Library& m) {
  m.impl("group_norm", TORCH_FN(group_norm));
  m.impl("instance_norm", TORCH_FN(instance_norm));
  m.impl("layer_norm", TORCH_FN(layer_norm));
  m.impl("batch_norm", TORCH_FN((batch_norm_op<0, false>)));
  m.impl("batch_norm_relu", TORCH_FN((batch_norm_op<0, true>)));
  m.impl("batch_norm1d", TORCH_FN((batch_norm_op<1, false>)));
  m.impl("batch_norm1d_relu", TORCH_FN((batch_norm_op<1, true>)));
  m.impl("batch_norm2d", TORCH_FN((batch_norm_op<2, false>)));
  m.impl("batch_norm2d_relu", TORCH_FN((batch_norm_op<2, true>)));
  m.impl("batch_norm3d", TORCH_FN((batch_norm_op<3, false>)));
  m.impl("batch_norm3d_relu", TORCH_FN((batch_norm_op<3, true>)));
}

}  // namespace

TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) { register_norms(m); }
TORCH_LIBRARY_IMPL(quantized, QuantizedMeta, m) { register_norms(m); }

}  // namespace at::inline tessera::native
