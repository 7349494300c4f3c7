#include <autograd/VariableTypeUtils.h>

namespace torch::autograd {

void check_inplace(const at::Tensor& self, bool requires_grad) {
  if (!requires_grad || !c10::GradMode::is_enabled()) return;
  AutogradMeta* meta = impl::get_autograd_meta(self);
  if (!meta) return;
  if (meta->is_view_) {
    const at::Tensor& base = meta->base_;
    AutogradMeta* base_meta = impl::get_autograd_meta(base);
    TORCH_CHECK(!(base_meta && base_meta->requires_grad_ && !base_meta->grad_fn_),
                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    // (CopySlices replays a view as a strided one over a dense copy of its base; refused
    // before the write, so that the data never runs ahead of the graph)
    TORCH_CHECK_NOT_IMPLEMENTED(!base.is_nested() && !self.is_nested(),
                                "in-place operations on views of nested tensors are not supported by autograd");
    return;
  }
  TORCH_CHECK(!(meta->requires_grad_ && !meta->grad_fn_),
              "a leaf Variable that requires grad is being used in an in-place operation.");
}

void throw_error_out_requires_grad(const char* name) {
  TORCH_CHECK(false, name, "(): functions with out=... arguments don't support automatic differentiation, but one of "
                           "the arguments requires grad.");
}

void throw_complex_autograd_not_implemented(const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "the derivative of '", op,
                              "' is not implemented for complex tensors: tessera differentiates it on real "
                              "floating-point tensors only so far");
}

}  // namespace torch::autograd

namespace torch::autograd {

std::vector<int64_t> strides_or_error(const at::Tensor& t, const char* name) {
  // (Only a sparse tensor that itself requires grad needs its strides: other formulas of
  // the op do not read them.)
  if (c10::isSparseLayout(t.layout()) && !t.requires_grad()) return {};
  TORCH_CHECK(!c10::isSparseLayout(t.layout()), "The backward pass for this operation requires the '", name,
              "' tensor to be strided, but a sparse tensor was given instead. Please either use a strided tensor or "
              "set requires_grad=False for '", name, "'");
  return t.strides().vec();
}

}  // namespace torch::autograd
