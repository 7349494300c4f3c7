// The nested branches of composite operators: matmul and linear of nested tensors, per
// component through differentiable unbind and as_nested_tensor (NestedOps.cpp), and
// reshape, a view when the components allow one (NestedViews.cpp).
#pragma once

#include <aten/core/Tensor.h>

#include <optional>

namespace at::inline tessera {
class NestedTensorImpl;
}

namespace at::inline tessera::native {

// The impl of a nested tensor that a NestedTensorCPU kernel received (asserted nested).
const NestedTensorImpl& nested_impl_of(const Tensor& t);

Tensor nested_matmul(const Tensor& self, const Tensor& other);
Tensor nested_linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias);
Tensor nested_reshape(const Tensor& self, IntArrayRef shape);

}  // namespace at::inline tessera::native
