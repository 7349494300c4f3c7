// What the generated wrappers of structured operators do around a kernel: allocate the
// functional output, check an in-place target, resize an out= tensor.
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/TensorMeta.h>

namespace at::inline tessera::native {

// A fresh contiguous tensor with the meta's sizes and dtype on `device`.
TORCH_API Tensor empty_for_meta(const meta::TensorMeta& m, c10::Device device);
// In-place: self must already have the output's shape, and the result dtype must cast to
// self's without changing category ("result type Float can't be cast to ... Long").
TORCH_API void check_inplace(const Tensor& self, const meta::TensorMeta& m, const char* op);
// out=: an out tensor of the wrong shape is resized (torch warns when it had elements;
// Tessera requires it be empty or already right); its dtype must accept the result.
TORCH_API void resize_out(const Tensor& out, const meta::TensorMeta& m, const char* op);
// The shape part of resize_out, for out= kernels that copy (and cast) a computed result
// into `out` (ops.yaml `functional:`): out keeps its dtype and, when its shape is already
// right, its strides; an empty out becomes contiguous with the new shape.
TORCH_API void resize_out_sizes(const Tensor& out, IntArrayRef sizes, const char* op);
// out= for ops computed functionally: resize_out to the result's shape and dtype rule,
// then copy (and cast) the result in; returns out.
TORCH_API Tensor& copy_into_out(const Tensor& result, Tensor& out, const char* op);
// The C++ type name torch's out= dtype messages print ("double", "long int", "c10::Half").
TORCH_API const char* cpp_type_name(c10::ScalarType t);
// torch's check that out= has the dtype= asked of an op: "Expected out tensor to have dtype
// double, but got float instead".
TORCH_API void check_out_dtype(const Tensor& out, std::optional<c10::ScalarType> dtype);

}  // namespace at::inline tessera::native
