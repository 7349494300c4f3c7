// The element maps between reals and a quantized dtype's integers, with torch 1.13's exact
// arithmetic (Note [Quantization arithmetic]), and the loops that apply them to whole tensors.
#pragma once

#include <aten/core/QTensorImpl.h>

namespace at::inline tessera::native {

// Note [Quantization arithmetic]: torch (built without FBGEMM, as Debian's) quantizes one
// element as q = clamp(int64(float(zero_point) + nearbyint(x * (1.0f / float(scale))))),
// all in float32, with x86's conversion of NaN and out-of-range floats to INT64_MIN, so NaN
// and +-inf land on the type's minimum; it dequantizes per tensor as
// float(scale) * float(q - zero_point) (the difference in int32) and per channel as
// (float(q) - float(zero_point[c])) * scale[c] in double. per_channel_affine_float_qparams instead takes
// lrintf(x * (1 / scale) + zero_point) and (q - zero_point) * scale in float32. Matching this
// bit for bit is what lets int_repr and dequantize equal torch's exactly.

// Writes dst's integers (dst: quantized, same sizes as src) from src (float32, same sizes).
// The two may have any strides.
void quantize_into(const Tensor& src, const Tensor& dst);
// Writes dst (float32, same sizes) from src (quantized).
void dequantize_into(const Tensor& src, const Tensor& dst);

}  // namespace at::inline tessera::native
