// The quantized norms' loops, compiled once per ISA: the batch norm's per-channel y =
// fma(alpha, x - zp, beta) quantized as torch's vector loop (a pixel's first C - C % 8
// channels) or its lrintf tail, Note [Quantized batch norm arithmetic]; the layer, group and
// instance norms' integer statistics and per-element normalization, Notes [Quantized layer
// norm arithmetic] and [Quantized group norm arithmetic]. std::fma is the fused multiply-add
// on every ISA (an instruction under AVX2, libm's exact one elsewhere).
#include <aten/core/Parallel.h>
#include <aten/native/quantized/QuantizedNorm.h>
#include <aten/native/quantized/cpu/QuantizeVal.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

// The tail's lrintf: round half to even, LONG_MIN for NaN, infinities and values outside
// int64; the zero point added in int64 with wrap-around.
inline int64_t lrintf_plus(float y, int64_t zero_point) {
  const int64_t r = truncate_to_int64(std::nearbyint(y));
  return static_cast<int64_t>(static_cast<uint64_t>(r) + static_cast<uint64_t>(zero_point));
}

// torch's vector dequantization of an integer: float(x) - float(zp) (fma(1, x, -zp)), which
// rounds for qint32 values or zero points past 2^24; 8-bit values are exact either way.
inline float dequantized_offset(int64_t x, int64_t zero_point) {
  return static_cast<float>(x) - static_cast<float>(zero_point);
}

// The elements torch's vector loops cover in a run of n: blocks of 32 8-bit values (four
// float vectors), of 8 qint32 ones.
template <typename Int>
constexpr int64_t vector_extent(int64_t n) {
  return sizeof(Int) == 1 ? n / 32 * 32 : n / 8 * 8;
}

// y[i] = fma(a(i), float(x[i]) - float(zp) - shift_before, b(i)) for i < n, where a and b are
// per-element arrays (a_step / b_step 1) or one value (step 0); eight lanes at a time under
// AVX2, the same roundings as the scalar form.
template <typename Int>
void affine_offsets(const Int* x, int64_t n, int64_t zp, float shift_before, const float* a, int a_step, const float* b,
                    int b_step, float* y) {
  int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX2)
  const __m256 zero_point = _mm256_set1_ps(static_cast<float>(zp)), before = _mm256_set1_ps(shift_before);
  for (; i + 8 <= n; i += 8) {
    const __m256i ints = load8_as_int32(x + i);
    __m256 d = _mm256_sub_ps(_mm256_cvtepi32_ps(ints), zero_point);
    if (shift_before != 0.0f) d = _mm256_sub_ps(d, before);
    const __m256 av = a_step ? _mm256_loadu_ps(a + i) : _mm256_set1_ps(*a);
    const __m256 bv = b_step ? _mm256_loadu_ps(b + i) : _mm256_set1_ps(*b);
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, d, bv));
  }
#endif
  for (; i < n; ++i) {
    float d = dequantized_offset(x[i], zp);
    if (shift_before != 0.0f) d -= shift_before;
    y[i] = std::fma(a[i * a_step], d, b[i * b_step]);
  }
}

// dst[i] = the quantized y[i] * inv_out_scale: for i < vector_end the vector quantizer (8-bit:
// eight lanes per instruction under AVX2; qint32: quantize_val with the zero point taken as
// int32, as torch's vector form takes it), quantize_val for the rest.
template <typename Int>
void store_quantized(const float* y, Int* dst, int64_t n, int64_t vector_end, float inv_out_scale, int64_t zp) {
  int64_t i = 0;
  if constexpr (sizeof(Int) == 1) {
#if defined(CPU_CAPABILITY_AVX2)
    const __m256 inv = _mm256_set1_ps(inv_out_scale), bound = _mm256_set1_ps(2147483520.0f);
    const __m256i zero_point = _mm256_set1_epi32(static_cast<int32_t>(zp));
    const __m256i lo = _mm256_set1_epi32(std::numeric_limits<Int>::min());
    const __m256i hi = _mm256_set1_epi32(std::numeric_limits<Int>::max());
    for (; i + 8 <= vector_end; i += 8) {
      // minps returns its second operand for a NaN: the bound, as torch's quantizer
      const __m256 t = _mm256_min_ps(_mm256_mul_ps(_mm256_loadu_ps(y + i), inv), bound);
      const __m256i q = _mm256_max_epi32(_mm256_min_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(t), zero_point), hi), lo);
      const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
      const __m128i bytes =
          std::is_same_v<Int, uint8_t> ? _mm_packus_epi16(words, words) : _mm_packs_epi16(words, words);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + i), bytes);
    }
