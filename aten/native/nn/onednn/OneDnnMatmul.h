// bfloat16 matrix products on oneDNN's matmul primitive: on CPUs with AVX512-BF16 (or AMX)
// its kernels multiply bfloat16 pairs natively at twice the float32 FMA rate, accumulate
// in float32 and round the result once, as torch's mkldnn matmul does; elsewhere the
// caller's float32 path is as fast.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native::onednn {

// out[i] = beta * out[i] + alpha * a[i] @ b[i] over the batch (a (B, M, K), b (B, K, N),
// out (B, M, N), all bfloat16, any strides oneDNN can describe). Returns false, touching
// nothing, where the CPU lacks native bfloat16 or oneDNN has no kernel for the layouts.
bool matmul_bf16(const Tensor& out, const Tensor& a, const Tensor& b, float beta, float alpha);

}  // namespace at::inline tessera::native::onednn
