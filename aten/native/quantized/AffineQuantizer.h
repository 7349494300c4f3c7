// The element maps between reals and a quantized dtype's integers, with torch 1.13's exact
// arithmetic (Note [Quantization arithmetic]), and the loops that apply them to whole tensors.
#pragma once

#include <aten/core/QTensorImpl.h>
#include <aten/native/DispatchStub.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace at::inline tessera::native {

// Note [Quantization arithmetic]: torch (built without FBGEMM, as Debian's) quantizes one
// element as q = clamp(int64(float(zero_point) + nearbyint(x * (1.0f / float(scale))))),
// all in float32, with x86's conversion of NaN and out-of-range floats to INT64_MIN, so NaN
// and +-inf land on the type's minimum; it dequantizes per tensor as
// float(scale) * float(q - zero_point) (the difference in int32) and per channel as
// (float(q) - float(zero_point[c])) * scale[c] in double. per_channel_affine_float_qparams instead takes
// lrintf(x * (1 / scale) + zero_point) and (q - zero_point) * scale in float32. Matching this
// bit for bit is what lets int_repr and dequantize equal torch's exactly.

// What x86's cvttss2si/cvttsd2si give (torch's static_cast of a float to int64 on this
// machine): the truncated value, or INT64_MIN for NaN and values outside int64.
inline int64_t truncate_like_x86(double v) {
  constexpr double kLimit = 9.2233720368547758e18;  // 2^63
  if (!(v >= -kLimit && v < kLimit)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// nearbyint(x) in the default rounding mode without a libm call (the baseline x86-64 build
// has no round instruction): adding and taking away 2^23 (with x's sign) leaves x rounded
// half to even when |x| < 2^23; larger floats are integers already, and NaN passes through.
// (The per-ISA kernels round with their own instructions and do not call it.)
inline float round_even(float x) {
  const float magic = std::copysign(8388608.0f, x);
  const float r = (x + magic) - magic;
  return std::fabs(x) < 8388608.0f ? r : x;
}

// x86's float-to-int32 conversion (cvttss2si): NaN and values outside int32 give INT32_MIN.
inline int32_t truncate_to_int32_like_x86(float v) {
  return v >= -2147483648.0f && v < 2147483648.0f ? static_cast<int32_t>(v) : std::numeric_limits<int32_t>::min();
}

// torch's quantize_val on one float: clamp(int64(float(zero_point) + rint(x * inv_scale))), the
// addition in float (the operator files' scalar loops; the per-ISA ones have their own).
template <typename Int>
inline Int quantize_one(float x, float inv_scale, int64_t zero_point) {
  constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
  const int64_t q = truncate_like_x86(static_cast<float>(zero_point) + round_even(x * inv_scale));
  return static_cast<Int>(std::min(std::max(q, qmin), qmax));
}

// torch's ChooseQuantizationParams (force_scale_power_of_two and reduce_range off): the
// (scale, zero_point) that map [min, max], widened to hold 0, onto [qmin, qmax]; with
// preserve_sparsity (symmetric quantization) a range around 0 stays symmetric and the zero
// point sits midway.
struct QParams {
  double scale;
  int64_t zero_point;
};
QParams choose_quantization_params(float min, float max, int64_t qmin, int64_t qmax, bool preserve_sparsity);

// The per-tensor loops over n dense elements (cpu/AffineQuantizerKernel.cpp): float32 in,
// integers of int_type (uint8, int8 or int32) out, and back.
using quantize_affine_fn = void (*)(const float* in, void* out, int64_t n, c10::ScalarType int_type, float inv_scale,
                                    int64_t zero_point);
using dequantize_affine_fn = void (*)(const void* in, float* out, int64_t n, c10::ScalarType int_type, float scale,
                                      int64_t zero_point);
DECLARE_DISPATCH(quantize_affine_fn, quantize_affine_stub);
DECLARE_DISPATCH(dequantize_affine_fn, dequantize_affine_stub);

// Calls fn(Int{}) with the integer type a quantized dtype stores (uint8_t for the sub-byte
// types' unpacked values).
template <typename Fn>
void dispatch_quantized_int(c10::ScalarType qtype, Fn&& fn) {
  switch (underlying_type(qtype)) {
    case c10::kByte: return fn(uint8_t{});
    case c10::kChar: return fn(int8_t{});
    default: return fn(int32_t{});
  }
}

// Writes dst's integers (dst: quantized, same sizes as src) from src (float32, same sizes).
// The two may have any strides.
void quantize_into(const Tensor& src, const Tensor& dst);
// Writes dst (float32, same sizes) from src (quantized).
void dequantize_into(const Tensor& src, const Tensor& dst);

// The elements of a sub-byte quantized tensor (Note [Sub-byte quantized tensors]) one per
// byte: a contiguous uint8 tensor of q's sizes.
Tensor unpack_sub_byte(const Tensor& q);
// Packs `values` (uint8, contiguous, q's numel, each within q's range) into q's storage. The
// bits of the last byte past q's elements are kept: after a leading slice they are the next
// elements' (a new tensor's storage starts zeroed, so there they stay zero).
void pack_sub_byte_into(const Tensor& values, const Tensor& q);

// A quantized tensor whose integers are a copy of `ints` (same sizes, ints' memory format;
// torch's _make_*_quantized_tensor).
Tensor from_integers(const Tensor& ints, QuantizerPtr quantizer);
// from_integers with self's per-tensor qparams and dtype (ints: self's stored type); what
// torch's kernels that work on int_repr() return. A per-channel self raises per_tensor_quantizer's error.
Tensor per_tensor_like(const Tensor& ints, const Tensor& self, const char* op);

}  // namespace at::inline tessera::native
