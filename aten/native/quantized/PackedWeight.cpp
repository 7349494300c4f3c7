// PackedWeight.h: the weight's scales and the requantization factors; the oneDNN side is in
// onednn/Int8Common.cpp.
#include <aten/native/quantized/PackedWeight.h>

#include <aten/core/QTensorImpl.h>

#include <aten/ops/Functions.h>

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
