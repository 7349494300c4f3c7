// AccumulateGrad: the Node at the end of every path to a leaf that requires grad; it runs
// the leaf's hooks and adds the incoming grad into leaf.grad.
#pragma once

#include <autograd/function.h>

namespace torch::autograd {

class TORCH_API AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

}  // namespace torch::autograd
