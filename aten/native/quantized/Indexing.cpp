// flip, index_select, advanced indexing, unfold, fill_ and masked_fill_ of quantized tensors
// (QuantizedCPU and QuantizedMeta), as torch 1.13 has them: the integers move with the input's
// qparams; docs/plans/quantized-order-ops-torch113.md has torch's exceptions, followed here.
#include <aten/core/QTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <limits>

namespace at::inline tessera::native {

// torch's flip goes through as_strided, which refuses a per-channel tensor unless nothing moves
Tensor flip_quantized(const Tensor& self, IntArrayRef dims) {
  TORCH_CHECK(!c10::isSubByteQIntType(self.scalar_type()), "flip is not supported for tensor with data type ",
              self.scalar_type());
  if (get_quantizer(self)->qscheme() != c10::kPerTensorAffine) {
    at::flip(integer_alias(self), dims);  // the dims' checks first, as torch
    bool moves = false;
    for (int64_t d : dims) moves = moves || self.size(d) > 1;
    TORCH_CHECK(!moves || self.numel() <= 1, "Setting strides is possible only on uniformly quantized tensor");
    return self.clone(MemoryFormat::Preserve);
  }
  return per_tensor_like(at::flip(integer_alias(self), dims), self, "flip");
}

Tensor index_select_quantized(const Tensor& self, int64_t dim, const Tensor& index) {
  check_not_sub_byte(self, "index_select");
  TORCH_CHECK(get_quantizer(self)->qscheme() == c10::kPerTensorAffine,
              "Only per_tensor quantized quantized tensors are supported by index_select.");
  return per_tensor_like(at::index_select(integer_alias(self), dim, index), self, "index_select");
}

// torch dequantizes, indexes the floats and quantizes again: lossless for 8-bit types, and
// for qint32 as lossy as that round trip (past 2^24, or a wrapping zero point)
Tensor index_quantized(const Tensor& self, at::ArrayRef<std::optional<Tensor>> indices) {
  TORCH_CHECK(get_quantizer(self)->qscheme() == c10::kPerTensorAffine,
              "Indexing is only supported for per-Tensor quantized Tensors.");
  const auto& q = per_tensor_quantizer(self, "index");
  return at::quantize_per_tensor(at::index(self.dequantize(), indices), q.scale(), q.zero_point(), self.scalar_type());
}

Tensor unfold_quantized(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  if (get_quantizer(self)->qscheme() != c10::kPerTensorAffine) {
    unfold(integer_alias(self), dimension, size, step);  // the size checks first, as torch
    TORCH_CHECK(false, "Setting strides is possible only on uniformly quantized tensor");
  }
  return unfold(self, dimension, size, step);
}

Tensor& fill_quantized_(Tensor& self, const Scalar& value) {
  // as torch: the value is written through a float copy, so each channel of a per-channel
  // tensor quantizes it with its own qparams, and that copy takes dense layouts only
  // and the value converts to float unchecked (1e300 becomes inf, then the type's minimum)
  check_not_sub_byte(self, "Copy");
  TORCH_CHECK(!value.isComplex(), "Quantized copy only works with kFloat as source Tensor");
  TORCH_CHECK(self.is_contiguous() || (self.dim() == 4 && self.is_contiguous(MemoryFormat::ChannelsLast)),
              "Quantized copy only works with contiguous and NHWC Tensors");
  const auto as_float =
      value.isFloatingPoint() ? static_cast<float>(value.toDouble()) : static_cast<float>(value.toLong());
  self.copy_(at::empty(self.sizes(), self.options().dtype(c10::kFloat)).fill_(as_float));
  return self;
}

Tensor& fill_tensor_quantized_(Tensor& self, const Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  return fill_quantized_(self, value.item());
}

Tensor& masked_fill_quantized_(Tensor& self, const Tensor& mask, const Scalar& value) {
  check_not_sub_byte(self, "masked_fill_");
  TORCH_CHECK(get_quantizer(self)->qscheme() == c10::kPerTensorAffine,
              "masked_fill__quantized_cpu for quantized tensors is currently only supported for per tensor quantized "
              "tensors");
  const auto& q = per_tensor_quantizer(self, "masked_fill_");
  const bool fits = !value.isComplex() && (!std::isfinite(value.toDouble()) ||
                                           std::abs(value.toDouble()) <= std::numeric_limits<float>::max());
  TORCH_CHECK(fits, "value cannot be converted to type float without overflow");
  if (self.is_meta()) {  // the mask's checks only
    integer_alias(self).masked_fill_(mask, 0);
    return self;
  }
  const auto x = static_cast<float>(value.toDouble());
  const float inv_scale = 1.0f / static_cast<float>(q.scale());
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    integer_alias(self).masked_fill_(mask, static_cast<int64_t>(quantize_one<Int>(x, inv_scale, q.zero_point())));
  });
  return self;
}

Tensor& masked_fill_tensor_quantized_(Tensor& self, const Tensor& mask, const Tensor& value) {
  TORCH_CHECK(get_quantizer(self)->qscheme() == c10::kPerTensorAffine,
              "masked_fill__quantized_cpu for quantized tensors is currently only supported for per tensor quantized "
              "tensors");
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return masked_fill_quantized_(self, mask, value.item());
}

}  // namespace at::inline tessera::native
