// Convolution on oneDNN 2.6 (its v2 API: op descriptor -> primitive descriptor ->
// primitive). A plan (primitive plus the reorders between the tensors' plain layouts and
// the blocked layouts oneDNN picks) is built once per shape and kept in an LRU cache, so
// a repeated call only executes. oneDNN runs on the same OpenMP threads as at::parallel_for.
#include <aten/core/Parallel.h>
#include <aten/native/nn/ConvUtils.h>
#include <aten/native/nn/onednn/OneDnnCommon.h>

#include <aten/ops/Functions.h>

#include <optional>
#include <vector>

namespace at::inline tessera::native::onednn {

namespace {

using dnnl::memory;

std::optional<memory::data_type> dnnl_type(c10::ScalarType t) {
  if (t == c10::kFloat) return memory::data_type::f32;
  if (t == c10::kBFloat16 && has_native_bf16()) return memory::data_type::bf16;
  return std::nullopt;
}

// One operand of a plan: the argument slot, the user's layout and the primitive's, and
// the reorder between them (with its scratchpad's size) when they differ.
struct Operand {
  int arg = 0;
  memory::desc user, inner;
  std::optional<dnnl::reorder> reorder;
  memory::desc reorder_scratchpad;

  void link(bool is_output) {
    if (inner == user) return;
    const dnnl::engine& e = cpu_engine();
    const auto pd = is_output ? dnnl::reorder::primitive_desc(e, inner, e, user, user_scratchpad())
                              : dnnl::reorder::primitive_desc(e, user, e, inner, user_scratchpad());
    reorder = dnnl::reorder(pd);
    reorder_scratchpad = pd.scratchpad_desc();
  }
};

struct Plan {
  dnnl::primitive primitive;
  memory::desc scratchpad;
  std::vector<Operand> inputs;  // bias, when present, is last and always plain
  Operand output;
};

PlanCache<Plan>& plan_cache() {
  static auto* cache = new PlanCache<Plan>();  // leaked: primitives outlive static teardown
  return *cache;
}

enum class Pass : int64_t { forward, backward_data, backward_weights };

struct Geometry {
  memory::dims strides, dilates, pad_l, pad_r;
  // Activations stay in the tensors' layouts for an ungrouped convolution of fewer than 8
  // input channels (images): oneDNN's GEMM kernel on plain data then beats reordering to
  // the blocked layout and back (3 channels: ~3x; at 8 the blocked kernel wins). Grouped
  // and depthwise convolutions go blocked whatever their channels per group: oneDNN's
  // depthwise kernels exist for blocked layouts only, and on plain data it falls back to a
  // reference loop (MobileNet's 5x5 depthwise layers: 10-30x slower).
  bool plain_activations;
  memory::desc activation(const memory::desc& d) const { return plain_activations ? d : any_like(d); }

  explicit Geometry(const ConvShape& s) : plain_activations(s.groups == 1 && s.src_channels < 8) {
    for (int i = 0; i < s.spatial; ++i) {
      strides.push_back(s.stride[i]);
      dilates.push_back(s.dilation[i] - 1);  // oneDNN counts the gaps
      pad_l.push_back(s.padding[i]);
      pad_r.push_back(s.padding_right(i));
    }
  }
};

dnnl::convolution_forward::primitive_desc forward_desc(const memory::desc& src, const memory::desc& w,
                                                       const memory::desc* bias, const memory::desc& dst,
                                                       const Geometry& g) {
  const auto kind = dnnl::prop_kind::forward_training;
  const auto algo = dnnl::algorithm::convolution_direct;  // torch's choice; Winograd is ~6x less accurate
  auto desc = bias ? dnnl::convolution_forward::desc(kind, algo, g.activation(src), any_like(w), *bias, g.activation(dst),
                                                     g.strides, g.dilates, g.pad_l, g.pad_r)
                   : dnnl::convolution_forward::desc(kind, algo, g.activation(src), any_like(w), g.activation(dst), g.strides,
                                                     g.dilates, g.pad_l, g.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, user_scratchpad(), cpu_engine());
}

Operand operand(int arg, const memory::desc& user, const memory::desc& inner, bool is_output) {
  Operand o{arg, user, inner, std::nullopt, memory::desc()};
  o.link(is_output);
  return o;
}

void run_reorder(const Operand& o, dnnl::stream& stream, const memory& from, const memory& to,
                 std::vector<Tensor>& keep) {
  o.reorder->execute(stream, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to},
                              {DNNL_ARG_SCRATCHPAD, blocked_memory(o.reorder_scratchpad, keep)}});
}

