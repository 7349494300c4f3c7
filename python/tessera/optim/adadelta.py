"""optim.Adadelta (Zeiler 2012) with weight decay and maximize: the step size comes from
running averages of squared gradients and squared updates. A group's update is a few
_foreach_* calls in torch 1.13's per-element arithmetic order."""
from .. import _C
from .optimizer import Optimizer, _decayed_grads, _refuse_unsupported

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: {}".format(rho))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        _refuse_unsupported("Adadelta", differentiable, capturable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        self._setstate_defaults(state)

    def _update_group(self, group, params, grads):
        # 'step' is a tensor as in current torch (1.13: a Python int); the update does not read it.
        square_avgs, acc_deltas, _ = self._group_state(params, ("square_avg", "acc_delta"))
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        grads = _decayed_grads(group, params, grads)
        _C._foreach_mul_(square_avgs, rho)
        _C._foreach_addcmul_(square_avgs, grads, grads, 1 - rho)
        std = _C._foreach_add(square_avgs, eps)
        _C._foreach_sqrt_(std)
        delta = _C._foreach_add(acc_deltas, eps)
        _C._foreach_sqrt_(delta)
        _C._foreach_div_(delta, std)
        _C._foreach_mul_(delta, grads)
        _C._foreach_mul_(acc_deltas, rho)
        _C._foreach_addcmul_(acc_deltas, delta, delta, 1 - rho)
        _C._foreach_add_(params, delta, alpha=-lr)
