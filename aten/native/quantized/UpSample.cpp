// Bilinear upsampling of quantized tensors (upsample_bilinear2d on a quantized input, reached
// from interpolate(mode='bilinear')), as torch 1.13 computes it, Note [Quantized bilinear
// upsampling]. The result keeps the input's qparams.
#include <aten/core/Parallel.h>
#include <aten/core/QTensorImpl.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace at::inline tessera::native {

DEFINE_DISPATCH(qupsample_bilinear_nhwc_stub);

// Note [Quantized bilinear upsampling]: torch blends the four neighbours' integers in float
// (integers converted to float, zero point subtracted last) and quantizes the blend with
// scale 1. Its contiguous kernel (any input that is not channels_last; an input of the
// output's size is copied) rounds every product and sum: h0 * (w0 * a + w1 * b) +
// h1 * (w0 * c + w1 * d). Its channels_last kernel is compiled with FMA contraction: the
// source index is fma(r, dst + 0.5, -0.5), and the blend is
// fma(h1, fma(w1, d, w0 * c), h0 * fma(w1, b, w0 * a)) on 8-bit channels in blocks of 8
// (its vector loop) and fma(h0, fma(w0, a, w1 * b), h1 * fma(w0, c, w1 * d)) on the rest and
// on qint32. The ratio r is (in - 1) / (out - 1) with align_corners, else 1 / scale_factor
// when one was given, else in / out, all in float. torch writes its channels-last output in
// channels-last order whatever layout it allocated (an [N, C, 1, 1] input's, contiguous); here
// the values are the blend's in the allocated layout. Checked with a NumPy reference on
// 32M outputs: docs/plans/quantized-pool3d-bilinear-*.

namespace {

std::vector<BilinearTap> taps_of(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, bool fused) {
  float r;
  if (align_corners) {
    r = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  } else if (scale && *scale > 0) {
    r = static_cast<float>(1.0 / *scale);
  } else {
    r = static_cast<float>(in) / static_cast<float>(out);
  }
  std::vector<BilinearTap> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const auto dst = static_cast<float>(o);
    float src;
    if (align_corners) {
      src = r * dst;
    } else {
      src = fused ? std::fma(r, dst + 0.5f, -0.5f) : r * (dst + 0.5f) - 0.5f;
      src = src < 0 ? 0.0f : src;
    }
    const auto i0 = static_cast<int64_t>(src);
    const float l1 = src - static_cast<float>(i0);
    taps[static_cast<size_t>(o)] = {i0, i0 + (i0 < in - 1 ? 1 : 0), 1.0f - l1, l1};
  }
  return taps;
}

}  // namespace

