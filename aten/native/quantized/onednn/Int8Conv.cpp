// Int8Conv.h: built with run-time zero points, so a plan serves every input zero point of
// its shape and scales, and every nonzero output zero point (a zero one has its own, faster
// plan); oneDNN 2.6 takes an int8 convolution's output scales only at creation, so they are
// part of the plan's key (as torch's engine keys its plans).
#include <aten/native/quantized/onednn/Int8Conv.h>

#include <aten/native/quantized/onednn/Int8Common.h>

#include <bit>

namespace at::inline tessera::native::onednn {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

PlanCache<Int8Primitive>& int8_conv_cache() {
  static auto* cache = new PlanCache<Int8Primitive>();  // leaked: primitives outlive static teardown
  return *cache;
}

dnnl::memory::dims contiguous_strides(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// A channels-last activation as oneDNN's nhwc / ndhwc. Described from its strides, a
// tensor with one channel (an image's input layer) reads as NCHW, the layouts being the
// same bytes, and oneDNN 2.6 then has only its reference int8 kernel (~500x slower).
dnnl::memory::desc channels_last_desc(const Tensor& t, dt type) {
  return dnnl::memory::desc(dnnl::memory::dims(t.sizes().begin(), t.sizes().end()), type,
                            t.dim() == 5 ? tag::acdeb : tag::acdb);
}

Int8Primitive build(const Tensor& out, const Tensor& x, const ConvPackedParamsBase& packed,
                    const std::vector<float>& scales, bool has_bias, bool relu, bool dst_zero_point) {
  const ConvGeometry& g = packed.geometry();
  Int8Primitive plan;
  plan.src = channels_last_desc(x, dt::u8);
  plan.dst = channels_last_desc(out, dt::u8);
  const dnnl::memory::desc any_weights = any_like(weight_desc(packed.weight(), g.groups, dt::s8));
  if (has_bias) plan.bias = dnnl::memory::desc({packed.out_channels()}, dt::f32, tag::a);
  dnnl::memory::dims dilates(g.dilation.begin(), g.dilation.end());
  for (auto& d : dilates) d -= 1;  // oneDNN counts the gaps
  const dnnl::memory::dims strides(g.stride.begin(), g.stride.end());
  const dnnl::memory::dims pad_l(g.padding.begin(), g.padding.end());
  // the right padding that makes oneDNN's output size the tensor's
  dnnl::memory::dims pad_r(pad_l.size());
  for (size_t i = 0; i < pad_r.size(); ++i) {
    const int64_t in = x.size(static_cast<int64_t>(i) + 2), k = packed.weight().size(static_cast<int64_t>(i) + 2);
    const int64_t out_size = out.size(static_cast<int64_t>(i) + 2);
    pad_r[i] = (out_size - 1) * strides[i] + (k - 1) * (dilates[i] + 1) + 1 - in - pad_l[i];
  }
  const dnnl::primitive_attr attr = requantize_attr(scales.size() > 1 ? 1 << 1 : 0, &scales, dst_zero_point, relu);
  const auto desc =
      has_bias
          ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            plan.src, any_weights, plan.bias, plan.dst, strides, dilates, pad_l, pad_r)
          : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            plan.src, any_weights, plan.dst, strides, dilates, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine());
  plan.primitive = dnnl::convolution_forward(pd);
  plan.weights = pd.weights_desc();
  plan.scratchpad = pd.scratchpad_desc();
  return plan;
}

}  // namespace

void int8_conv(const Tensor& out, const Tensor& x, int32_t x_zero_point, const ConvPackedParamsBase& packed,
               const std::vector<float>& scales, const Tensor& bias, int32_t out_zero_point, bool relu) {
  const ConvGeometry& g = packed.geometry();
  const MemoryFormat layout = x.dim() == 5 ? MemoryFormat::ChannelsLast3d : MemoryFormat::ChannelsLast;
  TORCH_INTERNAL_ASSERT(x.is_contiguous(layout) && out.is_contiguous(layout), "int8_conv takes channels-last tensors");
  // the scales are part of the plan (oneDNN 2.6's int8 convolutions fix them at creation)
  // a zero output zero point (every ReLU output, symmetric outputs) leaves oneDNN's dst zero-point
  // pass out: its kernels run ~2x faster without it
  const bool dst_zero_point = out_zero_point != 0;
  Key key{static_cast<int64_t>(scales.size()), bias.defined(), relu, dst_zero_point, g.groups};
  for (float s : scales) key.push_back(static_cast<int64_t>(std::bit_cast<uint32_t>(s)));
  append_layout(key, x);
  append_layout(key, out);
  append_layout(key, packed.weight());
  for (const auto* v : {&g.stride, &g.padding, &g.dilation}) key.insert(key.end(), v->begin(), v->end());
  auto plan = int8_conv_cache().get(key, [&] { return build(out, x, packed, scales, bias.defined(), relu, dst_zero_point); });
  TORCH_CHECK(plan, "oneDNN has no int8 convolution for input ", x.sizes(), " and weight ", packed.weight().sizes());
  // blocked_weight reorders from the weight's integers made contiguous
  const dnnl::memory::dims dims = weight_desc(packed.weight(), g.groups, dt::s8).dims();
  const dnnl::memory::desc plain_weight(dims, dt::s8, contiguous_strides(dims));
  execute_int8(*plan, x.data_ptr(), packed.packed_weight(), plain_weight, out.data_ptr(), bias, nullptr, x_zero_point,
               dst_zero_point ? &out_zero_point : nullptr);
}

}  // namespace at::inline tessera::native::onednn
