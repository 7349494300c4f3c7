// Vectorized<float> and Vectorized<double> on AVX2 + FMA: one __m256 / __m256d. What is
// not defined here (expm1, sin, pow, ... and every double transcendental) is the generic
// element-wise std:: code of VectorizedOps, so it matches the DEFAULT capability exactly.
//
// Note [AVX2 float approximations]
// exp, log, tanh and sigmoid on float are polynomial approximations (Cephes-style range
// reduction, FMA evaluation), checked against the correctly rounded result by
// test_vectorized.cpp on a sweep of every 509th float (and, once, every 7th: 613M values
// each). Max error: exp 1 ulp, log 1 ulp, tanh 1 ulp, sigmoid 2 ulp, subnormal results
// included; special values (+-inf, NaN, +-0, overflow to inf, underflow to 0) are exact.
// Everything else here is exact.
#pragma once

#include <aten/cpu/vec/vec_base.h>

#if defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>

namespace at::inline tessera::vec {
inline namespace CPU_CAPABILITY {

namespace detail {
// Lanes [0, count) set: for masked loads and stores of a row's tail.
inline __m256i tail_mask_epi32(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256i tail_mask_epi64(int64_t count) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3));
}
}  // namespace detail

template <>
class Vectorized<float> : public VectorizedOps<float, Vectorized<float>> {
 public:
  Vectorized() : v_(_mm256_setzero_ps()) {}
  Vectorized(__m256 v) : v_(v) {}  // NOLINT
  Vectorized(float s) : v_(_mm256_set1_ps(s)) {}  // NOLINT
  Vectorized(float a0, float a1, float a2, float a3, float a4, float a5, float a6, float a7)
      : v_(_mm256_setr_ps(a0, a1, a2, a3, a4, a5, a6, a7)) {}
  operator __m256() const { return v_; }

  static Vectorized loadu(const void* p, int64_t count = 8) {
    if (count >= 8) return _mm256_loadu_ps(static_cast<const float*>(p));
    return _mm256_maskload_ps(static_cast<const float*>(p), detail::tail_mask_epi32(count));
  }
  void store(void* p, int64_t count = 8) const {
    if (count >= 8) _mm256_storeu_ps(static_cast<float*>(p), v_);
    else _mm256_maskstore_ps(static_cast<float*>(p), detail::tail_mask_epi32(count), v_);
  }
  float operator[](int i) const {
    alignas(32) float t[8];
    store(t);
    return t[i];
  }

  static Vectorized blendv(const Vectorized& a, const Vectorized& b, const Vectorized& m) {
    return _mm256_blendv_ps(a, b, m);
  }
  template <uint64_t Mask>
  static Vectorized blend(const Vectorized& a, const Vectorized& b) {
    return _mm256_blend_ps(a, b, static_cast<int>(Mask & 0xFF));
  }

