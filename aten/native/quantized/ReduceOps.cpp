// mean and std of quantized tensors (aten::mean.dim and std.correction on QuantizedCPU and
// QuantizedMeta), as torch 1.13 computes them, Note [Quantized mean and std]. The result is
// contiguous with the input's dtype and qparams.
#include <aten/core/Parallel.h>
#include <aten/core/QTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/native/quantized/TorchFloatReduce.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace at::inline tessera::native {

// Note [Quantized mean and std]: torch has a fast path and a fallback for each. The fast path
// needs a contiguous input reduced over a trailing block of dims (None and [] count as every
// dim); for mean also a dtype that is None or the input's, for std not a single reduced
// element with a nonzero correction. Fast mean: each row's integers (zero point included)
// summed exactly, float(sum) / float(n) in float32, rounded half to even and converted to
// the stored type as x86 converts (no clamp; NaN, from an empty row, and values past int32
// give INT32_MIN's low bits). Fast std: the row's sum and sum of squares (exact for 8-bit
// types, float32 lanes for qint32, hsum_sq_float below), then in double
// var = fma(-2m, s/den, s2/den) + m*m*n/den with m = s/n and den = n - 1 exactly when the
// correction is 1 (else n), floored at 0, and quantize(sqrt(var) * scale). The fallback
// dequantizes (keeping a channels-last layout), reduces in float in torch's order
// (Note [torch's float reduction order]) and quantizes with the input's qparams. A layout
// or dim the fast path does not take, such as mean([2, 3]) of a conv's channels-last
// output, takes the fallback and its float rounding.

namespace {

// The wrapped, distinct dims; None and [] mean every dim.
std::vector<int64_t> reduced_dims(const Tensor& self, std::optional<IntArrayRef> dim) {
  std::vector<int64_t> dims;
  if (!dim || dim->empty()) {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
    return dims;
  }
  for (int64_t d : *dim) dims.push_back(wrap_dim(d, self.dim()));
  if (self.dim() == 0) dims.clear();
  return dims;
}

// torch's refusal of a dim listed twice
void check_no_repeats(std::vector<int64_t> dims) {
  std::sort(dims.begin(), dims.end());
  const auto twice = std::adjacent_find(dims.begin(), dims.end());
  TORCH_CHECK(twice == dims.end(), "dim ", twice == dims.end() ? 0 : *twice,
              " appears multiple times in the list of dims");
}

// Whether dims, distinct, are the last dims.size() dims (torch's is_innnermost_dim).
bool innermost(const Tensor& self, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d < self.dim() - static_cast<int64_t>(dims.size())) return false;
  }
  return true;
}

std::vector<int64_t> result_sizes(const Tensor& self, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) {
      sizes.push_back(self.size(d));
    } else if (keepdim) {
      sizes.push_back(1);
    }
  }
  return sizes;
}

Tensor result_like(const Tensor& self, const PerTensorAffineQuantizer& q, IntArrayRef sizes) {
  return new_qtensor(sizes, MemoryFormat::Contiguous,
                     c10::make_intrusive<PerTensorAffineQuantizer>(self.scalar_type(), q.scale(), q.zero_point()),
                     self.device());
}

// The fast paths' rows: the contiguous integers as [rows, n].
template <typename Int, typename Fn>
void for_each_row(const Tensor& self, int64_t n, Fn fn) {
  const Tensor ints = integer_alias(self);
  const Int* data = static_cast<const Int*>(ints.data_ptr());
  const int64_t rows = n == 0 ? 0 : self.numel() / n;
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) fn(r, data + r * n);
  });
}

int64_t reduced_count(const Tensor& self, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= self.size(d);
  return n;
}

// A row's exact sum and sum of squares. 8-bit rows take SSE2 (the baseline): psadbw sums 16
// bytes at a time into 64-bit lanes (a signed byte biased by 128), pmaddwd squares and pairs
// 16-bit lanes into int32 ones, widened every block before they could overflow.
template <typename Int>
int64_t row_sum(const Int* row, int64_t n) {
  int64_t total = 0, i = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(Int) == 1) {
    const __m128i zero = _mm_setzero_si128(), bias = _mm_set1_epi8(static_cast<char>(0x80));
    __m128i acc = zero;
    for (; i + 16 <= n; i += 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i));
      if constexpr (std::is_signed_v<Int>) v = _mm_xor_si128(v, bias);
      acc = _mm_add_epi64(acc, _mm_sad_epu8(v, zero));
    }
    total = _mm_cvtsi128_si64(acc) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc));
    if constexpr (std::is_signed_v<Int>) total -= 128 * i;
  }
