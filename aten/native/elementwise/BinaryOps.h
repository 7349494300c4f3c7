// Dispatch stubs of binary operators not generated from an ops.yaml iterator entry (the
// rounding modes of div), and small helpers shared by binary kernels.
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/TensorIterator.h>

namespace at::inline tessera::native {

using binary_stub_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(binary_stub_fn, div_trunc_stub);
DECLARE_DISPATCH(binary_stub_fn, div_floor_stub);

// torch's "value cannot be converted to type int8_t without overflow" unless `s` fits `dtype`
// (ops that read a Python number in the result dtype: pow, where, clamp).
TORCH_API void check_scalar_fits(const c10::Scalar& s, c10::ScalarType dtype);
// The same for a wrapped-number tensor; other tensors pass.
TORCH_API void check_wrapped_number_fits(const Tensor& t, c10::ScalarType dtype);

}  // namespace at::inline tessera::native
