// Layout rules shared by the factory kernels, the casts and the structured wrappers.
#pragma once

#include <aten/core/TensorUtils.h>

namespace at::inline tessera::native {

// ---- layout rules shared by the *_like factories and the casts (torch's rules)

// (Whether the elements tile a block of memory exactly once: at::is_non_overlapping_and_dense,
// aten/core/TensorUtils.h.)
// ChannelsLast when a 4-d tensor's strides order its dims as N, H, W, C, ChannelsLast3d
// when a 5-d one's order them N, D, H, W, C; else Contiguous.
TORCH_API c10::MemoryFormat suggest_memory_format(const Tensor& t);
// The dense strides of `format` for these sizes (Contiguous, ChannelsLast on rank 4,
// ChannelsLast3d on rank 5; another rank raises torch's "required rank" error).
TORCH_API std::vector<int64_t> strides_for_memory_format(IntArrayRef sizes, c10::MemoryFormat format);
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
