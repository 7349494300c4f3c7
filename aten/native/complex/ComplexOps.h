// Dispatch stubs of the complex-number operators written by hand (angle, polar, complex);
// their per-ISA loops are in cpu/ComplexKernel.cpp. conj_physical's stub is generated.
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/TensorIterator.h>

namespace at::inline tessera::native {

using complex_stub_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(complex_stub_fn, angle_stub);
DECLARE_DISPATCH(complex_stub_fn, polar_stub);
DECLARE_DISPATCH(complex_stub_fn, complex_stub);

}  // namespace at::inline tessera::native
