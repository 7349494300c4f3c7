"""optim.RMSprop (Hinton's lecture notes; the centered form of Graves 2013), with momentum,
weight decay and maximize. A parameter group's update is a few _foreach_* calls in torch
1.13's per-element arithmetic order."""
from .. import _C
from .optimizer import Optimizer, _decayed_grads, _refuse_unsupported

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= momentum:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= alpha:
            raise ValueError("Invalid alpha value: {}".format(alpha))
        _refuse_unsupported("RMSprop", differentiable, capturable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        self._setstate_defaults(state, extra=(("momentum", 0), ("centered", False)))

    def _update_group(self, group, params, grads):
        momentum, centered = group["momentum"], group["centered"]
        names = ("square_avg",) + (("momentum_buffer",) if momentum > 0 else ()) + \
            (("grad_avg",) if centered else ())
        square_avgs, *lists, _ = self._group_state(params, names)
        bufs = lists.pop(0) if momentum > 0 else []
        grad_avgs = lists.pop(0) if centered else []
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        grads = _decayed_grads(group, params, grads)
        _C._foreach_mul_(square_avgs, alpha)
        _C._foreach_addcmul_(square_avgs, grads, grads, 1 - alpha)
        if centered:
            # 1.13 decays grad_avg as mul then add (current torch: lerp); the oracle's order.
            _C._foreach_mul_(grad_avgs, alpha)
            _C._foreach_add_(grad_avgs, grads, alpha=1 - alpha)
            avg = _C._foreach_addcmul(square_avgs, grad_avgs, grad_avgs, -1)
            _C._foreach_sqrt_(avg)
        else:
            avg = _C._foreach_sqrt(square_avgs)
        _C._foreach_add_(avg, eps)
        if momentum > 0:
            _C._foreach_mul_(bufs, momentum)
            _C._foreach_addcdiv_(bufs, grads, avg)
            _C._foreach_add_(params, bufs, alpha=-lr)
        else:
            _C._foreach_addcdiv_(params, grads, avg, -lr)
