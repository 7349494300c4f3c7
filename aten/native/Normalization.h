// Dispatch stubs of the normalization row kernels (cpu/NormalizationKernel.cpp): layer
// norm over rows of a contiguous [M, N] view, forward and backward.
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/DispatchStub.h>

namespace at::inline tessera::native {

// out, mean, rstd ([M]) from x ([M, N] contiguous) and optional weight, bias ([N]).
using layer_norm_fn = void (*)(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t M, int64_t N,
                               double eps, Tensor& out, Tensor& mean, Tensor& rstd);
// dx ([M, N]), dw, db ([N]); each undefined one is skipped.
using layer_norm_backward_fn = void (*)(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                        const Tensor& weight, int64_t M, int64_t N, Tensor& dx, Tensor& dw,
                                        Tensor& db);
DECLARE_DISPATCH(layer_norm_fn, layer_norm_stub);
DECLARE_DISPATCH(layer_norm_backward_fn, layer_norm_backward_stub);

}  // namespace at::inline tessera::native
