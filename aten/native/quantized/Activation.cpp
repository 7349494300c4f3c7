// The activations on quantized tensors: aten's relu, hardtanh, clamp, threshold, leaky_relu,
// hardsigmoid, sigmoid, tanh and gelu (their QuantizedCPU kernels, ops.yaml), and the
// quantized:: forms that take the output's qparams (relu6, hardswish, sigmoid, elu, celu,
// leaky_relu, clamp, threshold). The integer ones (relu, clamps) never leave the integers;
// the rest dequantize, apply the function and quantize (cpu/QuantizedOpsKernel.cpp).
#include <aten/core/QTensorImpl.h>
#include <aten/library.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>

#include <cmath>
#include <string_view>

namespace at::inline tessera::native {

DEFINE_DISPATCH(qunary_stub);

void check_not_sub_byte(const Tensor& q, const char* kernel) {
  TORCH_CHECK(!c10::isSubByteQIntType(q.scalar_type()), "\"", kernel, "\" not implemented for '", q.scalar_type(), "'");
}

const PerTensorAffineQuantizer& checked_per_tensor(const Tensor& q, const char* kernel) {
  check_not_sub_byte(q, kernel);
  // torch reads q_scale() first, whose check names the qscheme.
  TORCH_CHECK(get_quantizer(q)->qscheme() == c10::kPerTensorAffine,
              "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.");
  return static_cast<const PerTensorAffineQuantizer&>(*get_quantizer(q));
}

int64_t as_stored(c10::ScalarType qtype, int64_t zero_point) {
  switch (qtype) {
    case c10::kQUInt8:
      return static_cast<uint8_t>(zero_point);
    case c10::kQInt8:
      return static_cast<int8_t>(zero_point);
    default:
      return static_cast<int32_t>(zero_point);
  }
}

QAffine qaffine_of(const PerTensorAffineQuantizer& q) { return {static_cast<float>(q.scale()), q.zero_point()}; }

namespace {

const PerTensorAffineQuantizer& affine(const Tensor& q, const char* kernel = "quantized kernel") {
  return checked_per_tensor(q, kernel);
}

QAffine qaffine(const Tensor& q) { return qaffine_of(affine(q)); }

Tensor new_like(const Tensor& qx, double scale, int64_t zero_point, std::optional<MemoryFormat> format = std::nullopt) {
  return new_qtensor(qx.sizes(), format.value_or(suggest_memory_format(qx)),
                     c10::make_intrusive<PerTensorAffineQuantizer>(qx.scalar_type(), scale, zero_point), qx.device());
}

// The integer of `value` in qx's qparams (quantize_val).
int64_t quantized_value(const Tensor& qx, double value) {
  const auto& pt = affine(qx);
  const auto [qmin, qmax] = quantized_range(qx.scalar_type());
  const int64_t q =
      truncate_like_x86(static_cast<float>(pt.zero_point()) +
                        std::nearbyint(static_cast<float>(value) * (1.0f / static_cast<float>(pt.scale()))));
  return std::min(std::max(q, qmin), qmax);
}

// out's integers = qx's clamped to [lo, hi]; out may be qx.
void clamp_into(const Tensor& out, const Tensor& qx, int64_t lo, int64_t hi) {
  if (out.is_meta() || out.numel() == 0) return;
  qclamp_stub(c10::DeviceType::CPU, integer_alias(out), integer_alias(qx), lo, hi, false);
}

// clamp in qx's qparams; a missing bound is the dtype's.
Tensor clamp_impl(const Tensor& qx, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                  const char* kernel) {
  TORCH_CHECK(min || max, "At least one of 'min' or 'max' must not be None");
  const auto& pt = affine(qx, kernel);
  const auto [qmin, qmax] = quantized_range(qx.scalar_type());
  const int64_t lo = min ? quantized_value(qx, min->toFloat()) : qmin;
  const int64_t hi = max ? quantized_value(qx, max->toFloat()) : qmax;
  Tensor out = new_like(qx, pt.scale(), pt.zero_point());
  // torch: min(max(q, lo), hi), so hi wins where the bounds cross
  clamp_into(out, qx, std::min(lo, hi), hi);
  return out;
}

// The 1 / scale each torch kernel hands its 8-bit vector loop: computed in double from the
// double scale (sigmoid, tanh, hardsigmoid, hardswish), in double from the float scale
// (threshold, elu, gelu), or in float (leaky_relu).
float vector_inverse(QUnaryOp op, double scale) {
  switch (op) {
    case QUnaryOp::LeakyRelu:
      return 1.0f / static_cast<float>(scale);
    case QUnaryOp::Threshold:
    case QUnaryOp::Elu:
    case QUnaryOp::Gelu:
    case QUnaryOp::GeluTanh:
      return static_cast<float>(1.0 / static_cast<double>(static_cast<float>(scale)));
    default:
      return static_cast<float>(1.0 / scale);
  }
}

// torch's name for each function's kernel, which its errors quote.
const char* kernel_name(QUnaryOp op) {
  switch (op) {
    case QUnaryOp::Sigmoid:
      return "qsigmoid";
    case QUnaryOp::Tanh:
      return "qtanh";
    case QUnaryOp::Hardsigmoid:
      return "qhardsigmoid";
    case QUnaryOp::Hardswish:
      return "qhardswish";
    case QUnaryOp::LeakyRelu:
      return "leaky_qrelu";
    case QUnaryOp::Elu:
      return "qelu_kernel";
    case QUnaryOp::Gelu:
    case QUnaryOp::GeluTanh:
      return "qgelu";
    case QUnaryOp::Threshold:
      return "threshold";
    default:
      return "quantized kernel";
  }
}

void run_unary(QUnaryOp op, QUnaryArgs args, const Tensor& out, const Tensor& qx) {
  affine(qx, kernel_name(op));
  if (out.is_meta() || out.numel() == 0) return;
  args.vector_inv_scale = vector_inverse(op, affine(out).scale());
  qunary_stub(c10::DeviceType::CPU, op, args, integer_alias(out), qaffine(out), integer_alias(qx), qaffine(qx));
}

Tensor unary_with_qparams(QUnaryOp op, const QUnaryArgs& args, const Tensor& qx, double scale, int64_t zero_point,
                          std::optional<MemoryFormat> format = std::nullopt) {
  affine(qx, kernel_name(op));
  Tensor out = new_like(qx, scale, zero_point, format);
  run_unary(op, args, out, qx);
  return out;
}

// The fixed output qparams torch gives functions onto [0, 1] (sigmoid, hardsigmoid) and
// [-1, 1] (tanh): the dtype's whole range.
std::pair<double, int64_t> unit_range_qparams(c10::ScalarType qtype, bool symmetric) {
  if (symmetric) {
    if (qtype == c10::kQInt32) return {4.656612873077393e-10, 0};
    return {0.0078125, qtype == c10::kQUInt8 ? 128 : 0};
  }
  if (qtype == c10::kQInt32) return {2.3283064365386963e-10, 0};
  return {0.00390625, qtype == c10::kQInt8 ? -128 : 0};
}

// Writes `result` into out (aten's out= and in-place forms): out takes the result's integers
// in its own qparams when they match, as copy_ between quantized tensors does.
Tensor& assign(Tensor& out, const Tensor& result) {
  out.copy_(result);
  return out;
}

}  // namespace

// ---- aten

Tensor relu_quantized(const Tensor& self) {
  const auto& pt = affine(self, "qrelu");
  Tensor out = new_like(self, pt.scale(), pt.zero_point());
  clamp_into(out, self, as_stored(self.scalar_type(), pt.zero_point()), quantized_range(self.scalar_type()).second);
  return out;
}

Tensor& relu_quantized_(Tensor& self) {
  const auto& pt = affine(self, "qrelu");
  clamp_into(self, self, as_stored(self.scalar_type(), pt.zero_point()), quantized_range(self.scalar_type()).second);
  return self;
}

Tensor clamp_quantized(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp_impl(self, min, max, "clamp");
}

Tensor hardtanh_quantized(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return clamp_impl(self, min_val, max_val, "qclamp");
}

Tensor& hardtanh_quantized_(Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return assign(self, clamp_impl(self, min_val, max_val, "qclamp"));
}

Tensor& hardtanh_out_quantized(const Tensor& self, const Scalar& min_val, const Scalar& max_val, Tensor& out) {
  return assign(out, clamp_impl(self, min_val, max_val, "qclamp"));
}

Tensor threshold_quantized(const Tensor& self, const Scalar& threshold, const Scalar& value) {
  const auto& pt = affine(self, "threshold");
  QUnaryArgs args;
  args.alpha = threshold.toFloat();
  args.beta = value.toFloat();
  return unary_with_qparams(QUnaryOp::Threshold, args, self, pt.scale(), pt.zero_point());
}

Tensor leaky_relu_quantized(const Tensor& self, const Scalar& negative_slope) {
  const auto& pt = affine(self, "leaky_qrelu");
  QUnaryArgs args;
  args.alpha = negative_slope.toFloat();
  // torch makes the input dense first, which decides how its rows split between its loops
  return unary_with_qparams(QUnaryOp::LeakyRelu, args, self.contiguous(suggest_memory_format(self)), pt.scale(),
                            pt.zero_point());
}

Tensor& leaky_relu_quantized_(Tensor& self, const Scalar& negative_slope) {
  QUnaryArgs args;
  args.alpha = negative_slope.toFloat();
  run_unary(QUnaryOp::LeakyRelu, args, self, self);
  return self;
}

Tensor& leaky_relu_out_quantized(const Tensor& self, const Scalar& negative_slope, Tensor& out) {
  affine(self, "leaky_qrelu");
  affine(out);
  TORCH_CHECK(out.scalar_type() == self.scalar_type() && out.sizes() == self.sizes(),
              "leaky_relu.out: out must be a quantized tensor of self's dtype and shape");
  QUnaryArgs args;
  args.alpha = negative_slope.toFloat();
  run_unary(QUnaryOp::LeakyRelu, args, out, self);
  return out;
}

Tensor hardsigmoid_quantized(const Tensor& self) {
  affine(self, "qhardsigmoid");
  const auto [scale, zero_point] = unit_range_qparams(self.scalar_type(), false);
  return unary_with_qparams(QUnaryOp::Hardsigmoid, {}, self, scale, zero_point);
}

Tensor& hardsigmoid_out_quantized(const Tensor& self, Tensor& out) { return assign(out, hardsigmoid_quantized(self)); }

// self takes the result and its [0, 1] qparams (a copy carries them)
Tensor& hardsigmoid_quantized_(Tensor& self) { return assign(self, hardsigmoid_quantized(self)); }

Tensor sigmoid_quantized(const Tensor& self) {
  affine(self, "qsigmoid");
  const auto [scale, zero_point] = unit_range_qparams(self.scalar_type(), false);
  return unary_with_qparams(QUnaryOp::Sigmoid, {}, self, scale, zero_point);
}

Tensor tanh_quantized(const Tensor& self) {
  affine(self, "qtanh");
  const auto [scale, zero_point] = unit_range_qparams(self.scalar_type(), true);
  return unary_with_qparams(QUnaryOp::Tanh, {}, self, scale, zero_point);
}

Tensor gelu_quantized(const Tensor& self, std::string_view approximate) {
  const auto& pt = affine(self, "qgelu");
  TORCH_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  // torch's output scale is the input's rounded to float
  return unary_with_qparams(approximate == "tanh" ? QUnaryOp::GeluTanh : QUnaryOp::Gelu, {}, self,
                            static_cast<double>(static_cast<float>(pt.scale())), pt.zero_point());
}

}  // namespace at::inline tessera::native

