// Int8Matmul.h: the primitive is built with run-time scales and zero points, so one plan per
// shape serves every module and qparams (torch's oneDNN engine bakes them in and keys its
// cache without the zero points, which is how it comes to reuse stale ones).
#include <aten/native/quantized/onednn/Int8Matmul.h>

#include <aten/core/Parallel.h>
#include <aten/core/QTensorImpl.h>
#include <aten/native/nn/onednn/OneDnnCommon.h>

#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

struct LinearPackedParamsBase::BlockedWeight {
  dnnl::memory::desc desc;
  Tensor bytes;
};

namespace onednn {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct Int8Plan {
  dnnl::matmul primitive;
  dnnl::memory::desc src, weights, bias, dst, scales, scratchpad;
};

PlanCache<Int8Plan>& int8_cache() {
  static auto* cache = new PlanCache<Int8Plan>();  // leaked: primitives outlive static teardown
  return *cache;
}

Int8Plan build(int64_t m, int64_t k, int64_t n, dt out_type, int64_t scale_count, bool has_bias, bool relu) {
  Int8Plan plan;
  plan.src = dnnl::memory::desc({m, k}, dt::u8, tag::ab);
  const dnnl::memory::desc any_weights({k, n}, dt::s8, tag::any);
  plan.dst = dnnl::memory::desc({m, n}, out_type, tag::ab);
  plan.scales = dnnl::memory::desc({scale_count}, dt::f32, tag::a);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_output_scales(scale_count > 1 ? 1 << 1 : 0, {DNNL_RUNTIME_F32_VAL});
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (out_type == dt::u8) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  if (has_bias) plan.bias = dnnl::memory::desc({1, n}, dt::f32, tag::ab);
  const auto desc = has_bias ? dnnl::matmul::desc(plan.src, any_weights, plan.bias, plan.dst)
                             : dnnl::matmul::desc(plan.src, any_weights, plan.dst);
  const dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
  plan.primitive = dnnl::matmul(pd);
  plan.weights = pd.weights_desc();
  plan.scratchpad = pd.scratchpad_desc();
  return plan;
}

// The packed weight in the plan's layout, reordered from [N, K] int8 once per layout.
std::shared_ptr<const LinearPackedParamsBase::BlockedWeight> weight_for(const LinearPackedParamsBase& packed,
                                                                        const dnnl::memory::desc& layout) {
  auto blocked = packed.blocked_weight();
  if (blocked && blocked->desc == layout) return blocked;
  const Tensor plain = integer_alias(packed.weight()).contiguous();  // [N, K] int8
  const int64_t n = plain.size(0), k = plain.size(1);
  const dnnl::memory::desc plain_desc({k, n}, dt::s8, dnnl::memory::dims{1, k});
  auto made = std::make_shared<LinearPackedParamsBase::BlockedWeight>();
  made->desc = layout;
  made->bytes = at::empty({std::max<int64_t>(static_cast<int64_t>(layout.get_size()), 1)},
                          TensorOptions().dtype(c10::kByte));
  const dnnl::engine& engine = cpu_engine();
  dnnl::memory from(plain_desc, engine, plain.data_ptr());
  dnnl::memory to(layout, engine, made->bytes.data_ptr());
  dnnl::stream stream(engine);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
  packed.set_blocked_weight(made);
  return made;
}

}  // namespace

void int8_linear(const Tensor& out, const Tensor& x, int32_t x_zero_point, const LinearPackedParamsBase& packed,
                 const std::vector<float>& scales, const Tensor& bias, int32_t out_zero_point, bool relu) {
  const int64_t m = x.size(0), k = x.size(1), n = packed.out_features();
  const dt out_type = out.scalar_type() == c10::kFloat ? dt::f32 : dt::u8;
  const auto scale_count = static_cast<int64_t>(scales.size());
  const Key key{m, k, n, static_cast<int64_t>(out_type), scale_count, bias.defined(), relu};
  auto plan = int8_cache().get(key, [&] { return build(m, k, n, out_type, scale_count, bias.defined(), relu); });
  TORCH_CHECK(plan, "oneDNN has no int8 matmul for [", m, ", ", k, "] x [", k, ", ", n, "]");
  auto weight = weight_for(packed, plan->weights);
  init_num_threads();
  const dnnl::engine& engine = cpu_engine();
  const dnnl::memory::desc zero_point_desc({1}, dt::s32, tag::a);
  int32_t x_zp = x_zero_point, out_zp = out_zero_point;
  std::vector<Tensor> keep;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, dnnl::memory(plan->src, engine, x.data_ptr())},
      {DNNL_ARG_WEIGHTS, dnnl::memory(plan->weights, engine, weight->bytes.data_ptr())},
      {DNNL_ARG_DST, dnnl::memory(plan->dst, engine, out.data_ptr())},
      {DNNL_ARG_ATTR_OUTPUT_SCALES, dnnl::memory(plan->scales, engine, const_cast<float*>(scales.data()))},
      {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, dnnl::memory(zero_point_desc, engine, &x_zp)},
      {DNNL_ARG_SCRATCHPAD, blocked_memory(plan->scratchpad, keep)}};
  if (out_type == dt::u8) args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, dnnl::memory(zero_point_desc, engine, &out_zp));
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan->bias, engine, bias.data_ptr()));
  dnnl::stream stream(engine);
  plan->primitive.execute(stream, args);
  stream.wait();
}

}  // namespace onednn

std::shared_ptr<const LinearPackedParamsBase::BlockedWeight> LinearPackedParamsBase::blocked_weight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocked_;
}

void LinearPackedParamsBase::set_blocked_weight(std::shared_ptr<const BlockedWeight> blocked) const {
  std::lock_guard<std::mutex> lock(mutex_);
  blocked_ = std::move(blocked);
}

}  // namespace at::inline tessera::native
