// Kernels that compute in NCHW (pooling, batch and group norm) hand a channels-last
// input's results back in channels-last (2d or 3d), as torch's do.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native {

inline Tensor like_input_layout(const Tensor& t, const Tensor& self) {
  if (self.is_contiguous()) return t;
  if (self.dim() == 4 && self.is_contiguous(c10::MemoryFormat::ChannelsLast)) {
    return t.contiguous(c10::MemoryFormat::ChannelsLast);
  }
  if (self.dim() == 5 && self.is_contiguous(c10::MemoryFormat::ChannelsLast3d)) {
    return t.contiguous(c10::MemoryFormat::ChannelsLast3d);
  }
  return t;
}

}  // namespace at::inline tessera::native
