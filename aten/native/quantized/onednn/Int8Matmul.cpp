// Int8Matmul.h: the zero points are given at run time, so one plan serves every zero point
// (torch's oneDNN engine bakes them in and keys its cache without them, which is how it comes
// to reuse stale ones). The scales of a quantized output are fixed in the plan: oneDNN 2.6
// picks its blocked (brgemm/AMX) int8 kernels only for constant scales, and takes a slower
// GEMM for run-time ones (~5x at 64 x 1024 x 1024). A float output (the dynamic forms, whose
// scales change with every input) keeps run-time scales.
#include <aten/native/quantized/onednn/Int8Matmul.h>

#include <aten/native/quantized/onednn/Int8Common.h>

#include <bit>

namespace at::inline tessera::native::onednn {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

PlanCache<Int8Primitive>& int8_matmul_cache() {
  static auto* cache = new PlanCache<Int8Primitive>();  // leaked: primitives outlive static teardown
  return *cache;
}

Int8Primitive build(int64_t m, int64_t k, int64_t n, dt out_type, const std::vector<float>& scales, bool has_bias,
                    bool relu) {
  Int8Primitive plan;
  plan.src = dnnl::memory::desc({m, k}, dt::u8, tag::ab);
  const dnnl::memory::desc any_weights({k, n}, dt::s8, tag::any);
  plan.dst = dnnl::memory::desc({m, n}, out_type, tag::ab);
  const bool quantized = out_type == dt::u8;
  const dnnl::primitive_attr attr =
      requantize_attr(scales.size() > 1 ? 1 << 1 : 0, quantized ? &scales : nullptr, quantized, relu);
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
  const bool quantized = out_type == dt::u8;
  Key key{m, k, n, static_cast<int64_t>(out_type), static_cast<int64_t>(scales.size()), bias.defined(), relu};
  if (quantized) {
    for (float s : scales) key.push_back(static_cast<int64_t>(std::bit_cast<uint32_t>(s)));
  }
  auto plan = int8_matmul_cache().get(key, [&] { return build(m, k, n, out_type, scales, bias.defined(), relu); });
  TORCH_CHECK(plan, "oneDNN has no int8 matmul for [", m, ", ", k, "] x [", k, ", ", n, "]");
  const dnnl::memory::desc plain_weight({k, n}, dt::s8, dnnl::memory::dims{1, k});  // [N, K] read as [K, N]
  execute_int8(*plan, x.data_ptr(), packed.packed_weight(), plain_weight, out.data_ptr(), bias,
               quantized ? nullptr : &scales, x_zero_point, quantized ? &out_zero_point : nullptr);
}

}  // namespace at::inline tessera::native::onednn
