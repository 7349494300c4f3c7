// Helpers the generated Autograd and ADInplaceOrView kernels (and hand-written autograd
// kernels of custom ops) are written with: does this call need a graph, record outputs,
// check and record in-place writes.
#pragma once

#include <aten/core/TensorUtils.h>
#include <autograd/function.h>
#include <autograd/functions/basic_ops.h>
#include <autograd/saved_variable.h>
#include <autograd/variable.h>

#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <optional>

namespace torch::autograd {

inline bool is_differentiable_type(c10::ScalarType t) { return c10::isFloatingType(t) || c10::isComplexType(t); }

namespace detail {
inline bool any_requires_grad(const at::Tensor& t) { return t.defined() && t.requires_grad(); }
inline bool any_requires_grad(const std::optional<at::Tensor>& t) { return t && any_requires_grad(*t); }
inline bool any_requires_grad(at::ArrayRef<at::Tensor> ts) {
  for (const at::Tensor& t : ts) {
    if (any_requires_grad(t)) return true;
  }
  return false;
}
inline bool any_requires_grad(at::ArrayRef<std::optional<at::Tensor>> ts) {
  for (const auto& t : ts) {
    if (any_requires_grad(t)) return true;
  }
  return false;
}
inline bool is_complex_tensor(const at::Tensor& t) { return t.defined() && c10::isComplexType(t.scalar_type()); }
inline bool is_complex_tensor(const std::optional<at::Tensor>& t) { return t && is_complex_tensor(*t); }
inline bool is_complex_tensor(at::ArrayRef<at::Tensor> ts) {
  for (const at::Tensor& t : ts) {
    if (is_complex_tensor(t)) return true;
  }
  return false;
}
inline bool is_complex_tensor(at::ArrayRef<std::optional<at::Tensor>> ts) {
  for (const auto& t : ts) {
    if (is_complex_tensor(t)) return true;
  }
  return false;
}
}  // namespace detail

// An op whose derivatives.yaml formulas are not marked `complex: true` records no graph
// through complex tensors (its formulas lack the conjugates of torch's convention).
[[noreturn]] TORCH_API void throw_complex_autograd_not_implemented(const char* op);
template <typename... Args>
inline void check_no_complex_autograd(const char* op, const Args&... args) {
  if ((detail::is_complex_tensor(args) || ...)) throw_complex_autograd_not_implemented(op);
}

// Whether this call records a graph: grad mode is on and some input requires grad.
template <typename... Args>
inline bool compute_requires_grad(const Args&... args) {
  if (!c10::GradMode::is_enabled()) return false;
  return (detail::any_requires_grad(args) || ...);
}

inline const at::Tensor* opt_ptr(const std::optional<at::Tensor>& t) { return t ? &*t : nullptr; }

// Records `t` as the next output of `fn` when its dtype can carry a grad; otherwise keeps
// the output numbering with an empty slot.
inline void set_history(const at::Tensor& t, const std::shared_ptr<Node>& fn) {
  if (t.defined() && is_differentiable_type(t.scalar_type())) {
    impl::set_history(t, fn);
  } else {
    fn->add_input_metadata_undefined();
  }
}

inline void rebase_history(const at::Tensor& t, std::shared_ptr<Node> fn) { impl::rebase_history(t, std::move(fn)); }

inline void increment_version(const at::Tensor& t) {
  if (t.defined()) t.unsafeGetTensorImpl()->bump_version();
}
inline void increment_version(at::ArrayRef<at::Tensor> ts) {
  for (const at::Tensor& t : ts) increment_version(t);
}

// In grad mode, a leaf that requires grad (or a view of one) cannot be written in place:
// its .grad would no longer match the value it was computed for.
TORCH_API void check_inplace(const at::Tensor& self, bool requires_grad);

// What a formula that reads `x.strides()` saves: a sparse tensor has no strides, so such a
// formula cannot differentiate it; torch refuses when the graph is recorded, in these words.
TORCH_API std::vector<int64_t> strides_or_error(const at::Tensor& t, const char* name);

[[noreturn]] TORCH_API void throw_error_out_requires_grad(const char* name);

// (the generated kernels refuse a grad no formula gives with aten's check)
using at::check_no_requires_grad;

}  // namespace torch::autograd
