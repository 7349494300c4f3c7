"""optim.NAdam (Adam with Nesterov momentum, Dozat 2016) with momentum decay, L2 or
decoupled weight decay and maximize. A group's update is a few _foreach_* calls in torch
1.13's per-element order; the running product of the momentum coefficients is a float32
0-dim tensor per parameter ('mu_product'), rounded as torch rounds it."""
from .. import _C
from .adam import _check_adam_args
from .optimizer import Optimizer, _by_step, _decayed_grads, _refuse_unsupported

__all__ = ["NAdam"]


# The running product of the momentum coefficients starts at 1 (float32, as torch keeps it).
_NADAM_INIT = {"mu_product": lambda p: _C.tensor(1.0, dtype=_C.float32)}


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError("Invalid momentum_decay value: {}".format(momentum_decay))
        _refuse_unsupported("NAdam", differentiable, capturable)
        # decoupled_weight_decay and maximize are current torch's (1.13 has neither).
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        self._setstate_defaults(state, extra=(("decoupled_weight_decay", False),))
        for s in self.state.values():
            if "mu_product" in s and not isinstance(s["mu_product"], _C.Tensor):
                s["mu_product"] = _C.tensor(float(s["mu_product"]), dtype=_C.float32)

    def _update_group(self, group, params, grads):
        mu_products, exp_avgs, exp_avg_sqs, steps = self._group_state(
            params, ("mu_product", "exp_avg", "exp_avg_sq"), _NADAM_INIT)
        lr, eps, momentum_decay = group["lr"], group["eps"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        grads = _decayed_grads(group, params, grads, decoupled=group["decoupled_weight_decay"])
        _C._foreach_mul_(exp_avgs, beta1)
        _C._foreach_add_(exp_avgs, grads, alpha=1 - beta1)
        _C._foreach_mul_(exp_avg_sqs, beta2)
        _C._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)

        for step, (ps, gs, ms, vs, mps) in _by_step(steps, params, grads, exp_avgs, exp_avg_sqs, mu_products):
            bias_correction2 = 1 - beta2 ** step
            mu = beta1 * (1. - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1. - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            _C._foreach_mul_(mps, mu)
            denom = _C._foreach_div(vs, bias_correction2)
            _C._foreach_sqrt_(denom)
            _C._foreach_add_(denom, eps)
            # The step sizes read mu_product; parameters at one step share it unless their
            # states were loaded from different histories, hence the second grouping.
            for mu_product, (ps2, gs2, ms2, ds2, mps2) in _by_step(mps, ps, gs, ms, denom, mps):
                # torch 1.13 forms the next product in float32 tensor arithmetic.
                mu_product_next = (mps2[0] * mu * mu_next).item()
                _C._foreach_addcdiv_(ps2, gs2, ds2, -lr * (1. - mu) / (1. - mu_product))
                _C._foreach_addcdiv_(ps2, ms2, ds2, -lr * mu_next / (1. - mu_product_next))
