// AutogradMeta: what autograd keeps on a tensor that takes part in differentiation —
// its grad, the Node that made it (grad_fn) or, for a leaf, its gradient accumulator,
// hooks, and for views the base they alias. torch::autograd::impl holds the functions
// that read and change it; everything else reaches it through at::Tensor.
#pragma once

#include <autograd/function.h>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace torch::autograd {

struct TORCH_API AutogradMeta final : public c10::AutogradMetaInterface {
  void set_requires_grad(bool requires_grad, c10::TensorImpl* self) override;
  // A view also requires grad once its base does (an in-place write may have given the
  // base a history after the view was made).
  bool requires_grad() const override {
    return requires_grad_ || grad_fn_ != nullptr || (is_view_ && base_.requires_grad());
  }

  Tensor grad_;
  std::shared_ptr<Node> grad_fn_;
  std::weak_ptr<Node> grad_accumulator_;
  uint32_t output_nr_ = 0;
  bool requires_grad_ = false;  // set by the user on a leaf
  bool retains_grad_ = false;

  // Hooks on a leaf's grad (run by its AccumulateGrad before accumulating).
  struct Hook {
    unsigned handle;
    std::function<Tensor(const Tensor&)> fn;
  };
  std::vector<Hook> leaf_hooks_;

  // Views: the tensor this one aliases (never itself a view) and the version of the shared
  // counter when grad_fn_ was last set; an in-place write through any alias moves the
  // counter on, and grad_fn() then rebuilds the view's history from its base's.
  bool is_view_ = false;
  Tensor base_;
  uint32_t attr_version_ = 0;

  std::mutex mutex_;  // guards grad_accumulator_ creation
};

namespace impl {

// The tensor's AutogradMeta, or nullptr.
TORCH_API AutogradMeta* get_autograd_meta(const Tensor& t);
// The tensor's AutogradMeta, created (empty) when missing.
TORCH_API AutogradMeta* materialize_autograd_meta(const Tensor& t);

// Where the grad of `t` goes: (grad_fn, output_nr), or (AccumulateGrad, 0) for a leaf
// that requires grad, or an invalid Edge.
TORCH_API Edge gradient_edge(const Tensor& t);
// The leaf's AccumulateGrad (created on first use and then shared), or nullptr.
TORCH_API std::shared_ptr<Node> grad_accumulator(const Tensor& t);
// The Node that produced `t` (views rebuild theirs after in-place writes), or nullptr.
TORCH_API const std::shared_ptr<Node>& grad_fn(const Tensor& t);

// Records `t` as output `output_nr` of `fn` (input metadata added by the caller).
TORCH_API void set_gradient_edge(const Tensor& t, Edge edge);
// Makes `t` the next output of `fn`: records its metadata and sets its history.
TORCH_API void set_history(const Tensor& t, const std::shared_ptr<Node>& fn);
// After an in-place op recorded as `fn` wrote `t`: the new history of `t`, and for a view,
// of its base (through CopySlices).
TORCH_API void rebase_history(const Tensor& t, std::shared_ptr<Node> fn);

// View tracking (ADInplaceOrView): `view` aliases `base`.
TORCH_API void make_view_of(const Tensor& view, const Tensor& base);
TORCH_API bool is_view(const Tensor& t);

// A tensor sharing t's storage, geometry and version counter but no autograd state
// (what SavedVariable keeps of an op's own output, so the graph holds no cycle).
TORCH_API Tensor tensor_data(const Tensor& t);
// Tensor.detach_(): drops t's history and requires_grad (views refuse, as in torch).
TORCH_API void detach_in_place(const Tensor& t);

// Leaf hooks (run by AccumulateGrad before it accumulates).
TORCH_API variable_list run_leaf_hooks(const Tensor& leaf, variable_list grads);

TORCH_API unsigned next_hook_handle();

}  // namespace impl
}  // namespace torch::autograd
