// TensorMeta: what a structured operator's shape function computes about its output
// (sizes and dtype), before any backend allocates or fills it.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <vector>

namespace at::inline tessera::meta {

struct TensorMeta {
  std::vector<int64_t> sizes;
  c10::ScalarType dtype;
  // The output's strides (following its inputs' memory order); empty means contiguous.
  std::vector<int64_t> strides = {};
};

}  // namespace at::inline tessera::meta
