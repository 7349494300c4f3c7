"""Parametrizations, with the interface of torch.nn.utils.parametrize.

Registering a parametrization on ``module.weight`` stores the tensor under
``module.parametrizations.weight`` -- a ParametrizationList holding the chain of small
modules and the tensor(s) they start from (``original``, or ``original0``, ``original1``,
...) -- and makes ``weight`` a computed attribute: reading it runs the chain, assigning to
it runs the chain's right inverses. The attribute lives on a per-instance subclass named
``Parametrized<Class>``, so other instances of the class are not affected; the module gets
its own class back once its last parametrization is removed."""
import collections.abc
import copy
import copyreg

from ... import _C
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module  # noqa: F401 (part of torch's module namespace)
from ..parameter import Parameter

Tensor = _C.Tensor

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

# How many cached() blocks are open, and the values computed inside them by
# (id(module), attribute name). torch code reads the first under this name.
_cache_enabled = 0
_cache = {}


def _tstr(value):
    # dtypes and sizes spelled as in torch's messages
    return str(value).replace("tessera.", "torch.")


def _type_name(value):
    return type(value).__name__


class _CachingBlock:
    def __enter__(self):
        global _cache_enabled
        _cache_enabled += 1
        return self

    def __exit__(self, *exc_info):
        global _cache_enabled
        _cache_enabled -= 1
        if _cache_enabled == 0:
            _cache.clear()
        return False


def cached():
    """A context manager inside which every parametrized attribute is evaluated once, at its
    first read, and that value is handed out again afterwards (for weights read many times
    per forward, as in recurrent layers). Blocks may nest; the outermost exit forgets the
    values."""
    return _CachingBlock()


def _register_tensor(owner, name, tensor):
    # a Parameter stays a parameter, anything else becomes a buffer
    if isinstance(tensor, Parameter):
        owner.register_parameter(name, tensor)
    else:
        owner.register_buffer(name, tensor)


def _rebind(target, source):
    # The object ``target`` (perhaps held by an optimizer) takes source's values and shape,
    # the way torch's Tensor.set_ does.
    target.data = source


def _run_right_inverses(chain, value, *, required):
    """``value`` taken back through the chain's right_inverse methods, last module first.
    With ``required`` a module lacking one is an error; otherwise it (or one raising
    NotImplementedError) counts as the identity."""
    for step in reversed(list(chain)):
        inverse = getattr(step, "right_inverse", None)
        if inverse is None:
            if required:
                raise RuntimeError(f"parametrization {_type_name(step)} does not implement right_inverse.")
            continue
        if required:
            value = inverse(value)
        else:
            try:
                value = inverse(value)
            except NotImplementedError:
                pass
    return value