#endif
    for (; i < vector_end; ++i) dst[i] = quantize_vector_lane<Int>(y[i] * inv_out_scale, zp);
  } else {
    for (; i < vector_end; ++i) dst[i] = quantize_val<Int>(y[i], inv_out_scale, static_cast<int32_t>(zp));
  }
  for (; i < n; ++i) dst[i] = quantize_val<Int>(y[i], inv_out_scale, zp);
}

template <typename Int>
void batch_norm_rows(const Tensor& out, const Tensor& x, int64_t x_zp, const float* alpha, const float* beta,
                     int64_t out_zp, bool relu) {
  constexpr int64_t qmin = std::numeric_limits<Int>::min(), qmax = std::numeric_limits<Int>::max();
  const int64_t rows = x.size(0), channels = x.size(1), vector_channels = channels / 8 * 8;
  // the vector loop's relu compares with the zero point converted to the stored type
  const Int stored_zp = static_cast<Int>(out_zp);
  const Int* const in = x.data_ptr<Int>();
  Int* const res = out.data_ptr<Int>();
  at::parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(channels, 1)), [&](int64_t b, int64_t e) {
    std::vector<float> y(static_cast<size_t>(channels));
    for (int64_t r = b; r < e; ++r) {
      const Int* row = in + r * x.stride(0);
      Int* dst = res + r * out.stride(0);
      // the vector channels dequantize in float, the lrintf tail exactly
      affine_offsets(row, vector_channels, x_zp, 0.0f, alpha, 1, beta, 1, y.data());
      for (int64_t c = vector_channels; c < channels; ++c) {
        y[c] = std::fma(alpha[c], static_cast<float>(static_cast<int64_t>(row[c]) - x_zp), beta[c]);
      }
      // the output scale is folded into alpha and beta
      store_quantized<Int>(y.data(), dst, vector_channels, vector_channels, 1.0f, out_zp);
      if (relu) {
        for (int64_t c = 0; c < vector_channels; ++c) dst[c] = std::max(dst[c], stored_zp);
      }
      for (int64_t c = vector_channels; c < channels; ++c) {
        int64_t v = lrintf_plus(y[c], out_zp);
        if (relu) v = std::max(v, out_zp);
        dst[c] = static_cast<Int>(std::min(std::max(v, qmin), qmax));
      }
    }
  });
}

// qint32's sum of squares as torch's hsum_sq: eight float lanes accumulated with fma, added
// in order into 0, then the tail with fma.
float int32_sum_of_squares(const int32_t* x, int64_t n) {
  float lanes[8] = {};
  const int64_t vectorized = n / 8 * 8;
  for (int64_t i = 0; i < vectorized; i += 8) {
    for (int k = 0; k < 8; ++k) {
      const auto v = static_cast<float>(x[i + k]);
      lanes[k] = std::fma(v, v, lanes[k]);
    }
  }
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  for (int64_t i = vectorized; i < n; ++i) {
    const auto v = static_cast<float>(x[i]);
    total = std::fma(v, v, total);
  }
  return total;
}

// mean (zero point removed) and inv = x_scale / std of n values from their integer sums.
struct NormStats {
  float mean, inv;
};
inline NormStats norm_stats(float sum, float sum_sq, float count, int64_t x_zp, float x_scale, double eps) {
  const float ms = sum / count;
  const float mean = ms - static_cast<float>(x_zp);
  const float var = std::max(std::fma(-ms, ms, sum_sq / count), 0.0f);
  const float scaled_var = var * x_scale * x_scale;
  return {mean, static_cast<float>(static_cast<double>(x_scale) / std::sqrt(static_cast<double>(scaled_var) + eps))};
}

// The integer sums of n values (for qint32 the squares in torch's float order).
template <typename Int>
inline std::pair<int64_t, float> integer_sums(const Int* x, int64_t n) {
  int64_t sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += x[i];
    if constexpr (sizeof(Int) == 1) sum_sq += static_cast<int64_t>(x[i]) * x[i];
  }
  if constexpr (sizeof(Int) == 4) {
    return {sum, int32_sum_of_squares(reinterpret_cast<const int32_t*>(x), n)};
  } else {
    return {sum, static_cast<float>(sum_sq)};
  }
}

