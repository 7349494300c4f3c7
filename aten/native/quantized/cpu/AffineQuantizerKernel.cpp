// The per-tensor quantize and dequantize loops over dense buffers, compiled once per ISA:
// torch's exact arithmetic (Note [Quantization arithmetic]) eight lanes at a time on AVX2,
// where rounding is an instruction (elsewhere nearbyint is a libm call per element).
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/cpu/QuantizeVal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

template <typename Int>
void quantize_run(const float* in, Int* out, int64_t n, float inv_scale, int64_t zp_int) {
  int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX2)
  if constexpr (sizeof(Int) == 1) {
    // t = zp + rint(x * inv) in float; NaN, infinities and |t| >= 2^63 (INT64_MIN after x86's
    // truncation) land on qmin; the rest clamp, then convert exactly.
    constexpr float qmin = static_cast<float>(std::numeric_limits<Int>::min());
    constexpr float qmax = static_cast<float>(std::numeric_limits<Int>::max());
    const __m256 inv = _mm256_set1_ps(inv_scale), zp = _mm256_set1_ps(static_cast<float>(zp_int));
    const __m256 lo = _mm256_set1_ps(qmin), hi = _mm256_set1_ps(qmax), limit = _mm256_set1_ps(9.2233720368547758e18f);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    auto lanes = [&](int64_t k) {
      const __m256 r =
          _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(in + k), inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m256 t = _mm256_add_ps(zp, r);
      const __m256 valid = _mm256_cmp_ps(_mm256_andnot_ps(sign, t), limit, _CMP_LT_OQ);
      const __m256 c = _mm256_blendv_ps(lo, _mm256_min_ps(_mm256_max_ps(t, lo), hi), valid);
      return _mm256_cvttps_epi32(c);
    };
    for (; i + 32 <= n; i += 32) {
      const __m256i ab = _mm256_packs_epi32(lanes(i), lanes(i + 8)),
                    cd = _mm256_packs_epi32(lanes(i + 16), lanes(i + 24));
      const __m256i bytes = std::is_signed_v<Int> ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                          _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    }
  }
#endif
  for (; i < n; ++i) out[i] = quantize_val<Int>(in[i], inv_scale, zp_int);
}

// scale * float(q - zero_point), the difference in int32 (wrapping for qint32).
template <typename Int>
void dequantize_run(const Int* in, float* out, int64_t n, float scale, int64_t zero_point) {
  int64_t i = 0;
  const uint32_t zp = static_cast<uint32_t>(zero_point);
#if defined(CPU_CAPABILITY_AVX2)
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i z = _mm256_set1_epi32(static_cast<int32_t>(zp));
  for (; i + 8 <= n; i += 8) {
    __m256i q;
    if constexpr (sizeof(Int) == 4) {
      q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    } else {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + i));
      q = std::is_signed_v<Int> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    }
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_sub_epi32(q, z))));
  }
#endif
  for (; i < n; ++i) {
    out[i] = scale * static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(in[i]) - zp));
  }
}

template <typename Fn>
void dispatch_int(c10::ScalarType int_type, Fn&& fn) {
  switch (int_type) {
    case c10::kByte:
      return fn(uint8_t{});
    case c10::kChar:
      return fn(int8_t{});
    default:
      return fn(int32_t{});
  }
}

void quantize_affine_kernel(const float* in, void* out, int64_t n, c10::ScalarType int_type, float inv_scale,
                            int64_t zero_point) {
  dispatch_int(int_type, [&]<typename Int>(Int) {
    quantize_run<Int>(in, static_cast<Int*>(out), n, inv_scale, zero_point);
  });
}

void dequantize_affine_kernel(const void* in, float* out, int64_t n, c10::ScalarType int_type, float scale,
                              int64_t zero_point) {
  dispatch_int(int_type,
               [&]<typename Int>(Int) { dequantize_run<Int>(static_cast<const Int*>(in), out, n, scale, zero_point); });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(quantize_affine_stub, &quantize_affine_kernel);
REGISTER_DISPATCH(dequantize_affine_stub, &dequantize_affine_kernel);

}  // namespace at::inline tessera::native
