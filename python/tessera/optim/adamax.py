"""optim.Adamax (Adam's infinity-norm variant, Kingma & Ba 2014) with weight decay and
maximize. A group's update is a few _foreach_* calls in torch 1.13's per-element arithmetic
order; the bias correction depends on the step, so parameters are grouped by step."""
from .. import _C
from .adam import _check_adam_args
from .optimizer import Optimizer, _by_step, _decayed_grads, _refuse_unsupported

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        _refuse_unsupported("Adamax", differentiable, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        self._setstate_defaults(state)

    def _update_group(self, group, params, grads):
        exp_avgs, exp_infs, steps = self._group_state(params, ("exp_avg", "exp_inf"))
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        grads = _decayed_grads(group, params, grads)
        _C._foreach_mul_(exp_avgs, beta1)
        _C._foreach_add_(exp_avgs, grads, alpha=1 - beta1)
        # exp_inf = max(beta2 * exp_inf, |g| + eps), elementwise (NaN propagates as in amax).
        _C._foreach_mul_(exp_infs, beta2)
        bound = _C._foreach_abs(grads)
        _C._foreach_add_(bound, eps)
        _C._foreach_maximum_(exp_infs, bound)
        for step, (ps, ms, us) in _by_step(steps, params, exp_avgs, exp_infs):
            clr = lr / (1 - beta1 ** step)
            _C._foreach_addcdiv_(ps, ms, us, -clr)
