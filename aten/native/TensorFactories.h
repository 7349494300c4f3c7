// Allocation shared by the factory kernels and the structured wrappers.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native {

// An uninitialised tensor with the given sizes (contiguous strides unless given) on a
// device, its memory from that device's allocator (none for meta).
TORCH_API Tensor make_empty(IntArrayRef sizes, c10::ScalarType dtype, c10::Device device);
TORCH_API Tensor make_empty_strided(IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype, c10::Device device);
// Bytes a strided tensor spans in its storage: 0 when empty, else itemsize * (1 + sum of
// (size - 1) * stride); raises on negative strides or overflow.
TORCH_API size_t storage_bytes_for(IntArrayRef sizes, IntArrayRef strides, size_t itemsize);

}  // namespace at::inline tessera::native
