// The element loop of copy_ (casting as it goes), compiled once per ISA: the AVX2 build
// converts float <-> Half/BFloat16 rows with F16C and vector rounding.
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/TensorIterator.h>

namespace at::inline tessera::native {

// iter: output (the destination), input (the source), each in its own dtype.
using copy_stub_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(copy_stub_fn, copy_stub);

}  // namespace at::inline tessera::native
