// scaled_dot_product_attention: the math form (the L x S score matrix, softmax, dropout)
// and the fused CPU op that never holds that matrix: keys are taken a block at a time and
// the softmax is accumulated online (a running row max, the sum of exponentials scaled to
// it, the output so far), so memory grows with L * block, not L * S. Its backward (an
// operator too, written with differentiable ones) recomputes each block's probabilities from the saved
// log-sum-exp the same way.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace at::inline tessera::native {

namespace {

// Keys taken at a time by the fused attention and its backward: the scores held are L x this.
constexpr int64_t kAttentionKeyBlock = 256;

double attention_scale(const Tensor& query, std::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
}

// Scores of all queries against keys [j0, j0 + n), scaled, with the causal mask (a key
// after its query) and attn_mask (bool: True keeps; float: added) applied.
Tensor attention_block_scores(const Tensor& query, const Tensor& key, int64_t j0, int64_t n, double scale,
                              bool is_causal, const std::optional<Tensor>& attn_mask) {
  Tensor s = at::matmul(query, key.narrow(-2, j0, n).transpose(-2, -1)) * scale;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    const int64_t L = query.size(-2);
    Tensor rows = at::arange(L, TensorOptions().dtype(c10::kLong).device(query.device())).unsqueeze(1);
    Tensor cols = at::arange(j0, j0 + n, TensorOptions().dtype(c10::kLong).device(query.device())).unsqueeze(0);
    s = s.masked_fill(cols.gt(rows), neg_inf);
  }
  if (attn_mask && attn_mask->defined()) {
    Tensor m = attn_mask->size(-1) == 1 ? *attn_mask : attn_mask->narrow(-1, j0, n);
    s = m.scalar_type() == c10::kBool ? s.masked_fill(m.logical_not(), neg_inf) : s + m;
  }
  return s;
}

void check_attention_inputs(const Tensor& query, const Tensor& key, const Tensor& value) {
  TORCH_CHECK(query.scalar_type() == key.scalar_type() && query.scalar_type() == value.scalar_type(),
              "Expected query, key, and value to have the same dtype, but got query.dtype: ", query.scalar_type(),
              " key.dtype: ", key.scalar_type(), " and value.dtype: ", value.scalar_type(), " instead.");
  TORCH_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, "scaled_dot_product_attention: expected "
              "query, key and value of at least 2 dimensions, got ", query.dim(), ", ", key.dim(), " and ",
              value.dim());
  TORCH_CHECK(query.size(-1) == key.size(-1), "scaled_dot_product_attention: query and key must have the same "
              "embedding size, got ", query.size(-1), " and ", key.size(-1));
  TORCH_CHECK(key.size(-2) == value.size(-2), "scaled_dot_product_attention: key and value must have the same "
              "sequence length, got ", key.size(-2), " and ", value.size(-2));
}

Tensor math_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                      const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal, double scale) {
  Tensor s = attention_block_scores(query, key, 0, key.size(-2), scale, is_causal, attn_mask);
  Tensor p = s.softmax(-1);
  if (dropout_p > 0) p = at::dropout(p, dropout_p, true);
  return at::matmul(p, value);
}

// Key and value heads repeated to the query's (grouped-query attention).
Tensor repeat_heads(const Tensor& t, int64_t heads) {
  const int64_t have = t.size(-3);
  if (have == heads) return t;
  TORCH_CHECK(heads % have == 0, "scaled_dot_product_attention: the query's ", heads, " heads are not a multiple "
              "of the key/value's ", have);
  std::vector<int64_t> grown = t.sizes().vec();
  grown.insert(grown.end() - 2, heads / have);
  std::vector<int64_t> shape = t.sizes().vec();
  shape[shape.size() - 3] = heads;
  return t.unsqueeze(-3).expand(grown).reshape(shape);
}

}  // namespace

std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(const Tensor& query, const Tensor& key,
                                                                      const Tensor& value, double dropout_p,
                                                                      bool is_causal,
                                                                      const std::optional<Tensor>& attn_mask,
                                                                      std::optional<double> scale) {
  check_attention_inputs(query, key, value);
  TORCH_CHECK(dropout_p == 0, "_scaled_dot_product_flash_attention_for_cpu: dropout is not supported by the fused "
              "kernel (scaled_dot_product_attention takes the math form for it)");
  TORCH_CHECK(c10::isFloatingType(query.scalar_type()), "scaled_dot_product_attention: expected a floating point "
              "query, got ", query.scalar_type());
  std::vector<int64_t> out_shape = query.sizes().vec();
  out_shape.back() = value.size(-1);
  std::vector<int64_t> lse_shape(query.sizes().begin(), query.sizes().end() - 1);
  if (query.is_meta()) {
    return {make_empty(out_shape, query.scalar_type(), query.device()),
            make_empty(lse_shape, query.scalar_type(), query.device())};
  }
  const double sc = attention_scale(query, scale);
  const int64_t S = key.size(-2);
  const auto options = query.options();
  Tensor row_max = at::full(lse_shape, -std::numeric_limits<double>::infinity(), options);
  Tensor row_sum = at::zeros(lse_shape, options);
  Tensor acc = at::zeros(out_shape, options);
  Tensor shift = row_max;
  for (int64_t j0 = 0; j0 < S; j0 += kAttentionKeyBlock) {
    const int64_t n = std::min(kAttentionKeyBlock, S - j0);
    Tensor s = attention_block_scores(query, key, j0, n, sc, is_causal, attn_mask);
    Tensor new_max = at::maximum(row_max, s.amax(std::vector<int64_t>{-1}));
    // rows with every score so far -inf keep a shift of 0 (no -inf - -inf)
    shift = at::where(new_max.isinf(), at::zeros_like(new_max), new_max);
    Tensor p = (s - shift.unsqueeze(-1)).exp();
    Tensor rescale = (row_max - shift).exp();
    row_sum = row_sum * rescale + p.sum(std::vector<int64_t>{-1});
    acc = acc * rescale.unsqueeze(-1) + at::matmul(p, value.narrow(-2, j0, n));
    row_max = new_max;
  }
  Tensor out = acc / row_sum.unsqueeze(-1);
  Tensor lse = shift + row_sum.log();
  if (S == 0) out.zero_();
  return {out, lse};
}

