// Dispatch stubs of the activations whose kernels are not generated from an ops.yaml
// iterator entry (aten/native/nn/Activation.cpp; kernels in cpu/ActivationKernel.cpp).
#pragma once

#include <aten/native/DispatchStub.h>
#include <aten/native/TensorIterator.h>

namespace at::inline tessera::native {

using activation_stub_fn = void (*)(TensorIterator&);
DECLARE_DISPATCH(activation_stub_fn, log_sigmoid_backward_stub);
DECLARE_DISPATCH(activation_stub_fn, mish_backward_stub);
DECLARE_DISPATCH(activation_stub_fn, prelu_stub);

}  // namespace at::inline tessera::native
