// The int8 convolution under quantized::conv1d/2d/3d: one oneDNN convolution primitive per
// shape (cached), channels-last u8 activations with the packed s8 weight, requantized in the
// primitive's epilogue as torch 1.13's oneDNN engine asks for it (Note [Quantized linear
// arithmetic] in Linear.cpp holds for convolutions too).
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/quantized/PackedConv.h>

#include <cstdint>
#include <vector>

namespace at::inline tessera::native::onednn {

// out = rne(f32(f32(f32(acc) + bias) * scales[o]) [relu] + out_zero_point) saturated to
// uint8, acc the convolution of (x - x_zero_point) with the packed weight (padding adds 0).
// x and out: uint8 [N, C, spatial...] in the channels-last layout, with as many spatial
// dimensions as the packed weight; bias: float32 [O] in the accumulator's units, or undefined.
void int8_conv(const Tensor& out, const Tensor& x, int32_t x_zero_point, const ConvPackedParamsBase& packed,
               const std::vector<float>& scales, const Tensor& bias, int32_t out_zero_point, bool relu);

}  // namespace at::inline tessera::native::onednn
