// Int8Matmul.h: the primitive is built with run-time scales and zero points, so one plan per
// shape serves every module and qparams (torch's oneDNN engine bakes them in and keys its
// cache without the zero points, which is how it comes to reuse stale ones).
#include <aten/native/quantized/onednn/Int8Matmul.h>

#include <aten/core/Parallel.h>
#include <aten/native/quantized/onednn/Int8Common.h>

namespace at::inline tessera::native::onednn {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct Int8Plan {
  dnnl::matmul primitive;
  dnnl::memory::desc src, weights, bias, dst, scratchpad;
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
  const dnnl::primitive_attr attr = requantize_attr(scale_count > 1 ? 1 << 1 : 0, nullptr, out_type == dt::u8, relu);
  if (has_bias) plan.bias = dnnl::memory::desc({1, n}, dt::f32, tag::ab);
  const auto desc = has_bias ? dnnl::matmul::desc(plan.src, any_weights, plan.bias, plan.dst)
                             : dnnl::matmul::desc(plan.src, any_weights, plan.dst);
  const dnnl::matmul::primitive_desc pd(desc, attr, cpu_engine());
  plan.primitive = dnnl::matmul(pd);
  plan.weights = pd.weights_desc();
  plan.scratchpad = pd.scratchpad_desc();
  return plan;
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
  const dnnl::memory::desc plain_weight({k, n}, dt::s8, dnnl::memory::dims{1, k});  // [N, K] read as [K, N]
  auto weight = blocked_weight(packed.packed_weight(), plain_weight, plan->weights);
  init_num_threads();
  const dnnl::engine& engine = cpu_engine();
  std::vector<Tensor> keep;
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, dnnl::memory(plan->src, engine, x.data_ptr())},
      {DNNL_ARG_WEIGHTS, dnnl::memory(plan->weights, engine, weight->bytes.data_ptr())},
      {DNNL_ARG_DST, dnnl::memory(plan->dst, engine, out.data_ptr())},
      {DNNL_ARG_SCRATCHPAD, blocked_memory(plan->scratchpad, keep)}};
  add_requantize_args(args, &scales, &x_zero_point, out_type == dt::u8 ? &out_zero_point : nullptr);
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan->bias, engine, bias.data_ptr()));
  dnnl::stream stream(engine);
  plan->primitive.execute(stream, args);
  stream.wait();
}

}  // namespace at::inline tessera::native::onednn
