"""optim.Adam and optim.AdamW (amsgrad, maximize, weight decay coupled or decoupled).
Contiguous float32/float64 parameters update through _fused_adam_ / _fused_adamw_, one pass
over each parameter; any others through _foreach_* calls. Both follow torch 1.13's
per-element arithmetic."""
import math

from .. import _C
from .optimizer import Optimizer, _by_step, _decayed_grads, _fusable

__all__ = ["Adam", "AdamW"]


def _check_adam_args(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


_ADAM_INIT = {"step": lambda p: _C.tensor(0.0)}


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        _check_adam_args(lr, betas, eps, weight_decay)
        if differentiable:
            raise NotImplementedError(type(self).__name__ + "(differentiable=True) is not supported by tessera")
        if capturable:
            raise NotImplementedError(type(self).__name__ + "(capturable=True) needs CUDA graphs, which tessera "
                                      "does not have")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        if fused:
            for group in self.param_groups:
                for p in group["params"]:
                    if not p.is_floating_point():
                        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors "
                                           "of supported devices: ['cpu'].")

    def __setstate__(self, state):
        self._setstate_defaults(state, extra=(("amsgrad", False), ("fused", None)))

    def _update_group(self, group, params, grads):
        amsgrad = group["amsgrad"]
        names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else ("exp_avg", "exp_avg_sq")
        # 'step' follows the default dtype here, as torch 1.13's Adam makes it.
        exp_avgs, exp_avg_sqs, *max_sqs, steps = self._group_state(params, names, _ADAM_INIT, guard=False)
        max_sqs = max_sqs[0] if amsgrad else []
        if group["foreach"] is not True and _fusable(params + grads + exp_avgs + exp_avg_sqs + max_sqs):
            beta1, beta2 = group["betas"]
            fused = _C._fused_adamw_ if self._decoupled else _C._fused_adam_
            self._txn.defer(fused, params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, lr=group["lr"], beta1=beta1,
                        beta2=beta2, weight_decay=group["weight_decay"], eps=group["eps"], amsgrad=amsgrad,
                        maximize=group["maximize"])
        else:
            self._txn.guard(params, exp_avgs, exp_avg_sqs, max_sqs)
            self._foreach_update(group, params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps)

    def _foreach_update(self, group, params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        grads = _decayed_grads(group, params, grads, decoupled=self._decoupled)
        _C._foreach_mul_(exp_avgs, beta1)
        _C._foreach_add_(exp_avgs, grads, alpha=1 - beta1)
        _C._foreach_mul_(exp_avg_sqs, beta2)
        _C._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        if group["amsgrad"]:
            _C._foreach_maximum_(max_sqs, exp_avg_sqs)
        second = max_sqs if group["amsgrad"] else exp_avg_sqs
        for step, (ps, ms, vs) in _by_step(steps, params, exp_avgs, second):
            step_size = lr / (1 - beta1 ** step)
            denom = _C._foreach_sqrt(vs)
            _C._foreach_div_(denom, math.sqrt(1 - beta2 ** step))
            _C._foreach_add_(denom, eps)
            _C._foreach_addcdiv_(ps, ms, denom, -step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2): p *= 1 - lr * weight_decay."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused)
