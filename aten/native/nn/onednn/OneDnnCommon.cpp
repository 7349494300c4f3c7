// OneDnnCommon.h's definitions: the engine and attributes every oneDNN primitive here uses.
#include <aten/native/nn/onednn/OneDnnCommon.h>

#include <aten/ops/Functions.h>

#include <algorithm>

namespace at::inline tessera::native::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

const dnnl::primitive_attr& user_scratchpad() {
  static const dnnl::primitive_attr attr = [] {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
  }();
  return attr;
}

dnnl::memory::desc plain_desc(const Tensor& t, dnnl::memory::data_type type) {
  return dnnl::memory::desc(dnnl::memory::dims(t.sizes().begin(), t.sizes().end()), type,
                            dnnl::memory::dims(t.strides().begin(), t.strides().end()));
}

dnnl::memory::desc weight_desc(const Tensor& w, int64_t groups, dnnl::memory::data_type type) {
  if (groups == 1) return plain_desc(w, type);
  dnnl::memory::dims dims{groups, w.size(0) / groups}, strides{w.stride(0) * (w.size(0) / groups), w.stride(0)};
  for (int64_t d = 1; d < w.dim(); ++d) dims.push_back(w.size(d)), strides.push_back(w.stride(d));
  return dnnl::memory::desc(dims, type, strides);
}

dnnl::memory::desc any_like(const dnnl::memory::desc& d) {
  return dnnl::memory::desc(d.dims(), d.data_type(), dnnl::memory::format_tag::any);
}

dnnl::memory blocked_memory(const dnnl::memory::desc& d, std::vector<Tensor>& keep) {
  keep.push_back(at::empty({std::max<int64_t>(static_cast<int64_t>(d.get_size()), 1)},
                          TensorOptions().dtype(c10::kByte)));
  return dnnl::memory(d, cpu_engine(), keep.back().data_ptr());
}

void append_layout(Key& key, const Tensor& t) {
  key.push_back(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) key.push_back(t.size(d)), key.push_back(t.stride(d));
}

}  // namespace at::inline tessera::native::onednn
