// The reduction argument of the loss operators, as torch numbers it (none, mean, sum).
#pragma once

#include <cstdint>

namespace at::inline tessera::Reduction {

enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };

}  // namespace at::inline tessera::Reduction
