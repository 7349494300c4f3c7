#include <autograd/variable.h>

#include <autograd/functions/accumulate_grad.h>
#include <autograd/functions/tensor.h>

#include <aten/core/NamedTensorUtils.h>
#include <aten/core/TensorUtils.h>
#include <aten/ops/OperatorHandles.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <atomic>

namespace torch::autograd {

void AutogradMeta::set_requires_grad(bool requires_grad, c10::TensorImpl* self) {
  TORCH_CHECK(!requires_grad || c10::isFloatingType(self->scalar_type()) || c10::isComplexType(self->scalar_type()),
              "only Tensors of floating point and complex dtype can require gradients");
  requires_grad_ = requires_grad;
}

namespace impl {

AutogradMeta* get_autograd_meta(const Tensor& t) {
  return static_cast<AutogradMeta*>(t.unsafeGetTensorImpl()->autograd_meta());
}

AutogradMeta* materialize_autograd_meta(const Tensor& t) {
  c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (!impl->autograd_meta()) impl->set_autograd_meta(std::make_unique<AutogradMeta>());
  return static_cast<AutogradMeta*>(impl->autograd_meta());
}

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMeta* meta = get_autograd_meta(t);
  if (!meta || !meta->requires_grad_ || meta->grad_fn_) return nullptr;
  std::lock_guard<std::mutex> lock(meta->mutex_);
  if (std::shared_ptr<Node> acc = meta->grad_accumulator_.lock()) return acc;
  std::shared_ptr<Node> acc = make_node<AccumulateGrad>(t);
  meta->grad_accumulator_ = acc;
  return acc;
}

const std::shared_ptr<Node>& grad_fn(const Tensor& t) {
  static const std::shared_ptr<Node> none;
  AutogradMeta* meta = get_autograd_meta(t);
  if (!meta) return none;
  if (meta->is_view_) {
    uint32_t version = static_cast<uint32_t>(t._version());
    std::lock_guard<std::mutex> lock(meta->mutex_);
    if (meta->attr_version_ != version) {
      // The base or an alias was written in place: this view's history now runs through
      // its base's, whatever the base's history became.
      if (meta->grad_fn_ || meta->base_.requires_grad()) {
        // (AsStridedBackward0 replays the view as a strided one over a dense base)
        TORCH_CHECK_NOT_IMPLEMENTED(!meta->base_.is_nested() && !t.is_nested(),
                                    "a view of a nested tensor whose base was then written in place is not supported "
                                    "by autograd");
        auto fn = make_node<AsStridedBackward0>(meta->base_, t);
        fn->add_next_edge(gradient_edge(meta->base_));
        fn->add_input_metadata(t);
        meta->grad_fn_ = std::move(fn);
        meta->output_nr_ = 0;
      }
      meta->attr_version_ = version;
    }
  }
  return meta->grad_fn_;
}

Edge gradient_edge(const Tensor& t) {
  const std::shared_ptr<Node>& fn = grad_fn(t);
  if (fn) return Edge(fn, get_autograd_meta(t)->output_nr_);
  return Edge(grad_accumulator(t), 0);
}

void set_gradient_edge(const Tensor& t, Edge edge) {
  AutogradMeta* meta = materialize_autograd_meta(t);
  meta->grad_fn_ = std::move(edge.function);
  meta->output_nr_ = edge.input_nr;
  if (meta->is_view_) meta->attr_version_ = static_cast<uint32_t>(t._version());
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn) {
  uint32_t nr = fn->add_input_metadata(t);
  set_gradient_edge(t, Edge(fn, nr));
}

void rebase_history(const Tensor& t, std::shared_ptr<Node> fn) {
  const uint32_t output_nr = fn->add_input_metadata(t);
  AutogradMeta* meta = materialize_autograd_meta(t);
  if (!meta->is_view_) {
    set_gradient_edge(t, Edge(std::move(fn), output_nr));
    return;
  }
  const Tensor base = meta->base_;
  auto copy_slices = make_node<CopySlices>(base, t, std::move(fn));
  copy_slices->mutable_next_edges()[0] = gradient_edge(base);
  copy_slices->add_input_metadata(base);
  set_gradient_edge(base, Edge(std::move(copy_slices), 0));
  AutogradMeta* view_meta = get_autograd_meta(t);
  view_meta->attr_version_ = static_cast<uint32_t>(t._version()) - 1;  // force grad_fn() to rebuild from the base
  (void)grad_fn(t);
}

void make_view_of(const Tensor& view, const Tensor& base) {
  AutogradMeta* meta = materialize_autograd_meta(view);
  meta->is_view_ = true;
  AutogradMeta* base_meta = get_autograd_meta(base);
  meta->base_ = base_meta && base_meta->is_view_ ? base_meta->base_ : base;
  meta->attr_version_ = static_cast<uint32_t>(view._version());
}

bool is_view(const Tensor& t) {
  AutogradMeta* meta = get_autograd_meta(t);
  return meta && meta->is_view_;
}

void detach_in_place(const Tensor& t) {
  TORCH_CHECK(!is_view(t), "Can't detach views in-place. Use detach() instead.");
  if (AutogradMeta* meta = get_autograd_meta(t)) {
    meta->grad_fn_.reset();
    meta->output_nr_ = 0;
    meta->requires_grad_ = false;
  }
}

Tensor tensor_data(const Tensor& t) {
  const c10::ThreadLocalState& tls = c10::thread_local_state();
  if (C10_UNLIKELY((t.key_set() | tls.included).has(c10::DispatchKey::Python)) &&
      !tls.excluded.has(c10::DispatchKey::Python)) {
    // A tensor whose Python class handles its operators (__torch_dispatch__) has its data
    // in Python: the class makes the alias (aten.detach), as torch's shallow copy asks it;
    // and a TorchDispatchMode sees the detach too, as torch's do.
    Tensor alias = at::ops::op_detach().redispatch(
        (t.key_set() | (tls.included & c10::DispatchKeySet(c10::DispatchKey::Python))) &
            c10::after_ADInplaceOrView_keyset,
        t);
    alias.unsafeGetTensorImpl()->set_version_counter(t.unsafeGetTensorImpl()->version_counter());
    return alias;
  }
  // make_view shares storage and version counter and starts with no autograd state.
  Tensor alias = at::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) alias.unsafeGetTensorImpl()->set_wrapped_number(true);
  if (t.has_names()) at::internal_set_names_inplace(alias, at::names_of(t));  // .data keeps names, as in torch
  return alias;
}

variable_list run_leaf_hooks(const Tensor& leaf, variable_list grads) {
  AutogradMeta* meta = get_autograd_meta(leaf);
  if (!meta || meta->leaf_hooks_.empty() || grads.empty() || !grads[0].defined()) return grads;
  // A copy: a hook may register or remove hooks.
  std::vector<AutogradMeta::Hook> hooks = meta->leaf_hooks_;
  for (const AutogradMeta::Hook& h : hooks) {
    Tensor replaced = h.fn(grads[0]);
    if (replaced.defined()) {
      check_hook_result(grads[0], replaced);
      grads[0] = std::move(replaced);
    }
  }
  return grads;
}

unsigned next_hook_handle() {
  static std::atomic<unsigned> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace impl
}  // namespace torch::autograd