Tensor upsample_bilinear2d_quantized(const Tensor& input, std::optional<IntArrayRef> output_size, bool align_corners,
                                     std::optional<ArrayRef<double>> scale_factors) {
  TORCH_CHECK(output_size.has_value() != scale_factors.has_value(),
              "Must specify exactly one of output_size and scale_factors");
  TORCH_CHECK(input.dim() == 4, "Non-empty 4D data tensor expected but got a tensor with sizes ", input.sizes());
  std::vector<int64_t> out(2);
  std::optional<double> scale_h, scale_w;
  if (output_size) {
    TORCH_CHECK(output_size->size() == 2, "It is expected output_size equals to 2, but got size ", output_size->size());
    out = output_size->vec();
  } else {
    TORCH_CHECK(scale_factors->size() == 2, "It is expected scale_factors equals to 2, but got size ",
                scale_factors->size());
    scale_h = (*scale_factors)[0], scale_w = (*scale_factors)[1];
    out[0] = truncate_like_x86(static_cast<double>(input.size(2)) * *scale_h);
    out[1] = truncate_like_x86(static_cast<double>(input.size(3)) * *scale_w);
  }
  const int64_t batch = input.size(0), channels = input.size(1), in_h = input.size(2), in_w = input.size(3);
  const std::vector<int64_t> sizes{batch, channels, out[0], out[1]};
  TORCH_CHECK(in_w > 0 && out[1] > 0, "upsample_bilinear2d: input and output widths must be greater than 0, but got ",
              in_w, " and ", out[1]);
  for (int64_t v : sizes) {
    TORCH_CHECK(v >= 0, "Trying to create tensor with negative dimension ", v, ": ", IntArrayRef(sizes));
  }
  // torch 1.13 crashes here
  TORCH_CHECK(in_h > 0 || out[0] == 0 || batch * channels == 0, "upsample_bilinear2d: an input of height 0 cannot ",
              "be upsampled to height ", out[0]);
  const auto& q = checked_per_tensor(input, "upsample_bilinear2d");  // torch reads the qparams last
  const bool nhwc = input.is_contiguous(MemoryFormat::ChannelsLast);
  const QuantizerPtr quantizer =
      c10::make_intrusive<PerTensorAffineQuantizer>(input.scalar_type(), q.scale(), q.zero_point());
  Tensor result =
      new_qtensor(sizes, nhwc ? suggest_memory_format(input) : MemoryFormat::Contiguous, quantizer, input.device());
  if (result.is_meta() || result.numel() == 0) return result;
  if (!nhwc && in_h == out[0] && in_w == out[1]) {  // torch copies an input of the output's size
    integer_alias(result).copy_(integer_alias(input));
    return result;
  }
  const std::vector<BilinearTap> rows = taps_of(in_h, out[0], align_corners, scale_h, nhwc);
  const std::vector<BilinearTap> cols = taps_of(in_w, out[1], align_corners, scale_w, nhwc);
  const int64_t zp = q.zero_point();
  if (nhwc) {
    // the per-ISA loop (FMA) writes channels-last; an [N, C, 1, 1] input's result is contiguous
    const Tensor dense = result.is_contiguous(MemoryFormat::ChannelsLast)
                             ? result
                             : new_qtensor(sizes, MemoryFormat::ChannelsLast, quantizer, input.device());
    const int64_t vector_channels = input.scalar_type() == c10::kQInt32 ? 0 : channels / 8 * 8;
    qupsample_bilinear_nhwc_stub(c10::DeviceType::CPU, integer_alias(dense), integer_alias(input), rows.data(),
                                 cols.data(), vector_channels, zp);
    if (!dense.is_same(result)) integer_alias(result).copy_(integer_alias(dense));
    return result;
  }
  const Tensor src = integer_alias(input.contiguous());
  const Tensor dst = integer_alias(result);
  const auto zpf = static_cast<float>(zp);
  dispatch_quantized_int(input.scalar_type(), [&]<typename Int>(Int) {
    const Int* x = static_cast<const Int*>(src.data_ptr());
    Int* y = static_cast<Int*>(dst.data_ptr());
    const int64_t planes = batch * channels, in_plane = in_h * in_w, out_plane = out[0] * out[1];
    at::parallel_for(0, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const Int* plane = x + p * in_plane;
        Int* o = y + p * out_plane;
        for (int64_t oh = 0; oh < out[0]; ++oh) {
          const BilinearTap& t = rows[static_cast<size_t>(oh)];
          for (int64_t ow = 0; ow < out[1]; ++ow) {
            const BilinearTap& u = cols[static_cast<size_t>(ow)];
            const auto a = static_cast<float>(plane[t.i0 * in_w + u.i0]);
            const auto b = static_cast<float>(plane[t.i0 * in_w + u.i1]);
            const auto c = static_cast<float>(plane[t.i1 * in_w + u.i0]);
            const auto d = static_cast<float>(plane[t.i1 * in_w + u.i1]);
            const float blend = t.l0 * (u.l0 * a + u.l1 * b) + t.l1 * (u.l0 * c + u.l1 * d);
            o[oh * out[1] + ow] = quantize_one<Int>(blend - zpf, 1.0f, zp);
          }
        }
      }
    });
  });
  return result;
}

}  // namespace at::inline tessera::native
