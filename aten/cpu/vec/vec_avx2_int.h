// Vectorized<int32_t> and Vectorized<int64_t> on AVX2: arithmetic (wrapping), min/max,
// comparisons, bitwise operations and torch's shifts in registers. Division and the rest
// are the generic element-wise code. int64 multiply and arithmetic right shift have no
// AVX2 instruction and are built from 32-bit pieces.
#pragma once

#include <aten/cpu/vec/vec_avx2_float.h>

#if defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>

namespace at::inline tessera::vec {
inline namespace CPU_CAPABILITY {

// The parts both integer widths share; Derived supplies the lane-width instructions.
template <typename T>
class VectorizedAvx2Int : public VectorizedOps<T, Vectorized<T>> {
 public:
  VectorizedAvx2Int() : v_(_mm256_setzero_si256()) {}
  VectorizedAvx2Int(__m256i v) : v_(v) {}  // NOLINT
  operator __m256i() const { return v_; }

  static Vectorized<T> blendv(const Vectorized<T>& a, const Vectorized<T>& b, const Vectorized<T>& m) {
    return Vectorized<T>(_mm256_blendv_epi8(a, b, m));  // masks are whole lanes
  }
  void store(void* p, int64_t count = 32 / sizeof(T)) const {
    if (count >= static_cast<int64_t>(32 / sizeof(T))) {
      _mm256_storeu_si256(static_cast<__m256i*>(p), v_);
    } else if constexpr (sizeof(T) == 4) {
      _mm256_maskstore_epi32(static_cast<int*>(p), detail::tail_mask_epi32(count), v_);
    } else {
      _mm256_maskstore_epi64(static_cast<long long*>(p), detail::tail_mask_epi64(count), v_);
    }
  }
  static Vectorized<T> loadu(const void* p, int64_t count = 32 / sizeof(T)) {
    if (count >= static_cast<int64_t>(32 / sizeof(T))) {
      return Vectorized<T>(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
    } else if constexpr (sizeof(T) == 4) {
      return Vectorized<T>(_mm256_maskload_epi32(static_cast<const int*>(p), detail::tail_mask_epi32(count)));
    } else {
      return Vectorized<T>(_mm256_maskload_epi64(static_cast<const long long*>(p), detail::tail_mask_epi64(count)));
    }
  }
  T operator[](int i) const {
    alignas(32) T t[32 / sizeof(T)];
    store(t);
    return t[i];
  }
  Vectorized<T> neg() const { return Vectorized<T>(_mm256_setzero_si256()) - Vectorized<T>(v_); }

 protected:
  __m256i v_;
};

template <>
class Vectorized<int32_t> : public VectorizedAvx2Int<int32_t> {
 public:
  using VectorizedAvx2Int<int32_t>::VectorizedAvx2Int;
  Vectorized() = default;
  Vectorized(int32_t s) : VectorizedAvx2Int(_mm256_set1_epi32(s)) {}  // NOLINT
  Vectorized(int32_t a0, int32_t a1, int32_t a2, int32_t a3, int32_t a4, int32_t a5, int32_t a6, int32_t a7)
      : VectorizedAvx2Int(_mm256_setr_epi32(a0, a1, a2, a3, a4, a5, a6, a7)) {}
  Vectorized abs() const { return _mm256_abs_epi32(v_); }  // abs(INT_MIN) wraps, like torch
};

template <>
class Vectorized<int64_t> : public VectorizedAvx2Int<int64_t> {
 public:
  using VectorizedAvx2Int<int64_t>::VectorizedAvx2Int;
  Vectorized() = default;
  Vectorized(int64_t s) : VectorizedAvx2Int(_mm256_set1_epi64x(s)) {}  // NOLINT
  Vectorized(int64_t a0, int64_t a1, int64_t a2, int64_t a3) : VectorizedAvx2Int(_mm256_setr_epi64x(a0, a1, a2, a3)) {}
  Vectorized abs() const {
    const __m256i negative = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v_);
    return _mm256_blendv_epi8(v_, _mm256_sub_epi64(_mm256_setzero_si256(), v_), negative);
  }
};

#define TESSERA_AVX2_INT_OPS(T, W)                                                                              \
  inline Vectorized<T> operator+(const Vectorized<T>& a, const Vectorized<T>& b) { return _mm256_add_epi##W(a, b); } \
  inline Vectorized<T> operator-(const Vectorized<T>& a, const Vectorized<T>& b) { return _mm256_sub_epi##W(a, b); } \
  inline Vectorized<T> operator-(const Vectorized<T>& a) { return _mm256_sub_epi##W(_mm256_setzero_si256(), a); }  \
  inline Vectorized<T> operator&(const Vectorized<T>& a, const Vectorized<T>& b) { return _mm256_and_si256(a, b); } \
  inline Vectorized<T> operator|(const Vectorized<T>& a, const Vectorized<T>& b) { return _mm256_or_si256(a, b); }  \
  inline Vectorized<T> operator^(const Vectorized<T>& a, const Vectorized<T>& b) { return _mm256_xor_si256(a, b); } \
  inline Vectorized<T> operator~(const Vectorized<T>& a) { return _mm256_xor_si256(a, _mm256_set1_epi32(-1)); }   \
  inline Vectorized<T> operator==(const Vectorized<T>& a, const Vectorized<T>& b) { return _mm256_cmpeq_epi##W(a, b); } \
  inline Vectorized<T> operator!=(const Vectorized<T>& a, const Vectorized<T>& b) { return ~(a == b); }           \
  inline Vectorized<T> operator>(const Vectorized<T>& a, const Vectorized<T>& b) { return _mm256_cmpgt_epi##W(a, b); } \
  inline Vectorized<T> operator<(const Vectorized<T>& a, const Vectorized<T>& b) { return b > a; }                \
  inline Vectorized<T> operator<=(const Vectorized<T>& a, const Vectorized<T>& b) { return ~(a > b); }            \
  inline Vectorized<T> operator>=(const Vectorized<T>& a, const Vectorized<T>& b) { return ~(b > a); }            \
  inline Vectorized<T> clamp_min(const Vectorized<T>& a, const Vectorized<T>& lo) { return maximum(lo, a); }      \
  inline Vectorized<T> clamp_max(const Vectorized<T>& a, const Vectorized<T>& hi) { return minimum(hi, a); }      \
  inline Vectorized<T> clamp(const Vectorized<T>& a, const Vectorized<T>& lo, const Vectorized<T>& hi) {          \
    return minimum(hi, maximum(lo, a));                                                                          \
  }                                                                                                              \
  inline Vectorized<T> fmadd(const Vectorized<T>& a, const Vectorized<T>& b, const Vectorized<T>& c) { return a * b + c; }

inline Vectorized<int32_t> operator*(const Vectorized<int32_t>& a, const Vectorized<int32_t>& b) {
  return _mm256_mullo_epi32(a, b);
}
inline Vectorized<int32_t> maximum(const Vectorized<int32_t>& a, const Vectorized<int32_t>& b) {
  return _mm256_max_epi32(a, b);
}
inline Vectorized<int32_t> minimum(const Vectorized<int32_t>& a, const Vectorized<int32_t>& b) {
  return _mm256_min_epi32(a, b);
}
// Shift counts are read as unsigned, so negative and too-large counts give 0 (left) and
// the sign fill (right): torch's rule.
inline Vectorized<int32_t> operator<<(const Vectorized<int32_t>& a, const Vectorized<int32_t>& b) {
  return _mm256_sllv_epi32(a, b);
}
inline Vectorized<int32_t> operator>>(const Vectorized<int32_t>& a, const Vectorized<int32_t>& b) {
  return _mm256_srav_epi32(a, b);
}
TESSERA_AVX2_INT_OPS(int32_t, 32)

// a * b mod 2^64 = lo*lo + ((lo*hi + hi*lo) << 32), each product from 32-bit halves.
inline Vectorized<int64_t> operator*(const Vectorized<int64_t>& a, const Vectorized<int64_t>& b) {
  const __m256i a_hi = _mm256_srli_epi64(a, 32);
  const __m256i b_hi = _mm256_srli_epi64(b, 32);
  const __m256i lo = _mm256_mul_epu32(a, b);
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(a, b_hi), _mm256_mul_epu32(a_hi, b));
  return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
}
inline Vectorized<int64_t> maximum(const Vectorized<int64_t>& a, const Vectorized<int64_t>& b) {
  return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(a, b));
}
inline Vectorized<int64_t> minimum(const Vectorized<int64_t>& a, const Vectorized<int64_t>& b) {
  return _mm256_blendv_epi8(b, a, _mm256_cmpgt_epi64(b, a));
}
inline Vectorized<int64_t> operator<<(const Vectorized<int64_t>& a, const Vectorized<int64_t>& b) {
  return _mm256_sllv_epi64(a, b);
}
inline Vectorized<int64_t> operator>>(const Vectorized<int64_t>& a, const Vectorized<int64_t>& b) {
  // Logical shift, then the sign bits shifted in from the left; counts outside [0, 64)
  // give the sign fill.
  const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), a);
  const __m256i logical = _mm256_srlv_epi64(a, b);
  const __m256i fill = _mm256_sllv_epi64(sign, _mm256_sub_epi64(_mm256_set1_epi64x(64), b));
  const __m256i in_range = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), b),
                                               _mm256_cmpgt_epi64(_mm256_set1_epi64x(64), b));
  return _mm256_blendv_epi8(sign, _mm256_or_si256(logical, fill), in_range);
}
TESSERA_AVX2_INT_OPS(int64_t, 64)
#undef TESSERA_AVX2_INT_OPS

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::vec

#endif  // CPU_CAPABILITY_AVX2