template <typename Int>
void layer_norm_rows(const Tensor& out, const Tensor& x, int64_t x_zp, float x_scale, const float* gamma,
                     const float* beta, double eps, float out_scale, int64_t out_zp) {
  const int64_t rows = x.size(0), n = x.size(1), vectorized = vector_extent<Int>(n);
  const float inv_out_scale = 1.0f / out_scale, count = static_cast<float>(n);
  const Int* const in = x.data_ptr<Int>();
  Int* const res = out.data_ptr<Int>();
  at::parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    std::vector<float> y(static_cast<size_t>(n));
    for (int64_t r = b; r < e; ++r) {
      const Int* row = in + r * n;
      const auto [sum, sum_sq] = integer_sums(row, n);
      const auto [mean, inv] = norm_stats(static_cast<float>(sum), sum_sq, count, x_zp, x_scale, eps);
      for (int64_t i = 0; i < n; ++i) {
        const float t = (dequantized_offset(row[i], x_zp) - mean) * inv;
        y[i] = std::fma(t, gamma ? gamma[i] : 1.0f, beta ? beta[i] : 0.0f);
      }
      store_quantized<Int>(y.data(), res + r * n, n, vectorized, inv_out_scale, out_zp);
    }
  });
}

template <typename Int>
void group_norm_nchw(const Tensor& out, const Tensor& x, int64_t groups, int64_t x_zp, float x_scale,
                     const float* gamma, const float* beta, double eps, float out_scale, int64_t out_zp) {
  const int64_t batch = x.size(0), channels = x.size(1), hw = x.size(2), per_group = channels / groups;
  const int64_t n = per_group * hw;
  const float inv_out_scale = 1.0f / out_scale;
  const Int* const in = x.data_ptr<Int>();
  Int* const res = out.data_ptr<Int>();
  at::parallel_for(0, batch * groups, 1, [&](int64_t b, int64_t e) {
    std::vector<float> y(static_cast<size_t>(hw));
    for (int64_t bg = b; bg < e; ++bg) {
      const Int* seg = in + bg * n;
      Int* dst = res + bg * n;
      const auto [sum, sum_sq] = integer_sums(seg, n);
      const auto [mean, inv] = norm_stats(static_cast<float>(sum), sum_sq, static_cast<float>(n), x_zp, x_scale, eps);
      for (int64_t d = 0; d < per_group; ++d) {
        const int64_t c = (bg % groups) * per_group + d;
        const float scale = inv * (gamma ? gamma[c] : 1.0f), shift = beta ? beta[c] : 0.0f;
        affine_offsets(seg + d * hw, hw, x_zp, mean, &scale, 0, &shift, 0, y.data());
        store_quantized<Int>(y.data(), dst + d * hw, hw, hw, inv_out_scale, out_zp);
      }
    }
  });
}

// The (sample, group) statistics of a channels-last input [B, HxW, C], one sample per task.
template <typename Int>
std::vector<NormStats> group_stats_nhwc(const Tensor& x, int64_t groups, int64_t x_zp, float x_scale, double eps) {
  const int64_t batch = x.size(0), hw = x.size(1), channels = x.size(2), per_group = channels / groups;
  const auto count = static_cast<float>(per_group * hw);
  const Int* const in = x.data_ptr<Int>();
  std::vector<NormStats> stats(static_cast<size_t>(batch * groups));
  at::parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
    std::vector<int64_t> sums(static_cast<size_t>(groups)), sums_sq(static_cast<size_t>(groups));
    std::vector<float> channel_sums(static_cast<size_t>(channels)), channel_sums_sq(static_cast<size_t>(channels));
    for (int64_t b = b0; b < b1; ++b) {
      const Int* sample = in + b * hw * channels;
      std::fill(sums.begin(), sums.end(), 0);
      std::fill(sums_sq.begin(), sums_sq.end(), 0);
      std::fill(channel_sums.begin(), channel_sums.end(), 0.0f);
      std::fill(channel_sums_sq.begin(), channel_sums_sq.end(), 0.0f);
      for (int64_t p = 0; p < hw; ++p) {
        const Int* px = sample + p * channels;
        if (hw < 512) {  // exact sums (qint32's squares: a float total truncated to int64 per pixel)
          for (int64_t g = 0; g < groups; ++g) {
            const auto [s, sq] = integer_sums(px + g * per_group, per_group);
            sums[g] += s;
            sums_sq[g] = sizeof(Int) == 4 ? truncate_to_int64(static_cast<float>(sums_sq[g]) + sq)
                                          : sums_sq[g] + static_cast<int64_t>(sq);
          }
        } else {  // float32 per-channel sums, each in pixel order (torch's at one thread)
          int64_t c = 0;
#if defined(CPU_CAPABILITY_AVX2)
          for (; c + 8 <= channels; c += 8) {
            const __m256i ints = load8_as_int32(px + c);
            // the squares in int32 (exact for 8-bit values, wrapping for qint32 as torch's)
            const __m256i squares = _mm256_mullo_epi32(ints, ints);
            _mm256_storeu_ps(channel_sums.data() + c,
                             _mm256_add_ps(_mm256_loadu_ps(channel_sums.data() + c), _mm256_cvtepi32_ps(ints)));
            _mm256_storeu_ps(channel_sums_sq.data() + c,
                             _mm256_add_ps(_mm256_loadu_ps(channel_sums_sq.data() + c), _mm256_cvtepi32_ps(squares)));
          }
#endif
          for (; c < channels; ++c) {
            const int64_t v = px[c];
            channel_sums[c] += static_cast<float>(v);
            channel_sums_sq[c] +=
                static_cast<float>(sizeof(Int) == 4 ? static_cast<int64_t>(static_cast<int32_t>(v * v)) : v * v);
          }
        }
      }
      for (int64_t g = 0; g < groups; ++g) {
        float sum_f = static_cast<float>(sums[g]), sum_sq_f = static_cast<float>(sums_sq[g]);
        if (hw >= 512) {  // the group's channels added in order
          sum_f = sum_sq_f = 0.0f;
          for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
            sum_f += channel_sums[c];
            sum_sq_f += channel_sums_sq[c];
          }
        }
        stats[static_cast<size_t>(b * groups + g)] = norm_stats(sum_f, sum_sq_f, count, x_zp, x_scale, eps);
      }
    }
  });
  return stats;
}

