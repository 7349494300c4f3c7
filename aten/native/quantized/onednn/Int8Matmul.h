// The int8 GEMM under quantized::linear and linear_dynamic: one oneDNN matmul primitive per
// shape (cached), u8 activations times the packed s8 weight, with the requantization done in
// the primitive's epilogue exactly as torch 1.13's oneDNN engine asks for it (Note [Quantized
// linear arithmetic] in Linear.cpp).
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/quantized/PackedLinear.h>

#include <cstdint>
#include <vector>

namespace at::inline tessera::native::onednn {

// out[m, n] = epilogue(sum_k (x[m, k] - x_zero_point) * w[n, k] + bias[n]) where the epilogue
// is v = (acc + bias) * scales[n] (scales has one entry or N), relu when asked, then for a
// uint8 out rne(v + out_zero_point) saturated, for a float out v itself.
// x: uint8 [M, K] contiguous; out: uint8 or float32 [M, N] contiguous; bias: float32 [N] or
// undefined. Every float step rounds to float32, none is fused.
void int8_linear(const Tensor& out, const Tensor& x, int32_t x_zero_point, const LinearPackedParamsBase& packed,
                 const std::vector<float>& scales, const Tensor& bias, int32_t out_zero_point, bool relu);

}  // namespace at::inline tessera::native::onednn
