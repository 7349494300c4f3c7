// Concatenating quantized tensors: aten's cat (into the first input's qparams, or out's) and
// quantized::cat / cat_relu / cat_out / cat_relu_out (into given qparams). As torch, the
// inputs are dequantized, concatenated and quantized again, so inputs with other qparams
// are requantized.
#include <aten/core/QTensorImpl.h>
#include <aten/library.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <vector>

namespace at::inline tessera::native {

DEFINE_DISPATCH(qrequantize_rows_stub);

namespace {

bool per_tensor(const Tensor& q) {
  const auto scheme = q.qscheme();
  return scheme == c10::kPerTensorAffine || scheme == c10::kPerTensorSymmetric;
}

void check_first(ArrayRef<Tensor> qxs) {
  TORCH_CHECK(!qxs.empty(), "torch.cat(): expected a non-empty list of Tensors");
  TORCH_CHECK(per_tensor(qxs[0]), "Only per-tensor quantization is supported in 'cat'!");
  check_not_sub_byte(qxs[0], "qcat");
}

// torch's channels-last fast path: 4-d channels_last inputs joined along the channels.
bool is_nhwc_cat(ArrayRef<Tensor> qxs, int64_t dim) {
  if (qxs[0].dim() != 4 || dim != 1) return false;  // aten's cat wraps dim first, quantized::cat does not
  for (const Tensor& qx : qxs) {
    if (qx.dim() != 4 || !qx.is_contiguous(MemoryFormat::ChannelsLast) || qx.scalar_type() != qxs[0].scalar_type() ||
        qx.qscheme() != c10::kPerTensorAffine) {
      return false;
    }
    for (int64_t d : {0, 2, 3}) {
      if (qx.size(d) != qxs[0].size(d)) return false;
    }
  }
  return true;
}

// Per input, its channels of every pixel: copied where the qparams already match, else
// requantized with torch's split of each pixel's channels (qrequantize_rows_stub).
Tensor nhwc_cat(ArrayRef<Tensor> qxs, double scale, int64_t zero_point, bool relu) {
  const Tensor& first = qxs[0];
  int64_t channels = 0;
  for (const Tensor& qx : qxs) channels += qx.size(1);
  Tensor qy = new_qtensor({first.size(0), channels, first.size(2), first.size(3)}, MemoryFormat::ChannelsLast,
                          c10::make_intrusive<PerTensorAffineQuantizer>(first.scalar_type(), scale, zero_point),
                          first.device());
  if (qy.is_meta() || qy.numel() == 0) return qy;
  const Tensor rows_out = integer_alias(qy).permute({0, 2, 3, 1}).reshape({-1, channels});
  const QAffine oq{static_cast<float>(scale), zero_point};
  int64_t offset = 0;
  for (const Tensor& qx : qxs) {
    const int64_t c = qx.size(1);
    if (c == 0) continue;
    const Tensor rows_in = integer_alias(qx).permute({0, 2, 3, 1}).reshape({-1, c});
    const Tensor rows = rows_out.narrow(1, offset, c);
    const auto& pt = static_cast<const PerTensorAffineQuantizer&>(*get_quantizer(qx));
    if (!relu && pt.scale() == scale && pt.zero_point() == zero_point) {
      rows.copy_(rows_in);
    } else {
      qrequantize_rows_stub(c10::DeviceType::CPU, rows, oq, rows_in,
                            QAffine{static_cast<float>(pt.scale()), pt.zero_point()}, static_cast<float>(1.0 / scale),
                            relu);
    }
    offset += c;
  }
  return qy;
}

Tensor cat_into_qparams(ArrayRef<Tensor> qxs, int64_t dim, double scale, int64_t zero_point, bool relu) {
  const auto dtype = qxs[0].scalar_type();
  const auto scheme = qxs[0].qscheme();
  std::vector<Tensor> xs;
  xs.reserve(qxs.size());
  for (const Tensor& qx : qxs) {
    TORCH_CHECK(qx.scalar_type() == dtype, "All dtypes must be the same.");
    TORCH_CHECK(qx.qscheme() == scheme, "Quantization schemes must be the same.");
  }
  if (is_nhwc_cat(qxs, dim)) return nhwc_cat(qxs, scale, zero_point, relu);
  for (const Tensor& qx : qxs) xs.push_back(qx.dequantize());
  Tensor qy = at::quantize_per_tensor(at::cat(xs, dim), scale, zero_point, dtype);
  if (relu && !qy.is_meta() && qy.numel() > 0) {
    qclamp_stub(c10::DeviceType::CPU, integer_alias(qy), integer_alias(qy), as_stored(dtype, zero_point),
                quantized_range(dtype).second, false);
  }
  return qy;
}

}  // namespace

Tensor cat_quantized(ArrayRef<Tensor> tensors, int64_t dim) {
  check_first(tensors);  // torch neither warns nor fails where the qparams differ: it requantizes
  if (tensors[0].dim() > 0) dim = wrap_dim(dim, tensors[0].dim());
  return cat_into_qparams(tensors, dim, tensors[0].q_scale(), tensors[0].q_zero_point(), false);
}

Tensor& cat_out_quantized(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out) {
  check_first(tensors);
  TORCH_CHECK(per_tensor(out), "Only per-tensor quantization is supported in 'cat'!");
  out.copy_(cat_into_qparams(tensors, dim, out.q_scale(), out.q_zero_point(), false));
  return out;
}

}  // namespace at::inline tessera::native

namespace {
namespace qn = at::native;
using at::Tensor;

template <bool Relu>
Tensor qcat(at::ArrayRef<Tensor> qx, int64_t dim, std::optional<double> scale, std::optional<int64_t> zero_point) {
  qn::check_first(qx);
  return qn::cat_into_qparams(qx, dim, scale.value_or(qx[0].q_scale()), zero_point.value_or(qx[0].q_zero_point()),
                              Relu);
}

template <bool Relu>
Tensor& qcat_out(at::ArrayRef<Tensor> qx, int64_t dim, Tensor& out) {
  qn::check_first(qx);
  TORCH_CHECK(qn::per_tensor(out), "Only per-tensor quantization is supported in 'cat'!");
  out.copy_(qn::cat_into_qparams(qx, dim, out.q_scale(), out.q_zero_point(), Relu));
  return out;
}

void register_cat(torch::Library& m) {
  m.impl("cat", TORCH_FN(qcat<false>));
  m.impl("cat_relu", TORCH_FN(qcat<true>));
  m.impl("cat_out", TORCH_FN(qcat_out<false>));
  m.impl("cat_relu_out", TORCH_FN(qcat_out<true>));
}
}  // namespace

TORCH_LIBRARY_IMPL(quantized, QuantizedCPU, m) { register_cat(m); }
TORCH_LIBRARY_IMPL(quantized, QuantizedMeta, m) { register_cat(m); }
