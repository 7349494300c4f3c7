// The autograd API in C++: torch::autograd::backward and torch::autograd::grad, as in
// PyTorch (t.backward() in aten calls the former).
#pragma once

#include <autograd/function.h>

#include <optional>

namespace torch::autograd {

// Accumulates into .grad of the leaves (or only of `inputs`, when given) the grads of
// `tensors` seeded with `grad_tensors` (omitted entries: ones for one-element tensors).
TORCH_API void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
                        std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                        const variable_list& inputs = {});

// The grads of `outputs` with respect to `inputs`, without touching any .grad.
TORCH_API variable_list grad(const variable_list& outputs, const variable_list& inputs,
                             const variable_list& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                             bool create_graph = false, bool allow_unused = false);

}  // namespace torch::autograd
