"""optim.Adagrad (Duchi et al. 2011) with learning-rate decay, weight decay and maximize.
The accumulator 'sum' is created at construction as torch does; the update of a group is a
few _foreach_* calls, in torch 1.13's per-element arithmetic order. A group with a sparse
gradient updates one parameter at a time, touching only the grad's rows, as torch's does."""
from .. import _C
from .optimizer import Optimizer, _any_sparse, _by_step, _decayed_grads, _fill_state, _refuse_unsupported, \
    _sparse_like

__all__ = ["Adagrad"]


class Adagrad(Optimizer):

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= lr_decay:
            raise ValueError("Invalid lr_decay value: {}".format(lr_decay))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: {}".format(initial_accumulator_value))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        _refuse_unsupported("Adagrad", differentiable)
        if fused:
            raise NotImplementedError("Adagrad(fused=True) is not supported by tessera; leave fused unset to "
                                      "use the _foreach_* update")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)  # add_param_group creates each parameter's state

    @staticmethod
    def _init(group):
        value = group["initial_accumulator_value"]

        def accumulator(p):
            # a complex parameter's real and imaginary parts each start at the value (torch)
            fill = complex(value, value) if p.is_complex() else value
            return _C.full_like(p, fill, memory_format=_C.preserve_format)
        return {"sum": accumulator}

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        # torch creates the state in __init__ only, so a group added later fails in step()
        # with a KeyError; tessera initialises every added group's state here instead.
        group = self.param_groups[-1]
        init = self._init(group)
        for p in group["params"]:
            if len(self.state[p]) == 0:
                _fill_state(self.state[p], p, ("sum",), init)

    def __setstate__(self, state):
        self._setstate_defaults(state, extra=(("fused", None),), capturable=False)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _update_group(self, group, params, grads):
        # Every parameter's state exists from add_param_group on; init serves a state_dict
        # that lacked one.
        sparse = _any_sparse(grads)
        sums, steps = self._group_state(params, ("sum",), self._init(group), guard=not sparse)
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        if sparse:
            self._single_tensor_update(group, params, grads, sums, steps)
            return
        grads = _decayed_grads(group, params, grads)
        _C._foreach_addcmul_(sums, grads, grads, 1)
        std = _C._foreach_sqrt(sums)
        _C._foreach_add_(std, eps)
        # The decayed rate depends on each parameter's step: one call per distinct step.
        for step, (ps, gs, ds) in _by_step(steps, params, grads, std):
            clr = lr / (1 + (step - 1) * lr_decay)
            _C._foreach_addcdiv_(ps, gs, ds, -clr)

    def _single_tensor_update(self, group, params, grads, sums, steps):
        """torch's per-parameter loop, for a group with a sparse grad. Every write to a
        parameter or accumulator is deferred to the end of the step, so that a failure (weight
        decay with a sparse grad) leaves them alone without copying whole embedding tables;
        the rows' new sums are read as old + grad^2, the value torch reads after its add_."""
        lr, lr_decay, eps, weight_decay = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
        defer = self._txn.defer
        for p, grad, state_sum, step in zip(params, grads, sums, steps):
            if group["maximize"]:
                grad = -grad
            if weight_decay != 0:
                if grad.is_sparse:
                    raise RuntimeError("weight_decay option is not compatible with sparse gradients")
                grad = grad.add(p, alpha=weight_decay)
            clr = lr / (1 + (step.item() - 1) * lr_decay)
            if not grad.is_sparse:
                new_sum = state_sum.addcmul(grad, grad, value=1)
                defer(state_sum.copy_, new_sum)
                defer(p.addcdiv_, grad, new_sum.sqrt().add_(eps), value=-clr)
                continue
            grad = grad.coalesce()  # the update is not linear in the grad: one entry per row
            indices, values = grad._indices(), grad._values()
            squares = values.pow(2)
            std = state_sum.sparse_mask(grad)._values().add(squares).sqrt_().add_(eps)
            defer(state_sum.add_, _sparse_like(grad, indices, squares))
            defer(p.add_, _sparse_like(grad, indices, values / std), alpha=-clr)
