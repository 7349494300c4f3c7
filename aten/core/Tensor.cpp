#include <aten/core/Tensor.h>

namespace at::inline tessera {

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  return os << "Tensor(sizes=" << t.sizes() << ", dtype=" << t.scalar_type() << ", device=" << t.device() << ")";
}

}  // namespace at::inline tessera
