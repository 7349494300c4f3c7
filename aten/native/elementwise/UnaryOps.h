// Dispatch stubs of unary operators that are not generated from an ops.yaml iterator entry.
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/TensorIterator.h>

namespace at::inline tessera::native {

using unary_stub_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(unary_stub_fn, isfinite_stub);

}  // namespace at::inline tessera::native
