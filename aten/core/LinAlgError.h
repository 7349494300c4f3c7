// torch.linalg.LinAlgError: the error the linalg kernels raise for inputs their algorithm
// cannot handle (a singular or not positive-definite matrix, no convergence). A
// RuntimeError in Python (csrc/Exceptions.cpp maps it to tessera.linalg.LinAlgError).
#pragma once

#include <c10/util/Exception.h>

namespace at::inline tessera {

class TORCH_API LinAlgError : public c10::Error {
 public:
  using c10::Error::Error;
  ~LinAlgError() override;
};

}  // namespace at::inline tessera
