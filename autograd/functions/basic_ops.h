// Small Nodes every graph uses: GraphRoot (feeds the starting grads), Error (raises when
// reached) and NotImplemented (an op with no derivative formula).
#pragma once

#include <autograd/function.h>

#include <string>

namespace torch::autograd {

class TORCH_API GraphRoot final : public Node {
 public:
  GraphRoot(edge_list roots, variable_list grads) : Node(std::move(roots)), grads_(std::move(grads)) {}
  variable_list apply(variable_list&&) override { return grads_; }
  std::string name() const override { return "GraphRoot"; }

 private:
  variable_list grads_;
};

class TORCH_API Error : public Node {
 public:
  Error(std::string msg, edge_list next_edges) : Node(std::move(next_edges)), msg_(std::move(msg)) {}
  variable_list apply(variable_list&&) override;
  std::string name() const override { return "Error"; }

 protected:
  std::string msg_;
};

// The grad_fn of an op's outputs when derivatives.yaml has no formula for it: forward
// works, backward raises "the derivative for 'op' is not implemented." (torch's wording).
class TORCH_API NotImplemented final : public Error {
 public:
  NotImplemented(const std::string& forward_fn, edge_list next_edges)
      : Error("the derivative for '" + forward_fn + "' is not implemented.", std::move(next_edges)) {}
  variable_list apply(variable_list&&) override;
  std::string name() const override { return "NotImplemented"; }
};

}  // namespace torch::autograd
