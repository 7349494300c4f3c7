// A 1-D tensor holding values computed on the host (index maps, interpolation weights)
// for the differentiable ops that consume them (index_select, index_add, gather). On meta
// only its shape is made.
#pragma once

#include <aten/core/Tensor.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace at::inline tessera::native {

template <typename T>
Tensor tensor_from_vector(const std::vector<T>& v, c10::Device device = c10::kCPU) {
  static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, double>, "int64_t (Long) or double values");
  const c10::ScalarType dtype = std::is_same_v<T, double> ? c10::kDouble : c10::kLong;
  Tensor t = at::empty({static_cast<int64_t>(v.size())}, TensorOptions().dtype(dtype).device(device));
  if (!t.is_meta()) std::copy(v.begin(), v.end(), t.data_ptr<T>());
  return t;
}

}  // namespace at::inline tessera::native
