// The per-ISA loop of the quantized batch norm (cpu/QuantizedNormKernel.cpp) and what
// Normalization.cpp hands it: torch 1.13's q_batch_norm_kernel arithmetic, bit for bit,
// Note [Quantized batch norm arithmetic].
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/DispatchStub.h>

#include <cstdint>

namespace at::inline tessera::native {

// Note [Quantized batch norm arithmetic]: torch folds the batch norm and both scales into one
// affine map per channel, alpha = inv_sigma * weight * (in_scale / out_scale) and beta =
// (bias - mean * inv_sigma * weight) / out_scale (Normalization.cpp computes them, partly in
// double), then for each integer x: y = fma(alpha, x - in_zp, beta) in float, and the output
// integer is round-half-even(y) + out_zp, clamped. Its vector loop covers each pixel's first
// C - C % 8 channels and quantizes as the 8-bit vector quantizer does (NaN to the int32
// bound, the zero point added with int32 wrap-around; relu as max with the zero point in the
// stored type), the rest go through lrintf with the zero point added in int64. qint32 takes
// quantize_val's arithmetic in its vector part. The two differ only for non-finite or huge y.

// out, x: the integer views of [pixels, C] channels-last data (unit channel stride, rows
// contiguous); alpha, beta: C floats.
using qbatch_norm_fn = void (*)(const Tensor& out, const Tensor& x, int64_t x_zero_point, const float* alpha,
                                const float* beta, int64_t out_zero_point, bool relu);

DECLARE_DISPATCH(qbatch_norm_fn, qbatch_norm_stub);

}  // namespace at::inline tessera::native
