// quantized::linear_prepack, linear_unpack, linear, linear_relu, linear_dynamic and
// linear_relu_dynamic as torch 1.13 runs them on its default engine (oneDNN): a uint8
// activation times a prepacked qint8 weight whose zero points are 0, requantized into the
// output's qparams, or for the dynamic forms quantized on the fly and returned in float.
#include <aten/core/Parallel.h>
#include <aten/core/QTensorImpl.h>
#include <aten/library.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/PackedLinear.h>
#include <aten/native/quantized/onednn/Int8Matmul.h>

#include <aten/ops/Functions.h>

#include <algorithm>
#include <cmath>

namespace at::inline tessera::native {

// Note [Quantized linear arithmetic]: torch's oneDNN engine hands oneDNN inverse scales
// (sx = f32(1.0 / x_scale), sw = f32(1.0 / w_scale), or 1.0f / float(w_scale[n]) per channel,
// so = f32(1.0 / out_scale)) and lets it requantize: with prod = f32(sx * sw),
//   v = f32(f32(f32(acc) + f32(bias * prod)) * f32(so / prod)),   relu: v = max(v, 0),
//   y = saturate(rne(f32(v + out_zero_point))),
// the bias staying a float in the accumulator's units and the zero point added as a float
// before rounding (an integer bias, an integer zero point, a double multiplier or an fma each
// change some results by one). The dynamic forms quantize x as rne(f32(f32(x * sx) + zp))
// and return f32(f32(f32(acc) + f32(bias * prod)) * f32(1 / prod)). The int8 matmul here is
// oneDNN's too, so the products are the same; on CPUs without VNNI oneDNN's int8 kernels
// saturate pairs of products to int16, in torch and here alike.

namespace {

void check_weight(const Tensor& weight, const std::optional<Tensor>& bias) {
  constexpr const char* op = "quantized::linear_prepack";
  TORCH_CHECK(weight.is_quantized(), op, ": the weight must be a quantized tensor (qint8), got ", weight.scalar_type());
  TORCH_CHECK(weight.dim() == 2, "The weight tensor for quantized::linear_prepack (onednn) should be 2-dimensional.");
  check_packed_weight(weight, bias, 2, op,
                      "quantized::linear_prepack: ONEDNN only supports symmetric quantization of weight, whose zero "
                      "point must be 0",
                      /*name_zero_point=*/true);
  if (bias.has_value()) {
    TORCH_CHECK(bias->numel() == weight.size(0), "bias should have N elements: ", weight.size(0), ", but got ",
                bias->numel());
  }
}

c10::intrusive_ptr<LinearPackedParamsBase> linear_prepack(const Tensor& weight, const std::optional<Tensor>& bias) {
  return LinearPackedParamsBase::prepack(weight, bias);
}

std::tuple<Tensor, std::optional<Tensor>> linear_unpack(const c10::intrusive_ptr<LinearPackedParamsBase>& packed) {
  return packed->unpack();
}

// What both forms check of x against the packed weight.
void check_input(const Tensor& x, const LinearPackedParamsBase& packed, const char* op) {
  TORCH_CHECK(x.dim() >= 1, "qlinear (ONEDNN): input dim should be at least 1, but got 0");
  TORCH_CHECK(x.size(-1) == packed.in_features(), op, ": the input's last dimension (", x.size(-1),
              ") does not match the weight's in_features (", packed.in_features(), ")");
}

std::vector<int64_t> output_sizes(const Tensor& x, int64_t n) {
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end() - 1);
  sizes.push_back(n);
  return sizes;
}

Tensor linear_static(const Tensor& x, const c10::intrusive_ptr<LinearPackedParamsBase>& packed, double out_scale,
                     int64_t out_zero_point, bool relu) {
  const char* op = relu ? "quantized::linear_relu" : "quantized::linear";
  TORCH_CHECK(x.scalar_type() == c10::kQUInt8, "qlinear (ONEDNN): data type of input should be QUint8.");
  const PerTensorAffineQuantizer& xq = per_tensor_quantizer(x, op);
  check_input(x, *packed, op);
  check_packed_run(x, packed->packed_weight(), out_scale, op);
  Tensor out = new_qtensor(output_sizes(x, packed->out_features()), MemoryFormat::Contiguous,
                           per_tensor_quantizer_for(c10::kQUInt8, out_scale, out_zero_point, op), x.device());
  if (out.is_meta() || out.numel() == 0) return out;
  const int64_t k = packed->in_features(), m = x.numel() / k, n = packed->out_features();
  const RequantizeScales scales = requantize_scales(xq.scale(), packed->packed_weight(), out_scale);
  onednn::int8_linear(integer_alias(out).view({m, n}), integer_alias(x.contiguous()).view({m, k}),
                      static_cast<int32_t>(xq.zero_point()), *packed, scales.output,
                      bias_in_accumulator_units(packed->bias(), scales.prod), static_cast<int32_t>(out_zero_point),
                      relu);
  return out;
}

Tensor linear(const Tensor& x, const c10::intrusive_ptr<LinearPackedParamsBase>& packed, double scale, int64_t zp) {
  return linear_static(x, packed, scale, zp, false);
}
Tensor linear_relu(const Tensor& x, const c10::intrusive_ptr<LinearPackedParamsBase>& packed, double scale,
                   int64_t zp) {
  return linear_static(x, packed, scale, zp, true);
}

Tensor linear_dynamic_impl(const Tensor& x, const c10::intrusive_ptr<LinearPackedParamsBase>& packed, bool reduce_range,
                           bool relu) {
  const char* op = relu ? "quantized::linear_relu_dynamic" : "quantized::linear_dynamic";
  TORCH_CHECK(x.scalar_type() == c10::kFloat, "qlinear_dynamic (ONEDNN): data type of input should be float.");
  TORCH_CHECK(x.dim() >= 2, "The dimension of input tensor should be larger than or equal to 2");
  check_input(x, *packed, op);
  check_packed_run(x, packed->packed_weight(), std::nullopt, op);
  Tensor out = at::empty(output_sizes(x, packed->out_features()), x.options());
  if (x.is_meta() || out.numel() == 0) return out;
  const int64_t k = packed->in_features(), m = x.numel() / k, n = packed->out_features();
  const Tensor xc = x.contiguous();
  const float* xs = xc.data_ptr<float>();
  const int64_t count = xc.numel();
  float x_min = count ? xs[0] : 0.0f, x_max = x_min;
  for (int64_t i = 1; i < count; ++i) x_min = std::min(x_min, xs[i]), x_max = std::max(x_max, xs[i]);
  // torch's ChooseQuantizationParams on [0, 255], [0, 127] with reduce_range; the scale stays a double
  const QParams qparams = choose_quantization_params(x_min, x_max, 0, reduce_range ? 127 : 255, false);
  const double scale = qparams.scale;
  const auto zero_point = static_cast<int32_t>(qparams.zero_point);
  const float sx = static_cast<float>(1.0 / scale), zp = static_cast<float>(zero_point);
  Tensor xq = at::empty({m, k}, TensorOptions().dtype(c10::kByte));
  uint8_t* q = xq.data_ptr<uint8_t>();
  at::parallel_for(0, count, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float scaled = xs[i] * sx;  // rounded to float before the zero point is added
      q[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(scaled + zp), 0.0f, 255.0f));
    }
  });
  const RequantizeScales scales = requantize_scales(scale, packed->packed_weight(), std::nullopt);
  onednn::int8_linear(out.view({m, n}), xq, zero_point, *packed, scales.output,
                      bias_in_accumulator_units(packed->bias(), scales.prod), 0, relu);
  return out;
}

