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
};

}  // namespace at::inline tessera::meta
