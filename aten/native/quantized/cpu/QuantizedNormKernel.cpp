// The quantized batch norm's loop, compiled once per ISA: per channel y = fma(alpha, x - zp,
// beta), quantized as torch's vector loop (a pixel's first C - C % 8 channels) or its lrintf
// tail, Note [Quantized batch norm arithmetic]. std::fma is the fused multiply-add on every
// ISA (an instruction under AVX2, libm's exact one elsewhere).
#include <aten/core/Parallel.h>
#include <aten/native/quantized/QuantizedNorm.h>
#include <aten/native/quantized/cpu/QuantizeVal.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

// The tail's lrintf: round half to even, LONG_MIN for NaN, infinities and values outside
// int64; the zero point added in int64 with wrap-around.
inline int64_t lrintf_plus(float y, int64_t zero_point) {
  const int64_t r = y >= -9.2233720368547758e18f && y < 9.2233720368547758e18f
                        ? static_cast<int64_t>(std::nearbyint(y))
                        : std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(static_cast<uint64_t>(r) + static_cast<uint64_t>(zero_point));
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
    for (int64_t r = b; r < e; ++r) {
      const Int* row = in + r * x.stride(0);
      Int* dst = res + r * out.stride(0);
      for (int64_t c = 0; c < channels; ++c) {
        const float d = static_cast<float>(static_cast<int64_t>(row[c]) - x_zp);
        const float y = std::fma(alpha[c], d, beta[c]);
        Int q;
        if (c < vector_channels) {
          q = sizeof(Int) == 4 ? quantize_val<Int>(y, 1.0f, out_zp) : quantize_vector_lane<Int>(y, out_zp);
          if (relu) q = std::max(q, stored_zp);
        } else {
          int64_t v = lrintf_plus(y, out_zp);
          if (relu) v = std::max(v, out_zp);
          q = static_cast<Int>(std::min(std::max(v, qmin), qmax));
        }
        dst[c] = q;
      }
    }
  });
}

void qbatch_norm_kernel(const Tensor& out, const Tensor& x, int64_t x_zp, const float* alpha, const float* beta,
                        int64_t out_zp, bool relu) {
  switch (x.scalar_type()) {
    case c10::kByte:
      return batch_norm_rows<uint8_t>(out, x, x_zp, alpha, beta, out_zp, relu);
    case c10::kChar:
      return batch_norm_rows<int8_t>(out, x, x_zp, alpha, beta, out_zp, relu);
    case c10::kInt:
      return batch_norm_rows<int32_t>(out, x, x_zp, alpha, beta, out_zp, relu);
    default:
      TORCH_CHECK(false, "quantized batch norm: unexpected integer type ", x.scalar_type());
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(qbatch_norm_stub, &qbatch_norm_kernel);

}  // namespace at::inline tessera::native