#endif
  for (; i < n; ++i) total += row[i];
  return total;
}

template <typename Int>
int64_t row_sum_of_squares(const Int* row, int64_t n) {
  int64_t total = 0, i = 0;
#if defined(__SSE2__)
  // each int32 lane gains at most 4 * 255^2 per 16 bytes: 4096-byte blocks stay below 2^31
  constexpr int64_t kBlock = 4096;
  const __m128i zero = _mm_setzero_si128();
  auto widen = [](__m128i v, bool high) {
    const __m128i pair = high ? _mm_unpackhi_epi8(v, v) : _mm_unpacklo_epi8(v, v);
    return std::is_signed_v<Int> ? _mm_srai_epi16(pair, 8) : _mm_srli_epi16(pair, 8);
  };
  while (i + 16 <= n) {
    __m128i acc = zero;
    for (const int64_t end = std::min(n, i + kBlock); i + 16 <= end; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i));
      const __m128i lo = widen(v, false), hi = widen(v, true);
      acc = _mm_add_epi32(acc, _mm_add_epi32(_mm_madd_epi16(lo, lo), _mm_madd_epi16(hi, hi)));
    }
    alignas(16) int32_t lanes[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), acc);
    total += static_cast<int64_t>(lanes[0]) + lanes[1] + lanes[2] + lanes[3];
  }
#endif
  for (; i < n; ++i) total += static_cast<int64_t>(row[i]) * row[i];
  return total;
}

// torch's AVX2 hsum_sq for int32 rows (as GCC 12 compiled it, with -ffp-contract=fast):
// eight float lanes each accumulating fma(x, x, lane), summed 0..7; then the tail's products
// rounded to float in groups of four and added in order, and the last n % 4 as scalar fmas.
float hsum_sq_float(const int32_t* row, int64_t n) {
  float lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) {
      const auto f = static_cast<float>(row[i + l]);
      lanes[l] = std::fma(f, f, lanes[l]);
    }
  }
  float total = 0;
  for (float lane : lanes) total += lane;
  const int64_t grouped = i + (n - i) / 4 * 4;
  for (; i < n; ++i) {
    const auto f = static_cast<float>(row[i]);
    total = i < grouped ? total + f * f : std::fma(f, f, total);
  }
  return total;
}

// The fallback: float values in torch's order, quantized with the input's qparams.
template <typename Reduce>
Tensor via_float(const Tensor& self, const PerTensorAffineQuantizer& q, const std::vector<int64_t>& dims,
                 IntArrayRef sizes, Reduce reduce) {
  Tensor values = at::empty(self.sizes(), self.options().dtype(c10::kFloat), suggest_memory_format(self));
  dequantize_into(self, values);
  const std::vector<float> reduced = reduce(values.data_ptr<float>(), self.sizes().vec(), values.strides().vec(), dims);
  Tensor result = at::empty(sizes, self.options().dtype(c10::kFloat));
  std::copy(reduced.begin(), reduced.end(), result.data_ptr<float>());
  return at::quantize_per_tensor(result, q.scale(), q.zero_point(), self.scalar_type());
}

// torch's errors for a dtype argument off the fast path: a non-float dtype is refused before the
// input is looked at, float and double after (when the float result is made and quantized)
void check_fallback_dtype_early(std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(!dtype || *dtype == c10::kFloat || *dtype == c10::kDouble, "mean(): could not infer output dtype. ",
              "Optional dtype must be either a floating point or complex dtype. Got: ", *dtype);
}
void check_fallback_dtype_late(std::optional<c10::ScalarType> dtype) {
  if (!dtype) return;
  TORCH_CHECK(*dtype != c10::kFloat, "ScalarType Float is not supported in new_qtensor.");
  TORCH_CHECK(*dtype != c10::kDouble, "Quantize only works on Float Tensor, got Double");
}

}  // namespace

