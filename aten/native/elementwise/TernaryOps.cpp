// Ternary elementwise operators: where, clamp (Scalar and Tensor bounds, and clamp_min /
// clamp_max over them), lerp, addcmul, addcdiv. Shape functions here serve Meta and CPU;
// kernels are in cpu/TernaryOpsKernel.cpp.
#include <aten/native/Broadcast.h>
#include <aten/native/DispatchStubs.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/elementwise/BinaryOps.h>
#include <aten/native/elementwise/TernaryOps.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera {

namespace {

c10::ScalarType where_result_type(const Tensor& condition, const Tensor& self, const Tensor& other) {
  // torch 1.13 still accepts uint8 masks (deprecated); anything else is an error.
  TORCH_CHECK(condition.scalar_type() == c10::kBool || condition.scalar_type() == c10::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              condition.scalar_type());
  return native::result_type(self, other);
}

TensorIteratorConfig where_config(c10::ScalarType dtype) {
  // The condition keeps its dtype; self and other arrive already in the result's.
  TensorIteratorConfig config;
  config.check_all_same_dtype(false).output_dtype(dtype).op_name("where");
  return config;
}

// The dtype clamp with numbers computes in: self's, lifted by the bounds as Python numbers.
c10::ScalarType clamp_scalar_dtype(const Tensor& self, const std::optional<Scalar>& min,
                                   const std::optional<Scalar>& max) {
  TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "clamp is not supported for complex types");
  native::ResultTypeState state;
  native::update_result_type_state(state, self);
  if (min) native::update_result_type_state(state, *min);
  if (max) native::update_result_type_state(state, *max);
  return native::result_type(state);
}

TensorIteratorConfig clamp_scalar_config(c10::ScalarType dtype) {
  TensorIteratorConfig config = TensorIterator::config_for(IteratorFamily::Unary);
  config.static_dtype(dtype).op_name("clamp");
  return config;
}

TensorIteratorConfig clamp_tensor_config(const Tensor& out, const Tensor& self, const std::optional<Tensor>& min,
                                         const std::optional<Tensor>& max) {
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must be Tensor");
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "clamp is not supported for complex types");
  TensorIteratorConfig config = TensorIterator::config_for(IteratorFamily::Ternary);
  config.add_output(out).add_input(self).op_name("clamp");
  if (has_min) config.add_input(*min);
  if (has_max) config.add_input(*max);
  return config;
}

void check_same_dtype(const Tensor& self, const Tensor& other, const char* name) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "expected dtype ", self.scalar_type(), " for `", name,
              "` but got dtype ", other.scalar_type());
}

}  // namespace

namespace meta {

TensorMeta where_self(const Tensor& condition, const Tensor& self, const Tensor& other) {
  c10::ScalarType dtype = where_result_type(condition, self, other);
  return where_config(dtype).add_output(Tensor()).add_input(condition).add_input(self).add_input(other).output_meta();
}

TensorMeta clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp_scalar_config(clamp_scalar_dtype(self, min, max)).add_output(Tensor()).add_input(self).output_meta();
}

TensorMeta clamp_Tensor(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp_tensor_config(Tensor(), self, min, max).output_meta();
}

void check_lerp_Scalar(const Tensor& self, const Tensor& end, const Scalar& weight) {
  (void)weight;  // converted to the dtype (and checked) by the kernel
  check_same_dtype(self, end, "end");
}

void check_lerp_Tensor(const Tensor& self, const Tensor& end, const Tensor& weight) {
  check_same_dtype(self, end, "end");
  check_same_dtype(self, weight, "weight");
}

void check_addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  (void)self;
  (void)value;
  TORCH_CHECK(!(c10::isIntegralType(tensor1.scalar_type(), true) && c10::isIntegralType(tensor2.scalar_type(), true)),
              "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
              "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
              "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
              "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
              "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.");
}

}  // namespace meta

namespace native {

DEFINE_DISPATCH(where_stub);
DEFINE_DISPATCH(clamp_scalar_stub);
DEFINE_DISPATCH(clamp_tensor_stub);

void where_self_out_cpu(const Tensor& condition, const Tensor& self, const Tensor& other, const Tensor& out) {
  c10::ScalarType dtype = where_result_type(condition, self, other);
  // Current PyTorch's rule (1.13 trips an internal assert here): out= must have the result dtype.
  TORCH_CHECK(out.scalar_type() == dtype, "Expected out type to be ", dtype, " but got ", out.scalar_type());
  native::check_wrapped_number_fits(self, dtype);
  native::check_wrapped_number_fits(other, dtype);
  TensorIterator iter = where_config(dtype).add_output(out).add_input(condition).add_input(self.to(dtype))
                            .add_input(other.to(dtype)).build();
  where_stub(c10::DeviceType::CPU, iter);
}

void clamp_out_cpu(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                   const Tensor& out) {
  TensorIterator iter = clamp_scalar_config(clamp_scalar_dtype(self, min, max)).add_output(out).add_input(self).build();
  clamp_scalar_stub(c10::DeviceType::CPU, iter, min, max);
  iter.cast_outputs();
}

void clamp_Tensor_out_cpu(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max,
                          const Tensor& out) {
  TensorIterator iter = clamp_tensor_config(out, self, min, max).build();
  clamp_tensor_stub(c10::DeviceType::CPU, iter, min && min->defined(), max && max->defined());
  iter.cast_outputs();
}

// clamp_min / clamp_max: clamp with one bound, in every form torch has.
Tensor clamp_min(const Tensor& self, const Scalar& min) { return at::clamp(self, min, std::nullopt); }
Tensor clamp_min_Tensor(const Tensor& self, const Tensor& min) { return at::clamp(self, min, std::nullopt); }
Tensor& clamp_min_out(const Tensor& self, const Scalar& min, Tensor& out) {
  return at::clamp_out(out, self, min, std::nullopt);
}
Tensor& clamp_min_Tensor_out(const Tensor& self, const Tensor& min, Tensor& out) {
  return at::clamp_out(out, self, min, std::nullopt);
}
Tensor& clamp_min_(Tensor& self, const Scalar& min) { return at::clamp_(self, min, std::nullopt); }
Tensor& clamp_min__Tensor(Tensor& self, const Tensor& min) { return at::clamp_(self, min, std::nullopt); }

Tensor clamp_max(const Tensor& self, const Scalar& max) { return at::clamp(self, std::nullopt, max); }
Tensor clamp_max_Tensor(const Tensor& self, const Tensor& max) { return at::clamp(self, std::nullopt, max); }
Tensor& clamp_max_out(const Tensor& self, const Scalar& max, Tensor& out) {
  return at::clamp_out(out, self, std::nullopt, max);
}
Tensor& clamp_max_Tensor_out(const Tensor& self, const Tensor& max, Tensor& out) {
  return at::clamp_out(out, self, std::nullopt, max);
}
Tensor& clamp_max_(Tensor& self, const Scalar& max) { return at::clamp_(self, std::nullopt, max); }
Tensor& clamp_max__Tensor(Tensor& self, const Tensor& max) { return at::clamp_(self, std::nullopt, max); }

}  // namespace native
}  // namespace at::inline tessera
