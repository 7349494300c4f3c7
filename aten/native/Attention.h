// Shared by the fused attention op (Attention.cpp) and its backward formula
// (autograd/FunctionsManualNN.cpp): the scale and one key block's masked scores.
#pragma once

#include <aten/core/Tensor.h>

#include <optional>

namespace at::inline tessera::native {

// Keys taken at a time by the fused attention and its backward: the scores held are L x this.
inline constexpr int64_t kAttentionKeyBlock = 256;

TORCH_API double attention_scale(const Tensor& query, std::optional<double> scale);
TORCH_API Tensor attention_block_scores(const Tensor& query, const Tensor& key, int64_t j0, int64_t n, double scale,
                                        bool is_causal, const std::optional<Tensor>& attn_mask);

}  // namespace at::inline tessera::native
