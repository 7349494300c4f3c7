// The nested branches of composite operators (NestedOps.cpp): matmul and linear of nested
// tensors, per component through differentiable unbind and as_nested_tensor.
#pragma once

#include <aten/core/Tensor.h>

#include <optional>

namespace at::inline tessera::native {

Tensor nested_matmul(const Tensor& self, const Tensor& other);
Tensor nested_linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias);

}  // namespace at::inline tessera::native
