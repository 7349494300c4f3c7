#include <aten/native/quantized/AffineQuantizer.h>

#include <aten/core/Parallel.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace at::inline tessera::native {

DEFINE_DISPATCH(quantize_affine_stub);
DEFINE_DISPATCH(dequantize_affine_stub);

namespace {

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
    // torch's sub-byte kernel guards a zero scale (as the float-qparams one does); the others
    // divide by it.
    const float scale = static_cast<float>(pt->scale());
    const float inv_scale = scale == 0.0f && c10::isSubByteQIntType(quantizer.scalar_type()) ? 1.0f : 1.0f / scale;
    if (c10::isSubByteQIntType(quantizer.scalar_type())) {  // values of 0..15 or 0..3 in bytes
      const float zp = static_cast<float>(pt->zero_point());
      for (int64_t i = 0; i < n; ++i) out[i] = quantize_affine<Int>(in[i], inv_scale, zp, qmin, qmax);
      return;
    }
    const auto int_type = underlying_type(quantizer.scalar_type());
    at::parallel_for(0, n, 65536, [&](int64_t begin, int64_t end) {
      quantize_affine_stub(c10::DeviceType::CPU, in + begin, out + begin, end - begin, int_type, inv_scale,
                           pt->zero_point());
    });
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
    const auto int_type = std::is_same_v<Int, uint8_t>  ? c10::kByte
                          : std::is_same_v<Int, int8_t> ? c10::kChar
                                                        : c10::kInt;
    at::parallel_for(0, n, 65536, [&](int64_t begin, int64_t end) {
      dequantize_affine_stub(c10::DeviceType::CPU, in + begin, out + begin, end - begin, int_type, scale,
                             pt->zero_point());
    });
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


// Whether a tensor's elements fill one block of memory, so a flat loop can visit them.
bool is_dense(const Tensor& t) { return t.is_contiguous() || is_non_overlapping_and_dense(t); }

// Sub-byte tensors are contiguous (make_qtensor_view keeps them so): quantize into one byte
// per element, then pack.
void quantize_sub_byte(const Tensor& src, const Tensor& dst, const Quantizer& quantizer) {
  Tensor in = src.resolve_neg().contiguous();
  Tensor values = at::empty(dst.sizes(), TensorOptions().dtype(c10::kByte));
  quantize_dense<uint8_t>(in, values, quantizer);
  pack_sub_byte_into(values, dst);
}

}  // namespace

namespace {

// Element i of a packed buffer: bits (i % k) * Bits.. of byte i / k (k = 8 / Bits). Whole
// bytes go in one step each (the constant inner loops unroll); a last partial byte keeps the
// bits past n, which after a leading slice are the next elements'.
template <int Bits>
void unpack_elements(const uint8_t* packed, uint8_t* out, int64_t n) {
  constexpr int kPerByte = 8 / Bits;
  constexpr uint8_t kMask = (1 << Bits) - 1;
  const int64_t whole = n / kPerByte;
  for (int64_t b = 0; b < whole; ++b) {
    const uint8_t byte = packed[b];
    for (int j = 0; j < kPerByte; ++j) out[b * kPerByte + j] = static_cast<uint8_t>(byte >> (j * Bits)) & kMask;
  }
  for (int64_t i = whole * kPerByte; i < n; ++i) {
    out[i] = static_cast<uint8_t>(packed[whole] >> ((i - whole * kPerByte) * Bits)) & kMask;
  }
}

template <int Bits>
void pack_elements(const uint8_t* in, uint8_t* packed, int64_t n) {
  constexpr int kPerByte = 8 / Bits;
  const int64_t whole = n / kPerByte;
  for (int64_t b = 0; b < whole; ++b) {
    uint8_t byte = 0;
    for (int j = 0; j < kPerByte; ++j) byte = static_cast<uint8_t>(byte | (in[b * kPerByte + j] << (j * Bits)));
    packed[b] = byte;
  }
  if (whole * kPerByte == n) return;
  uint8_t byte = 0, written = 0;
  for (int64_t i = whole * kPerByte, j = 0; i < n; ++i, ++j) {
    byte = static_cast<uint8_t>(byte | (in[i] << (j * Bits)));
    written = static_cast<uint8_t>(written | (((1 << Bits) - 1) << (j * Bits)));
  }
  packed[whole] = static_cast<uint8_t>(byte | (packed[whole] & ~written));
}

}  // namespace

Tensor unpack_sub_byte(const Tensor& q) {
  const int bits = quantized_bits(q.scalar_type());
  TORCH_INTERNAL_ASSERT(bits < 8 && q.is_contiguous() && q.storage_offset() == 0);
  Tensor values = at::empty(q.sizes(), TensorOptions().dtype(c10::kByte).device(q.device()));
  if (q.is_meta()) return values;
  const uint8_t* packed = static_cast<const uint8_t*>(q.storage().data());
  uint8_t* out = values.data_ptr<uint8_t>();
  bits == 4 ? unpack_elements<4>(packed, out, q.numel()) : unpack_elements<2>(packed, out, q.numel());
  return values;
}

