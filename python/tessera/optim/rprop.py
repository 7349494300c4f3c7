"""optim.Rprop (Riedmiller & Braun 1993): each element moves by its own step size against
the sign of its gradient; the step grows by etaplus while the gradient keeps its sign and
shrinks by etaminus when it flips (that element then skips one update). maximize follows
the gradient instead."""
from .. import _C
from .optimizer import Optimizer, _tensor_steps

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        shrink, grow = etas[0], etas[1]
        if not 0.0 < shrink < 1.0 < grow:
            raise ValueError(f"Invalid eta values: {shrink}, {grow}")
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                                  "maximize": maximize})

    def __setstate__(self, state):
        Optimizer.__setstate__(self, state)
        for group in self.param_groups:
            for key, default in (("foreach", None), ("maximize", False)):
                group.setdefault(key, default)
        _tensor_steps(self)  # 1.13 kept an int step; tessera a float32 tensor, as current torch

    def _update_group(self, group, params, grads):
        # torch sizes the step sizes like the gradient, filled with lr; a complex parameter's
        # real and imaginary parts each start at lr (current torch: two real parameters).
        def step_size(p):
            lr = complex(group["lr"], group["lr"]) if p.is_complex() else group["lr"]
            return _C.full_like(p, lr, memory_format=_C.preserve_format)
        init = {"step_size": step_size}
        prevs, step_sizes, _ = self._group_state(params, ("prev", "step_size"), init)
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        if group["maximize"]:
            grads = _C._foreach_neg(grads)
        products = _C._foreach_mul(grads, prevs)
        factors, kept = [], []
        for product, grad in zip(products, grads):
            flipped, same = product.lt(0), product.gt(0)
            # 1 where either gradient is zero; NaN stays NaN as in torch.
            factor = product.sign()
            factor.masked_fill_(same, etaplus)
            factor.masked_fill_(flipped, etaminus)
            factor.masked_fill_(product.eq(0), 1)
            factors.append(factor)
            kept.append(grad.masked_fill(flipped, 0))
        _C._foreach_mul_(step_sizes, factors)
        for step_size in step_sizes:
            step_size.clamp_(lo, hi)
        _C._foreach_addcmul_(params, [g.sign() for g in kept], step_sizes, -1)
        for prev, grad in zip(prevs, kept):
            prev.copy_(grad)
