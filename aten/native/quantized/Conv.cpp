// quantized::conv{1,2,3}d_prepack / _unpack, conv{1,2,3}d and conv{1,2,3}d_relu as torch 1.13
// runs them on its default engine (oneDNN): a uint8 activation convolved with a prepacked
// qint8 weight whose zero points are 0, requantized into the output's qparams by the
// arithmetic of Note [Quantized linear arithmetic] (Linear.cpp). Results are channels-last,
// as torch's; conv1d runs as a convolution of unit height, as torch packs it (its params
// hold two spatial dimensions, and unpack gives the 4-d weight; conv1d_unpack the 3-d one).
#include <aten/core/QTensorImpl.h>
#include <aten/library.h>
#include <aten/native/quantized/PackedConv.h>
#include <aten/native/quantized/onednn/Int8Conv.h>

#include <aten/ops/Functions.h>

#include <algorithm>
#include <cmath>

namespace at::inline tessera::native {

namespace {

// The geometry argument as the packed weight keeps it: one entry per spatial dimension, a
// 1-d convolution's with a leading unit entry (`unit`: 1 for stride and dilation, 0 for
// padding). torch's 1-d prepack reads the second entry of a longer list (the quantized
// functional conv1d passes pairs).
std::vector<int64_t> spatial(IntArrayRef v, int64_t dims, int64_t unit, const char* what) {
  if (dims == 1) {
    TORCH_CHECK(!v.empty(), "Argument must have elements.");
    return {unit, v.size() == 1 ? v[0] : v[1]};
  }
  TORCH_CHECK(static_cast<int64_t>(v.size()) == dims, what, " should contain ", dims, " elements for ", dims,
              "D convolution.");
  return std::vector<int64_t>(v.begin(), v.end());
}

void check_weight(const Tensor& weight, const std::optional<Tensor>& bias, int64_t dims, int64_t groups,
                  const char* op) {
  check_packed_weight(weight, bias, dims + 2, op,
                      "quantized::qconv_prepack: ONEDNN only supports symmetric quantization of weight, whose zero "
                      "point must be 0.",
                      /*name_zero_point=*/false);
  TORCH_CHECK(groups > 0, op, ": groups must be positive, got ", groups);
  TORCH_CHECK(weight.size(0) % groups == 0, op, ": the output channels (", weight.size(0),
              ") must be divisible by groups (", groups, ")");
  if (bias.has_value()) {
    TORCH_CHECK(bias->dim() == 1 && bias->numel() == weight.size(0), "bias should have K elements: ", weight.size(0));
  }
}

ConvGeometry geometry_of(int64_t dims, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                         const char* op) {
  ConvGeometry g;
  g.stride = spatial(stride, dims, 1, "stride");
  g.padding = spatial(padding, dims, 0, "padding");
  g.dilation = spatial(dilation, dims, 1, "dilation");
  g.output_padding.assign(g.stride.size(), 0);
  g.groups = groups;
  for (size_t i = 0; i < g.stride.size(); ++i) {
    TORCH_CHECK(g.stride[i] > 0 && g.dilation[i] > 0 && g.padding[i] >= 0, op,
                ": strides and dilations must be positive and paddings non-negative");
  }
  return g;
}

template <class Packed>
c10::intrusive_ptr<Packed> prepack(int64_t dims, const Tensor& weight, const std::optional<Tensor>& bias,
                                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                                   const char* op) {
  check_weight(weight, bias, dims, groups, op);
  ConvGeometry g = geometry_of(dims, stride, padding, dilation, groups, op);
  return c10::make_intrusive<Packed>(dims == 1 ? weight.unsqueeze(2) : weight, bias, std::move(g));
}

using Conv2dPtr = c10::intrusive_ptr<Conv2dPackedParams>;
using Conv3dPtr = c10::intrusive_ptr<Conv3dPackedParams>;

Conv2dPtr conv1d_prepack(const Tensor& w, const std::optional<Tensor>& b, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, int64_t groups) {
  return prepack<Conv2dPackedParams>(1, w, b, stride, padding, dilation, groups, "quantized::conv1d_prepack");
}
Conv2dPtr conv2d_prepack(const Tensor& w, const std::optional<Tensor>& b, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, int64_t groups) {
  return prepack<Conv2dPackedParams>(2, w, b, stride, padding, dilation, groups, "quantized::conv2d_prepack");
}
Conv3dPtr conv3d_prepack(const Tensor& w, const std::optional<Tensor>& b, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, int64_t groups) {
  return prepack<Conv3dPackedParams>(3, w, b, stride, padding, dilation, groups, "quantized::conv3d_prepack");
}

std::tuple<Tensor, std::optional<Tensor>> conv1d_unpack(const Conv2dPtr& packed) {
  return {packed->weight().squeeze(2), packed->bias()};
}
std::tuple<Tensor, std::optional<Tensor>> conv2d_unpack(const Conv2dPtr& packed) { return packed->unpack(); }
std::tuple<Tensor, std::optional<Tensor>> conv3d_unpack(const Conv3dPtr& packed) { return packed->unpack(); }

// The convolution of x (rank `dims` + 2) with the packed weight, into (out_scale, out_zp).
Tensor run(int64_t dims, const Tensor& qx, const ConvPackedParamsBase& packed, double out_scale, int64_t out_zero_point,
           bool relu, const char* op) {
  // torch's words, its conv1d running as conv2d: "quantized::conv2d2d(): Expected ..."
  const int64_t packed_dims = std::max<int64_t>(dims, 2);
  TORCH_CHECK(qx.dim() == dims + 2, "quantized::conv", packed_dims, "d", packed_dims,
              "d(): Expected activation tensor to have ", packed_dims + 2, " dimensions, got ",
              qx.dim() + packed_dims - dims);
  TORCH_CHECK(qx.scalar_type() == c10::kQUInt8, "quantized::conv", packed_dims,
              "d (ONEDNN): data type of input should be QUint8.");
  const PerTensorAffineQuantizer& xq = per_tensor_quantizer(qx, op);
  check_packed_run(qx, packed.packed_weight(), out_scale, op);
  const Tensor x = dims == 1 ? qx.unsqueeze(2) : qx;
  const Tensor& w = packed.weight();
  const ConvGeometry& g = packed.geometry();
  TORCH_CHECK(x.size(1) == w.size(1) * g.groups, op, ": the input has ", x.size(1), " channels; the weight expects ",
              w.size(1) * g.groups, " (", w.size(1), " per group, ", g.groups, " groups)");
  std::vector<int64_t> sizes{x.size(0), w.size(0)};
  for (int64_t i = 0; i < w.dim() - 2; ++i) {
    const auto d = static_cast<size_t>(i);
    // a padded input smaller than the dilated kernel gives an empty result, as torch's does
    const int64_t extent = x.size(i + 2) + 2 * g.padding[d] - g.dilation[d] * (w.size(i + 2) - 1) - 1;
    sizes.push_back(extent < 0 ? 0 : extent / g.stride[d] + 1);
  }
  const MemoryFormat layout = w.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
  Tensor out =
      new_qtensor(sizes, layout, per_tensor_quantizer_for(c10::kQUInt8, out_scale, out_zero_point, op), qx.device());
  if (!out.is_meta() && out.numel() > 0) {
    const RequantizeScales scales = requantize_scales(xq.scale(), packed.packed_weight(), out_scale);
    onednn::int8_conv(integer_alias(out), integer_alias(x.contiguous(layout)), static_cast<int32_t>(xq.zero_point()),
                      packed, scales.output, bias_in_accumulator_units(packed.bias(), scales.prod),
                      static_cast<int32_t>(out_zero_point), relu);
  }
  return dims == 1 ? out.squeeze(2) : out;
}

template <int64_t Dims, bool Relu, class Ptr>
Tensor conv(const Tensor& qx, const Ptr& packed, double scale, int64_t zero_point) {
  static const std::string op = "quantized::conv" + std::to_string(Dims) + "d" + (Relu ? "_relu" : "");
  return run(Dims, qx, *packed, scale, zero_point, Relu, op.c_str());
}

// The geometry getters (quantized::conv2d_stride, ...): what the packed params keep.
template <class Ptr>
void register_geometry_getters(torch::Library& m, const std::string& prefix) {
  m.impl((prefix + "_stride").c_str(), [](const Ptr& p) { return p->geometry().stride; });
  m.impl((prefix + "_padding").c_str(), [](const Ptr& p) { return p->geometry().padding; });
  m.impl((prefix + "_dilation").c_str(), [](const Ptr& p) { return p->geometry().dilation; });
  m.impl((prefix + "_output_padding").c_str(), [](const Ptr& p) { return p->geometry().output_padding; });
  m.impl((prefix + "_groups").c_str(), [](const Ptr& p) { return p->geometry().groups; });
  m.impl((prefix + "_transpose").c_str(), [](const Ptr& p) { return static_cast<int64_t>(p->geometry().transpose); });
}

}  // namespace

c10::IValue conv_packed_state(const ConvPackedParamsBase& packed) {
  const ConvGeometry& g = packed.geometry();
  std::vector<int64_t> params{static_cast<int64_t>(g.stride.size())};
  for (const auto* v : {&g.stride, &g.padding, &g.dilation, &g.output_padding}) {
    params.insert(params.end(), v->begin(), v->end());
  }
  params.push_back(g.groups);
  params.push_back(g.transpose);
  Tensor params_tensor = at::empty({static_cast<int64_t>(params.size())}, TensorOptions().dtype(c10::kShort));
  for (size_t i = 0; i < params.size(); ++i) params_tensor.data_ptr<int16_t>()[i] = static_cast<int16_t>(params[i]);
  std::vector<c10::IValue> tensors{c10::IValue(params_tensor), c10::IValue(packed.weight())};
  std::vector<c10::IValue> biases{c10::IValue(packed.bias())};
  return c10::IValue::makeTuple({c10::IValue("2"), c10::IValue(std::move(tensors)), c10::IValue(std::move(biases))});
}

std::tuple<Tensor, std::optional<Tensor>, ConvGeometry> conv_from_state(const c10::IValue& state,
                                                                        int64_t spatial_dims) {
  constexpr const char* op = "ConvPackedParams.__setstate__";
  const auto items = state.toTupleElements();
  TORCH_CHECK(items.size() == 3 && items[0].isString() && items[0].toStringRef() == "2", op,
              ": expected a version 2 state (\"2\", [params, weight], [bias])");
  const auto tensors = items[1].toList();
  const auto biases = items[2].toList();
  TORCH_CHECK(tensors.size() == 2 && biases.size() == 1, op, ": expected [params, weight] and [bias]");
  const Tensor& raw_params = tensors[0].toTensor();
  TORCH_CHECK(raw_params.device().is_cpu() && !raw_params.is_quantized() &&
                  c10::isIntegralType(raw_params.scalar_type(), /*includeBool=*/false),
              op, ": the params must be an integer CPU tensor");
  const Tensor params = raw_params.to(c10::kLong).contiguous();
  const int64_t* p = params.data_ptr<int64_t>();
  TORCH_CHECK(params.numel() == 4 * spatial_dims + 3 && p[0] == spatial_dims, op, ": the params do not describe a ",
              spatial_dims, "-d convolution");
  TORCH_CHECK(p[4 * spatial_dims + 2] == 0, op, ": transposed convolutions are not supported");
  const Tensor weight = tensors[1].toTensor();
  const std::optional<Tensor> bias = biases[0].to<std::optional<Tensor>>();
  const auto dims = static_cast<size_t>(spatial_dims);
  auto slice = [&](int64_t k) { return IntArrayRef(p + 1 + k * spatial_dims, dims); };
  check_weight(weight, bias, spatial_dims, p[4 * spatial_dims + 1], op);
  return {weight, bias, geometry_of(spatial_dims, slice(0), slice(1), slice(2), p[4 * spatial_dims + 1], op)};
}

#define TESSERA_QUANTIZED_CONV_KERNELS(m)                          \
  m.impl("conv1d_prepack", TORCH_FN(conv1d_prepack));              \
  m.impl("conv2d_prepack", TORCH_FN(conv2d_prepack));              \
  m.impl("conv3d_prepack", TORCH_FN(conv3d_prepack));              \
  m.impl("conv1d", TORCH_FN((conv<1, false, Conv2dPtr>)));         \
  m.impl("conv1d_relu", TORCH_FN((conv<1, true, Conv2dPtr>)));     \
  m.impl("conv2d.new", TORCH_FN((conv<2, false, Conv2dPtr>)));     \
  m.impl("conv2d_relu.new", TORCH_FN((conv<2, true, Conv2dPtr>))); \
  m.impl("conv3d.new", TORCH_FN((conv<3, false, Conv3dPtr>)));     \
  m.impl("conv3d_relu.new", TORCH_FN((conv<3, true, Conv3dPtr>)))

TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) { TESSERA_QUANTIZED_CONV_KERNELS(m); }
TORCH_LIBRARY_IMPL(quantized, QuantizedMeta, m) { TESSERA_QUANTIZED_CONV_KERNELS(m); }
TORCH_LIBRARY_IMPL(quantized, CompositeImplicitAutograd, m) {
  m.impl("conv1d_unpack", TORCH_FN(conv1d_unpack));
  m.impl("conv2d_unpack", TORCH_FN(conv2d_unpack));
  m.impl("conv3d_unpack", TORCH_FN(conv3d_unpack));
  register_geometry_getters<Conv2dPtr>(m, "conv2d");
  register_geometry_getters<Conv3dPtr>(m, "conv3d");
}

}  // namespace at::inline tessera::native