void pack_sub_byte_into(const Tensor& values, const Tensor& q) {
  const int bits = quantized_bits(q.scalar_type());
  TORCH_INTERNAL_ASSERT(bits < 8 && q.is_contiguous() && q.storage_offset() == 0 && values.is_contiguous() &&
                        values.scalar_type() == c10::kByte && values.numel() == q.numel());
  if (q.is_meta()) return;
  const uint8_t* in = values.data_ptr<uint8_t>();
  uint8_t* packed = static_cast<uint8_t*>(q.storage().data());
  bits == 4 ? pack_elements<4>(in, packed, q.numel()) : pack_elements<2>(in, packed, q.numel());
}

QParams choose_quantization_params(float min, float max, int64_t qmin, int64_t qmax, bool preserve_sparsity) {
  TORCH_CHECK(min <= max, "In ChooseQuantizationParams, min should be less than or equal to max");
  const bool symmetric = preserve_sparsity && min < 0 && max > 0;
  if (symmetric) {
    const double symmetric_qmin = -static_cast<double>((qmax - qmin) / 2 + 1);
    const double symmetric_qmax = static_cast<double>((qmax - qmin) / 2);
    const double max_scale = std::max(std::fabs(min / symmetric_qmin), std::fabs(max / symmetric_qmax));
    min = static_cast<float>(max_scale * symmetric_qmin);
    max = static_cast<float>(max_scale * symmetric_qmax);
  }
  min = std::min(min, 0.f);
  max = std::max(max, 0.f);
  TORCH_CHECK(qmin < qmax, "In ChooseQuantizationParams, qmin should be less than qmax");
  double scale = (static_cast<double>(max) - min) / static_cast<double>(qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale))) scale = 0.1;
  TORCH_CHECK(scale > 0, "quantization scale should be > 0");
  constexpr float kSmallScale = 6.1e-5f;  // torch's SMALL_SCALE_THRESHOLD
  if (scale < kSmallScale) {
    const float original = static_cast<float>(scale);
    scale = kSmallScale;
    if (min == 0.0f) {
      max = kSmallScale * static_cast<float>(qmax - qmin);
    } else if (max == 0.0f) {
      min = -kSmallScale * static_cast<float>(qmax - qmin);
    } else {
      const float amplifier = kSmallScale / original;
      min *= amplifier;
      max *= amplifier;
    }
  }
  const double from_min = static_cast<double>(qmin) - min / scale;
  const double from_max = static_cast<double>(qmax) - max / scale;
  const double from_min_error = std::abs(static_cast<double>(qmin)) - std::abs(min / scale);
  const double from_max_error = std::abs(static_cast<double>(qmax)) - std::abs(max / scale);
  double initial = from_min_error < from_max_error ? from_min : from_max;
  if (symmetric) initial = static_cast<double>(qmin + qmax) / 2;
  const int64_t zero_point = initial < static_cast<double>(qmin)   ? qmin
                             : initial > static_cast<double>(qmax) ? qmax
                                                                   : static_cast<int64_t>(std::nearbyint(initial));
  return {scale, zero_point};
}

void quantize_into(const Tensor& src, const Tensor& dst) {
  TORCH_INTERNAL_ASSERT(src.scalar_type() == c10::kFloat && src.sizes().equals(dst.sizes()));
  if (dst.is_meta()) return;
  const QuantizerPtr quantizer = get_quantizer(dst);
  if (c10::isSubByteQIntType(dst.scalar_type())) return quantize_sub_byte(src, dst, *quantizer);
  Tensor dst_ints = integer_alias(dst);
  // Work on a dense buffer with dst's strides, so flat element i means one element in both.
  const bool dst_dense = is_dense(dst_ints);
  Tensor out = dst_dense ? dst_ints : at::empty(dst.sizes(), dst_ints.options(), suggest_memory_format(dst_ints));
  Tensor in = src.resolve_neg();  // the flat loop reads memory: a negative view's bit must be applied
  if (!in.strides().equals(out.strides())) {
    in = at::empty_strided(out.sizes(), out.strides(), src.options()).copy_(src);
  }
  dispatch_quantized_int(quantizer->scalar_type(), [&](auto tag) { quantize_dense<decltype(tag)>(in, out, *quantizer); });
  if (!dst_dense) dst_ints.copy_(out);
}

void dequantize_into(const Tensor& src, const Tensor& dst) {
  TORCH_INTERNAL_ASSERT(dst.scalar_type() == c10::kFloat && src.sizes().equals(dst.sizes()));
  if (dst.is_meta()) return;
  const QuantizerPtr quantizer = get_quantizer(src);
  const bool sub_byte = c10::isSubByteQIntType(src.scalar_type());
  const bool dst_dense = sub_byte ? dst.is_contiguous() : is_dense(dst);
  Tensor out = dst_dense ? dst : at::empty(dst.sizes(), dst.options(), suggest_memory_format(dst));
  Tensor in = sub_byte ? unpack_sub_byte(src) : integer_alias(src);
  if (!in.strides().equals(out.strides())) in = at::empty_strided(out.sizes(), out.strides(), in.options()).copy_(in);
  dispatch_quantized_int(quantizer->scalar_type(), [&](auto tag) { dequantize_dense<decltype(tag)>(in, out, *quantizer); });
  if (!dst_dense) dst.copy_(out);
}

}  // namespace at::inline tessera::native
