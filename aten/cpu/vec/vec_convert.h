// Half and BFloat16 kernels compute in float: these load 16 reduced floats as two
// Vectorized<float> (lanes 0-7, 8-15) and store two back, bit for bit as c10::Half and
// c10::BFloat16 convert one value (round to nearest even; NaN becomes the signed canonical
// quiet NaN going down and keeps its payload going up). AVX2 uses F16C and fixes the NaN
// lanes, whose handling F16C does differently.
#pragma once

#include <aten/cpu/vec/vec_avx2_float.h>
#include <aten/cpu/vec/vec_base.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <utility>

namespace at::inline tessera::vec {
inline namespace CPU_CAPABILITY {

namespace detail {

template <typename R>
inline constexpr bool is_reduced_v = std::is_same_v<R, c10::Half> || std::is_same_v<R, c10::BFloat16>;

#if defined(CPU_CAPABILITY_AVX2)
// 8 Half bits (in 16-bit lanes) -> 8 floats.
inline __m256 half8_to_float(__m128i h) {
  const __m256 f = _mm256_cvtph_ps(h);
  const __m256i w = _mm256_cvtepu16_epi32(h);
  const __m256i mag = _mm256_and_si256(w, _mm256_set1_epi32(0x7FFF));
  const __m256i nan_bits = _mm256_or_si256(
      _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16), _mm256_set1_epi32(0x7F800000)),
      _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x3FF)), 13));
  const __m256i is_nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7C00));
  return _mm256_castsi256_ps(_mm256_blendv_epi8(_mm256_castps_si256(f), nan_bits, is_nan));
}
// 8 floats -> 8 Half bits.
inline __m128i float8_to_half(__m256 f) {
  const __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
  const __m128i is_nan = _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7FFF)), _mm_set1_epi16(0x7C00));
  const __m128i canonical = _mm_or_si128(_mm_and_si128(h, _mm_set1_epi16(static_cast<short>(0x8000))), _mm_set1_epi16(0x7E00));
  return _mm_blendv_epi8(h, canonical, is_nan);
}
inline __m256 bf16x8_to_float(__m128i b) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
}
// 8 floats -> 8 BFloat16 bits in the low 16 bits of each 32-bit lane.
inline __m256i float8_to_bf16_epi32(__m256 f) {
  const __m256i bits = _mm256_castps_si256(f);
  const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF)),
                                            _mm256_set1_epi32(0x7F800000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i canonical = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x8000)),
                                            _mm256_set1_epi32(0x7FC0));
  return _mm256_blendv_epi8(rounded, canonical, is_nan);
}
#endif

}  // namespace detail

// Loads `count` (<= 16) Half/BFloat16 values from src as floats; lanes past count are 0.
template <typename R>
  requires detail::is_reduced_v<R>
std::pair<Vectorized<float>, Vectorized<float>> load_as_float(const R* src, int64_t count = 16) {
#if defined(CPU_CAPABILITY_AVX2)
  alignas(32) uint16_t bits[16] = {};
  if (count >= 16) std::memcpy(bits, src, sizeof(bits));
  else std::memcpy(bits, src, static_cast<size_t>(count) * sizeof(uint16_t));
  const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(bits));
  const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(bits + 8));
  if constexpr (std::is_same_v<R, c10::Half>) {
    return {detail::half8_to_float(lo), detail::half8_to_float(hi)};
  } else {
    return {detail::bf16x8_to_float(lo), detail::bf16x8_to_float(hi)};
  }
#else
  alignas(32) float f[16] = {};
  for (int64_t i = 0; i < count && i < 16; ++i) f[i] = static_cast<float>(src[i]);
  return {Vectorized<float>::loadu(f), Vectorized<float>::loadu(f + 8)};
#endif
}

// Stores the first `count` (<= 16) lanes of lo:hi to dst, rounded to R.
template <typename R>
  requires detail::is_reduced_v<R>
void store_from_float(R* dst, const Vectorized<float>& lo, const Vectorized<float>& hi, int64_t count = 16) {
  alignas(32) uint16_t bits[16];
#if defined(CPU_CAPABILITY_AVX2)
  if constexpr (std::is_same_v<R, c10::Half>) {
    _mm_store_si128(reinterpret_cast<__m128i*>(bits), detail::float8_to_half(lo));
    _mm_store_si128(reinterpret_cast<__m128i*>(bits + 8), detail::float8_to_half(hi));
  } else {
    // packus interleaves 128-bit halves: [lo0-3 hi0-3 lo4-7 hi4-7]; the permute restores order.
    const __m256i packed = _mm256_packus_epi32(detail::float8_to_bf16_epi32(lo), detail::float8_to_bf16_epi32(hi));
    _mm256_store_si256(reinterpret_cast<__m256i*>(bits), _mm256_permute4x64_epi64(packed, 0xD8));
  }
#else
  alignas(32) float f[16];
  lo.store(f);
  hi.store(f + 8);
  for (int i = 0; i < 16; ++i) bits[i] = R::from_float(f[i]);
#endif
  std::memcpy(static_cast<void*>(dst), bits, static_cast<size_t>(count < 16 ? count : 16) * sizeof(uint16_t));
}

// The same on Vectorized<Half>/<BFloat16> (16 lanes): torch's convert_* helpers.
template <typename R>
  requires detail::is_reduced_v<R>
std::pair<Vectorized<float>, Vectorized<float>> convert_to_float(const Vectorized<R>& a) {
  alignas(32) R v[16];
  a.store(v);
  return load_as_float(v);
}
template <typename R>
  requires detail::is_reduced_v<R>
Vectorized<R> convert_from_float(const Vectorized<float>& lo, const Vectorized<float>& hi) {
  alignas(32) R v[16];
  store_from_float(v, lo, hi);
  return Vectorized<R>::loadu(v);
}

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::vec