  Vectorized isnan() const { return _mm256_cmp_ps(v_, v_, _CMP_UNORD_Q); }
  Vectorized abs() const { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v_); }
  Vectorized neg() const { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), v_); }
  Vectorized sqrt() const { return _mm256_sqrt_ps(v_); }
  Vectorized rsqrt() const { return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(v_)); }
  Vectorized reciprocal() const { return _mm256_div_ps(_mm256_set1_ps(1.0f), v_); }
  Vectorized floor() const { return _mm256_round_ps(v_, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  Vectorized ceil() const { return _mm256_round_ps(v_, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
  Vectorized round() const { return _mm256_round_ps(v_, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  Vectorized trunc() const { return _mm256_round_ps(v_, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  Vectorized frac() const { return _mm256_sub_ps(v_, trunc()); }
  Vectorized copysign(const Vectorized& o) const {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(sign, v_), _mm256_and_ps(sign, o));
  }

  Vectorized exp() const { return exp_clamped<false>(v_); }
  Vectorized exp_nonpositive() const { return exp_clamped<true>(v_); }

  Vectorized log() const {
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(x) = log1p(m - 1) + e * ln2.
    const __m256 one = _mm256_set1_ps(1.0f);
    // Subnormals: scale by 2^23 first.
    const __m256 tiny = _mm256_cmp_ps(v_, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ);
    const __m256 x = _mm256_blendv_ps(v_, _mm256_mul_ps(v_, _mm256_set1_ps(8388608.0f)), tiny);
    const __m256 e_adjust = _mm256_and_ps(tiny, _mm256_set1_ps(-23.0f));
    const __m256i bits = _mm256_castps_si256(x);
    __m256 e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
    e = _mm256_add_ps(e, e_adjust);
    // m in [0.5, 1)
    __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)),
                                                   _mm256_set1_epi32(0x3F000000)));
    const __m256 small = _mm256_cmp_ps(m, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
    e = _mm256_sub_ps(e, _mm256_and_ps(small, one));
    m = _mm256_sub_ps(_mm256_add_ps(m, _mm256_and_ps(small, m)), one);
    const __m256 z = _mm256_mul_ps(m, m);
    __m256 p = _mm256_set1_ps(7.0376836292e-2f);
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-1.1514610310e-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(1.1676998740e-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-1.2420140846e-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(1.4249322787e-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-1.6668057665e-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(2.0000714765e-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-2.4999993993e-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(3.3333331174e-1f));
    __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, m), z);
    y = _mm256_fmadd_ps(e, _mm256_set1_ps(-2.12194440e-4f), y);
    y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
    __m256 r = _mm256_add_ps(m, y);
    r = _mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), r);
    // log(0) = -inf, log(negative) = NaN, log(inf) = inf, log(NaN) = NaN.
    const __m256 zero = _mm256_setzero_ps();
    r = _mm256_blendv_ps(r, _mm256_set1_ps(-std::numeric_limits<float>::infinity()),
                         _mm256_cmp_ps(v_, zero, _CMP_EQ_OQ));
    r = _mm256_blendv_ps(r, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()),
                         _mm256_cmp_ps(v_, zero, _CMP_LT_OQ));
    const __m256 pass = _mm256_or_ps(isnan(), _mm256_cmp_ps(v_, _mm256_set1_ps(std::numeric_limits<float>::infinity()),
                                                            _CMP_EQ_OQ));
    return _mm256_blendv_ps(r, _mm256_add_ps(v_, v_), pass);
  }

  Vectorized tanh() const {
    // |x| < 0.625: odd polynomial; otherwise 1 - 2 / (exp(2|x|) + 1). The sign goes back last.
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 ax = _mm256_andnot_ps(sign, v_);
    const __m256 z = _mm256_mul_ps(ax, ax);
    __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954e-2f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531e-2f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036e-1f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422e-1f));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), ax, ax);
    const __m256 e = Vectorized(_mm256_add_ps(ax, ax)).exp();
    const __m256 large = _mm256_sub_ps(_mm256_set1_ps(1.0f),
                                       _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
    const __m256 r = _mm256_blendv_ps(large, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
    return _mm256_or_ps(r, _mm256_and_ps(sign, v_));
  }

  // 1 / (1 + e^-x), as e^x / (1 + e^x) for x < 0 so the exponential never overflows.
  Vectorized sigmoid() const {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 e = exp_clamped<true>(_mm256_or_ps(_mm256_set1_ps(-0.0f), v_));  // e^-|x|
    const __m256 num = _mm256_blendv_ps(one, e, _mm256_cmp_ps(v_, _mm256_setzero_ps(), _CMP_LT_OQ));
    return _mm256_div_ps(num, _mm256_add_ps(one, e));
  }

  // exp(x) = 2^n * exp(r), n = round(x / ln2), |r| <= ln2 / 2; ln2 split in two so n * hi
  // is exact. 2^n is applied in two halves so results down to the subnormals are right.
  // The clamps take x as their second operand, which min/max return when it is NaN, so a
  // NaN goes through the arithmetic and comes out NaN with no blend. NonPositive: the
  // caller knows x <= 0 (or NaN) and the upper clamp is left out (sigmoid's e^-|x|).
  template <bool NonPositive>
  static __m256 exp_clamped(__m256 v) {
    __m256 x = _mm256_max_ps(_mm256_set1_ps(-104.0f), v);
    if constexpr (!NonPositive) x = _mm256_min_ps(_mm256_set1_ps(89.0f), x);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
    return y;
  }

 private:
  __m256 v_;
};

