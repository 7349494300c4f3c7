"""The LRScheduler base class of optim.lr_scheduler and the schedulers that only rescale
each group's lr by a rule of the epoch (Lambda, Multiplicative, Step, MultiStep, Constant,
Linear, Exponential, Polynomial, CosineAnnealing). Public names live in lr_scheduler."""
import contextlib
import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter

from .. import _C
from .optimizer import Optimizer

Tensor = _C.Tensor

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_PUBLIC_MODULE = "tessera.optim.lr_scheduler"


def _scalar(value):
    return value.item() if isinstance(value, Tensor) else value


def _copy_value(value):
    # A tensor lr must not alias the group's live tensor, which step() fills in place.
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name, optimizer, param):
    """One value of `name` per parameter group: a scalar is repeated, a list must match."""
    groups = optimizer.param_groups
    if isinstance(param, (list, tuple)):
        if len(param) != len(groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has {len(groups)}.")
        values = list(param)
    else:
        values = [param] * len(groups)
    return [_copy_value(v) for v in values]


def _set_lr(group, lr):
    # A tensor lr (torch 2.x allows one) is updated in place: compiled steps hold it.
    if isinstance(group["lr"], Tensor):
        group["lr"].fill_(_scalar(lr))
    else:
        group["lr"] = lr


def _set_group_lrs(optimizer, lrs):
    for group, lr in zip(optimizer.param_groups, lrs):
        _set_lr(group, lr)


def _group_lrs(optimizer):
    return [group["lr"] for group in optimizer.param_groups]


def _warn_get_lr_called_within_step(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning, stacklevel=3)


@contextlib.contextmanager
def _flag(scheduler, name):
    # The flag becomes an instance attribute (and so a state_dict key), as in torch.
    setattr(scheduler, name, True)
    try:
        yield
    finally:
        setattr(scheduler, name, False)


def _mark_optimizer_steps(optimizer):
    """Replaces optimizer.step by a wrapper that records that it ran, so that the first
    scheduler.step() can warn when it comes before any optimizer.step(). A weak reference
    keeps the wrapper from holding the optimizer alive through its own attribute."""
    step = optimizer.step
    if hasattr(step, "_wrapped_by_lr_sched"):
        return
    owner = weakref.ref(optimizer)
    func = getattr(step, "__func__", None)

    @functools.wraps(func if func is not None else step)
    def step_and_mark(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        if func is None:
            return step(*args, **kwargs)
        return func.__get__(opt, type(opt))(*args, **kwargs)

    step_and_mark._wrapped_by_lr_sched = True
    optimizer.step = step_and_mark


class LRScheduler:
    """Base class: holds the optimizer, base_lrs (each group's 'initial_lr'), last_epoch,
    and sets the groups' lr from get_lr() on every step()."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy_value(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _mark_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        with _flag(self, "_is_initial"):
            self.step()

    def state_dict(self):
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def step(self, epoch=None):
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                              "initialization. Please, make sure to call `optimizer.step()` before "
                              "`lr_scheduler.step()`. See more details at "
                              "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate", UserWarning)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                              "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                              "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                              "will result in PyTorch skipping the first value of the learning rate schedule. "
                              "See more details at "
                              "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate", UserWarning)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Moves to the next epoch (chainable get_lr) or jumps to `epoch` (the closed form
        where the scheduler has one) and writes the lrs into the optimizer."""
        with _flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                lrs = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                lrs = closed_form() if closed_form is not None else self.get_lr()
        _set_group_lrs(self.optimizer, lrs)
        self._last_lr = _group_lrs(self.optimizer)


class _LRScheduler(LRScheduler):
    """The pre-2.0 name of LRScheduler, kept as a subclass so its __name__ stays."""


def _lambdas_per_group(optimizer, lr_lambda):
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * len(optimizer.param_groups)


class _LambdaStateMixin:
    """state_dict keeps a lambda's attributes only when it is a callable object: plain
    functions and lambdas cannot be restored from a dict, so they are saved as None."""

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        saved = state_dict["lr_lambdas"]
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "lr_lambdas"})
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_LambdaStateMixin, LRScheduler):
    """lr = initial_lr * lr_lambda(epoch), with one lambda for all groups or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaStateMixin, LRScheduler):
    """Multiplies each group's lr by lr_lambda(epoch) on every step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _group_lrs(self.optimizer)
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiplies the lr by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_lrs(self.optimizer)
        return [lr * self.gamma for lr in _group_lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the lr by gamma at each milestone (a repeated milestone counts twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        hits = self.milestones.get(self.last_epoch, 0)
        if hits == 0:
            return _group_lrs(self.optimizer)
        return [lr * self.gamma ** hits for lr in _group_lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scales the lr by `factor` until epoch total_iters, then restores it."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        lrs = _group_lrs(self.optimizer)
        if self.last_epoch == 0:
            return [lr * self.factor for lr in lrs]
        if self.last_epoch != self.total_iters:
            return lrs
        return [lr * (1.0 / self.factor) for lr in lrs]

    def _get_closed_form_lr(self):
        scale = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base_lr * scale for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scales the lr by a factor going linearly from start_factor to end_factor over
    total_iters epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        lrs = _group_lrs(self.optimizer)
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        # Ratio of the factor at this epoch to the factor at the previous one.
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
        return [lr * ratio for lr in lrs]

    def _get_closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch)
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the lr by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        # The constructor's step leaves the lr alone, also when resuming at a later epoch.
        if self._is_initial:
            return _group_lrs(self.optimizer)
        return [lr * self.gamma for lr in _group_lrs(self.optimizer)]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power, reaching 0 at total_iters."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        lrs = _group_lrs(self.optimizer)
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        ratio = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * ratio for lr in lrs]

    def _get_closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch)
        return [base_lr * (1.0 - progress / self.total_iters) ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from initial_lr down to eta_min over T_max epochs (and back up over
    the next T_max, without restarts). The lr is updated recursively from its current value,
    so that changes made to it from outside carry forward."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        groups = self.optimizer.param_groups
        t, period, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _group_lrs(self.optimizer)
        if self._step_count == 1 and t > 0:
            # The first step of a scheduler built at a later epoch has no previous value to recurse from.
            return [low + (base_lr - low) * (1 + math.cos(t * math.pi / period)) / 2 for base_lr in self.base_lrs]
        if (t - 1 - period) % (2 * period) == 0:
            # Leaving the minimum, where the ratio form would divide by 1 + cos(pi) = 0.
            return [group["lr"] + (base_lr - low) * (1 - math.cos(math.pi / period)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        ratio_num = 1 + math.cos(math.pi * t / period)
        ratio_den = 1 + math.cos(math.pi * (t - 1) / period)
        return [ratio_num / ratio_den * (group["lr"] - low) + low for group in groups]

    def _get_closed_form_lr(self):
        t, period, low = self.last_epoch, self.T_max, self.eta_min
        return [low + (base_lr - low) * (1 + math.cos(math.pi * t / period)) / 2 for base_lr in self.base_lrs]


for _cls in (LRScheduler, _LRScheduler, LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ConstantLR, LinearLR,
             ExponentialLR, PolynomialLR, CosineAnnealingLR):
    _cls.__module__ = _PUBLIC_MODULE
del _cls
