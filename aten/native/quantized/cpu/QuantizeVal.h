// torch's quantize_val for the per-ISA quantized loops (QuantizedOpsKernel.cpp,
// AffineQuantizerKernel.cpp): one element, zero_point + nearbyint(x * inv_scale) in float,
// truncated as x86 truncates, clamped. Inside the CPU_CAPABILITY namespace, so that each
// ISA's copy stays its own: the linker must never hand the default build an AVX2 body.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

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

}  // namespace CPU_CAPABILITY
}  // namespace at::inline tessera::native
