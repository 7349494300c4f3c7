// _fused_adam_, _fused_adamw_ and _fused_sgd_ (current torch's schemas): an optimizer's
// update across a list of parameters, each in one pass over its elements
// (cpu/FusedOptimizerKernels.cpp) where the foreach form takes several. Adam's step counts
// are tensors, already advanced by the caller, as torch's optimizers keep them. The ops
// return nothing, so autograd records nothing; their Meta kernels check the arguments.
#include <aten/native/NativeFunctions.h>
#include <aten/native/foreach/FusedOptimizers.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <optional>
#include <string>

namespace at::inline tessera::native {

DEFINE_DISPATCH(fused_adam_stub);
DEFINE_DISPATCH(fused_sgd_stub);

namespace {

// t (grads[i], a state tensor) must match its parameter p, be contiguous, and p must be a
// float32/float64 leaf outside grad mode.
void check_like_param(const char* op, const Tensor& p, size_t i, const Tensor& t, const char* what) {
  TORCH_CHECK(t.scalar_type() == p.scalar_type() && t.device() == p.device() && t.sizes().equals(p.sizes()), op, ": ",
              what, "[", i, "] must match its parameter (", c10::toString(p.scalar_type()), " ", p.sizes(), " on ",
              p.device(), "), got ", c10::toString(t.scalar_type()), " ", t.sizes(), " on ", t.device());
  TORCH_CHECK(t.is_contiguous(), op, ": ", what, "[", i, "] must be contiguous");
}

void check_param(const char* op, const Tensor& p, size_t i) {
  TORCH_CHECK(p.scalar_type() == c10::kFloat || p.scalar_type() == c10::kDouble, op,
              ": parameters must be float32 or float64, got ", c10::toString(p.scalar_type()), " for parameter ", i);
  check_like_param(op, p, i, p, "params");
  // No autograd kernel records these ops: refuse what torch's in-place check would.
  TORCH_CHECK(!(c10::GradMode::is_enabled() && p.requires_grad()), op,
              ": a leaf Variable that requires grad is being used in an in-place operation (parameter ", i,
              "); run optimizer updates under no_grad()");
}

// An inf/NaN seen while unscaling (torch.cuda.amp's GradScaler) skips the whole step; a
// grad_scale divides the grads. Returns false when the step is skipped.
bool unscale(const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf, double& inv_scale) {
  if (found_inf && found_inf->defined() && found_inf->item().toDouble() != 0) return false;
  inv_scale = 1.0;
  if (grad_scale && grad_scale->defined()) inv_scale = 1.0 / grad_scale->item().toDouble();
  return true;
}

void check_adam_arguments(const char* op, TensorList params, TensorList grads, TensorList exp_avgs,
                          TensorList exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList state_steps, bool amsgrad) {
  const size_t n = params.size();
  TORCH_CHECK(n > 0, op, ": Tensor list must have at least one tensor.");
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n && state_steps.size() == n &&
                  (!amsgrad || max_exp_avg_sqs.size() == n),
              op, ": every tensor list must have the length of params (", n, "), got grads ", grads.size(),
              ", exp_avgs ", exp_avgs.size(), ", exp_avg_sqs ", exp_avg_sqs.size(), ", max_exp_avg_sqs ",
              max_exp_avg_sqs.size(), ", state_steps ", state_steps.size());
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    check_like_param(op, params[i], i, grads[i], "grads");
    check_like_param(op, params[i], i, exp_avgs[i], "exp_avgs");
    check_like_param(op, params[i], i, exp_avg_sqs[i], "exp_avg_sqs");
    if (amsgrad) check_like_param(op, params[i], i, max_exp_avg_sqs[i], "max_exp_avg_sqs");
    TORCH_CHECK(state_steps[i].numel() == 1, op, ": state_steps[", i, "] must hold one value, got shape ",
                state_steps[i].sizes());
  }
}

void check_sgd_arguments(const char* op, TensorList params, TensorList grads, TensorList momentum_buffers,
                         double momentum) {
  const size_t n = params.size();
  TORCH_CHECK(n > 0, op, ": Tensor list must have at least one tensor.");
  TORCH_CHECK(grads.size() == n && (momentum == 0 || momentum_buffers.size() == n), op,
              ": every tensor list must have the length of params (", n, "), got grads ", grads.size(),
              ", momentum_buffer_list ", momentum_buffers.size());
  for (size_t i = 0; i < n; ++i) {
    check_param(op, params[i], i);
    check_like_param(op, params[i], i, grads[i], "grads");
    if (momentum != 0) check_like_param(op, params[i], i, momentum_buffers[i], "momentum_buffer_list");
  }
}

void fused_adam_impl(const char* op, bool decoupled, TensorList params, TensorList grads, TensorList exp_avgs,
                     TensorList exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList state_steps, double lr,
                     double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                     const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  check_adam_arguments(op, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad);
  double inv_scale;
  if (!unscale(grad_scale, found_inf, inv_scale)) return;
  for (size_t i = 0; i < params.size(); ++i) {
    const double step = state_steps[i].item().toDouble();
    AdamStep s{lr, beta1, beta2, weight_decay, eps,
               lr / (1 - std::pow(beta1, step)), std::sqrt(1 - std::pow(beta2, step)), inv_scale,
               amsgrad, maximize, decoupled};
    if (params[i].numel() == 0) continue;
    fused_adam_stub(c10::DeviceType::CPU, params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
                    amsgrad ? max_exp_avg_sqs[i] : Tensor(), s);
  }
}

}  // namespace

void _fused_adam__cpu(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                      TensorList max_exp_avg_sqs, TensorList state_steps, double lr, double beta1, double beta2,
                      double weight_decay, double eps, bool amsgrad, bool maximize,
                      const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  fused_adam_impl("_fused_adam_", false, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void _fused_adamw__cpu(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                       TensorList max_exp_avg_sqs, TensorList state_steps, double lr, double beta1, double beta2,
                       double weight_decay, double eps, bool amsgrad, bool maximize,
                       const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  fused_adam_impl("_fused_adamw_", true, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

// Meta tensors hold no values: the update is the arguments' checks alone.
void _fused_adam__meta(TensorList self, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                       TensorList max_exp_avg_sqs, TensorList state_steps, double, double, double, double, double,
                       bool amsgrad, bool, const std::optional<Tensor>&, const std::optional<Tensor>&) {
  check_adam_arguments("_fused_adam_", self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad);
}

void _fused_sgd__cpu(TensorList self, TensorList grads, TensorList momentum_buffer_list, double weight_decay,
                     double momentum, double lr, double dampening, bool nesterov, bool maximize, bool is_first_step,
                     const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  check_sgd_arguments("_fused_sgd_", self, grads, momentum_buffer_list, momentum);
  double inv_scale;
  if (!unscale(grad_scale, found_inf, inv_scale)) return;
  const SgdStep s{weight_decay, momentum, lr, dampening, inv_scale, nesterov, maximize, is_first_step};
  for (size_t i = 0; i < self.size(); ++i) {
    if (self[i].numel() == 0) continue;
    fused_sgd_stub(c10::DeviceType::CPU, self[i], grads[i], momentum != 0 ? momentum_buffer_list[i] : Tensor(), s);
  }
}

void _fused_sgd__meta(TensorList self, TensorList grads, TensorList momentum_buffer_list, double, double momentum,
                      double, double, bool, bool, bool, const std::optional<Tensor>&, const std::optional<Tensor>&) {
  check_sgd_arguments("_fused_sgd_", self, grads, momentum_buffer_list, momentum);
}

}  // namespace at::inline tessera::native