// The fused attention's backward, a key block at a time as its forward: each block's
// probabilities come back from the saved log-sum-exp, p = exp(s - lse); then
// dv = p^T dO, dp = dO v^T, ds = p (dp - rowsum(dO o)), dq += ds k scale, dk = ds^T q scale.
// Written with differentiable ops, so it differentiates again.
std::tuple<Tensor, Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(
    const Tensor& grad, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& output,
    const Tensor& logsumexp, double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
    std::optional<double> scale) {
  TORCH_CHECK(dropout_p == 0, "_scaled_dot_product_flash_attention_for_cpu_backward: dropout is not supported by the "
              "fused kernel");
  const double sc = attention_scale(query, scale);
  const int64_t S = key.size(-2);
  const Tensor row_dot = (grad * output).sum(std::vector<int64_t>{-1}, true);
  // fully masked rows (lse = -inf) have no probabilities at all
  Tensor lse = at::where(logsumexp.isinf(), at::full_like(logsumexp, INFINITY), logsumexp).unsqueeze(-1);
  if (c10::GradMode::is_enabled()) {
    // Differentiated again: the saved lse is a constant to autograd, so it is rebuilt from
    // the scores, shifted by itself (sum exp(s - lse) = 1): same value, and its grad.
    Tensor total;
    for (int64_t j0 = 0; j0 < S; j0 += kAttentionKeyBlock) {
      const int64_t n = std::min(kAttentionKeyBlock, S - j0);
      Tensor part = (attention_block_scores(query, key, j0, n, sc, is_causal, attn_mask) - lse)
                        .exp()
                        .sum(std::vector<int64_t>{-1}, true);
      total = total.defined() ? total + part : part;
    }
    // (a fully masked row keeps its +inf: its sum is 0)
    if (total.defined()) lse = lse + at::where(total.gt(0), total, at::ones_like(total)).log();
  }
  Tensor grad_query = at::zeros_like(query);
  std::vector<Tensor> grad_keys, grad_values;
  for (int64_t j0 = 0; j0 < S; j0 += kAttentionKeyBlock) {
    const int64_t n = std::min(kAttentionKeyBlock, S - j0);
    Tensor p = (attention_block_scores(query, key, j0, n, sc, is_causal, attn_mask) - lse).exp();
    Tensor v_block = value.narrow(-2, j0, n);
    grad_values.push_back(at::matmul(p.transpose(-2, -1), grad));
    Tensor ds = p * (at::matmul(grad, v_block.transpose(-2, -1)) - row_dot);
    grad_query = grad_query + at::matmul(ds, key.narrow(-2, j0, n)) * sc;
    grad_keys.push_back(at::matmul(ds.transpose(-2, -1), query) * sc);
  }
  if (S == 0) return {grad_query, at::zeros_like(key), at::zeros_like(value)};
  // keys and values broadcast over the query's batch dims get the sum of their grads
  Tensor grad_key = at::cat(grad_keys, -2).sum_to_size(key.sizes());
  Tensor grad_value = at::cat(grad_values, -2).sum_to_size(value.sizes());
  return {grad_query, grad_key, grad_value};
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa) {
  check_attention_inputs(query, key, value);
  TORCH_CHECK(!is_causal || !attn_mask || !attn_mask->defined(),
              "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  TORCH_CHECK(dropout_p >= 0 && dropout_p <= 1, "dropout probability has to be between 0 and 1, but got ", dropout_p);
  Tensor k = key, v = value;
  if (enable_gqa && query.dim() >= 3) {
    k = repeat_heads(key, query.size(-3));
    v = repeat_heads(value, query.size(-3));
  }
  const c10::ScalarType t = query.scalar_type();
  const bool mask_needs_grad = attn_mask && attn_mask->defined() && attn_mask->requires_grad();
  const bool fused = (t == c10::kFloat || t == c10::kDouble) && dropout_p == 0 && !mask_needs_grad &&
                     (query.is_cpu() || query.is_meta());
  if (fused) return std::get<0>(at::_scaled_dot_product_flash_attention_for_cpu(query, k, v, 0.0, is_causal, attn_mask, scale));
  return math_attention(query, k, v, attn_mask, dropout_p, is_causal, attention_scale(query, scale));
}

}  // namespace at::inline tessera::native
