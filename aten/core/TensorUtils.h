// Tensors made below the operators, for the kernels, the Python bridge (numpy, DLPack) and
// autograd alike: fresh memory from a device's allocator, memory made elsewhere, a new
// geometry over an existing storage; the legacy type name torch's messages print; and the
// refusal of a grad no formula gives.
#pragma once

#include <aten/core/Tensor.h>

#include <optional>
#include <string>

namespace at::inline tessera {

// An uninitialised tensor with the given sizes (contiguous strides unless given) on a
// device, its memory from that device's allocator (none for meta).
TORCH_API Tensor make_empty(IntArrayRef sizes, c10::ScalarType dtype, c10::Device device);
TORCH_API Tensor make_empty_strided(IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype, c10::Device device);
// A tensor over memory it does not own (numpy arrays, DLPack capsules): `data`'s deleter
// runs when the last tensor viewing it goes. The storage cannot be resized.
TORCH_API Tensor from_blob(c10::DataPtr data, IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype);
// A tensor over self's storage with new geometry, sharing self's version counter and
// carrying no autograd state.
TORCH_API Tensor make_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
// self's memory read raw: a view without the conjugate and negative bits (for kernels that
// handle the bits themselves, like copy_, or whose result they cannot change).
TORCH_API Tensor raw_view(const Tensor& self);

// A 0-dim tensor holding `s` in its own dtype (Bool, Long, Double or ComplexDouble), marked
// as a wrapped number so type promotion ranks it below every tensor, as a Python number in
// torch: the one way a number becomes a tensor operand (Python's `a + 1`, the Scalar
// overloads, C++'s `a + 1`). On CPU it reuses a per-thread tensor that nothing else holds
// any more, which spares two allocations per call.
TORCH_API Tensor wrapped_scalar_tensor(const c10::Scalar& s, c10::Device device = c10::Device(c10::DeviceType::CPU));

// The legacy type name torch prints for a tensor in some messages: "torch.FloatTensor"
// for CPU tensors of the old dtypes, else "<Backend><Dtype>Type" (e.g. "MetaFloatType").
TORCH_API std::string tensor_type_string(const Tensor& t);

// Whether t's elements fill its memory exactly once in some order of the dimensions
// (contiguous, transposed, channels-last, ...; empty tensors are), as torch's
// is_non_overlapping_and_dense: such a tensor may be handled as its raw memory.
TORCH_API bool is_non_overlapping_and_dense(const Tensor& t);

// An input an operator cannot differentiate (derivatives.yaml gives it neither a formula
// nor `non_differentiable`; a composite's class weights) must not require grad in grad
// mode: a silently missing gradient would be wrong data. torch's check_no_requires_grad.
TORCH_API void check_no_requires_grad(const Tensor& t, const char* name, const char* fn);
inline void check_no_requires_grad(const std::optional<Tensor>& t, const char* name, const char* fn) {
  if (t) check_no_requires_grad(*t, name, fn);
}

}  // namespace at::inline tessera