// Runs a plan on the tensors' memory (inputs in plan order, then the output).
void execute(const Plan& plan, const std::vector<const Tensor*>& inputs, const Tensor& output) {
  init_num_threads();
  const dnnl::engine& engine = cpu_engine();
  dnnl::stream stream(engine);
  std::vector<Tensor> keep;
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const Operand& o = plan.inputs[i];
    memory user(o.user, engine, inputs[i]->data_ptr());
    if (!o.reorder) {
      args.emplace(o.arg, user);
      continue;
    }
    memory inner = blocked_memory(o.inner, keep);
    run_reorder(o, stream, user, inner, keep);
    args.emplace(o.arg, inner);
  }
  memory user_out(plan.output.user, engine, output.data_ptr());
  memory inner_out = plan.output.reorder ? blocked_memory(plan.output.inner, keep) : user_out;
  args.emplace(plan.output.arg, inner_out);
  args.emplace(DNNL_ARG_SCRATCHPAD, blocked_memory(plan.scratchpad, keep));
  plan.primitive.execute(stream, args);
  if (plan.output.reorder) run_reorder(plan.output, stream, inner_out, user_out, keep);
  stream.wait();
}

Key make_key(Pass pass, c10::ScalarType type, const ConvShape& s, std::initializer_list<const Tensor*> tensors) {
  Key key{static_cast<int64_t>(pass), static_cast<int64_t>(type), s.groups, s.spatial};
  for (int i = 0; i < s.spatial; ++i) {
    key.insert(key.end(), {s.stride[i], s.padding[i], s.dilation[i], s.src[i], s.dst[i]});
  }
  for (const Tensor* t : tensors) {
    if (t->defined()) append_layout(key, *t);
    else key.push_back(-1);
  }
  return key;
}

bool dense(const Tensor& t) {
  return t.is_contiguous() || t.is_contiguous(c10::MemoryFormat::ChannelsLast);
}

}  // namespace

bool has_native_bf16() {
  static const bool native = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (isa & bf16) == bf16;
  }();
  return native;
}

size_t cached_plan_count() { return plan_cache().usable(); }

bool conv_forward(const Tensor& dst, const Tensor& src, const Tensor& weight, const Tensor& bias, const ConvShape& s) {
  const auto type = dnnl_type(src.scalar_type());
  if (!type || !dense(src) || !dense(dst) || !weight.is_contiguous()) return false;
  const Key key = make_key(Pass::forward, src.scalar_type(), s, {&dst, &src, &weight, &bias});
  auto plan = plan_cache().get(key, [&] {
    const memory::desc src_md = plain_desc(src, *type), w_md = weight_desc(weight, s.groups, *type),
                       dst_md = plain_desc(dst, *type);
    std::optional<memory::desc> bias_md;
    if (bias.defined()) bias_md = plain_desc(bias, *type);
    const auto pd = forward_desc(src_md, w_md, bias_md ? &*bias_md : nullptr, dst_md, Geometry(s));
    Plan p{dnnl::convolution_forward(pd), pd.scratchpad_desc(), {}, {}};
    p.inputs.push_back(operand(DNNL_ARG_SRC, src_md, pd.src_desc(), false));
    p.inputs.push_back(operand(DNNL_ARG_WEIGHTS, w_md, pd.weights_desc(), false));
    if (bias_md) p.inputs.push_back(operand(DNNL_ARG_BIAS, *bias_md, *bias_md, false));
    p.output = operand(DNNL_ARG_DST, dst_md, pd.dst_desc(), true);
    return p;
  });
  if (!plan) return false;
  if (bias.defined()) execute(*plan, {&src, &weight, &bias}, dst);
  else execute(*plan, {&src, &weight}, dst);
  return true;
}

