// C++ arithmetic operators on tensors (a + b, 2 * t, -t, t / 3.0), with torch's type
// promotion: a Scalar operand takes part as a wrapped number, as in Python.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera {

TORCH_API Tensor operator-(const Tensor& a);
#define TESSERA_DECLARE_TENSOR_OPERATOR(op)                  \
  TORCH_API Tensor operator op(const Tensor& a, const Tensor& b); \
  TORCH_API Tensor operator op(const Tensor& a, const Scalar& b); \
  TORCH_API Tensor operator op(const Scalar& a, const Tensor& b);
TESSERA_DECLARE_TENSOR_OPERATOR(+)
TESSERA_DECLARE_TENSOR_OPERATOR(-)
TESSERA_DECLARE_TENSOR_OPERATOR(*)
TESSERA_DECLARE_TENSOR_OPERATOR(/)
#undef TESSERA_DECLARE_TENSOR_OPERATOR

}  // namespace at::inline tessera
