// Tensors for aten tests, built directly on c10 (no operators needed).
#pragma once

#include <aten/core/Tensor.h>
#include <c10/core/CPUAllocator.h>

#include <vector>

namespace tessera_test {

inline at::Tensor make_tensor(std::vector<int64_t> sizes, c10::ScalarType dtype = c10::kFloat,
                              c10::DeviceType device = c10::DeviceType::CPU, c10::Layout layout = c10::kStrided) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  c10::Storage storage(c10::StorageImpl::use_byte_size_t{}, n * c10::elementSize(dtype), c10::GetAllocator(device));
  auto impl = c10::make_intrusive<c10::TensorImpl>(std::move(storage), dtype, layout);
  impl->set_sizes_contiguous(sizes);
  return at::Tensor(std::move(impl));
}

}  // namespace tessera_test