class ParametrizationList(ModuleList):
    """The chain of parametrizations on one tensor, in application order, with the
    tensor(s) it is evaluated on: ``original`` if the right inverses give back one tensor,
    otherwise ``original0``, ``original1``, ... Its right_inverse stores new originals."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) < 1:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        before = (original.shape, original.dtype)
        with no_grad():
            start = _run_right_inverses(self, original, required=False)
        if isinstance(start, Tensor):
            self.is_tensor, self.ntensors = True, 1
            self._adopt_single(original, start)
        elif isinstance(start, collections.abc.Sequence):
            self.is_tensor, self.ntensors = False, len(start)
            self._adopt_several(original, start)
        else:
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {_type_name(start)}")
        if not unsafe:
            self._check_result(*before)

    def _adopt_single(self, original, start):
        # the registered tensor object is ``original`` itself, holding start's values
        if start.dtype != original.dtype:
            raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                             f"original.dtype: {_tstr(original.dtype)}\n"
                             f"right_inverse(original).dtype: {_tstr(start.dtype)}")
        with no_grad():
            _rebind(original, start)
        _register_tensor(self, "original", original)

    def _adopt_several(self, original, pieces):
        as_parameter = isinstance(original, Parameter)
        for k, piece in enumerate(pieces):
            if not isinstance(piece, Tensor):
                raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                 "(list, tuple...). "
                                 f"Got element {k} of the sequence with type {_type_name(piece)}.")
            stored = Parameter(piece) if as_parameter else piece
            stored.requires_grad_(original.requires_grad)
            _register_tensor(self, f"original{k}", stored)

    def _check_result(self, shape, dtype):
        out = self()
        if not isinstance(out, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {_type_name(out)}.")
        problems = (("dtype", dtype, out.dtype), ("shape", shape, out.shape))
        for what, want, got in problems:
            if want != got:
                raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, "
                                 "unless `unsafe` flag is enabled.\n"
                                 f"unparametrized {what}: {_tstr(want)}\n"
                                 f"parametrized {what}: {_tstr(got)}")

    def _original_names(self):
        return ["original"] if self.is_tensor else [f"original{k}" for k in range(self.ntensors)]

    def right_inverse(self, value):
        """Makes the chain evaluate to ``value`` by storing ``value`` taken back through every
        right_inverse as the new original(s)."""
        with no_grad():
            back = _run_right_inverses(self, value, required=True)
            if self.is_tensor:
                self._store_single(back)
            else:
                self._store_several(back)

    def _store_single(self, back):
        if not isinstance(back, Tensor):
            raise ValueError(f"`right_inverse` should return a tensor. Got {_type_name(back)}")
        current = self.original
        if back.dtype != current.dtype:
            raise ValueError(f"The tensor returned by `right_inverse` has dtype {_tstr(back.dtype)} "
                             f"while `original` has dtype {_tstr(current.dtype)}")
        _rebind(current, back)

    def _store_several(self, back):
        if not isinstance(back, collections.abc.Sequence):
            raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {_type_name(back)}.")
        if len(back) != self.ntensors:
            # torch's message misspells "length"; the spelling is kept so messages agree
            raise ValueError("'right_inverse' must return a sequence of tensors of length "
                             f"{self.ntensors}. Got a sequence of lenght {len(back)}.")
        for k, (slot, piece) in enumerate(zip(self._original_names(), back)):
            if not isinstance(piece, Tensor):
                raise ValueError("`right_inverse` must return a sequence of tensors. "
                                 f"Got element {k} of type {_type_name(piece)}")
            current = getattr(self, slot)
            if piece.dtype != current.dtype:
                raise ValueError(f"Tensor {k} returned by `right_inverse` has dtype {_tstr(piece.dtype)} "
                                 f"while `{slot}` has dtype {_tstr(current.dtype)}")
            _rebind(current, piece)

    def forward(self):
        head, *tail = list(self)
        inputs = [getattr(self, slot) for slot in self._original_names()]
        out = head(*inputs)
        for step in tail:
            out = step(out)
        return out


# ---------------------------------------------------------------- the per-instance class

class _ParametrizedAttr:
    """The class attribute standing for a parametrized tensor: reading evaluates the
    module's chain (once per cached() block), assigning goes through right_inverse."""

    def __init__(self, name):
        self.name = name

    def __get__(self, module, owner=None):
        if module is None:
            return self
        chain = module.parametrizations[self.name]
        if not _cache_enabled:
            return chain()
        key = (id(module), self.name)
        if key not in _cache:
            _cache[key] = chain()
        return _cache[key]

    def __set__(self, module, value):
        module.parametrizations[self.name].right_inverse(value)


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _deepcopy_members(self, memo):
    # Deep copy by members, as copy.deepcopy does for classes without hooks; needed because
    # the __getstate__ above would otherwise be what deepcopy calls.
    if id(self) in memo:
        return memo[id(self)]
    twin = type(self).__new__(type(self))
    memo[id(self)] = twin
    object.__setattr__(twin, "__dict__", copy.deepcopy(self.__dict__, memo))
    for slot in copyreg._slotnames(type(self)):
        if hasattr(self, slot):
            object.__setattr__(twin, slot, copy.deepcopy(getattr(self, slot), memo))
    return twin


