// The oneDNN side of the int8 primitives (Int8Common.h): the packed weight's reordered
// copies, the requantizing epilogue's attributes and arguments, the execution.
#include <aten/native/quantized/onednn/Int8Common.h>

#include <aten/core/Parallel.h>
#include <aten/core/QTensorImpl.h>

#include <aten/ops/Functions.h>

#include <algorithm>

namespace at::inline tessera::native {

std::vector<std::shared_ptr<const PackedWeight::Blocked>> PackedWeight::blocked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocked_;
}

void PackedWeight::add_blocked(std::shared_ptr<const Blocked> blocked) const {
  std::lock_guard<std::mutex> lock(mutex_);
  blocked_.push_back(std::move(blocked));
}

namespace onednn {

std::shared_ptr<const PackedWeight::Blocked> blocked_weight(const PackedWeight& weight, const dnnl::memory::desc& plain,
                                                            const dnnl::memory::desc& layout) {
  for (auto& blocked : weight.blocked()) {
    if (blocked->desc == layout) return blocked;
  }
  const Tensor integers = integer_alias(weight.tensor()).contiguous();
  auto made = std::make_shared<PackedWeight::Blocked>();
  made->desc = layout;
  made->bytes =
      at::empty({std::max<int64_t>(static_cast<int64_t>(layout.get_size()), 1)}, TensorOptions().dtype(c10::kByte));
  const dnnl::engine& engine = cpu_engine();
  dnnl::memory from(plain, engine, integers.data_ptr());
  dnnl::memory to(layout, engine, made->bytes.data_ptr());
  dnnl::stream stream(engine);
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
  weight.add_blocked(made);
  return made;
}

dnnl::primitive_attr requantize_attr(int scale_mask, const std::vector<float>* constant_scales, bool dst_zero_point,
                                     bool relu) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_output_scales(scale_mask, constant_scales ? *constant_scales : std::vector<float>{DNNL_RUNTIME_F32_VAL});
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (dst_zero_point) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  return attr;
}

void add_requantize_args(std::unordered_map<int, dnnl::memory>& args, const std::vector<float>* scales,
                         const int32_t* src_zero_point, const int32_t* dst_zero_point) {
  using dt = dnnl::memory::data_type;
  const dnnl::engine& engine = cpu_engine();
  const dnnl::memory::desc zero_point_desc({1}, dt::s32, dnnl::memory::format_tag::a);
  // oneDNN reads these; its API takes non-const handles
  if (scales) {
    const dnnl::memory::desc scales_desc({static_cast<int64_t>(scales->size())}, dt::f32, dnnl::memory::format_tag::a);
    args.emplace(DNNL_ARG_ATTR_OUTPUT_SCALES, dnnl::memory(scales_desc, engine, const_cast<float*>(scales->data())));
  }
  args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
               dnnl::memory(zero_point_desc, engine, const_cast<int32_t*>(src_zero_point)));
  if (dst_zero_point) {
    args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST,
                 dnnl::memory(zero_point_desc, engine, const_cast<int32_t*>(dst_zero_point)));
  }
}

void execute_int8(const Int8Primitive& p, const void* x, const PackedWeight& weight,
                  const dnnl::memory::desc& plain_weight, void* out, const Tensor& bias,
                  const std::vector<float>* runtime_scales, int32_t x_zero_point, const int32_t* out_zero_point) {
  auto blocked = blocked_weight(weight, plain_weight, p.weights);
  init_num_threads();
  const dnnl::engine& engine = cpu_engine();
  std::vector<Tensor> keep;
  // oneDNN reads x and the bias; its API takes non-const handles
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, dnnl::memory(p.src, engine, const_cast<void*>(x))},
      {DNNL_ARG_WEIGHTS, dnnl::memory(p.weights, engine, blocked->bytes.data_ptr())},
      {DNNL_ARG_DST, dnnl::memory(p.dst, engine, out)},
      {DNNL_ARG_SCRATCHPAD, blocked_memory(p.scratchpad, keep)}};
  add_requantize_args(args, runtime_scales, &x_zero_point, out_zero_point);
  if (bias.defined()) args.emplace(DNNL_ARG_BIAS, dnnl::memory(p.bias, engine, bias.data_ptr()));
  dnnl::stream stream(engine);
  p.primitive.execute(stream, args);
  stream.wait();
}

}  // namespace onednn
}  // namespace at::inline tessera::native
