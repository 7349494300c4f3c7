// Unary elementwise operators: the shape functions that need more than their iterator
// family (abs of complex is real; square of bool is Long), and isfinite. The arithmetic
// is in cpu/UnaryOpsKernel.cpp, compiled once per ISA.
#include <aten/core/TensorUtils.h>
#include <aten/native/DispatchStubs.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/elementwise/UnaryOps.h>
#include <aten/native/named/NameInference.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera {

namespace meta {

TensorMeta abs(const Tensor& self) {
  TensorMeta m = TensorIterator::config_for(IteratorFamily::Unary).add_output(Tensor()).add_input(self).output_meta();
  m.dtype = c10::toRealValueType(m.dtype);
  return m;
}

TensorMeta square(const Tensor& self) {
  TensorMeta m = TensorIterator::config_for(IteratorFamily::Unary).add_output(Tensor()).add_input(self).output_meta();
  if (m.dtype == c10::kBool) m.dtype = c10::kLong;  // torch: square(bool) is pow(bool, 2), an int64
  return m;
}

void check_polygamma(int64_t n, const Tensor& self) {
  (void)self;
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
}

}  // namespace meta

namespace native {

DEFINE_DISPATCH(isfinite_stub);

// In-place abs keeps the dtype, which a complex input cannot (its magnitude is real).
Tensor& abs_(Tensor& self) {
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "In-place abs is not supported for complex tensors.");
  // (a backend kernel: the generated Autograd kernel runs abs's formula on a copy of the
  // input it saves before this write)
  return at::abs_outf(self, self);
}

// A composite that runs its stub itself; conjugation and negation keep finiteness, so a
// conj()/negative view is read raw, through a view without the bits.
Tensor isfinite(const Tensor& self) {
  if (C10_UNLIKELY(named::names_pending(self))) {
    NoNamesGuard guard;
    return named::named_result(native::isfinite(self), names_of(self));
  }
  const Tensor raw = self.key_set().has_any(c10::math_bits_keyset) ? raw_view(self) : self;
  TensorIterator iter = TensorIterator::config_for(IteratorFamily::UnaryBool).add_output(Tensor()).add_input(raw).build();
  if (!self.is_meta()) isfinite_stub(c10::DeviceType::CPU, iter);
  return iter.output();
}

// Python's unary `+`: self itself, except for bool, which torch refuses.
Tensor positive(const Tensor& self) {
  TORCH_CHECK(self.scalar_type() != c10::kBool, "The `+` operator, on a bool tensor is not supported.");
  return self;
}

}  // namespace native
}  // namespace at::inline tessera
