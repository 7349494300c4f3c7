// The per-tensor kernel of _fused_adam_ / _fused_adamw_ (cpu/FusedAdamKernel.cpp): Adam's
// whole update of one parameter in a single pass over its elements.
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

}  // namespace at::inline tessera::native
