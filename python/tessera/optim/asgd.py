"""optim.ASGD, averaged stochastic gradient descent (Polyak & Juditsky 1992): SGD with a
decaying rate eta, and in state 'ax' a running average of the iterates that starts at
step t0. eta and the averaging weight mu are float32 0-dim tensors, as torch keeps them,
so their rounding is torch's."""
import math

from .. import _C
from .optimizer import Optimizer, _by_step, _decayed_grads

__all__ = ["ASGD"]

# State entries an old checkpoint may hold as numbers, and how each becomes a 0-dim tensor.
_AS_TENSOR = (("step", float), ("eta", lambda v: v), ("mu", float))


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False):
        for value, what in ((lr, "learning rate"), (weight_decay, "weight_decay value")):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {what}: {value}")
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize})

    def __setstate__(self, state):
        Optimizer.__setstate__(self, state)
        for group in self.param_groups:
            for key, default in (("foreach", None), ("maximize", False)):
                group.setdefault(key, default)
        # Checkpoints from older versions hold Python numbers where tensors are kept now.
        for entry in self.state.values():
            for key, convert in _AS_TENSOR:
                if key in entry and not isinstance(entry[key], _C.Tensor):
                    entry[key] = _C.tensor(convert(entry[key]))

    def _update_group(self, group, params, grads):
        fresh = {"step": lambda p: _C.tensor(0.), "eta": lambda p: _C.tensor(group["lr"]),
                 "mu": lambda p: _C.tensor(1.)}
        etas, mus, axs, steps = self._group_state(params, ("eta", "mu", "ax"), fresh)
        grads = _decayed_grads(group, params, grads)
        lambd = group["lambd"]
        # torch's multi-tensor path applies the first parameter's rate to the whole group.
        rates = [etas[0]] * len(etas) if group["foreach"] else etas
        for rate, (ps, gs) in _by_step(rates, params, grads):
            _C._foreach_mul_(ps, 1 - lambd * rate)
            _C._foreach_add_(ps, gs, alpha=-rate)
        # The average: a plain copy of the iterate until step t0, a running mean after.
        for p, ax, mu in zip(params, axs, mus):
            if mu.item() == 1:
                ax.copy_(p)
            else:
                ax.add_(p.sub(ax).mul(mu))
        lr, power, t0 = group["lr"], group["alpha"], group["t0"]
        for count, eta, mu in zip(steps, etas, mus):
            n = count.item()
            eta.copy_(_C.tensor(lr / math.pow(1 + lambd * lr * n, power)))
            mu.copy_(_C.tensor(1 / max(1, n - t0)))
