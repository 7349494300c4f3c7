// The channels-last average poolings' shared steps (Pooling.cpp for 2-d, Pooling3d.cpp for
// 3-d): summing a window element's channels and requantizing the centred sums as torch's
// NHWC kernels do. Baseline-ISA code (SSE2) for the operator files, not the per-ISA kernels.
#pragma once

#include <aten/native/quantized/AffineQuantizer.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace at::inline tessera::native {

// One window element's channels added to the running sums, wrapping as torch's int32
// accumulators (restrict: the compiler vectorises it).
template <typename Int>
inline void add_into(uint32_t* __restrict acc, const Int* __restrict v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<uint32_t>(static_cast<int32_t>(v[i]));
}

// The NHWC kernels' last step on n channels' centred sums: the 8-bit vector quantizer
// (QuantizeAvx2: rint(min(acc * m, 2147483520)) + zp in int32, a NaN taking the bound) and
// quantize_val (float(zp) + rint(acc * m), truncated), clamped. For 8-bit types |acc * m| is
// far below 2^24, where SSE2's cvtps2dq (round half to even) and a saturating pack compute
// both exactly, 16 channels at a time. Arguments by value and restrict pointers: byte stores
// could alias anything else.
template <typename Int, bool VectorQuantizer>
inline int64_t requantize_sse2(Int* __restrict out, const uint32_t* __restrict acc, int64_t n, float m, int64_t zp) {
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(Int) == 1) {
    const __m128 vm = _mm_set1_ps(m), bound = _mm_set1_ps(2147483520.0f);
    const __m128i vzp = _mm_set1_epi32(static_cast<int32_t>(zp));
    auto lanes = [&](int64_t k) {
      __m128 y = _mm_mul_ps(_mm_cvtepi32_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(acc + k))), vm);
      if constexpr (VectorQuantizer) y = _mm_min_ps(y, bound);
      return _mm_add_epi32(_mm_cvtps_epi32(y), vzp);
    };
    for (; i + 16 <= n; i += 16) {
      const __m128i lo = _mm_packs_epi32(lanes(i), lanes(i + 4)), hi = _mm_packs_epi32(lanes(i + 8), lanes(i + 12));
      const __m128i bytes = std::is_signed_v<Int> ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), bytes);
    }
  }
#endif
  return i;
}

template <typename Int>
inline void requantize_vector(Int* __restrict out, const uint32_t* __restrict acc, int64_t n, float m, int64_t zp) {
  constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
  for (int64_t i = requantize_sse2<Int, true>(out, acc, n, m, zp); i < n; ++i) {
    const float y = static_cast<float>(static_cast<int32_t>(acc[i])) * m;
    const float r = round_even(std::isnan(y) ? 2147483520.0f : std::min(y, 2147483520.0f));
    const int32_t k = r >= -2147483648.0f ? static_cast<int32_t>(r) : std::numeric_limits<int32_t>::min();
    const int64_t q = static_cast<int32_t>(static_cast<uint32_t>(k) + static_cast<uint32_t>(zp));
    out[i] = static_cast<Int>(std::min(std::max(q, qmin), qmax));
  }
}
template <typename Int>
inline void requantize_scalar(Int* __restrict out, const uint32_t* __restrict acc, int64_t n, float m, int64_t zp) {
  constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
  const float fzp = static_cast<float>(zp);
  for (int64_t i = requantize_sse2<Int, false>(out, acc, n, m, zp); i < n; ++i) {
    const int64_t q = truncate_like_x86(fzp + round_even(static_cast<float>(static_cast<int32_t>(acc[i])) * m));
    out[i] = static_cast<Int>(std::min(std::max(q, qmin), qmax));
  }
}

}  // namespace at::inline tessera::native
