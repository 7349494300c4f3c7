// Host values to and from tensors: a 1-D tensor holding values computed on the host (index
// maps, interpolation weights) for the differentiable ops that consume them (index_select,
// index_add, gather; on meta only its shape is made), and the int64 values of a CPU tensor
// (lengths, offsets, indices) for the composites that read them on the host.
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

// The values of an integer CPU tensor as int64, in row-major order. Reads through the
// tensor's dispatch (to, resolve_neg), so a negative view yields its values, not its memory.
inline std::vector<int64_t> host_int64_values(const Tensor& t) {
  TORCH_CHECK_NOT_IMPLEMENTED(!t.is_meta(), "this operator reads the values of an integer tensor (lengths, offsets or "
                              "indices), which a meta tensor does not have (a data-dependent operator)");
  const Tensor c = t.to(c10::kLong).resolve_neg().contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

}  // namespace at::inline tessera::native
