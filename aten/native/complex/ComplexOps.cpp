// Complex numbers: real and imag (views through view_as_real), conj_physical, angle, and
// the constructors polar and complex, with torch's dtype rules and messages. The loops are
// in cpu/ComplexKernel.cpp, compiled once per ISA.
#include <aten/core/TensorUtils.h>
#include <aten/native/DispatchStubs.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/complex/ComplexOps.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera {

namespace {

// angle of a complex tensor is real (its magnitude's type); of a real one, a float.
TensorIteratorConfig angle_config(const Tensor& self) {
  return TensorIterator::config_for(self.is_complex() ? IteratorFamily::UnaryRealOutput : IteratorFamily::UnaryFloat);
}

// polar(abs, angle) and complex(real, imag): two real tensors of one floating dtype make
// the complex tensor of that precision (torch's complex_check_floating / _check_dtype).
c10::ScalarType complex_result_type(const Tensor& a, const Tensor& b) {
  const c10::ScalarType ta = a.scalar_type();
  const c10::ScalarType tb = b.scalar_type();
  auto floating = [](c10::ScalarType t) {
    return t == c10::kHalf || t == c10::kFloat || t == c10::kDouble;
  };
  TORCH_CHECK(floating(ta) && floating(tb), "Expected both inputs to be Half, Float or Double tensors but got ", ta,
              " and ", tb);
  TORCH_CHECK(ta == tb, "Expected object of scalar type ", ta, " but got scalar type ", tb, " for second argument");
  return c10::toComplexType(ta);
}

TensorIteratorConfig complex_config(const Tensor& out, const Tensor& a, const Tensor& b) {
  TensorIteratorConfig config;
  config.check_all_same_dtype(false).output_dtype(complex_result_type(a, b)).add_output(out).add_input(a).add_input(b);
  return config;
}

void check_complex_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  const c10::ScalarType want = complex_result_type(a, b);
  TORCH_CHECK(out.scalar_type() == want, "Expected object of scalar type ", want, " but got scalar type ",
              out.scalar_type(), " for argument 'out'");
}

}  // namespace

namespace meta {

TensorMeta angle(const Tensor& self) {
  TensorMeta m = angle_config(self).add_output(Tensor()).add_input(self).output_meta();
  m.dtype = c10::toRealValueType(m.dtype);
  return m;
}

TensorMeta polar(const Tensor& abs, const Tensor& angle) { return complex_config(Tensor(), abs, angle).output_meta(); }

TensorMeta complex(const Tensor& real, const Tensor& imag) {
  return complex_config(Tensor(), real, imag).output_meta();
}

}  // namespace meta

namespace native {

DEFINE_DISPATCH(angle_stub);
DEFINE_DISPATCH(polar_stub);
DEFINE_DISPATCH(complex_stub);

// real/imag of a conj view read the base's storage: real is unchanged, imag is its negation
// (a Negative view), as in torch.
Tensor real(const Tensor& self) {
  if (!self.is_complex()) return self;
  return at::view_as_real(self.is_conj() ? at::_conj(self) : self).select(-1, 0);
}

Tensor imag(const Tensor& self) {
  TORCH_CHECK(self.is_complex(), "imag is not implemented for tensors with non-complex dtypes.");
  if (!self.is_conj()) return at::view_as_real(self).select(-1, 1);
  return at::_neg_view(at::view_as_real(at::_conj(self))).select(-1, 1);
}

// conj of a real tensor is the tensor itself; of a complex strided one, a lazy view.
Tensor conj(const Tensor& self) {
  if (!self.is_complex()) return self;
  if (self.layout() != c10::Layout::Strided) return self.conj_physical();
  return at::_conj(self);
}

Tensor _conj(const Tensor& self) {
  TORCH_CHECK(self.is_complex(), "_conj: the conjugate bit needs a complex tensor, got ",
              c10::toString(self.scalar_type()), " (conj() of a real tensor is the tensor itself)");
  Tensor view = make_view(self, self.sizes(), self.strides(), self.storage_offset());
  view._set_conj(!self.is_conj());
  return view;
}

Tensor _neg_view(const Tensor& self) {
  Tensor view = make_view(self, self.sizes(), self.strides(), self.storage_offset());
  view._set_neg(!self.is_neg());
  return view;
}

// clone() writes the logical values, so it resolves both bits at once.
Tensor resolve_conj(const Tensor& self) { return self.is_conj() ? self.clone() : self; }

Tensor resolve_neg(const Tensor& self) { return self.is_neg() ? self.clone() : self; }

Tensor adjoint(const Tensor& self) {
  if (self.dim() == 0) return self.conj();
  TORCH_CHECK(self.dim() >= 2, "tensor.adjoint() is only supported on matrices or batches of matrices. Got ",
              self.dim(), "-D tensor.");
  Tensor transposed = self.transpose(-2, -1);
  return self.is_complex() ? transposed.conj() : transposed;
}

// A real tensor is its own conjugate: no copy, and no Node in a graph.
Tensor conj_physical(const Tensor& self) { return self.is_complex() ? at::_conj_physical(self) : self; }

Tensor& conj_physical_(Tensor& self) { return self.is_complex() ? at::conj_physical_out(self, self) : self; }

void angle_out(const Tensor& self, const Tensor& out) {
  TensorIterator iter = angle_config(self).add_output(out).add_input(self).op_name("angle").build();
  angle_stub(c10::DeviceType::CPU, iter);
  iter.cast_outputs();
}

void polar_out(const Tensor& abs, const Tensor& angle, const Tensor& out) {
  check_complex_out(out, abs, angle);
  TensorIterator iter = complex_config(out, abs, angle).op_name("polar").build();
  polar_stub(c10::DeviceType::CPU, iter);
}

void complex_out(const Tensor& real, const Tensor& imag, const Tensor& out) {
  check_complex_out(out, real, imag);
  TensorIterator iter = complex_config(out, real, imag).op_name("complex").build();
  complex_stub(c10::DeviceType::CPU, iter);
}

}  // namespace native
}  // namespace at::inline tessera
