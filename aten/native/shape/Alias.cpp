// The backend kernels of the autograd-state operators: detach (an alias of self sharing its
// storage and version counter; the Autograd kernel generated for it records no history, so
// the alias starts outside every graph), and detach_ / requires_grad_, whose work is done
// by their hand-written Autograd kernels (autograd/VariableTypeManual.cpp): below autograd
// there is no autograd state to change, and they return self.
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>

namespace at::inline tessera::native {

Tensor detach(const Tensor& self) {
  Tensor alias = at::make_view(self, self.sizes(), self.strides(), self.storage_offset());
  if (self.unsafeGetTensorImpl()->is_wrapped_number()) alias.unsafeGetTensorImpl()->set_wrapped_number(true);
  return alias;
}

Tensor& detach_(Tensor& self) { return self; }

Tensor& requires_grad_(Tensor& self, bool requires_grad) {
  (void)requires_grad;
  return self;
}

}  // namespace at::inline tessera::native
