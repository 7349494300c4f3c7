#include <autograd/functions/accumulate_grad.h>
#include <autograd/variable.h>

#include <aten/core/TensorOperators.h>
#include <c10/core/ThreadLocalState.h>
#include <aten/ops/Functions.h>

namespace torch::autograd {

namespace {

// torch's gradient layout contract: a stored grad has its parameter's strides when the
// parameter is dense (contiguous or channels-last), else contiguous ones. A Linear weight's
// grad arrives as a transposed view; kept as it is, fused optimizer updates and the
// parameter-shaped arithmetic after it would walk it against the grain.
at::MemoryFormat grad_layout(const Tensor& variable) {
  return !variable.is_contiguous() && variable.is_contiguous(at::MemoryFormat::ChannelsLast)
             ? at::MemoryFormat::ChannelsLast
             : at::MemoryFormat::Contiguous;
}

bool obeys_layout(const Tensor& grad, const Tensor& variable) { return grad.is_contiguous(grad_layout(variable)); }

}  // namespace

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
    if (!c10::GradMode::is_enabled() && new_grad.use_count() == 1 && obeys_layout(new_grad, variable_) &&
        !impl::is_view(new_grad)) {
      grad = impl::tensor_data(new_grad);
    } else {
      const at::MemoryFormat layout = grad_layout(variable_);
      grad = c10::GradMode::is_enabled() ? new_grad.clone(layout) : impl::tensor_data(new_grad).clone(layout);
    }
  } else if (!c10::GradMode::is_enabled()) {
    grad.add_(new_grad);
  } else {
    grad = grad + new_grad;
  }
  return {};
}

}  // namespace torch::autograd
