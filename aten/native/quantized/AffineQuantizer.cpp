#include <aten/native/quantized/AffineQuantizer.h>

#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace at::inline tessera::native {

namespace {

// What x86's cvttss2si gives: the truncated value, or INT64_MIN for NaN and out-of-range input.
inline int64_t truncate_like_x86(float v) {
  constexpr float kLimit = 9.2233720368547758e18f;  // 2^63
  if (!(v >= -kLimit && v < kLimit)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

template <typename Int>
inline Int quantize_affine(float x, float inv_scale, float zero_point, int64_t qmin, int64_t qmax) {
  const int64_t q = truncate_like_x86(zero_point + std::nearbyint(x * inv_scale));
  return static_cast<Int>(std::min(std::max(q, qmin), qmax));
}

// torch narrows lrintf's long to int before clamping, so values past int32 wrap around.
template <typename Int>
inline Int quantize_float_qparams(float x, float inv_scale, float zero_point, int64_t qmin, int64_t qmax) {
  const int64_t r = truncate_like_x86(std::nearbyint(x * inv_scale + zero_point));
  const int64_t q = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(r)));
  return static_cast<Int>(std::min(std::max(q, qmin), qmax));
}

// Calls fn(begin, end, c) for each run of a dense buffer's flat elements that share channel c.
// In a dense layout flat element i lies in channel (i / stride) % size, where stride and size
// are the axis's: runs of `stride` elements, the channel stepping by one per run and wrapping,
// so no element pays for a division.
template <typename Fn>
void for_each_channel_run(int64_t n, int64_t stride, int64_t size, Fn fn) {
  if (size == 1 || stride == 0) return fn(int64_t{0}, n, int64_t{0});
  int64_t c = 0;
  for (int64_t begin = 0; begin < n; begin += stride) {
    fn(begin, std::min(begin + stride, n), c);
    if (++c == size) c = 0;
  }
}

template <typename Int>
void quantize_dense(const Tensor& src, const Tensor& dst_ints, const Quantizer& quantizer) {
  const float* in = static_cast<const float*>(src.data_ptr());
  Int* out = static_cast<Int*>(dst_ints.data_ptr());
  const int64_t n = src.numel();
  const auto [qmin, qmax] = quantized_range(quantizer.scalar_type());
  if (auto* pt = dynamic_cast<const PerTensorAffineQuantizer*>(&quantizer)) {
    const float inv_scale = 1.0f / static_cast<float>(pt->scale());
    const float zp = static_cast<float>(pt->zero_point());
    for (int64_t i = 0; i < n; ++i) out[i] = quantize_affine<Int>(in[i], inv_scale, zp, qmin, qmax);
    return;
  }
  const auto& pc = static_cast<const PerChannelAffineQuantizer&>(quantizer);
  const int64_t channels = pc.scales().numel();
  std::vector<float> inv_scales(static_cast<size_t>(channels)), zps(static_cast<size_t>(channels));
  const bool float_qparams = pc.qscheme() == c10::kPerChannelAffineFloatQParams;
  for (int64_t c = 0; c < channels; ++c) {
    if (float_qparams) {
      const float s = pc.scales().data_ptr<float>()[c];
      inv_scales[c] = s == 0.0f ? 1.0f : 1.0f / s;  // torch's guard, for float qparams only
      zps[c] = pc.zero_points().data_ptr<float>()[c];
    } else {
      inv_scales[c] = 1.0f / static_cast<float>(pc.scales().data_ptr<double>()[c]);
      zps[c] = static_cast<float>(pc.zero_points().data_ptr<int64_t>()[c]);
    }
  }
  for_each_channel_run(n, src.stride(pc.axis()), src.size(pc.axis()), [&](int64_t begin, int64_t end, int64_t c) {
    const float inv_scale = inv_scales[c], zp = zps[c];
    if (float_qparams) {
      for (int64_t i = begin; i < end; ++i) out[i] = quantize_float_qparams<Int>(in[i], inv_scale, zp, qmin, qmax);
    } else {
      for (int64_t i = begin; i < end; ++i) out[i] = quantize_affine<Int>(in[i], inv_scale, zp, qmin, qmax);
    }
  });
}

template <typename Int>
void dequantize_dense(const Tensor& src_ints, const Tensor& dst, const Quantizer& quantizer) {
  const Int* in = static_cast<const Int*>(src_ints.data_ptr());
  float* out = static_cast<float*>(dst.data_ptr());
  const int64_t n = dst.numel();
  if (auto* pt = dynamic_cast<const PerTensorAffineQuantizer*>(&quantizer)) {
    const float scale = static_cast<float>(pt->scale());
    // q - zp in int32 as torch computes it, wrapping (for qint32) rather than overflowing.
    const uint32_t zp = static_cast<uint32_t>(pt->zero_point());
    for (int64_t i = 0; i < n; ++i) {
      out[i] = scale * static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(in[i]) - zp));
    }
    return;
  }
  const auto& pc = static_cast<const PerChannelAffineQuantizer&>(quantizer);
  const int64_t stride = dst.stride(pc.axis()), size = dst.size(pc.axis());
  if (pc.qscheme() == c10::kPerChannelAffineFloatQParams) {
    const float* scales = pc.scales().data_ptr<float>();
    const float* zps = pc.zero_points().data_ptr<float>();
    for_each_channel_run(n, stride, size, [&](int64_t begin, int64_t end, int64_t c) {
      const float scale = scales[c], zp = zps[c];
      for (int64_t i = begin; i < end; ++i) out[i] = (static_cast<float>(in[i]) - zp) * scale;
    });
  } else {
    const double* scales = pc.scales().data_ptr<double>();
    const int64_t* zps = pc.zero_points().data_ptr<int64_t>();
    for_each_channel_run(n, stride, size, [&](int64_t begin, int64_t end, int64_t c) {
      const double scale = scales[c];
      const float zp = static_cast<float>(zps[c]);
      for (int64_t i = begin; i < end; ++i) {
        out[i] = static_cast<float>(static_cast<double>(static_cast<float>(in[i]) - zp) * scale);
      }
    });
  }
}

