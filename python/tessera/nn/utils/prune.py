"""Pruning, with the interface of torch.nn.utils.prune.

Pruning ``module.<name>`` keeps the full tensor as the parameter ``<name>_orig`` and a
0/1 buffer ``<name>_mask``; the pruning method object doubles as a forward pre-hook that
sets the plain attribute ``module.<name>`` to their product before every call. Pruning an
already pruned tensor stacks the new method into a PruningContainer whose combined mask
replaces the old one; remove() bakes the product into ``<name>`` for good."""
import numbers
from abc import abstractmethod, ABC
from collections.abc import Iterable

import tessera as _t

from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


# ---------------------------------------------------------------- amounts and checks

def _as_torch_text(value):
    # sizes in messages read the way torch prints them
    return str(value).replace("tessera.", "torch.")


def _check_amount(amount):
    """Rejects an amount that is neither a fraction in [0, 1] nor a count >= 0."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        ok = amount >= 0
    else:
        ok = 0.0 <= float(amount) <= 1.0
    if not ok:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _units_to_drop(amount, available):
    """How many of ``available`` units (entries or channels) ``amount`` asks to prune."""
    count = amount if isinstance(amount, numbers.Integral) else round(amount * available)
    if isinstance(count, numbers.Integral) and count > available:
        raise ValueError(f"amount={count} should be smaller than the number of parameters to prune={available}")
    return count


def _hook_for(module, name):
    """(key, method) of the pruning hook on ``module.<name>``, or (None, None)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            return key, hook
    return None, None


def _pop_existing(module, name):
    # Takes the pruning hook of this tensor off the module (there may be only one).
    keys = [k for k, h in module._forward_pre_hooks.items()
            if isinstance(h, BasePruningMethod) and h._tensor_name == name]
    assert len(keys) <= 1, (f"Avoid adding multiple pruning hooks to the                same tensor {name} of module "
                            f"{module}. Use a PruningContainer.")
    return module._forward_pre_hooks.pop(keys[0]) if keys else None


# ---------------------------------------------------------------- the base class

class BasePruningMethod(ABC):
    """A rule turning a tensor (and the mask already on it) into a new mask. Subclasses set
    PRUNING_TYPE -- "unstructured", "structured" (with a ``dim`` attribute) or "global" --
    and implement compute_mask; the classmethod ``apply`` prunes a module's tensor."""

    _tensor_name: str

    def __call__(self, module, inputs):
        # as a forward pre-hook: refresh the masked tensor
        masked = self.apply_mask(module)
        setattr(module, self._tensor_name, masked)

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for ``t``: ``default_mask`` with what this method prunes set to 0."""

    def apply_mask(self, module):
        """The pruned tensor ``<name>_orig * <name>_mask``."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        full = getattr(module, f"{self._tensor_name}_orig")
        keep = getattr(module, f"{self._tensor_name}_mask")
        return full * keep.to(dtype=full.dtype)

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes ``module.<name>`` with ``cls(*args, **kwargs)`` on top of any pruning it
        already has; the ranking uses ``importance_scores`` when given, else the tensor."""
        earlier = _pop_existing(module, name)
        step = cls(*args, **kwargs)
        step._tensor_name = name
        if earlier is None:
            hook = step
        elif isinstance(earlier, PruningContainer):
            earlier.add_pruning_method(step)
            hook = earlier
        else:
            hook = PruningContainer(earlier)
            hook.add_pruning_method(step)

        current = getattr(module, name)
        if importance_scores is None:
            importance_scores = current
        assert importance_scores.shape == current.shape, \
            f"importance_scores should have the same shape as parameter                 {name} of {module}"

        first_time = not isinstance(hook, PruningContainer)
        if first_time:
            # the parameter itself becomes <name>_orig (optimizers keep their reference)
            module.register_parameter(name + "_orig", module._parameters.pop(name))
            start = _t.ones_like(current)
        else:
            start = getattr(module, name + "_mask").detach().clone(memory_format=_t.contiguous_format)
        try:
            module.register_buffer(name + "_mask", hook.compute_mask(importance_scores, default_mask=start))
            setattr(module, name, hook.apply_mask(module))
            module.register_forward_pre_hook(hook)
        except Exception:
            if first_time:
                # put the parameter back where it was
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return hook

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times this method's mask, without any module."""
        scores = t if importance_scores is None else importance_scores
        assert scores.shape == t.shape, "importance_scores should have the same shape as tensor t"
        start = _t.ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(scores, default_mask=start)

    def remove(self, module):
        """Makes the pruning permanent: the ``<name>_orig`` parameter object takes the
        pruned values and goes back under ``<name>``; the mask buffer is dropped."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned            before pruning can be removed"
        name = self._tensor_name
        pruned = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        param = module._parameters.pop(name + "_orig")
        module._buffers.pop(name + "_mask")
        param.data = pruned.data
        setattr(module, name, param)


# ---------------------------------------------------------------- stacking methods

def _restricted_update(step, t, mask):
    """``step``'s mask computed only on the part of ``t`` that ``mask`` still keeps (the
    surviving entries, or the surviving channels for a structured step), written into a
    copy of ``mask`` in ``t``'s dtype."""
    kind = step.PRUNING_TYPE
    if kind == "unstructured":
        where = mask == 1
    elif kind == "structured":
        if not hasattr(step, "dim"):
            raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                 "`dim` defined.")
        ndim = t.dim()
        axis = step.dim if step.dim >= 0 else step.dim + ndim
        if axis < 0:
            raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
        alive = _t.count_nonzero(mask, dim=tuple(d for d in range(ndim) if d != axis)) > 0
        where = (slice(None),) * axis + (alive,)
    elif kind == "global":
        where = (slice(None),) * t.dim()
    else:
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
    result = mask.to(dtype=t.dtype)
    part = step.compute_mask(t[where], default_mask=mask[where])
    result[where] = part.to(dtype=result.dtype)
    return result


