// The per-tensor kernels of the fused optimizer updates (cpu/FusedOptimizerKernels.cpp):
// _fused_adam_ / _fused_adamw_ and _fused_sgd_, each a parameter's whole update in a
// single pass over its elements.
#pragma once

#include <aten/core/Tensor.h>
#include <aten/native/DispatchStub.h>

namespace at::inline tessera::native {

struct AdamStep {
  double lr, beta1, beta2, weight_decay, eps;
  double step_size;       // lr / (1 - beta1^step)
  double bias2_sqrt;      // sqrt(1 - beta2^step)
  double inv_grad_scale;  // 1 when no grad_scale
  bool amsgrad, maximize, decoupled;  // decoupled: AdamW's weight decay
};

// param, grad, exp_avg, exp_avg_sq (and max_exp_avg_sq when amsgrad): contiguous, one
// floating dtype, equal sizes.
using fused_adam_fn = void (*)(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                               const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq, const AdamStep& s);
DECLARE_DISPATCH(fused_adam_fn, fused_adam_stub);

struct SgdStep {
  double weight_decay, momentum, lr, dampening;
  double inv_grad_scale;  // 1 when no grad_scale
  bool nesterov, maximize, first_step;  // first_step: the momentum buffer starts as the grad
};

// param, grad and (with momentum) momentum_buffer: contiguous, one floating dtype, equal
// sizes; an undefined momentum_buffer when momentum is 0.
using fused_sgd_fn = void (*)(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer,
                              const SgdStep& s);
DECLARE_DISPATCH(fused_sgd_fn, fused_sgd_stub);

}  // namespace at::inline tessera::native
