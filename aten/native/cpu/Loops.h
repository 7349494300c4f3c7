// The elementwise loop the CPU kernels share until TensorIterator arrives: visits every
// element of an output shape with each operand's own strides (0 where it broadcasts),
// innermost dimension in a tight loop.
#pragma once

#include <c10/util/ArrayRef.h>

#include <array>
#include <cstdint>
#include <vector>

namespace at::inline tessera::native::cpu {

// f(char* ptrs[N]) is called once per element; strides are in bytes, one vector per operand.
template <size_t N, typename F>
void for_each_element(c10::IntArrayRef sizes, const std::array<std::vector<int64_t>, N>& byte_strides,
                      std::array<char*, N> base, F&& f) {
  const size_t ndim = sizes.size();
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  if (ndim == 0) {
    f(base.data());
    return;
  }
  std::vector<int64_t> index(ndim, 0);
  const int64_t inner = sizes[ndim - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = byte_strides[k][ndim - 1];
  std::array<char*, N> ptrs = base;
  while (true) {
    std::array<char*, N> p = ptrs;
    for (int64_t i = 0; i < inner; ++i) {
      f(p.data());
      for (size_t k = 0; k < N; ++k) p[k] += inner_stride[k];
    }
    // Advance the outer index like an odometer, updating the operand pointers.
    size_t d = ndim - 1;
    while (true) {
      if (d == 0) return;
      --d;
      ++index[d];
      for (size_t k = 0; k < N; ++k) ptrs[k] += byte_strides[k][d];
      if (index[d] < sizes[d]) break;
      for (size_t k = 0; k < N; ++k) ptrs[k] -= byte_strides[k][d] * sizes[d];
      index[d] = 0;
    }
  }
}

}  // namespace at::inline tessera::native::cpu
