// Kernels that compute in NCHW (pooling, batch and group norm) hand a channels-last
// input's results back in channels-last, as torch's do.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native {

inline Tensor like_input_layout(const Tensor& t, const Tensor& self) {
  const bool channels_last = self.dim() == 4 && !self.is_contiguous() &&
                             self.is_contiguous(c10::MemoryFormat::ChannelsLast);
  return channels_last ? t.contiguous(c10::MemoryFormat::ChannelsLast) : t;
}

}  // namespace at::inline tessera::native