class PruningContainer(BasePruningMethod):
    """Several pruning methods on one tensor, in the order they were applied; the latest
    one only sees what the earlier ones left."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            # a single method: the container acts on that method's tensor
            self._tensor_name = args[0]._tensor_name
        for each in args:
            self.add_pruning_method(each)

    def add_pruning_method(self, method):
        if method is not None:
            if not isinstance(method, BasePruningMethod):
                raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
            if method._tensor_name != self._tensor_name:
                raise ValueError("Can only add pruning methods acting on "
                                 f"the parameter named '{self._tensor_name}' to PruningContainer {self}."
                                 f" Found '{method._tensor_name}'")
        self._pruning_methods = (*self._pruning_methods, method)

    def __iter__(self):
        yield from self._pruning_methods

    def __getitem__(self, index):
        return self._pruning_methods[index]

    def __len__(self):
        return len(self._pruning_methods)

    def compute_mask(self, t, default_mask):
        """``default_mask`` further pruned by the most recently added method."""
        return _restricted_update(self._pruning_methods[-1], t, default_mask)


# ---------------------------------------------------------------- the methods

class Identity(BasePruningMethod):
    """Leaves every entry: the mask stays as it was (all ones on a fresh tensor)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _EntrywisePruning(BasePruningMethod):
    # Unstructured methods: ``amount`` single entries, those of lowest score, are zeroed.
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def _scores(self, t):
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        drop = _units_to_drop(self.amount, t.nelement())
        result = default_mask.clone(memory_format=_t.contiguous_format)
        if drop:
            lowest = _t.topk(self._scores(t).reshape(-1), k=drop, largest=False).indices
            result.view(-1)[lowest] = 0
        return result


class RandomUnstructured(_EntrywisePruning):
    """Zeroes ``amount`` entries (a count, or a fraction of them) picked uniformly at random."""

    def _scores(self, t):
        return _t.rand_like(t)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_EntrywisePruning):
    """Zeroes the ``amount`` entries of least absolute value."""

    def _scores(self, t):
        return t.abs()

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _ChannelPruning(BasePruningMethod):
    # Structured methods: whole slices along ``dim``, those of lowest score, are zeroed.
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def _channel_scores(self, t):
        raise NotImplementedError

    def compute_mask(self, t, default_mask):
        rank = len(t.shape)
        if rank <= 1:
            raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                             f"shape {_as_torch_text(t.shape)} with {rank} dims")
        if self.dim >= t.dim():
            raise IndexError(f"Invalid index {self.dim} for tensor of size {_as_torch_text(t.shape)}")
        channels = t.shape[self.dim]
        drop = _units_to_drop(self.amount, channels)
        if drop == 0:
            return default_mask
        kept = _t.topk(self._channel_scores(t), k=channels - drop, largest=True).indices
        along = [1] * rank
        along[self.dim] = channels
        keep = _t.zeros(channels, dtype=t.dtype, device=t.device)
        keep[kept] = 1
        return keep.view(along) * default_mask.to(dtype=t.dtype)


