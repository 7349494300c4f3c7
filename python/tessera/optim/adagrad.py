"""optim.Adagrad (Duchi et al. 2011) with learning-rate decay, weight decay and maximize.
The accumulator 'sum' is created at construction as torch does; the update of a group is a
few _foreach_* calls, in torch 1.13's per-element arithmetic order."""
from .. import _C
from .optimizer import Optimizer, _by_step, _decayed_grads, _fill_state, _refuse_unsupported

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
        sums, steps = self._group_state(params, ("sum",), self._init(group))
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        grads = _decayed_grads(group, params, grads)
        _C._foreach_addcmul_(sums, grads, grads, 1)
        std = _C._foreach_sqrt(sums)
        _C._foreach_add_(std, eps)
        # The decayed rate depends on each parameter's step: one call per distinct step.
        for step, (ps, gs, ds) in _by_step(steps, params, grads, std):
            clr = lr / (1 + (step - 1) * lr_decay)
            _C._foreach_addcdiv_(ps, gs, ds, -clr)
