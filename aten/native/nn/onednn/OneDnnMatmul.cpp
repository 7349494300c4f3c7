// OneDnnMatmul.h: bfloat16 batched GEMM as one oneDNN matmul primitive per shape (cached),
// alpha as its output scale and beta as a sum post-op, so the product, the scaling and the
// accumulation into `out` are one pass with a single rounding to bfloat16.
#include <aten/native/nn/onednn/OneDnnMatmul.h>

#include <aten/core/Parallel.h>
#include <aten/native/nn/ConvUtils.h>
#include <aten/native/nn/onednn/OneDnnCommon.h>

#include <cstring>

namespace at::inline tessera::native::onednn {

namespace {

struct MatmulPlan {
  dnnl::matmul primitive;
  dnnl::memory::desc a, b, out, scratchpad;
};

PlanCache<MatmulPlan>& matmul_cache() {
  static auto* cache = new PlanCache<MatmulPlan>();  // leaked: primitives outlive static teardown
  return *cache;
}

int64_t bits_of(float v) {
  int32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

MatmulPlan build(const Tensor& out, const Tensor& a, const Tensor& b, float beta, float alpha) {
  using dt = dnnl::memory::data_type;
  MatmulPlan plan{{}, plain_desc(a, dt::bf16), plain_desc(b, dt::bf16), plain_desc(out, dt::bf16), {}};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(plan.a, plan.b, plan.out), attr, cpu_engine());
  plan.primitive = dnnl::matmul(pd);
  plan.scratchpad = pd.scratchpad_desc();
  return plan;
}

}  // namespace

bool matmul_bf16(const Tensor& out, const Tensor& a, const Tensor& b, float beta, float alpha) {
  if (!has_native_bf16()) return false;
  for (const Tensor* t : {&out, &a, &b}) {  // an expanded operand: the float path reads it
    for (int64_t d = 0; d < t->dim(); ++d) {
      if (t->stride(d) == 0 && t->size(d) > 1) return false;
    }
  }
  Key key{bits_of(alpha), bits_of(beta)};
  for (const Tensor* t : {&out, &a, &b}) append_layout(key, *t);
  auto plan = matmul_cache().get(key, [&] { return build(out, a, b, beta, alpha); });
  if (!plan) return false;
  init_num_threads();
  const dnnl::engine& engine = cpu_engine();
  dnnl::stream stream(engine);
  std::vector<Tensor> keep;
  plan->primitive.execute(stream, {{DNNL_ARG_SRC, dnnl::memory(plan->a, engine, a.data_ptr())},
                                   {DNNL_ARG_WEIGHTS, dnnl::memory(plan->b, engine, b.data_ptr())},
                                   {DNNL_ARG_DST, dnnl::memory(plan->out, engine, out.data_ptr())},
                                   {DNNL_ARG_SCRATCHPAD, blocked_memory(plan->scratchpad, keep)}});
  stream.wait();
  return true;
}

}  // namespace at::inline tessera::native::onednn