Tensor linear_dynamic(const Tensor& x, const c10::intrusive_ptr<LinearPackedParamsBase>& packed, bool reduce_range) {
  return linear_dynamic_impl(x, packed, reduce_range, false);
}
Tensor linear_relu_dynamic(const Tensor& x, const c10::intrusive_ptr<LinearPackedParamsBase>& packed,
                           bool reduce_range) {
  return linear_dynamic_impl(x, packed, reduce_range, true);
}

}  // namespace

c10::intrusive_ptr<LinearPackedParamsBase> LinearPackedParamsBase::prepack(Tensor weight, std::optional<Tensor> bias) {
  check_weight(weight, bias);
  return c10::make_intrusive<LinearPackedParamsBase>(std::move(weight), std::move(bias));
}

TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) {
  m.impl("linear_prepack", TORCH_FN(linear_prepack));
  m.impl("linear", TORCH_FN(linear));
  m.impl("linear_relu", TORCH_FN(linear_relu));
}
TORCH_LIBRARY_IMPL(quantized, QuantizedMeta, m) {
  m.impl("linear_prepack", TORCH_FN(linear_prepack));
  m.impl("linear", TORCH_FN(linear));
  m.impl("linear_relu", TORCH_FN(linear_relu));
}
TORCH_LIBRARY_IMPL(quantized, CPU, m) {
  m.impl("linear_dynamic", TORCH_FN(linear_dynamic));
  m.impl("linear_relu_dynamic", TORCH_FN(linear_relu_dynamic));
}
TORCH_LIBRARY_IMPL(quantized, Meta, m) {
  m.impl("linear_dynamic", TORCH_FN(linear_dynamic));
  m.impl("linear_relu_dynamic", TORCH_FN(linear_relu_dynamic));
}
TORCH_LIBRARY_IMPL(quantized, CompositeImplicitAutograd, m) { m.impl("linear_unpack", TORCH_FN(linear_unpack)); }

}  // namespace at::inline tessera::native
