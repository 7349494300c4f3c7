// The Autograd kernels written by hand (ops.yaml's manual_autograd: True), as torch's
// VariableTypeManual: detach_ and requires_grad_ change a tensor's autograd state, which a
// generated kernel (record a Node, bump the version) would get wrong: detach_ on a leaf
// that requires grad is allowed, and neither writes data. resize_ / resize_as_ / set_
// change what memory a tensor views, which no derivative describes: they refuse a tensor
// that requires grad and record nothing.
#include <autograd/variable.h>

#include <aten/library.h>
#include <aten/ops/RedispatchFunctions.h>

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

void check_no_grad(const at::Tensor& self, const char* what) {
  TORCH_CHECK(!self.requires_grad(), what);
}

void check_set(const at::Tensor& self, const at::Tensor& source) {
  check_no_grad(self, "a leaf Variable that requires grad is being used in an in-place operation.");
  TORCH_CHECK_NOT_IMPLEMENTED(!source.requires_grad(), "set_: no gradient flows through set_, so self cannot take on "
                              "the memory of a tensor that requires grad; pass source.detach()");
}

at::Tensor& resize_(c10::DispatchKeySet ks, at::Tensor& self, at::IntArrayRef size,
                    std::optional<at::MemoryFormat> memory_format) {
  check_no_grad(self, "cannot resize variables that require grad");
  return at::redispatch::resize_(ks & c10::after_autograd_keyset, self, size, memory_format);
}

at::Tensor& resize_as_(c10::DispatchKeySet ks, at::Tensor& self, const at::Tensor& the_template,
                       std::optional<at::MemoryFormat> memory_format) {
  check_no_grad(self, "cannot resize variables that require grad");
  return at::redispatch::resize_as_(ks & c10::after_autograd_keyset, self, the_template, memory_format);
}

at::Tensor& set_source_Tensor(c10::DispatchKeySet ks, at::Tensor& self, const at::Tensor& source) {
  check_set(self, source);
  return at::redispatch::set__source_Tensor(ks & c10::after_autograd_keyset, self, source);
}

at::Tensor& set_source_Tensor_storage_offset(c10::DispatchKeySet ks, at::Tensor& self, const at::Tensor& source,
                                             int64_t storage_offset, at::IntArrayRef size, at::IntArrayRef stride) {
  check_set(self, source);
  return at::redispatch::set__source_Tensor_storage_offset(ks & c10::after_autograd_keyset, self, source,
                                                           storage_offset, size, stride);
}

at::Tensor& set_empty(c10::DispatchKeySet ks, at::Tensor& self) {
  check_no_grad(self, "a leaf Variable that requires grad is being used in an in-place operation.");
  return at::redispatch::set_(ks & c10::after_autograd_keyset, self);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, Autograd, m) {
  m.impl("detach_", TORCH_FN(detach_));
  m.impl("requires_grad_", TORCH_FN(requires_grad_));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("resize_as_", TORCH_FN(resize_as_));
  m.impl("set_.source_Tensor", TORCH_FN(set_source_Tensor));
  m.impl("set_.source_Tensor_storage_offset", TORCH_FN(set_source_Tensor_storage_offset));
  m.impl("set_", TORCH_FN(set_empty));
}

}  // namespace torch::autograd
