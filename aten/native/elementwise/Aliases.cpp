// torch's alternative names for elementwise operators (absolute, arccos, ..., multiply,
// divide, greater, clip, ...): each overload calls the operator it names, so autograd, the
// Meta backend and every dtype rule come from that operator.
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

Tensor absolute(const Tensor& self) { return at::abs(self); }
Tensor& absolute_out(const Tensor& self, Tensor& out) { return at::abs_out(out, self); }
Tensor& absolute_(Tensor& self) { return self.abs_(); }
Tensor arccos(const Tensor& self) { return at::acos(self); }
Tensor& arccos_out(const Tensor& self, Tensor& out) { return at::acos_out(out, self); }
Tensor& arccos_(Tensor& self) { return self.acos_(); }
Tensor arcsin(const Tensor& self) { return at::asin(self); }
Tensor& arcsin_out(const Tensor& self, Tensor& out) { return at::asin_out(out, self); }
Tensor& arcsin_(Tensor& self) { return self.asin_(); }
Tensor arctan(const Tensor& self) { return at::atan(self); }
Tensor& arctan_out(const Tensor& self, Tensor& out) { return at::atan_out(out, self); }
Tensor& arctan_(Tensor& self) { return self.atan_(); }
Tensor arccosh(const Tensor& self) { return at::acosh(self); }
Tensor& arccosh_out(const Tensor& self, Tensor& out) { return at::acosh_out(out, self); }
Tensor& arccosh_(Tensor& self) { return self.acosh_(); }
Tensor arcsinh(const Tensor& self) { return at::asinh(self); }
Tensor& arcsinh_out(const Tensor& self, Tensor& out) { return at::asinh_out(out, self); }
Tensor& arcsinh_(Tensor& self) { return self.asinh_(); }
Tensor arctanh(const Tensor& self) { return at::atanh(self); }
Tensor& arctanh_out(const Tensor& self, Tensor& out) { return at::atanh_out(out, self); }
Tensor& arctanh_(Tensor& self) { return self.atanh_(); }
Tensor negative(const Tensor& self) { return at::neg(self); }
Tensor& negative_out(const Tensor& self, Tensor& out) { return at::neg_out(out, self); }
Tensor& negative_(Tensor& self) { return self.neg_(); }
Tensor fix(const Tensor& self) { return at::trunc(self); }
Tensor& fix_out(const Tensor& self, Tensor& out) { return at::trunc_out(out, self); }
Tensor& fix_(Tensor& self) { return self.trunc_(); }
Tensor arctan2(const Tensor& self, const Tensor& other) { return at::atan2(self, other); }
Tensor& arctan2_out(const Tensor& self, const Tensor& other, Tensor& out) { return at::atan2_out(out, self, other); }
Tensor& arctan2_(Tensor& self, const Tensor& other) { return self.atan2_(other); }
Tensor multiply_Tensor(const Tensor& self, const Tensor& other) { return at::mul(self, other); }
Tensor multiply_Scalar(const Tensor& self, const Scalar& other) { return at::mul(self, other); }
Tensor& multiply_out(const Tensor& self, const Tensor& other, Tensor& out) { return at::mul_out(out, self, other); }
Tensor& multiply__Tensor(Tensor& self, const Tensor& other) { return self.mul_(other); }
Tensor& multiply__Scalar(Tensor& self, const Scalar& other) { return self.mul_(other); }
Tensor divide_Tensor(const Tensor& self, const Tensor& other) { return at::div(self, other); }
Tensor divide_Scalar(const Tensor& self, const Scalar& other) { return at::div(self, other); }
Tensor divide_Tensor_mode(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return at::div(self, other, rounding_mode);
}
Tensor divide_Scalar_mode(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode) {
  return at::div(self, other, rounding_mode);
}
Tensor& divide_out(const Tensor& self, const Tensor& other, Tensor& out) { return at::div_out(out, self, other); }
Tensor& divide_out_mode(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode, Tensor& out) {
  return at::div_out(out, self, other, rounding_mode);
}
Tensor& divide__Tensor(Tensor& self, const Tensor& other) { return self.div_(other); }
Tensor& divide__Tensor_mode(Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return self.div_(other, rounding_mode);
}
Tensor& divide__Scalar_mode(Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode) {
  return self.div_(other, rounding_mode);
}
Tensor& divide__Scalar(Tensor& self, const Scalar& other) { return self.div_(other); }
Tensor subtract_Tensor(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return at::sub(self, other, alpha);
}
Tensor& subtract_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  return at::sub_out(out, self, other, alpha);
}
Tensor subtract_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return at::sub(self, other, alpha);
}
Tensor& subtract__Tensor(Tensor& self, const Tensor& other, const Scalar& alpha) { return self.sub_(other, alpha); }
Tensor& subtract__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) { return self.sub_(other, alpha); }
Tensor greater_Tensor(const Tensor& self, const Tensor& other) { return at::gt(self, other); }
Tensor greater_Scalar(const Tensor& self, const Scalar& other) { return at::gt(self, other); }
Tensor& greater_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return at::gt_out(out, self, other);
}
Tensor& greater_Tensor_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return at::gt_out(out, self, other);
}
Tensor& greater__Scalar(Tensor& self, const Scalar& other) { return self.gt_(other); }
Tensor& greater__Tensor(Tensor& self, const Tensor& other) { return self.gt_(other); }
Tensor less_Tensor(const Tensor& self, const Tensor& other) { return at::lt(self, other); }
Tensor less_Scalar(const Tensor& self, const Scalar& other) { return at::lt(self, other); }
Tensor& less_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { return at::lt_out(out, self, other); }
Tensor& less_Tensor_out(const Tensor& self, const Tensor& other, Tensor& out) { return at::lt_out(out, self, other); }
Tensor& less__Scalar(Tensor& self, const Scalar& other) { return self.lt_(other); }
Tensor& less__Tensor(Tensor& self, const Tensor& other) { return self.lt_(other); }
Tensor greater_equal_Tensor(const Tensor& self, const Tensor& other) { return at::ge(self, other); }
Tensor greater_equal_Scalar(const Tensor& self, const Scalar& other) { return at::ge(self, other); }
Tensor& greater_equal_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return at::ge_out(out, self, other);
}
Tensor& greater_equal_Tensor_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return at::ge_out(out, self, other);
}
Tensor& greater_equal__Scalar(Tensor& self, const Scalar& other) { return self.ge_(other); }
Tensor& greater_equal__Tensor(Tensor& self, const Tensor& other) { return self.ge_(other); }
Tensor less_equal_Tensor(const Tensor& self, const Tensor& other) { return at::le(self, other); }
Tensor less_equal_Scalar(const Tensor& self, const Scalar& other) { return at::le(self, other); }
Tensor& less_equal_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return at::le_out(out, self, other);
}
Tensor& less_equal_Tensor_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return at::le_out(out, self, other);
}
Tensor& less_equal__Scalar(Tensor& self, const Scalar& other) { return self.le_(other); }
Tensor& less_equal__Tensor(Tensor& self, const Tensor& other) { return self.le_(other); }
Tensor not_equal_Tensor(const Tensor& self, const Tensor& other) { return at::ne(self, other); }
Tensor not_equal_Scalar(const Tensor& self, const Scalar& other) { return at::ne(self, other); }
Tensor& not_equal_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) {
  return at::ne_out(out, self, other);
}
Tensor& not_equal_Tensor_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return at::ne_out(out, self, other);
}
Tensor& not_equal__Scalar(Tensor& self, const Scalar& other) { return self.ne_(other); }
Tensor& not_equal__Tensor(Tensor& self, const Tensor& other) { return self.ne_(other); }
Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return at::clamp(self, min, max);
}
Tensor clip_Tensor(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return at::clamp(self, min, max);
}
Tensor& clip_out(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max, Tensor& out) {
  return at::clamp_out(out, self, min, max);
}
Tensor& clip_Tensor_out(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max, Tensor& out) {
  return at::clamp_out(out, self, min, max);
}
Tensor& clip_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return self.clamp_(min, max);
}
Tensor& clip__Tensor(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return self.clamp_(min, max);
}

}  // namespace at::inline tessera::native
