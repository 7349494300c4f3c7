#include <autograd/functions/accumulate_grad.h>
#include <autograd/variable.h>

#include <aten/core/TensorOperators.h>
#include <c10/core/ThreadLocalState.h>
#include <aten/ops/Functions.h>

namespace torch::autograd {

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  // Leaves get no sequence number order of their own: they run as soon as they are ready.
  sequence_nr_ = UINT64_MAX;
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  std::lock_guard<std::mutex> lock(mutex());  // backward passes on several threads may share a leaf
  grads = impl::run_leaf_hooks(variable_, std::move(grads));
  if (grads.empty() || !grads[0].defined() || !variable_.requires_grad()) return {};
  Tensor new_grad = std::move(grads[0]);
  AutogradMeta* meta = impl::materialize_autograd_meta(variable_);
  Tensor& grad = meta->grad_;
  if (!grad.defined()) {
    // The engine hands over a grad nobody else holds: keep it rather than copy it, unless
    // a graph is being built (create_graph), where the stored grad keeps its history.
    if (!c10::GradMode::is_enabled() && new_grad.use_count() == 1 && new_grad.is_contiguous() &&
        !impl::is_view(new_grad)) {
      grad = impl::tensor_data(new_grad);
    } else {
      grad = c10::GradMode::is_enabled() ? new_grad.clone() : impl::tensor_data(new_grad).clone();
    }
  } else if (!c10::GradMode::is_enabled()) {
    grad.add_(new_grad);
  } else {
    grad = grad + new_grad;
  }
  return {};
}

}  // namespace torch::autograd
