// Shared by the max pooling kernels (Pooling.cpp, AdaptivePooling.cpp): the backward of
// a pooling that recorded, per output, the flat index of its input element in the plane.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native {

// grad_input (self's shape, zeros) with grad_output[k] added at indices[k] of plane k / plane_out.
Tensor scatter_by_indices(const Tensor& grad_output, const Tensor& self, const Tensor& indices, int64_t planes_total,
                          int64_t plane_in, int64_t plane_out, const char* op);

}  // namespace at::inline tessera::native
