"""optim.swa_utils: stochastic weight averaging (Izmailov et al. 2018).

AveragedModel holds a copy of a model whose weights (and, on request, buffers) track an
average of the model's over the calls to update_parameters; SWALR moves each group's lr
to a constant swa_lr over a number of epochs; update_bn re-estimates the BatchNorm
statistics of a model (the averaged one, typically) from one pass over the data."""
import math
from copy import deepcopy

from .. import _C
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ._lr_scheduler_base import _LRScheduler, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR"]


# ---------------------------------------------------------------- AveragedModel

def _equal_weight_average(averaged, current, num_averaged):
    """Folds one more value into the mean of num_averaged earlier ones."""
    return averaged + (current - averaged) / (num_averaged + 1)


def _averaged_tensors(module, with_buffers):
    found = list(module.parameters())
    if with_buffers:
        found.extend(module.buffers())
    return found


class AveragedModel(Module):
    """A deep copy of `model` (moved to `device` if given). update_parameters(model) folds
    the model's current parameters into the copy's with avg_fn(averaged, current,
    n_averaged), an equal-weight running mean unless told otherwise; with use_buffers the
    buffers are averaged the same way, otherwise they keep the values copied at the start."""

    def __init__(self, model, device=None, avg_fn=None, use_buffers=False):
        super().__init__()
        copied = deepcopy(model)
        self.module = copied if device is None else copied.to(device)
        self.register_buffer("n_averaged", _C.tensor(0, dtype=_C.long, device=device))
        self.avg_fn = _equal_weight_average if avg_fn is None else avg_fn
        self.use_buffers = use_buffers

    def update_parameters(self, model):
        # n_averaged lives on this wrapper, not on self.module, so the module's own
        # parameters (and buffers) are exactly the tensors to average.
        seen_before = bool(self.n_averaged != 0)
        targets = _averaged_tensors(self.module, self.use_buffers)
        for target, source in zip(targets, _averaged_tensors(model, self.use_buffers)):
            where = target.device
            held, incoming = target.detach(), source.detach().to(where)
            if seen_before:
                incoming = self.avg_fn(held, incoming, self.n_averaged.to(where))
            held.copy_(incoming)
        self.n_averaged += 1

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


# ---------------------------------------------------------------- update_bn

def _first_input(batch, device):
    x = batch[0] if isinstance(batch, (list, tuple)) else batch
    return x if device is None else x.to(device)


def update_bn(loader, model, device=None):
    """Replaces the running statistics of each BatchNorm layer in `model` by their plain
    average over the batches of `loader` (tensors, or lists/tuples with the input first).
    The layers' momenta and the model's training flag are put back afterwards; a model
    without BatchNorm is left untouched."""
    layers = [m for m in model.modules() if isinstance(m, _BatchNorm)]
    if not layers:
        return
    with no_grad():
        saved = [(layer, layer.momentum) for layer in layers]
        for layer in layers:
            layer.running_mean = _C.zeros_like(layer.running_mean)
            layer.running_var = _C.ones_like(layer.running_var)
        mode = model.training
        model.train()
        for layer in layers:
            layer.momentum = None  # no momentum: BatchNorm keeps a cumulative average
            layer.num_batches_tracked *= 0
        for batch in loader:
            model(_first_input(batch, device))
        for layer, momentum in saved:
            layer.momentum = momentum
        model.train(mode)


# ---------------------------------------------------------------- SWALR

def _cos_progress(x):
    return (1 - math.cos(math.pi * x)) / 2


def _linear_progress(x):
    return x


_PROGRESS = {"cos": _cos_progress, "linear": _linear_progress}


def _clipped(x):
    return max(0, min(1, x))


class SWALR(_LRScheduler):
    """Takes each group's lr from its value at the start to the group's swa_lr over
    anneal_epochs steps, along a half cosine or a straight line, and keeps it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        groups = optimizer.param_groups
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(groups):
                raise ValueError("swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lr)}, optimizer.param_groups has {len(groups)}")
            targets = list(swa_lr)
        else:
            targets = [swa_lr] * len(groups)
        for group, target in zip(groups, targets):
            group["swa_lr"] = target
        if anneal_strategy not in _PROGRESS:
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = _PROGRESS[anneal_strategy]
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _weight_at(self, k):
        """How far along the annealing step k is, shaped by the anneal function."""
        return self.anneal_func(_clipped(k / max(1, self.anneal_epochs)))

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        k = self._step_count - 1
        if self.anneal_epochs == 0:
            k = max(1, k)
        # A group's lr is w * swa_lr + (1 - w) * start for the weight w of the last step;
        # the start is not stored, so it is solved for, then moved to this step's weight.
        w_then, w_now = self._weight_at(k - 1), self._weight_at(k)
        out = []
        for group in self.optimizer.param_groups:
            target = group["swa_lr"]
            start = target if w_then == 1 else (group["lr"] - w_then * target) / (1 - w_then)
            out.append(target * w_now + start * (1 - w_now))
        return out