bool conv_backward_data(const Tensor& src_grad, const Tensor& dst_grad, const Tensor& weight, const ConvShape& s) {
  const auto type = dnnl_type(dst_grad.scalar_type());
  if (!type || !dense(src_grad) || !dense(dst_grad) || !weight.is_contiguous()) return false;
  const Key key = make_key(Pass::backward_data, dst_grad.scalar_type(), s, {&src_grad, &dst_grad, &weight});
  auto plan = plan_cache().get(key, [&] {
    const memory::desc src_md = plain_desc(src_grad, *type), w_md = weight_desc(weight, s.groups, *type),
                       dst_md = plain_desc(dst_grad, *type);
    const Geometry g(s);
    const auto hint = forward_desc(src_md, w_md, nullptr, dst_md, g);
    const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, g.activation(src_md),
                                                     any_like(w_md), g.activation(dst_md), g.strides, g.dilates, g.pad_l,
                                                     g.pad_r);
    const dnnl::convolution_backward_data::primitive_desc pd(desc, user_scratchpad(), cpu_engine(), hint);
    Plan p{dnnl::convolution_backward_data(pd), pd.scratchpad_desc(), {}, {}};
    p.inputs.push_back(operand(DNNL_ARG_DIFF_DST, dst_md, pd.diff_dst_desc(), false));
    p.inputs.push_back(operand(DNNL_ARG_WEIGHTS, w_md, pd.weights_desc(), false));
    p.output = operand(DNNL_ARG_DIFF_SRC, src_md, pd.diff_src_desc(), true);
    return p;
  });
  if (!plan) return false;
  execute(*plan, {&dst_grad, &weight}, src_grad);
  return true;
}

bool conv_backward_weights(const Tensor& weight_grad, const Tensor& dst_grad, const Tensor& src, const ConvShape& s) {
  const auto type = dnnl_type(src.scalar_type());
  if (!type || !dense(src) || !dense(dst_grad) || !weight_grad.is_contiguous()) return false;
  const Key key = make_key(Pass::backward_weights, src.scalar_type(), s, {&weight_grad, &dst_grad, &src});
  auto plan = plan_cache().get(key, [&] {
    const memory::desc src_md = plain_desc(src, *type), w_md = weight_desc(weight_grad, s.groups, *type),
                       dst_md = plain_desc(dst_grad, *type);
    const Geometry g(s);
    const auto hint = forward_desc(src_md, w_md, nullptr, dst_md, g);
    const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, g.activation(src_md),
                                                        any_like(w_md), g.activation(dst_md), g.strides, g.dilates,
                                                        g.pad_l, g.pad_r);
    const dnnl::convolution_backward_weights::primitive_desc pd(desc, user_scratchpad(), cpu_engine(), hint);
    Plan p{dnnl::convolution_backward_weights(pd), pd.scratchpad_desc(), {}, {}};
    p.inputs.push_back(operand(DNNL_ARG_SRC, src_md, pd.src_desc(), false));
    p.inputs.push_back(operand(DNNL_ARG_DIFF_DST, dst_md, pd.diff_dst_desc(), false));
    p.output = operand(DNNL_ARG_DIFF_WEIGHTS, w_md, pd.diff_weights_desc(), true);
    return p;
  });
  if (!plan) return false;
  execute(*plan, {&src, &dst_grad}, weight_grad);
  return true;
}

}  // namespace at::inline tessera::native::onednn
