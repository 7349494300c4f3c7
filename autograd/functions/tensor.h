// Nodes for views and in-place writes through them. CopySlices is the new grad_fn of a
// base after an in-place op wrote into one of its views: the base's grad passes through
// unchanged outside the view and through the op's own backward inside it.
// AsStridedBackward0 is how a view's history is rebuilt from its base's after an in-place
// write to either.
#pragma once

#include <autograd/function.h>

#include <vector>

namespace torch::autograd {

struct TORCH_API TensorGeometry {
  TensorGeometry() = default;
  explicit TensorGeometry(const Tensor& t);
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset = 0;
  c10::ScalarType dtype = c10::ScalarType::Float;
  c10::Device device{c10::DeviceType::CPU};
  // The math bits: a view's grad slice is the conj (negation) of its base's grad slice
  // when the view's bit differs from the base's.
  bool is_conj = false, is_neg = false;
  // An empty tensor laid out like this geometry (same strides, offset 0).
  Tensor empty_like() const;
};

// The grad of `base` given the grad of its view with geometry `view`: zeros outside the
// view, `grad` inside. (Views that overlap themselves, like expand, are not handled.)
TORCH_API Tensor view_grad_to_base(const Tensor& grad, const TensorGeometry& base, const TensorGeometry& view);

class TORCH_API AsStridedBackward0 final : public Node {
 public:
  AsStridedBackward0(const Tensor& base, const Tensor& view) : base_(base), view_(view) {}
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AsStridedBackward0"; }

 private:
  TensorGeometry base_, view_;
};

class TORCH_API CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "CopySlices"; }
  void release_variables() override;

 private:
  TensorGeometry base_, view_;
  std::shared_ptr<Node> fn_;
};

}  // namespace torch::autograd