def _give_own_class(module):
    base = type(module)
    members = {"__getstate__": _refuse_pickling}
    if not hasattr(base, "__deepcopy__"):
        members["__deepcopy__"] = _deepcopy_members
    module.__class__ = type("Parametrized" + base.__name__, (base,), members)


# ---------------------------------------------------------------- public functions

def _check_stacked(module, tensor_name, parametrization):
    # A parametrization added on top of others must keep module.<name>'s shape and dtype,
    # and so must its right_inverse (if it has a working one).
    now = getattr(module, tensor_name)
    mapped = parametrization(now)
    if not isinstance(mapped, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {_type_name(mapped)}.")
    for what in ("dtype", "shape"):
        want, got = getattr(now, what), getattr(mapped, what)
        if want != got:
            raise ValueError(f"Registering a parametrization may not change the {what} of the tensor, unless "
                             "the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{what}: {_tstr(want)}\n"
                             f"parametrization(module.{tensor_name}).{what}: {_tstr(got)}")
    inverse = getattr(parametrization, "right_inverse", None)
    if inverse is None:
        return
    try:
        back = inverse(mapped)
    except NotImplementedError:
        return
    if not isinstance(back, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {_type_name(back)}")
    for what in ("dtype", "shape"):
        want, got = getattr(now, what), getattr(back, what)
        if want != got:
            raise ValueError("The tensor returned by parametrization.right_inverse must have the same "
                             f"{what} as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{what}: {_tstr(want)}\n"
                             f"returned {what}: {_tstr(got)}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes ``module.<tensor_name>`` (a parameter, a buffer, or an already parametrized
    tensor, in which case the new one goes on top) computed by ``parametrization``.
    ``unsafe=True`` drops the checks that shape and dtype are kept. Returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            _check_stacked(module, tensor_name, parametrization)
        chain.append(parametrization)
        chain.unsafe = chain.unsafe or unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    chain = ParametrizationList([parametrization], getattr(module, tensor_name), unsafe=unsafe)
    delattr(module, tensor_name)
    first = not is_parametrized(module)
    if first:
        _give_own_class(module)
    assert not hasattr(module, tensor_name)
    setattr(type(module), tensor_name, _ParametrizedAttr(tensor_name))
    if first:
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = chain
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``tensor_name`` of ``module`` is parametrized (any of its tensors, if None)."""
    table = getattr(module, "parametrizations", None)
    if not isinstance(table, ModuleDict):
        return False
    return len(table) != 0 if tensor_name is None else tensor_name in table


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Takes every parametrization off ``tensor_name``. It becomes a plain parameter or
    buffer again, holding its current value (``leave_parametrized``) or its original one."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    base = type_before_parametrizations(module)
    chain = module.parametrizations[tensor_name]
    if not chain.is_tensor:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        # evaluated with grad mode on: whether the result needs grad decides its kind
        value = getattr(module, tensor_name)
        restored = Parameter(value) if value.requires_grad else value
    else:
        restored = chain.original
        if leave_parametrized:
            with no_grad():
                _rebind(restored, getattr(module, tensor_name))
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, restored)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = base
    return module


def type_before_parametrizations(module):
    """``type(module)`` as it was before any parametrization was put on it."""
    cls = type(module)
    return cls.__bases__[0] if is_parametrized(module) else cls


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Puts ``from_module``'s parametrizations of ``tensor_name`` (or of all its tensors) on
    ``to_module`` as well, creating the tensor there if it lacks it, with the two modules
    sharing the original tensors. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for step in source:
            register_parametrization(to_module, name, step)
        target = to_module.parametrizations[name]
        for slot in source._original_names():
            setattr(target, slot, getattr(source, slot))
    return to_module