class RandomStructured(_ChannelPruning):
    """Zeroes ``amount`` whole channels along ``dim``, picked at random."""

    def _channel_scores(self, t):
        return _t.rand(t.shape[self.dim])

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_ChannelPruning):
    """Zeroes the ``amount`` channels along ``dim`` with the smallest ``n``-norm."""

    def __init__(self, amount, n, dim=-1):
        super().__init__(amount, dim)
        self.n = n

    def _channel_scores(self, t):
        axis = self.dim % t.dim()
        return _t.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != axis])

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Zeroes the entries where a given mask is 0."""

    PRUNING_TYPE = "global"

    def compute_mask(self, t, default_mask):
        assert self.mask.shape == default_mask.shape
        return self.mask.to(dtype=default_mask.dtype) * default_mask

    def __init__(self, mask):
        self.mask = mask

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# ---------------------------------------------------------------- functional forms

def _pruned(module, method_cls, name, *args, **kwargs):
    # the functional forms: prune through the class, hand the module back
    method_cls.apply(module, name, *args, **kwargs)
    return module


def identity(module, name):
    """Puts pruning that removes nothing on ``module.<name>``; returns ``module``."""
    return _pruned(module, Identity, name)


def random_unstructured(module, name, amount):
    """Prunes ``amount`` random entries of ``module.<name>``; returns ``module``."""
    return _pruned(module, RandomUnstructured, name, amount)


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the ``amount`` entries of ``module.<name>`` whose ``importance_scores`` (by
    default the entries themselves) are smallest in absolute value; returns ``module``."""
    return _pruned(module, L1Unstructured, name, amount=amount, importance_scores=importance_scores)


def random_structured(module, name, amount, dim):
    """Prunes ``amount`` random channels of ``module.<name>`` along ``dim``; returns ``module``."""
    return _pruned(module, RandomStructured, name, amount, dim)


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes the ``amount`` channels along ``dim`` of least ``n``-norm; returns ``module``."""
    return _pruned(module, LnStructured, name, amount, n, dim, importance_scores=importance_scores)


def custom_from_mask(module, name, mask):
    """Prunes ``module.<name>`` wherever ``mask`` is 0; returns ``module``."""
    return _pruned(module, CustomFromMask, name, mask)


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes all the ``(module, name)`` tensors of ``parameters`` as one: an unstructured
    ``pruning_method`` (built from ``kwargs``) ranks their entries jointly, so the share
    pruned may differ from one tensor to the next. ``importance_scores`` maps pairs to
    scores used instead of the tensors."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    if importance_scores is None:
        importance_scores = {}
    elif not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    targets = list(parameters)
    tensors = [getattr(m, n) for m, n in targets]
    joint_scores = parameters_to_vector([importance_scores.get((m, n), x) for (m, n), x in zip(targets, tensors)])
    joint_mask = parameters_to_vector([getattr(m, n + "_mask", _t.ones_like(x))
                                       for (m, n), x in zip(targets, tensors)])
    step = pruning_method(**kwargs)
    if step.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {step.PRUNING_TYPE}")
    joint_mask = _restricted_update(step, joint_scores, joint_mask)
    offset = 0
    for module, name in targets:
        size = getattr(module, name).numel()
        piece = joint_mask[offset:offset + size]
        offset += size
        custom_from_mask(module, name, mask=piece.view_as(getattr(module, name)))


def remove(module, name):
    """Makes the pruning of ``module.<name>`` permanent (BasePruningMethod.remove) and
    takes its hook off; returns ``module``."""
    key, hook = _hook_for(module, name)
    if hook is None:
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")
    hook.remove(module)
    del module._forward_pre_hooks[key]
    return module


def is_pruned(module):
    """True when ``module`` or one of its submodules carries a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())
