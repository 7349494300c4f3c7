// The Autograd kernels written by hand (ops.yaml's manual_autograd: True), as torch's
// VariableTypeManual: detach_ and requires_grad_ change a tensor's autograd state, which a
// generated kernel (record a Node, bump the version) would get wrong: detach_ on a leaf
// that requires grad is allowed, and neither writes data.
#include <autograd/variable.h>

#include <aten/library.h>

namespace torch::autograd {
namespace {

at::Tensor& detach_(c10::DispatchKeySet, at::Tensor& self) {
  impl::detach_in_place(self);  // refuses views, as torch
  return self;
}

at::Tensor& requires_grad_(c10::DispatchKeySet, at::Tensor& self, bool requires_grad) {
  self.set_requires_grad(requires_grad);  // the leaf and dtype checks are VariableHooks'
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, Autograd, m) {
  m.impl("detach_", TORCH_FN(detach_));
  m.impl("requires_grad_", TORCH_FN(requires_grad_));
}

}  // namespace torch::autograd