// ---- quantized::

namespace {
namespace qn = at::native;
using at::Scalar;
using at::Tensor;
using qn::QUnaryArgs;
using qn::QUnaryOp;

Tensor relu6(const Tensor& qx, bool inplace) {
  const auto& pt = qn::affine(qx, "qclamp");
  // hardtanh(0, 6): min(max(q, q(0)), q(6)), the bounds quantized as values
  const int64_t zero = qn::quantized_value(qx, 0.0), six = qn::quantized_value(qx, 6.0);
  Tensor out = inplace ? qx : qn::new_like(qx, pt.scale(), pt.zero_point());
  qn::clamp_into(out, qx, std::min(zero, six), six);
  return out;
}

Tensor hardswish(const Tensor& input, double output_scale, int64_t output_zero_point) {
  return qn::unary_with_qparams(QUnaryOp::Hardswish, {}, input, output_scale, output_zero_point);
}

Tensor sigmoid(const Tensor& qx, double output_scale, int64_t output_zero_point) {
  return qn::unary_with_qparams(QUnaryOp::Sigmoid, {}, qx, output_scale, output_zero_point);
}

Tensor elu(const Tensor& self, double output_scale, int64_t output_zero_point, const Scalar& alpha, const Scalar& scale,
           const Scalar& input_scale) {
  QUnaryArgs args;
  args.alpha = alpha.toFloat();
  args.beta = scale.toFloat();
  args.gamma = input_scale.toFloat();
  // torch's elu output is contiguous whatever the input's layout
  return qn::unary_with_qparams(QUnaryOp::Elu, args, self, output_scale, output_zero_point,
                                at::MemoryFormat::Contiguous);
}

// celu(x) = elu(x, alpha, scale=1, input_scale=1/alpha)
Tensor celu(const Tensor& self, double output_scale, int64_t output_zero_point, const Scalar& alpha) {
  return elu(self, output_scale, output_zero_point, alpha, Scalar(1.0), Scalar(1.0 / alpha.toDouble()));
}

Tensor leaky_relu(const Tensor& qx, const Scalar& negative_slope, bool /*inplace*/, double output_scale,
                  int64_t output_zero_point) {
  QUnaryArgs args;
  args.alpha = negative_slope.toFloat();
  // torch ignores inplace=True here (it warns that it is not supported) and returns a new tensor;
  // it makes the input dense first, which decides how its rows split between its loops
  return qn::unary_with_qparams(QUnaryOp::LeakyRelu, args, qx.contiguous(qn::suggest_memory_format(qx)), output_scale,
                                output_zero_point);
}

Tensor clamp(const Tensor& qx, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return qn::clamp_impl(qx, min, max, "clamp");
}

Tensor threshold(const Tensor& qx, const Scalar& threshold, const Scalar& value) {
  return qn::threshold_quantized(qx, threshold, value);
}

void register_activations(torch::Library& m) {
  m.impl("relu6", TORCH_FN(relu6));
  m.impl("hardswish", TORCH_FN(hardswish));
  m.impl("sigmoid", TORCH_FN(sigmoid));
  m.impl("elu", TORCH_FN(elu));
  m.impl("celu", TORCH_FN(celu));
  m.impl("leaky_relu", TORCH_FN(leaky_relu));
  m.impl("clamp", TORCH_FN(clamp));
  m.impl("threshold", TORCH_FN(threshold));
}
}  // namespace

TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) { register_activations(m); }
TORCH_LIBRARY_IMPL(quantized, QuantizedMeta, m) { register_activations(m); }