Tensor mean_quantized(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                      std::optional<c10::ScalarType> dtype) {
  check_not_sub_byte(self, "quantized_mean_kernel_impl_cpu");
  const std::vector<int64_t> dims = reduced_dims(self, dim);
  const bool fast = self.is_contiguous() && innermost(self, dims) && (!dtype || *dtype == self.scalar_type());
  if (!fast) check_fallback_dtype_early(dtype);
  check_no_repeats(dims);
  const auto& q = checked_per_tensor(self, "mean");
  if (!fast) check_fallback_dtype_late(dtype);
  const std::vector<int64_t> sizes = result_sizes(self, dims, keepdim);
  if (self.is_meta()) return result_like(self, q, sizes);
  if (!fast) {
    return via_float(self, q, dims, sizes, [&](const float* data, auto s, auto st, auto d) {
      std::vector<float> sums = torch_order_sum(data, s, st, d);
      const auto n = static_cast<float>(reduced_count(self, dims));
      for (float& v : sums) v /= n;
      return sums;
    });
  }
  Tensor out = result_like(self, q, sizes);
  const int64_t n = reduced_count(self, dims);
  Tensor out_ints = integer_alias(out);
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    Int* dst = static_cast<Int*>(out_ints.data_ptr());
    if (n == 0) {  // 0 / 0 in float, converted as x86 converts NaN
      std::fill(dst, dst + out.numel(), static_cast<Int>(std::numeric_limits<int32_t>::min()));
      return;
    }
    for_each_row<Int>(self, n, [&](int64_t r, const Int* row) {
      const int64_t sum = row_sum(row, n);
      const float y = round_even(static_cast<float>(sum) / static_cast<float>(n));
      dst[r] = static_cast<Int>(truncate_to_int32_like_x86(y));
    });
  });
  return out;
}

Tensor std_quantized(const Tensor& self, std::optional<IntArrayRef> dim, std::optional<int64_t> correction,
                     bool keepdim) {
  check_not_sub_byte(self, "quantized_std_kernel_impl_cpu");
  const std::vector<int64_t> dims = reduced_dims(self, dim);
  const int64_t n = reduced_count(self, dims);
  const bool unbiased = correction && *correction != 0;
  const bool fast = self.is_contiguous() && innermost(self, dims) && !(n == 1 && unbiased);
  check_no_repeats(dims);
  const auto& q = checked_per_tensor(self, "std");
  const std::vector<int64_t> sizes = result_sizes(self, dims, keepdim);
  if (self.is_meta()) return result_like(self, q, sizes);
  if (!fast) {
    const int64_t c = correction.value_or(1);
    return via_float(self, q, dims, sizes,
                     [&](const float* data, auto s, auto st, auto d) { return torch_order_std(data, s, st, d, c); });
  }
  // torch 1.13's fast kernel divides by n - 1 only for a correction of exactly 1
  const auto den = static_cast<double>(correction && *correction == 1 ? n - 1 : n);
  const auto nd = static_cast<double>(n);
  const double scale = q.scale();
  std::vector<float> values(static_cast<size_t>(n == 0 ? 0 : self.numel() / n));
  dispatch_quantized_int(self.scalar_type(), [&]<typename Int>(Int) {
    for_each_row<Int>(self, n, [&](int64_t r, const Int* row) {
      const int64_t sum = row_sum(row, n);
      double s2;
      if constexpr (sizeof(Int) == 4) {
        s2 = hsum_sq_float(reinterpret_cast<const int32_t*>(row), n);
      } else {
        s2 = static_cast<double>(row_sum_of_squares(row, n));
      }
      const auto s = static_cast<double>(sum);
      const double mean = s / nd, mean_unbiased = s / den, t = s2 / den;
      double var = std::fma(-(2.0 * mean), mean_unbiased, t) + mean * mean * nd / den;
      if (!std::isnan(var)) var = std::max(var, 0.0);
      values[static_cast<size_t>(r)] = static_cast<float>(std::sqrt(var) * scale);
    });
  });
  Tensor result = at::empty(sizes, self.options().dtype(c10::kFloat));
  std::copy(values.begin(), values.end(), result.data_ptr<float>());
  if (n == 0) result.fill_(std::nanf(""));
  return at::quantize_per_tensor(result, q.scale(), q.zero_point(), self.scalar_type());
}

}  // namespace at::inline tessera::native
