// torch's scalar and vector quantizers for the per-ISA quantized loops (QuantizedOpsKernel.cpp,
// QuantizedNormKernel.cpp, AffineQuantizerKernel.cpp): quantize_val (one element, zero_point +
// nearbyint(x * inv_scale) in float, truncated as x86 truncates, clamped) and the 8-bit vector
// quantizer's lane (quantize_vector_lane). Inside the CPU_CAPABILITY namespace, so that each
// ISA's copy stays its own: the linker must never hand the default build an AVX2 body.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {

// x86's cvttsd2si: the truncated value, or INT64_MIN for NaN and values outside int64.
inline int64_t truncate_to_int64(double v) {
  constexpr double kLimit = 9.2233720368547758e18;  // 2^63
  if (!(v >= -kLimit && v < kLimit)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

template <typename Int>
inline Int quantize_val(float x, float inv_scale, int64_t zero_point) {
  constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
  const int64_t q = truncate_to_int64(static_cast<float>(zero_point) + std::nearbyint(x * inv_scale));
  return static_cast<Int>(std::min(std::max(q, qmin), qmax));
}

// x86's cvtps_epi32: rounded half to even, INT32_MIN outside int32 (and for NaN).
inline int32_t cvtps_epi32(float t) {
  return t >= -2147483648.0f && t < 2147483648.0f ? static_cast<int32_t>(std::nearbyint(t))
                                                  : std::numeric_limits<int32_t>::min();
}

inline int32_t wrapping_add(int32_t a, int64_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// torch's 8-bit vector quantizer (QuantizeAvx2) on an already scaled value y: min(y,
// 2147483520) (NaN gives the bound), cvtps_epi32, plus the zero point in int32 (wrapping),
// saturated to Int.
template <typename Int>
inline Int quantize_vector_lane(float y, int64_t zero_point) {
  constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
  const int64_t q = wrapping_add(cvtps_epi32(std::isnan(y) ? 2147483520.0f : std::min(y, 2147483520.0f)), zero_point);
  return static_cast<Int>(std::min(std::max(q, qmin), qmax));
}

// fn(Int{}) for the integer type a quantized tensor stores (its integer_alias's dtype).
template <typename Fn>
void dispatch_qint(c10::ScalarType integer_type, Fn&& fn) {
  switch (integer_type) {
    case c10::kByte:
      return fn(uint8_t{});
    case c10::kChar:
      return fn(int8_t{});
    case c10::kInt:
      return fn(int32_t{});
    default:
      TORCH_CHECK(false, "quantized kernel: unexpected integer type ", integer_type);
  }
}

#if defined(CPU_CAPABILITY_AVX2)
// Eight stored integers widened to int32 lanes.
template <typename Int>
inline __m256i load8_as_int32(const Int* p) {
  if constexpr (std::is_same_v<Int, uint8_t>) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  } else if constexpr (std::is_same_v<Int, int8_t>) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  } else {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
}
#endif

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::native
