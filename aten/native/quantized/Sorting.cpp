// topk, sort, max and min of quantized tensors (QuantizedCPU and QuantizedMeta): a positive
// scale orders the stored integers as the values, so torch 1.13 orders int_repr() and the values
// keep the input's qparams (per-tensor only).
#include <aten/core/QTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/ops/Functions.h>

#include <tuple>
#include <utility>

namespace at::inline tessera::native {

namespace {

constexpr const char* kMaxPerChannel =
    "Max operator for quantized tensors only works for per tensor quantized tensors. Please open an issue on "
    "https://github.com/pytorch/pytorch/issues if you need per channel quantized tensor support.";
constexpr const char* kMinPerChannel =
    "Min operator for quantized tensors only works for per tensor quantized tensors. Please open an issue on "
    "https://github.com/pytorch/pytorch/issues if you need per channel quantized tensor support.";

// The integers an order operator reads; torch's per-tensor check first (its message).
Tensor ordered_integers(const Tensor& self, const char* op, const char* message) {
  check_not_sub_byte(self, op);
  TORCH_CHECK(get_quantizer(self)->qscheme() == c10::kPerTensorAffine, message);
  return integer_alias(self);
}

std::tuple<Tensor, Tensor> values_and_indices(const Tensor& self, std::tuple<Tensor, Tensor> ints, const char* op) {
  return {per_tensor_like(std::get<0>(ints), self, op), std::get<1>(ints)};
}

}  // namespace

std::tuple<Tensor, Tensor> topk_quantized(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  const Tensor ints = ordered_integers(self, "topk", "Top-K is only supported on per-tensor quantization");
  return values_and_indices(self, at::topk(ints, k, dim, largest, sorted), "topk");
}

std::tuple<Tensor, Tensor> sort_stable_quantized(const Tensor& self, std::optional<bool> stable, int64_t dim,
                                                 bool descending) {
  // torch sorts int_repr() before reading q_scale(), so a bad dim is reported first
  check_not_sub_byte(self, "sort");
  auto sorted = at::sort(integer_alias(self), stable, dim, descending);
  ordered_integers(self, "sort", "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.");
  return values_and_indices(self, std::move(sorted), "sort");
}

std::tuple<Tensor, Tensor> max_dim_quantized(const Tensor& self, int64_t dim, bool keepdim) {
  const Tensor ints = ordered_integers(self, "max", kMaxPerChannel);
  return values_and_indices(self, at::max(ints, dim, keepdim), "max");
}

std::tuple<Tensor, Tensor> min_dim_quantized(const Tensor& self, int64_t dim, bool keepdim) {
  const Tensor ints = ordered_integers(self, "min", kMinPerChannel);
  return values_and_indices(self, at::min(ints, dim, keepdim), "min");
}

// torch: the flattened tensor's max / min along dim 0 (its messages, per-channel and empty)
Tensor max_quantized(const Tensor& self) {
  ordered_integers(self, "max", kMaxPerChannel);
  return std::get<0>(max_dim_quantized(self.reshape({-1}), 0, false));
}

Tensor min_quantized(const Tensor& self) {
  ordered_integers(self, "min", kMinPerChannel);
  return std::get<0>(min_dim_quantized(self.reshape({-1}), 0, false));
}

}  // namespace at::inline tessera::native