inline Vectorized<float> operator+(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_add_ps(a, b); }
inline Vectorized<float> operator-(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_sub_ps(a, b); }
inline Vectorized<float> operator*(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_mul_ps(a, b); }
inline Vectorized<float> operator/(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_div_ps(a, b); }
inline Vectorized<float> operator-(const Vectorized<float>& a) { return a.neg(); }
inline Vectorized<float> operator&(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_and_ps(a, b); }
inline Vectorized<float> operator|(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_or_ps(a, b); }
inline Vectorized<float> operator^(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_xor_ps(a, b); }
inline Vectorized<float> operator==(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
inline Vectorized<float> operator!=(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }
inline Vectorized<float> operator<(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
inline Vectorized<float> operator<=(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
inline Vectorized<float> operator>(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
inline Vectorized<float> operator>=(const Vectorized<float>& a, const Vectorized<float>& b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
// maxps(a, b) is a > b ? a : b, and b when either is NaN; blend a back where a is NaN.
inline Vectorized<float> maximum(const Vectorized<float>& a, const Vectorized<float>& b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, a.isnan());
}
inline Vectorized<float> minimum(const Vectorized<float>& a, const Vectorized<float>& b) {
  return _mm256_blendv_ps(_mm256_min_ps(a, b), a, a.isnan());
}
inline Vectorized<float> clamp_min(const Vectorized<float>& a, const Vectorized<float>& lo) { return _mm256_max_ps(lo, a); }
inline Vectorized<float> clamp_max(const Vectorized<float>& a, const Vectorized<float>& hi) { return _mm256_min_ps(hi, a); }
inline Vectorized<float> clamp(const Vectorized<float>& a, const Vectorized<float>& lo, const Vectorized<float>& hi) {
  return _mm256_min_ps(hi, _mm256_max_ps(lo, a));
}
inline Vectorized<float> fmadd(const Vectorized<float>& a, const Vectorized<float>& b, const Vectorized<float>& c) {
  return _mm256_fmadd_ps(a, b, c);
}

template <>
class Vectorized<double> : public VectorizedOps<double, Vectorized<double>> {
 public:
  Vectorized() : v_(_mm256_setzero_pd()) {}
  Vectorized(__m256d v) : v_(v) {}  // NOLINT
  Vectorized(double s) : v_(_mm256_set1_pd(s)) {}  // NOLINT
  Vectorized(double a0, double a1, double a2, double a3) : v_(_mm256_setr_pd(a0, a1, a2, a3)) {}
  operator __m256d() const { return v_; }

  static Vectorized loadu(const void* p, int64_t count = 4) {
    if (count >= 4) return _mm256_loadu_pd(static_cast<const double*>(p));
    return _mm256_maskload_pd(static_cast<const double*>(p), detail::tail_mask_epi64(count));
  }
  void store(void* p, int64_t count = 4) const {
    if (count >= 4) _mm256_storeu_pd(static_cast<double*>(p), v_);
    else _mm256_maskstore_pd(static_cast<double*>(p), detail::tail_mask_epi64(count), v_);
  }
  double operator[](int i) const {
    alignas(32) double t[4];
    store(t);
    return t[i];
  }

  static Vectorized blendv(const Vectorized& a, const Vectorized& b, const Vectorized& m) {
    return _mm256_blendv_pd(a, b, m);
  }
  template <uint64_t Mask>
  static Vectorized blend(const Vectorized& a, const Vectorized& b) {
    return _mm256_blend_pd(a, b, static_cast<int>(Mask & 0xF));
  }

  Vectorized isnan() const { return _mm256_cmp_pd(v_, v_, _CMP_UNORD_Q); }
  Vectorized abs() const { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v_); }
  Vectorized neg() const { return _mm256_xor_pd(_mm256_set1_pd(-0.0), v_); }
  Vectorized sqrt() const { return _mm256_sqrt_pd(v_); }
  Vectorized rsqrt() const { return _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(v_)); }
  Vectorized reciprocal() const { return _mm256_div_pd(_mm256_set1_pd(1.0), v_); }
  Vectorized floor() const { return _mm256_round_pd(v_, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  Vectorized ceil() const { return _mm256_round_pd(v_, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
  Vectorized round() const { return _mm256_round_pd(v_, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  Vectorized trunc() const { return _mm256_round_pd(v_, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  Vectorized frac() const { return _mm256_sub_pd(v_, trunc()); }
  Vectorized copysign(const Vectorized& o) const {
    const __m256d sign = _mm256_set1_pd(-0.0);
    return _mm256_or_pd(_mm256_andnot_pd(sign, v_), _mm256_and_pd(sign, o));
  }

 private:
  __m256d v_;
};

inline Vectorized<double> operator+(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_add_pd(a, b); }
inline Vectorized<double> operator-(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_sub_pd(a, b); }
inline Vectorized<double> operator*(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_mul_pd(a, b); }
inline Vectorized<double> operator/(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_div_pd(a, b); }
inline Vectorized<double> operator-(const Vectorized<double>& a) { return a.neg(); }
inline Vectorized<double> operator&(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_and_pd(a, b); }
inline Vectorized<double> operator|(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_or_pd(a, b); }
inline Vectorized<double> operator^(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_xor_pd(a, b); }
inline Vectorized<double> operator==(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
inline Vectorized<double> operator!=(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_cmp_pd(a, b, _CMP_NEQ_UQ); }
inline Vectorized<double> operator<(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
inline Vectorized<double> operator<=(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
inline Vectorized<double> operator>(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
inline Vectorized<double> operator>=(const Vectorized<double>& a, const Vectorized<double>& b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
inline Vectorized<double> maximum(const Vectorized<double>& a, const Vectorized<double>& b) {
  return _mm256_blendv_pd(_mm256_max_pd(a, b), a, a.isnan());
}
inline Vectorized<double> minimum(const Vectorized<double>& a, const Vectorized<double>& b) {
  return _mm256_blendv_pd(_mm256_min_pd(a, b), a, a.isnan());
}
inline Vectorized<double> clamp_min(const Vectorized<double>& a, const Vectorized<double>& lo) { return _mm256_max_pd(lo, a); }
inline Vectorized<double> clamp_max(const Vectorized<double>& a, const Vectorized<double>& hi) { return _mm256_min_pd(hi, a); }
inline Vectorized<double> clamp(const Vectorized<double>& a, const Vectorized<double>& lo, const Vectorized<double>& hi) {
  return _mm256_min_pd(hi, _mm256_max_pd(lo, a));
}
inline Vectorized<double> fmadd(const Vectorized<double>& a, const Vectorized<double>& b, const Vectorized<double>& c) {
  return _mm256_fmadd_pd(a, b, c);
}

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::vec

#endif  // CPU_CAPABILITY_AVX2
