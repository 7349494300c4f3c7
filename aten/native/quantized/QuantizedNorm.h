// The per-ISA loops of the quantized batch, layer, group and instance norms
// (cpu/QuantizedNormKernel.cpp) and what Normalization.cpp hands them: torch 1.13's
// arithmetic, bit for bit, Notes [Quantized batch norm arithmetic], [Quantized layer norm
// arithmetic] and [Quantized group norm arithmetic].
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
// quantize_val's arithmetic in its vector part, with the zero point as int32. The two differ
// only for non-finite or huge y. The vector part dequantizes as float(x) - float(x_zp), the
// tail exactly (they differ for qint32 past 2^24). Unlike torch, which reads the parameters'
// first C floats of storage, a strided weight or statistic is read through its strides.

// out, x: the integer views of [pixels, C] channels-last data (unit channel stride, rows
// contiguous); alpha, beta: C floats.
using qbatch_norm_fn = void (*)(const Tensor& out, const Tensor& x, int64_t x_zero_point, const float* alpha,
                                const float* beta, int64_t out_zero_point, bool relu);

// Note [Quantized layer norm arithmetic]: torch's statistics are exact integer sums of a row's
// stored values and of their squares (for qint32 the squares add in float: eight lanes
// accumulated with fma, the lanes added in order, an fma tail). In float: ms = sum / n, mean =
// ms - x_zp, var = max(fma(-ms, ms, sumsq / n), 0), and the factor inv = x_scale / sqrt(var *
// x_scale * x_scale + eps) in double. Each element: t = (float(x - x_zp) - mean) * inv (two
// roundings), y = fma(t, gamma, beta), quantized as y * (1 / out_scale) by the vector
// quantizer for a row's first n - n % 32 elements (n - n % 8 for qint32, whose vector form is
// quantize_val with an int32 zero point) and by quantize_val for the rest. Dequantization is
// float(x) - float(x_zp), as in torch's vector loops.

// out, x: [M, N] contiguous integer views; gamma, beta: N floats or null (1 and 0).
using qlayer_norm_fn = void (*)(const Tensor& out, const Tensor& x, int64_t x_zero_point, float x_scale,
                                const float* gamma, const float* beta, double eps, float out_scale,
                                int64_t out_zero_point);

// Group norm (instance norm: a group per channel), Note [Quantized group norm arithmetic]:
// the statistics of each (sample, group) are those of the layer norm (exact integer sums, its
// float and double steps), from the contiguous (NCHW) input, or per pixel from a 4-d
// channels-last one (NHWC); feature maps of 512 pixels and more take torch's float32
// per-channel sums instead (summed in pixel order, as torch does at one thread). Contiguous:
// y = fma(float(x - x_zp) - mean, inv * gamma, beta), every element through the vector
// quantizer. Channels-last: scale = inv * gamma and shift = fma(-scale, mean, beta) per
// channel (without a weight, -inv * mean + beta in two roundings, as GCC compiled torch's), y
// = fma(float(x - x_zp), scale, shift); the vector quantizer covers each group's first
// cpg - cpg % 32 channels (below 512 pixels) or each pixel's first C - C % 32, quantize_val
// the rest.

// out, x: [B, C, HxW] contiguous integer views (nchw) or [B, HxW, C] (nhwc).
using qgroup_norm_fn = void (*)(const Tensor& out, const Tensor& x, bool nhwc, int64_t groups, int64_t x_zero_point,
                                float x_scale, const float* gamma, const float* beta, double eps, float out_scale,
                                int64_t out_zero_point);

DECLARE_DISPATCH(qbatch_norm_fn, qbatch_norm_stub);
DECLARE_DISPATCH(qgroup_norm_fn, qgroup_norm_stub);
DECLARE_DISPATCH(qlayer_norm_fn, qlayer_norm_stub);

}  // namespace at::inline tessera::native
