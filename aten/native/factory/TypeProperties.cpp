// Questions about dtypes that Python asks through operators: result_type (torch's
// promotion of tensors and Python numbers), promote_types, can_cast and the per-tensor
// category tests.
#include <aten/core/TensorUtils.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>

namespace at::inline tessera::native {

c10::ScalarType result_type_Tensor(const Tensor& tensor, const Tensor& other) { return native::result_type(tensor, other); }
c10::ScalarType result_type_Scalar(const Tensor& tensor, const Scalar& other) {
  return native::result_type(tensor, wrapped_scalar_tensor(other));
}
c10::ScalarType result_type_Scalar_Tensor(const Scalar& scalar, const Tensor& tensor) {
  return native::result_type(wrapped_scalar_tensor(scalar), tensor);
}
c10::ScalarType result_type_Scalar_Scalar(const Scalar& scalar1, const Scalar& scalar2) {
  return native::result_type(wrapped_scalar_tensor(scalar1), wrapped_scalar_tensor(scalar2));
}

bool can_cast(c10::ScalarType from, c10::ScalarType to) { return c10::canCast(from, to); }
c10::ScalarType promote_types(c10::ScalarType type1, c10::ScalarType type2) {
  const c10::ScalarType r = c10::promoteTypes(type1, type2);
  TORCH_CHECK(r != c10::ScalarType::Undefined, "Promotion from ", type1, " and ", type2, " is unsupported.");
  return r;
}

bool is_floating_point(const Tensor& self) { return c10::isFloatingType(self.scalar_type()); }
bool is_complex(const Tensor& self) { return c10::isComplexType(self.scalar_type()); }
bool is_signed(const Tensor& self) {
  TORCH_CHECK(!c10::isQIntType(self.scalar_type()), "isSignedType not supported for quantized types");
  return c10::isSignedType(self.scalar_type());
}

}  // namespace at::inline tessera::native