template <typename Fn>
void dispatch_int(c10::ScalarType qtype, Fn&& fn) {
  switch (underlying_type(qtype)) {
    case c10::kByte: return fn(uint8_t{});
    case c10::kChar: return fn(int8_t{});
    default: return fn(int32_t{});
  }
}

// Whether a tensor's elements fill one block of memory, so a flat loop can visit them.
bool is_dense(const Tensor& t) { return t.is_contiguous() || is_non_overlapping_and_dense(t); }

}  // namespace

void quantize_into(const Tensor& src, const Tensor& dst) {
  TORCH_INTERNAL_ASSERT(src.scalar_type() == c10::kFloat && src.sizes().equals(dst.sizes()));
  const QuantizerPtr quantizer = get_quantizer(dst);
  Tensor dst_ints = integer_alias(dst);
  // Work on a dense buffer with dst's strides, so flat element i means one element in both.
  const bool dst_dense = is_dense(dst_ints);
  Tensor out = dst_dense ? dst_ints : at::empty(dst.sizes(), dst_ints.options(), suggest_memory_format(dst_ints));
  Tensor in = src.resolve_neg();  // the flat loop reads memory: a negative view's bit must be applied
  if (!in.strides().equals(out.strides())) {
    in = at::empty_strided(out.sizes(), out.strides(), src.options()).copy_(src);
  }
  dispatch_int(quantizer->scalar_type(), [&](auto tag) { quantize_dense<decltype(tag)>(in, out, *quantizer); });
  if (!dst_dense) dst_ints.copy_(out);
}

void dequantize_into(const Tensor& src, const Tensor& dst) {
  TORCH_INTERNAL_ASSERT(dst.scalar_type() == c10::kFloat && src.sizes().equals(dst.sizes()));
  const QuantizerPtr quantizer = get_quantizer(src);
  const bool dst_dense = is_dense(dst);
  Tensor out = dst_dense ? dst : at::empty(dst.sizes(), dst.options(), suggest_memory_format(dst));
  Tensor in = integer_alias(src);
  if (!in.strides().equals(out.strides())) in = at::empty_strided(out.sizes(), out.strides(), in.options()).copy_(in);
  dispatch_int(quantizer->scalar_type(), [&](auto tag) { dequantize_dense<decltype(tag)>(in, out, *quantizer); });
  if (!dst_dense) dst.copy_(out);
}

}  // namespace at::inline tessera::native
