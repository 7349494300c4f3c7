// The seam between aten and the autograd library. aten declares the autograd parts of
// the Tensor API (backward, grad, requires_grad, hooks, grad_fn); the autograd library
// implements this interface and installs it when it loads, so aten never includes it.
#pragma once

#include <c10/core/TensorImpl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace torch::autograd {
class Node;
}  // namespace torch::autograd

namespace at::inline tessera {

class Tensor;
using TensorList = c10::ArrayRef<Tensor>;

namespace impl {

class TORCH_API VariableHooksInterface {
 public:
  virtual ~VariableHooksInterface();
  virtual void backward(const Tensor& self, const Tensor& gradient, std::optional<bool> retain_graph,
                        bool create_graph, std::optional<TensorList> inputs) const = 0;
  virtual const Tensor& grad(const Tensor& self) const = 0;
  virtual Tensor& mutable_grad(const Tensor& self) const = 0;
  virtual void set_requires_grad(const Tensor& self, bool requires_grad) const = 0;
  virtual bool is_leaf(const Tensor& self) const = 0;
  virtual int64_t output_nr(const Tensor& self) const = 0;
  virtual const std::shared_ptr<torch::autograd::Node>& grad_fn(const Tensor& self) const = 0;
  virtual void retain_grad(const Tensor& self) const = 0;
  virtual bool retains_grad(const Tensor& self) const = 0;
  virtual bool is_view(const Tensor& self) const = 0;
  virtual const Tensor& base(const Tensor& self) const = 0;
  virtual unsigned register_hook(const Tensor& self, std::function<Tensor(const Tensor&)> hook) const = 0;
  virtual void remove_hook(const Tensor& self, unsigned pos) const = 0;
};

// Installed by the autograd library's static initialiser; raises a clear error when no
// autograd library is loaded (an app that linked libaten alone).
TORCH_API void SetVariableHooks(VariableHooksInterface* hooks);
TORCH_API const VariableHooksInterface& GetVariableHooks();

}  // namespace impl
}  // namespace at::inline tessera