template <typename Int>
void group_norm_nhwc(const Tensor& out, const Tensor& x, int64_t groups, int64_t x_zp, float x_scale,
                     const float* gamma, const float* beta, double eps, float out_scale, int64_t out_zp) {
  const int64_t batch = x.size(0), hw = x.size(1), channels = x.size(2), per_group = channels / groups;
  const std::vector<NormStats> stats = group_stats_nhwc<Int>(x, groups, x_zp, x_scale, eps);
  const float inv_out_scale = 1.0f / out_scale;
  const Int* const in = x.data_ptr<Int>();
  Int* const res = out.data_ptr<Int>();
  at::parallel_for(0, batch, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> scale(static_cast<size_t>(channels)), shift(static_cast<size_t>(channels));
    std::vector<float> y(static_cast<size_t>(channels));
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        const NormStats& st = stats[static_cast<size_t>(b * groups + c / per_group)];
        const float sc = st.inv * (gamma ? gamma[c] : 1.0f), beta_c = beta ? beta[c] : 0.0f;
        scale[c] = sc;
        shift[c] = gamma ? std::fma(-sc, st.mean, beta_c) : -sc * st.mean + beta_c;
      }
      for (int64_t p = 0; p < hw; ++p) {
        const Int* px = in + (b * hw + p) * channels;
        Int* dst = res + (b * hw + p) * channels;
        affine_offsets(px, channels, x_zp, 0.0f, scale.data(), 1, shift.data(), 1, y.data());
        if (hw < 512) {  // torch's vector blocks run within each group's channels
          for (int64_t g = 0; g < groups; ++g) {
            store_quantized<Int>(y.data() + g * per_group, dst + g * per_group, per_group,
                                 vector_extent<Int>(per_group), inv_out_scale, out_zp);
          }
        } else {
          store_quantized<Int>(y.data(), dst, channels, vector_extent<Int>(channels), inv_out_scale, out_zp);
        }
      }
    }
  });
}

void qlayer_norm_kernel(const Tensor& out, const Tensor& x, int64_t x_zp, float x_scale, const float* gamma,
                        const float* beta, double eps, float out_scale, int64_t out_zp) {
  dispatch_qint(x.scalar_type(), [&]<typename Int>(Int) {
    layer_norm_rows<Int>(out, x, x_zp, x_scale, gamma, beta, eps, out_scale, out_zp);
  });
}

void qgroup_norm_kernel(const Tensor& out, const Tensor& x, bool nhwc, int64_t groups, int64_t x_zp, float x_scale,
                        const float* gamma, const float* beta, double eps, float out_scale, int64_t out_zp) {
  dispatch_qint(x.scalar_type(), [&]<typename Int>(Int) {
    if (nhwc) {
      group_norm_nhwc<Int>(out, x, groups, x_zp, x_scale, gamma, beta, eps, out_scale, out_zp);
    } else {
      group_norm_nchw<Int>(out, x, groups, x_zp, x_scale, gamma, beta, eps, out_scale, out_zp);
    }
  });
}

void qbatch_norm_kernel(const Tensor& out, const Tensor& x, int64_t x_zp, const float* alpha, const float* beta,
                        int64_t out_zp, bool relu) {
  dispatch_qint(x.scalar_type(),
                [&]<typename Int>(Int) { batch_norm_rows<Int>(out, x, x_zp, alpha, beta, out_zp, relu); });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(qbatch_norm_stub, &qbatch_norm_kernel);
REGISTER_DISPATCH(qlayer_norm_stub, &qlayer_norm_kernel);
REGISTER_DISPATCH(qgroup_norm_stub, &qgroup_norm_kernel);

}  // namespace at::inline tessera::native
