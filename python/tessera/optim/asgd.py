"""optim.ASGD, averaged stochastic gradient descent (Polyak & Juditsky 1992): SGD with a
decaying rate eta, and in state 'ax' a running average of the iterates that starts at
step t0. eta and the averaging weight mu are float32 0-dim tensors, as torch keeps them,
so their rounding is torch's."""
import math

from .. import _C
from .optimizer import Optimizer, _decayed_grads

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        Optimizer.__setstate__(self, state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
        # Older checkpoints kept Python numbers.
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], _C.Tensor):
                s["step"] = _C.tensor(float(s["step"]))
            if "eta" in s and not isinstance(s["eta"], _C.Tensor):
                s["eta"] = _C.tensor(s["eta"])
            if "mu" in s and not isinstance(s["mu"], _C.Tensor):
                s["mu"] = _C.tensor(float(s["mu"]))

    def _update_group(self, group, params, grads):
        init = {"step": lambda p: _C.tensor(0.), "eta": lambda p: _C.tensor(group["lr"]),
                "mu": lambda p: _C.tensor(1.)}
        etas, mus, axs, steps = self._group_state(params, ("eta", "mu", "ax"), init)
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        grads = _decayed_grads(group, params, grads)
        eta_values = [e.item() for e in etas]
        if group["foreach"]:
            # torch's multi-tensor path takes the first parameter's rate for the whole group.
            eta_values = [eta_values[0]] * len(etas)
        for eta, (ps, gs) in _by_value(eta_values, params, grads):
            _C._foreach_mul_(ps, 1 - lambd * eta)
            _C._foreach_add_(ps, gs, alpha=-eta)
        for p, ax, mu in zip(params, axs, mus):
            if mu.item() != 1:
                ax.add_(p.sub(ax).mul(mu))
            else:
                ax.copy_(p)
        for s, eta, mu in zip(steps, etas, mus):
            step = s.item()
            eta.copy_(_C.tensor(lr / math.pow(1 + lambd * lr * step, alpha)))
            mu.copy_(_C.tensor(1 / max(1, step - t0)))


def _by_value(values, *lists):
    """The parallel lists split by equal values (one bucket in the usual case)."""
    buckets = {}
    for i, v in enumerate(values):
        buckets.setdefault(v, []).append(i)
    for v, idx in buckets.items():
        yield v, [[lst[i] for i in idx] for lst in lists]
