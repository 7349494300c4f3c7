// The write-overlap rule shared by TensorIterator and the kernels that write outside it
// (batched GEMM's out=): an output may not write one memory location from two elements.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native {

// Raises torch's "unsupported operation: more than one element of the written-to tensor
// refers to a single memory location" when `written` has a stride-0 dim of size > 1. An
// empty tensor writes nothing, so it passes whatever its strides (numpy gives empty arrays
// all-zero strides, and empty_like keeps them).
TORCH_API void assert_no_internal_overlap(const Tensor& written);

}  // namespace at::inline tessera::native
