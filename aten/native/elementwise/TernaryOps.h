// Dispatch stubs of the ternary operators that build their own TensorIterator (where,
// clamp with Scalar or Tensor bounds); lerp, addcmul and addcdiv use generated stubs.
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/TensorIterator.h>

#include <optional>

namespace at::inline tessera::native {

// out = condition ? self : other; operands: out, condition (Bool or Byte), self, other.
using where_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(where_fn, where_stub);

// out = min(max(self, min), max) with Scalar bounds already checked against the dtype;
// a NaN self stays NaN, a NaN bound is ignored (torch 1.13's clamp with numbers).
using clamp_scalar_fn = void (*)(TensorIterator&, const std::optional<c10::Scalar>&, const std::optional<c10::Scalar>&);
DECLARE_DISPATCH(clamp_scalar_fn, clamp_scalar_stub);

// The same with tensor bounds (operands: out, self, then min and/or max as present); a NaN
// anywhere makes the element NaN.
using clamp_tensor_fn = void (*)(TensorIterator&, bool has_min, bool has_max);
DECLARE_DISPATCH(clamp_tensor_fn, clamp_tensor_stub);

}  // namespace at::inline tessera::native
