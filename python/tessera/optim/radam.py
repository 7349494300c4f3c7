"""optim.RAdam (Liu et al. 2019: Adam with a rectified adaptive learning rate) with L2 or
decoupled weight decay and maximize. A group's update is a few _foreach_* calls in torch
1.13's per-element order; the rectification depends on the step, so parameters are grouped
by step."""
import math

from .. import _C
from .adam import _check_adam_args
from .optimizer import Optimizer, _by_step, _decayed_grads, _refuse_unsupported

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        _refuse_unsupported("RAdam", differentiable, capturable)
        # decoupled_weight_decay and maximize are current torch's (1.13 has neither).
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        self._setstate_defaults(state, extra=(("decoupled_weight_decay", False),))

    def _update_group(self, group, params, grads):
        exp_avgs, exp_avg_sqs, steps = self._group_state(params, ("exp_avg", "exp_avg_sq"))
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        grads = _decayed_grads(group, params, grads, decoupled=group["decoupled_weight_decay"])
        _C._foreach_mul_(exp_avgs, beta1)
        _C._foreach_add_(exp_avgs, grads, alpha=1 - beta1)
        _C._foreach_mul_(exp_avg_sqs, beta2)
        _C._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)

        rho_inf = 2 / (1 - beta2) - 1
        for step, (ps, ms, vs) in _by_step(steps, params, exp_avgs, exp_avg_sqs):
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            update = _C._foreach_div(ms, bias_correction1)
            _C._foreach_mul_(update, lr)
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            # Rectify only once the variance of the adaptive rate is tractable (rho_t > 5);
            # before that the update is momentum SGD.
            if rho_t > 5.:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                denom = _C._foreach_sqrt(vs)
                _C._foreach_add_(denom, eps)
                # sqrt(bc2) / denom, formed as torch forms scalar / tensor: reciprocal, then scale.
                adaptive_lr = _C._foreach_reciprocal(denom)
                _C._foreach_mul_(adaptive_lr, math.sqrt(bias_correction2))
                _C._foreach_mul_(update, adaptive_lr)
                _C._foreach_mul_(update, rect)
            _C._foreach_add_(ps, update, alpha=-1.0)
