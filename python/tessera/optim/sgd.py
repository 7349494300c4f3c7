"""optim.SGD with momentum, dampening, Nesterov, weight decay and maximize, in torch 1.13's
arithmetic order. Contiguous float32/float64 parameters update through _fused_sgd_ (one
pass over each parameter); any others through a handful of _foreach_* calls. A group with
a sparse gradient (nn.Embedding(sparse=True)) updates one parameter at a time, as torch's
does, its momentum buffer kept sparse."""
from .. import _C
from .optimizer import Optimizer, _any_sparse, _decayed_grads, _fusable, required

__all__ = ["SGD"]


class SGD(Optimizer):
    _complex_as_real = False  # linear in p and its grad: complex parameters update as they are

    # lr defaults to 1e-3 as in current torch (1.13 required it).
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise NotImplementedError("SGD(differentiable=True) is not supported by tessera")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        self._setstate_defaults(state, extra=(("nesterov", False),), capturable=False)

    def _update_group(self, group, params, grads):
        if _any_sparse(grads):
            self._single_tensor_update(group, params, grads)
            return
        lr, momentum, dampening, nesterov = group["lr"], group["momentum"], group["dampening"], group["nesterov"]
        states = [self.state[p] for p in params] if momentum != 0 else []
        bufs = [s.get("momentum_buffer") for s in states]
        kept = [b for b in bufs if b is not None]
        if group["foreach"] is not True and _fusable(params + grads + kept):
            self._fused_update(group, params, grads, bufs)
            return
        self._txn.guard(params, kept)
        grads = _decayed_grads(group, params, grads)
        if momentum != 0:
            fresh = [i for i, b in enumerate(bufs) if b is None]
            if kept:
                _C._foreach_mul_(kept, momentum)
                _C._foreach_add_(kept, [g for g, b in zip(grads, bufs) if b is not None], alpha=1 - dampening)
            for i in fresh:  # the first step's buffer is the gradient itself
                bufs[i] = grads[i].clone().detach()
                self._txn.created(states[i], "momentum_buffer")
                states[i]["momentum_buffer"] = bufs[i]
            if nesterov:
                grads = _C._foreach_add(grads, bufs, alpha=momentum)
            else:
                grads = bufs
        _C._foreach_add_(params, grads, alpha=-lr)

    def _fused_update(self, group, params, grads, bufs):
        args = dict(weight_decay=group["weight_decay"], momentum=group["momentum"], lr=group["lr"],
                    dampening=group["dampening"], nesterov=group["nesterov"], maximize=group["maximize"])
        if group["momentum"] == 0:
            self._txn.defer(_C._fused_sgd_, params, grads, [], is_first_step=False, **args)
            return
        old = [i for i, b in enumerate(bufs) if b is not None]
        fresh = [i for i, b in enumerate(bufs) if b is None]
        if old:
            self._txn.defer(_C._fused_sgd_, [params[i] for i in old], [grads[i] for i in old], [bufs[i] for i in old],
                        is_first_step=False, **args)
        if fresh:  # the first step's buffer is the (decayed) gradient itself
            new_bufs = [_C.empty_like(params[i]) for i in fresh]
            for i, b in zip(fresh, new_bufs):
                state = self.state[params[i]]
                self._txn.created(state, "momentum_buffer")
                state["momentum_buffer"] = b
            self._txn.defer(_C._fused_sgd_, [params[i] for i in fresh], [grads[i] for i in fresh], new_bufs,
                        is_first_step=True, **args)

    def _single_tensor_update(self, group, params, grads):
        """torch's per-parameter loop, which takes sparse grads: L2 decay of a sparse grad
        fails as torch's does (add(sparse, dense) is not supported). The parameter writes
        run last (deferred), so a failure leaves the parameters alone without copying them:
        a copy would cost the whole embedding table on every sparse step."""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        for p, d_p in zip(params, grads):
            if maximize:
                d_p = -d_p
            if weight_decay != 0:
                d_p = d_p.add(p, alpha=weight_decay)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = d_p.clone().detach()
                    self._txn.created(state, "momentum_buffer")
                    state["momentum_buffer"] = buf
                else:
                    self._txn.guard([buf])
                    buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
            self._txn.defer(p.add_, d_p, alpha=-lr)
