// Allocation shared by the factory kernels and the structured wrappers.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native {

// An uninitialised tensor with the given sizes (contiguous strides unless given) on a
// device, its memory from that device's allocator (none for meta).
TORCH_API Tensor make_empty(IntArrayRef sizes, c10::ScalarType dtype, c10::Device device);
TORCH_API Tensor make_empty_strided(IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype, c10::Device device);
// A tensor over memory it does not own (numpy arrays, DLPack capsules): `data`'s deleter
// runs when the last tensor viewing it goes. The storage cannot be resized.
TORCH_API Tensor from_blob(c10::DataPtr data, IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype);

}  // namespace at::inline tessera::native

namespace at::inline tessera::native {

// ---- layout rules shared by the *_like factories and the casts (torch's rules)

// Whether the elements tile a block of memory exactly once in some dimension order.
TORCH_API bool is_non_overlapping_and_dense(const Tensor& t);
// ChannelsLast when a 4-d tensor's strides order its dims as N, H, W, C; else Contiguous.
TORCH_API c10::MemoryFormat suggest_memory_format(const Tensor& t);
// Dense strides that keep t's dimension order (by stride), as empty_like gives a
// non-dense tensor under preserve_format.
TORCH_API std::vector<int64_t> infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);
// An uninitialised tensor shaped like `self` with the given options, laid out per
// memory_format (Preserve: self's strides when dense, else dense strides in self's order).
TORCH_API Tensor empty_like_impl(const Tensor& self, c10::ScalarType dtype, c10::Device device,
                                 std::optional<c10::Layout> layout, std::optional<bool> pin_memory,
                                 std::optional<c10::MemoryFormat> memory_format);
// Resizes an out= tensor of a factory to `sizes` (contiguous), reallocating its storage
// when too small; like torch's resize_ on an out argument.
TORCH_API void resize_factory_out(const Tensor& out, IntArrayRef sizes);

}  // namespace at::inline tessera::native
