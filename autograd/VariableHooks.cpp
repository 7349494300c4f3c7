// The autograd library's implementation of aten's VariableHooksInterface: what
// t.backward(), t.grad(), t.requires_grad_(), t.register_hook() ... do. Installed when
// the library loads.
#include <autograd/autograd.h>
#include <autograd/variable.h>

#include <aten/core/NamedTensorUtils.h>
#include <aten/core/TensorOperators.h>
#include <c10/util/Exception.h>

namespace torch::autograd {
namespace {

class VariableHooks final : public at::impl::VariableHooksInterface {
 public:
  void backward(const Tensor& self, const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                std::optional<at::TensorList> inputs) const override {
    variable_list in;
    if (inputs) in.assign(inputs->begin(), inputs->end());
    torch::autograd::backward({self}, gradient.defined() ? variable_list{gradient} : variable_list{}, retain_graph,
                              create_graph, in);
  }

  const Tensor& grad(const Tensor& self) const override {
    static const Tensor undefined;
    AutogradMeta* meta = impl::get_autograd_meta(self);
    return meta ? meta->grad_ : undefined;
  }

  Tensor& mutable_grad(const Tensor& self) const override { return impl::materialize_autograd_meta(self)->grad_; }

  void set_requires_grad(const Tensor& self, bool requires_grad) const override {
    AutogradMeta* meta = impl::get_autograd_meta(self);
    if (!requires_grad && !meta) return;
    meta = impl::materialize_autograd_meta(self);
    if (meta->grad_fn_) {
      TORCH_CHECK(requires_grad,
                  "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                  "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
      return;
    }
    meta->set_requires_grad(requires_grad, self.unsafeGetTensorImpl());
  }

  bool is_leaf(const Tensor& self) const override { return impl::grad_fn(self) == nullptr; }

  int64_t output_nr(const Tensor& self) const override {
    AutogradMeta* meta = impl::get_autograd_meta(self);
    return meta ? meta->output_nr_ : 0;
  }

  const std::shared_ptr<Node>& grad_fn(const Tensor& self) const override { return impl::grad_fn(self); }

  void retain_grad(const Tensor& self) const override {
    TORCH_CHECK(self.requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
    // The retained grad is a clone, and these layouts have no clone kernel yet.
    TORCH_CHECK_NOT_IMPLEMENTED(!self.is_nested() && !self.is_mkldnn(), "retain_grad() is not supported on ",
                                self.is_nested() ? "nested" : "mkldnn", " tensors yet");
    const std::shared_ptr<Node>& fn = impl::grad_fn(self);
    if (!fn) return;  // a leaf keeps its grad anyway
    AutogradMeta* meta = impl::get_autograd_meta(self);
    if (meta->retains_grad_) return;
    // The hook holds the tensor weakly: the tensor holds the Node holding the hook.
    c10::weak_intrusive_ptr<c10::TensorImpl> weak(self.getIntrusivePtr());
    fn->set_retains_grad_hook(meta->output_nr_, [weak](const Tensor& g) {
      c10::intrusive_ptr<c10::TensorImpl> strong = weak.lock();
      if (!strong) return;
      Tensor t(std::move(strong));
      Tensor& grad = impl::materialize_autograd_meta(t)->grad_;
      if (grad.defined()) {
        grad = grad + g;
        return;
      }
      grad = g.clone();
      // (a root's named `gradient=` keeps its names here, as in torch; the pass runs
      // under NoNamesGuard, so the clone has none)
      if (C10_UNLIKELY(g.has_names())) at::internal_set_names_inplace(grad, at::names_of(g));
    });
    meta->retains_grad_ = true;
  }

  bool retains_grad(const Tensor& self) const override {
    AutogradMeta* meta = impl::get_autograd_meta(self);
    return meta && meta->retains_grad_;
  }

  bool is_view(const Tensor& self) const override { return impl::is_view(self); }

  const Tensor& base(const Tensor& self) const override {
    static const Tensor undefined;
    AutogradMeta* meta = impl::get_autograd_meta(self);
    return meta && meta->is_view_ ? meta->base_ : undefined;
  }

  unsigned register_hook(const Tensor& self, std::function<Tensor(const Tensor&)> hook) const override {
    TORCH_CHECK(self.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
    const std::shared_ptr<Node>& fn = impl::grad_fn(self);
    if (fn) return fn->add_tensor_pre_hook(static_cast<uint32_t>(output_nr(self)), std::move(hook));
    AutogradMeta* meta = impl::materialize_autograd_meta(self);
    unsigned handle = impl::next_hook_handle();
    meta->leaf_hooks_.push_back({handle, std::move(hook)});
    return handle;
  }

  void remove_hook(const Tensor& self, unsigned handle) const override {
    if (const std::shared_ptr<Node>& fn = impl::grad_fn(self)) fn->remove_tensor_pre_hook(handle);
    if (AutogradMeta* meta = impl::get_autograd_meta(self)) {
      std::erase_if(meta->leaf_hooks_, [&](const AutogradMeta::Hook& h) { return h.handle == handle; });
    }
  }
};

VariableHooks g_hooks;

struct Install {
  Install() { at::impl::SetVariableHooks(&g_hooks); }
  ~Install() { at::impl::SetVariableHooks(nullptr); }
} g_install;

}  // namespace
}  // namespace torch::autograd
