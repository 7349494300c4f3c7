// Binary elementwise operators: shape functions that check more than their iterator
// family does (alpha, rounding modes), div with a rounding mode, and the composite
// operators (true_divide, isclose, equal, allclose). Kernels: cpu/BinaryOpsKernel.cpp.
#include <aten/core/Dispatch.h>
#include <aten/native/Broadcast.h>
#include <aten/native/DispatchStubs.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/elementwise/BinaryOps.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>
#include <c10/core/DefaultDtype.h>

#include <algorithm>

namespace at::inline tessera {

namespace meta {

static TensorMeta binary_meta(IteratorFamily family, const Tensor& self, const Tensor& other, const char* name) {
  return TensorIterator::config_for(family).add_output(Tensor()).add_input(self).add_input(other).op_name(name).output_meta();
}

// alpha against the result dtype, which for the binary family is torch.result_type(self, other).
static void check_alpha(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  if (!alpha.isFloatingPoint() && !alpha.isBoolean() && !alpha.isComplex()) return;
  const c10::ScalarType dtype = native::result_type(self, other);
  TORCH_CHECK(!(c10::isIntegralType(dtype, true) && alpha.isFloatingPoint()),
              "For integral input tensors, argument alpha must not be a floating point number.");
  TORCH_CHECK(dtype == c10::kBool || !alpha.isBoolean(), "Boolean alpha only supported for Boolean results.");
  TORCH_CHECK(c10::isComplexType(dtype) || !alpha.isComplex(),
              "For non-complex input tensors, argument alpha must not be a complex number.");
}

void check_add(const Tensor& self, const Tensor& other, const Scalar& alpha) { check_alpha(self, other, alpha); }

void check_heaviside(const Tensor& self, const Tensor& values) {
  TORCH_CHECK(!self.is_complex() && !values.is_complex(), "heaviside is not yet implemented for complex tensors.");
  TORCH_CHECK(self.scalar_type() == values.scalar_type(),
              "heaviside is not yet implemented for tensors with different dtypes.");
}

void check_sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TORCH_CHECK(self.scalar_type() != c10::kBool && other.scalar_type() != c10::kBool,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
              "mask, use the `~` or `logical_not()` operator instead.");
  check_alpha(self, other, alpha);
}

TensorMeta div_out_mode(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return binary_meta(IteratorFamily::BinaryFloat, self, other, "div");
  TORCH_CHECK(*rounding_mode == "trunc" || *rounding_mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode, "'");
  return binary_meta(IteratorFamily::Binary, self, other, "div");
}

}  // namespace meta

namespace native {

DEFINE_DISPATCH(div_trunc_stub);
DEFINE_DISPATCH(div_floor_stub);

void div_out_mode_cpu(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode,
                      const Tensor& out) {
  IteratorFamily family = rounding_mode ? IteratorFamily::Binary : IteratorFamily::BinaryFloat;
  TensorIterator iter =
      TensorIterator::config_for(family).add_output(out).add_input(self).add_input(other).op_name("div").build();
  if (!rounding_mode) {
    div_stub(c10::DeviceType::CPU, iter);
  } else if (*rounding_mode == "trunc") {
    div_trunc_stub(c10::DeviceType::CPU, iter);
  } else {
    div_floor_stub(c10::DeviceType::CPU, iter);
  }
  iter.cast_outputs();
}

void check_scalar_fits(const c10::Scalar& s, c10::ScalarType dtype) {
  dispatch_types<kAllTypes>(dtype, "check_scalar_fits", [&]<typename T>() { (void)s.to<T>(); });
}

void check_wrapped_number_fits(const Tensor& t, c10::ScalarType dtype) {
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) check_scalar_fits(t.item(), dtype);
}

// pow with a Scalar exponent: the Tensor overload with a wrapped number, after torch's check
// that an integral base is not raised to a negative integral power.
static Tensor checked_exponent(const Tensor& self, const Scalar& exponent) {
  TORCH_CHECK(!(c10::isIntegralType(self.scalar_type(), true) && exponent.isIntegral(true) && exponent.toLong() < 0),
              "Integers to negative integer powers are not allowed.");
  Tensor wrapped = wrapped_scalar_tensor(exponent);
  check_scalar_fits(exponent, native::result_type(self, wrapped));
  return wrapped;
}
Tensor pow_Tensor_Scalar(const Tensor& self, const Scalar& exponent) {
  return at::pow(self, checked_exponent(self, exponent));
}
Tensor& pow_Tensor_Scalar_out(const Tensor& self, const Scalar& exponent, Tensor& out) {
  return at::pow_outf(self, checked_exponent(self, exponent), out);
}
Tensor& pow__Scalar(Tensor& self, const Scalar& exponent) { return self.pow_(checked_exponent(self, exponent)); }

Tensor true_divide_Tensor(const Tensor& self, const Tensor& other) { return at::div(self, other); }
Tensor& true_divide_out(const Tensor& self, const Tensor& other, Tensor& out) { return at::div_outf(self, other, out); }
Tensor& true_divide__Tensor(Tensor& self, const Tensor& other) { return self.div_(other); }

// |self - other| <= atol + rtol * |other|, elementwise; NaNs equal only with equal_nan.
Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), self.scalar_type(), " did not match ", other.scalar_type());
  TORCH_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  TORCH_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  Tensor close = at::eq(self, other);
  // (A complex number is NaN when either part is.)
  if (equal_nan && (c10::isFloatingType(self.scalar_type()) || c10::isComplexType(self.scalar_type()))) {
    close = at::logical_or(close, at::logical_and(at::isnan(self), at::isnan(other)));
  }
  if (rtol == 0 && atol == 0) return close;
  // Integers and bools are compared by value in the default float dtype, as torch does:
  // their own subtraction would wrap (uint8 4 - 5 is 255), and the tolerance applies to them.
  const bool integral = c10::isIntegralType(self.scalar_type(), true);
  const c10::ScalarType as = c10::get_default_dtype();
  const Tensor a = integral ? self.to(as) : self, b = integral ? other.to(as) : other;
  // Finite values: within the tolerance. Infinities only equal themselves (covered above).
  Tensor diff = at::abs(at::sub(a, b));
  Tensor bound = at::add(at::mul(at::abs(b), wrapped_scalar_tensor(rtol)), wrapped_scalar_tensor(atol));
  Tensor within = at::logical_and(at::le(diff, bound), at::isfinite(diff));
  return at::logical_or(close, within);
}

// Whether every element of a Bool tensor is true (reductions arrive with their own issue).
static bool all_true(const Tensor& mask) {
  TORCH_CHECK_NOT_IMPLEMENTED(!mask.is_meta(), "cannot read the values of meta tensors; they hold no data");
  Tensor dense = make_empty(mask.sizes(), c10::kBool, mask.device());
  dense.copy_(mask);
  const bool* p = dense.data_ptr<bool>();
  return std::all_of(p, p + dense.numel(), [](bool b) { return b; });
}

bool equal(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ",
              self.device(), " and ", other.device());
  return self.sizes().equals(other.sizes()) && all_true(at::eq(self, other));
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return all_true(at::isclose(self, other, rtol, atol, equal_nan));
}

// other - alpha * self: Python's reflected `number - tensor`.
Tensor rsub_Tensor(const Tensor& self, const Tensor& other, const Scalar& alpha) { return at::sub(other, self, alpha); }
Tensor rsub_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return at::sub(wrapped_scalar_tensor(other), self, alpha);
}

}  // namespace native
}  // namespace at::inline tessera
