"""optim.swa_utils: stochastic weight averaging (Izmailov et al. 2018). AveragedModel keeps
a running average of a model's parameters (and optionally buffers), SWALR anneals each
group's lr towards a constant swa_lr, and update_bn recomputes BatchNorm statistics for
the averaged weights with one pass over the data."""
import itertools
import math
from copy import deepcopy

from .. import _C
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ._lr_scheduler_base import _LRScheduler, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR"]


def _running_mean(averaged, current, num_averaged):
    """The equal-weight average of num_averaged + 1 values given the first num_averaged's."""
    return averaged + (current - averaged) / (num_averaged + 1)


class AveragedModel(Module):
    """A deep copy of `model` whose parameters update_parameters(model) averages with the
    model's: avg_fn(averaged, current, n_averaged), the running mean by default. With
    use_buffers the buffers are averaged too (otherwise they stay as copied)."""

    def __init__(self, model, device=None, avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _C.tensor(0, dtype=_C.long, device=device))
        self.avg_fn = _running_mean if avg_fn is None else avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model):
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model):
        mine = self._tensors(self.module) if self.use_buffers else self.parameters()
        for p_avg, p_model in zip(mine, self._tensors(model)):
            device = p_avg.device
            current = p_model.detach().to(device)
            if self.n_averaged == 0:
                p_avg.detach().copy_(current)
            else:
                p_avg.detach().copy_(self.avg_fn(p_avg.detach(), current, self.n_averaged.to(device)))
        self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recomputes the running statistics of every BatchNorm in `model` as the plain average
    over the batches of `loader` (tensors, or lists/tuples whose first item is the input);
    the model's momenta and training mode are restored after."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.running_mean = _C.zeros_like(module.running_mean)
                module.running_var = _C.ones_like(module.running_var)
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None  # momentum None: a cumulative average
            module.num_batches_tracked *= 0
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(_LRScheduler):
    """Anneals each group's lr from its current value to swa_lr over anneal_epochs steps
    (cosine or linear), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(self._format_param(optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _format_param(optimizer, swa_lrs):
        if isinstance(swa_lrs, (list, tuple)):
            if len(swa_lrs) != len(optimizer.param_groups):
                raise ValueError("swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lrs)}, optimizer.param_groups has "
                                 f"{len(optimizer.param_groups)}")
            return swa_lrs
        return [swa_lrs] * len(optimizer.param_groups)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr the annealing started from, given the current lr at progress alpha."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # The lrs hold no record of where the annealing began: recover it from the previous
        # step's progress, then move to this step's.
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        starts = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                  for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / span)))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, starts)]
