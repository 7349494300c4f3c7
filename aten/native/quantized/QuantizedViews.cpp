// Views of quantized tensors whose quantizer changes with the view. A per-tensor quantizer
// never does (make_view shares it); a per-channel one follows its axis: select and slice
// along the axis pick channels, and dims inserted or removed before it move it. Views that
// would scatter a channel over new strides (permute, transpose, expand, as_strided, view to
// another shape) are refused, as torch refuses them.
#include <aten/core/QTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <cmath>

namespace at::inline tessera::native {

namespace {

const PerChannelAffineQuantizer* as_per_channel(const Tensor& self) {
  return dynamic_cast<const PerChannelAffineQuantizer*>(get_quantizer(self).get());
}

Tensor view_with(const Tensor& self, const ViewGeometry& g, QuantizerPtr quantizer) {
  return make_qtensor_view(self, g.sizes, g.strides, g.offset, std::move(quantizer));
}

// One channel left (select or a one-wide slice along the axis): a per-tensor quantizer with
// that channel's qparams, as torch makes.
QuantizerPtr channel_quantizer(const PerChannelAffineQuantizer& q, int64_t channel) {
  if (q.qscheme() == c10::kPerChannelAffineFloatQParams) {
    const float zp = q.zero_points().data_ptr<float>()[channel];
    TORCH_CHECK(std::nearbyint(zp) == zp && std::abs(zp) < 9.2e18f, "channel ", channel,
                " of a per_channel_affine_float_qparams tensor has the zero point ", zp,
                ", which a per-tensor quantized tensor cannot hold");
    return per_tensor_quantizer_for(q.scalar_type(), q.scales().data_ptr<float>()[channel], static_cast<int64_t>(zp),
                                    "select");
  }
  return per_tensor_quantizer_for(q.scalar_type(), q.scales().data_ptr<double>()[channel],
                                  q.zero_points().data_ptr<int64_t>()[channel], "select");
}

QuantizerPtr with_axis(const PerChannelAffineQuantizer& q, int64_t axis) {
  return c10::make_intrusive<PerChannelAffineQuantizer>(q.scalar_type(), q.scales(), q.zero_points(), axis);
}

}  // namespace

Tensor select_quantized(const Tensor& self, int64_t dim, int64_t index) {
  const ViewGeometry g = select_geometry(self, dim, index);
  const PerChannelAffineQuantizer* q = as_per_channel(self);
  if (q == nullptr) return make_view(self, g);
  dim = wrap_dim(dim, self.dim());
  if (dim != q->axis()) {
    // torch's rule: a per-channel quantizer with one channel left becomes a per-tensor one.
    if (q->scales().numel() == 1) return view_with(self, g, channel_quantizer(*q, 0));
    return view_with(self, g, with_axis(*q, q->axis() - (dim < q->axis() ? 1 : 0)));
  }
  if (index < 0) index += self.size(dim);
  return view_with(self, g, channel_quantizer(*q, index));
}

Tensor slice_quantized(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                       int64_t step) {
  const SliceGeometry g = slice_geometry(self, dim, start, end, step);
  const PerChannelAffineQuantizer* q = as_per_channel(self);
  if (q == nullptr) return make_view(self, g.view);
  if (g.dim != q->axis()) {
    return view_with(self, g.view, q->scales().numel() == 1 ? channel_quantizer(*q, 0) : get_quantizer(self));
  }
  const int64_t first = g.start, count = g.view.sizes[g.dim];
  if (count == 1) return view_with(self, g.view, channel_quantizer(*q, first));
  auto pick = [&](const Tensor& t) {
    return at::slice(t, 0, first, first + count * g.step, g.step).contiguous().clone();
  };
  return view_with(self, g.view,
                   c10::make_intrusive<PerChannelAffineQuantizer>(q->scalar_type(), pick(q->scales()),
                                                                  pick(q->zero_points()), q->axis()));
}

Tensor unsqueeze_quantized(const Tensor& self, int64_t dim) {
  const ViewGeometry g = unsqueeze_geometry(self, dim);
  const PerChannelAffineQuantizer* q = as_per_channel(self);
  if (q == nullptr) return make_view(self, g);
  dim = wrap_dim(dim, self.dim() + 1);
  return view_with(self, g, with_axis(*q, q->axis() + (dim <= q->axis() ? 1 : 0)));
}

// torch allows as_strided only where one quantizer serves every element.
Tensor as_strided_quantized(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                            std::optional<int64_t> storage_offset) {
  TORCH_CHECK(as_per_channel(self) == nullptr, "Setting strides is possible only on uniformly quantized tensor");
  return native::as_strided(self, size, stride, storage_offset);
}

// Squeezing moves the axis down by the size-1 dims removed before it; the axis itself may
// not go (torch's rule and message).
static Tensor squeeze_per_channel(const Tensor& self, const PerChannelAffineQuantizer& q, const ViewGeometry& g,
                                  std::optional<int64_t> only_dim) {
  int64_t removed_before = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const bool removed = self.size(d) == 1 && (!only_dim || *only_dim == d);
    TORCH_CHECK(!(removed && d == q.axis()),
                "Squeeze is only possible on non-axis dimension for Per-Channel Quantized Tensors.");
    if (removed && d < q.axis()) ++removed_before;
  }
  return view_with(self, g, with_axis(q, q.axis() - removed_before));
}

Tensor squeeze_quantized(const Tensor& self) {
  const ViewGeometry g = squeeze_geometry(self);
  const PerChannelAffineQuantizer* q = as_per_channel(self);
  return q == nullptr ? make_view(self, g) : squeeze_per_channel(self, *q, g, std::nullopt);
}

Tensor squeeze_dim_quantized(const Tensor& self, int64_t dim) {
  const ViewGeometry g = squeeze_dim_geometry(self, dim);
  const PerChannelAffineQuantizer* q = as_per_channel(self);
  if (q == nullptr) return make_view(self, g);
  return squeeze_per_channel(self, *q, g, self.dim() == 0 ? std::nullopt : std::optional(wrap_dim(dim, self.dim())));
}

}  // namespace at::inline tessera::native
