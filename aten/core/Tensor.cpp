#include <aten/core/Tensor.h>
#include <aten/native/Dispatch.h>

namespace at::inline tessera {

c10::Scalar Tensor::item() const {
  TORCH_CHECK(defined(), "item(): the tensor is undefined");
  TORCH_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  TORCH_CHECK_NOT_IMPLEMENTED(!is_meta(), "Tensor.item() cannot be called on meta tensors");
  TORCH_CHECK(is_cpu(), "item(): reading a ", device(), " tensor is not supported by this build");
  return native::dispatch_types<native::kAllTypes>(scalar_type(), "item", [&]<typename T>() -> c10::Scalar {
    T v = *static_cast<const T*>(data_ptr());
    if constexpr (std::is_same_v<T, c10::complex<float>>) {
      return c10::Scalar(c10::complex<double>(v.real(), v.imag()));
    } else if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool> || std::is_same_v<T, double> ||
                         std::is_same_v<T, c10::complex<double>>) {
      return c10::Scalar(v);
    } else {
      return c10::Scalar(static_cast<double>(static_cast<float>(v)));
    }
  });
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  return os << "Tensor(sizes=" << t.sizes() << ", dtype=" << t.scalar_type() << ", device=" << t.device() << ")";
}

}  // namespace at::inline tessera
