// PackedWeight.h: the weight's scales and the requantization factors; the oneDNN side is in
// onednn/Int8Common.cpp.
#include <aten/native/quantized/PackedWeight.h>

#include <aten/core/QTensorImpl.h>

#include <aten/ops/Functions.h>

#include <cmath>

namespace at::inline tessera::native {

namespace {

std::vector<float> inverted_scales(const Tensor& weight) {
  if (weight.qscheme() == c10::kPerTensorAffine) return {static_cast<float>(1.0 / weight.q_scale())};
  const Tensor scales = weight.q_per_channel_scales().to(c10::kDouble).contiguous();
  const double* s = scales.data_ptr<double>();
  std::vector<float> out(static_cast<size_t>(scales.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = 1.0f / static_cast<float>(s[i]);
  return out;
}

}  // namespace

PackedWeight::PackedWeight(Tensor weight) : weight_(std::move(weight)), inverse_scales_(inverted_scales(weight_)) {}

namespace {

// The first nonzero zero point, as (channel, zero point); channel -1 for a per-tensor weight.
struct NonzeroZeroPoint {
  int64_t channel, zero_point;
};

std::optional<NonzeroZeroPoint> nonzero_zero_point(const Tensor& weight) {
  if (weight.qscheme() == c10::kPerTensorAffine) {
    if (weight.q_zero_point() == 0) return std::nullopt;
    return NonzeroZeroPoint{-1, weight.q_zero_point()};
  }
  const Tensor zps = weight.q_per_channel_zero_points().to(c10::kLong).contiguous();
  const int64_t* z = zps.data_ptr<int64_t>();
  for (int64_t i = 0; i < zps.numel(); ++i) {
    if (z[i] != 0) return NonzeroZeroPoint{i, z[i]};
  }
  return std::nullopt;
}

}  // namespace

void check_packed_weight(const Tensor& weight, const std::optional<Tensor>& bias, int64_t dims, const char* op,
                         const char* zero_point_error, bool name_zero_point) {
  TORCH_CHECK(weight.is_quantized() && weight.scalar_type() == c10::kQInt8, op,
              " (onednn): the weight must be a qint8 tensor, got ", weight.scalar_type());
  TORCH_CHECK(weight.dim() == dims, "Weights are expected to have ", dims, " dimensions");
  for (int64_t d = 1; d < weight.dim(); ++d) {
    TORCH_CHECK(weight.size(d) > 0, op, ": the weight's sizes ", weight.sizes(), " leave nothing to multiply");
  }
  if (weight.qscheme() != c10::kPerTensorAffine) {
    TORCH_CHECK(weight.qscheme() == c10::kPerChannelAffine, op, " (onednn): the weight must be quantized per tensor ",
                "or per channel affine, got ", c10::toString(weight.qscheme()));
    TORCH_CHECK(weight.q_per_channel_axis() == 0, op, " (onednn): a per-channel weight must be quantized along ",
                "axis 0 (its output channels), got axis ", weight.q_per_channel_axis());
  }
  if (const auto nonzero = nonzero_zero_point(weight)) {
    TORCH_CHECK(!name_zero_point, zero_point_error, ", but got ", nonzero->zero_point,
                nonzero->channel < 0 ? "" : ", at index ",
                nonzero->channel < 0 ? std::string() : std::to_string(nonzero->channel));
    TORCH_CHECK(false, zero_point_error);
  }
  if (bias.has_value()) {
    TORCH_CHECK(!bias->is_quantized() && bias->scalar_type() == c10::kFloat, op,
                ": the bias must be a float32 tensor, got ", bias->scalar_type());
    TORCH_CHECK(bias->device() == weight.device(), op, ": the bias is on ", bias->device(), " and the weight on ",
                weight.device());
  }
}

void check_packed_run(const Tensor& x, const PackedWeight& weight, std::optional<double> out_scale, const char* op) {
  TORCH_CHECK(x.is_meta() || !weight.tensor().is_meta(), op, ": the packed weight is a meta tensor; a ", x.device(),
              " input needs a real one");
  if (out_scale) {
    TORCH_CHECK(std::isfinite(*out_scale) && *out_scale > 0, op, ": the output scale must be positive and finite, got ",
                *out_scale);
  }
}

RequantizeScales requantize_scales(double x_scale, const PackedWeight& weight, std::optional<double> out_scale) {
  const float sx = static_cast<float>(1.0 / x_scale);
  RequantizeScales s{weight.inverse_scales(), {}};
  s.output.resize(s.prod.size());
  const float so = out_scale ? static_cast<float>(1.0 / *out_scale) : 1.0f;
  for (size_t i = 0; i < s.prod.size(); ++i) {
    s.prod[i] = sx * s.prod[i];
    s.output[i] = so / s.prod[i];
  }
  return s;
}

Tensor bias_in_accumulator_units(const std::optional<Tensor>& bias, const std::vector<float>& prod) {
  if (!bias.has_value()) return Tensor();
  const Tensor b = bias->contiguous();
  const float* in = b.data_ptr<float>();
  Tensor out = at::empty({b.numel()}, TensorOptions().dtype(c10::kFloat));
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < b.numel(); ++i) o[i] = in[i] * prod[prod.size() == 1 ? 0 : static_cast<size_t>(i)];
  return out;
}

}  // namespace at::inline tessera::native
