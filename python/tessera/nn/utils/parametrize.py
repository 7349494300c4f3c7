"""Parametrizations, as torch.nn.utils.parametrize: a module's tensor (module.weight) is
replaced by a property that evaluates a chain of small modules on stored "original"
tensors. The module's class is swapped for a subclass ``Parametrized<Name>`` that holds
the properties, so other instances of the class are untouched; the chain and its
originals live in ``module.parametrizations[name]`` (a ParametrizationList), which is
where state_dict finds them (``parametrizations.weight.original``)."""
import collections.abc
from contextlib import contextmanager
import copy
import copyreg

from ... import _C
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module  # noqa: F401 (torch's module namespace has it)
from ..parameter import Parameter

Tensor = _C.Tensor

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params"]

# Depth of nested cached() blocks and the values computed inside them, keyed by
# (id(module), tensor name).
_cache_enabled = 0
_cache = {}


def _torch_str(value):
    # dtypes and sizes as torch prints them in its messages
    return str(value).replace("tessera.", "torch.")


@contextmanager
def cached():
    """Within this block each parametrized tensor is computed once, on first access, and
    the same value is returned afterwards (useful when a weight is used many times in one
    forward, as in recurrent layers). Blocks nest; the cache empties at the outermost exit."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _point_at(tensor, value):
    # torch uses tensor.set_(value): the tensor object (which optimizers hold) keeps its
    # identity and takes value's storage and shape. Assigning .data does the same here.
    tensor.data = value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the tensor(s) they are
    applied to: ``original`` when the last right_inverse gives one tensor, else
    ``original0``, ``original1``, ... Assigning to the parametrized attribute calls
    right_inverse (each parametrization's, last to first) and stores the result."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype

        # Without a right_inverse (or when it raises NotImplementedError) a parametrization
        # is taken to be the identity on this side.
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)

        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {_torch_str(original.dtype)}\n"
                                 f"right_inverse(original).dtype: {_torch_str(new.dtype)}")
            # The same tensor object stays registered, so an optimizer holding it still works.
            with no_grad():
                _point_at(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, original_i in enumerate(new):
                if not isinstance(original_i, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                     "(list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(original_i).__name__}.")
                if isinstance(original, Parameter):
                    original_i = Parameter(original_i)
                original_i.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", original_i)

        if not self.unsafe:
            value = self()
            if not isinstance(value, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
            if value.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless "
                                 "`unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {_torch_str(original_dtype)}\n"
                                 f"parametrized dtype: {_torch_str(value.dtype)}")
            if value.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 "`unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {_torch_str(original_shape)}\n"
                                 f"parametrized shape: {_torch_str(value.shape)}")

    def right_inverse(self, value):
        """Stores the originals that make the chain produce ``value``."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                                       "right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {_torch_str(value.dtype)} "
                                     f"while `original` has dtype {_torch_str(self.original.dtype)}")
                _point_at(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                # (torch's message spells "length" as "lenght"; kept so messages compare equal)
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of lenght {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("`right_inverse` must return a sequence of tensors. "
                                     f"Got element {i} of type {type(tensor).__name__}")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {_torch_str(tensor.dtype)} "
                                     f"while `original{i}` has dtype {_torch_str(original_i.dtype)}")
                _point_at(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    """Gives ``module`` a class of its own, Parametrized<Name>, to carry the properties."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        # What deepcopy does for a class without __deepcopy__ (defining __getstate__ below
        # would otherwise route deepcopy through it).
        replica = memo.get(id(self))
        if replica is not None:
            return replica
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = copy.deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                           "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                           "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    namespace = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    assert not hasattr(module, tensor_name)

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = parametrization()
            _cache[key] = value
        return value

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Replaces ``module.<tensor_name>`` (a parameter or buffer) by ``parametrization``
    applied to it; registering again on the same name stacks another parametrization on
    top. ``unsafe=True`` skips the checks that the result keeps its shape and dtype.
    Returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_stacked(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def _check_stacked(module, tensor_name, parametrization):
    # A parametrization stacked on another must map tensors like module.<name> (shape,
    # dtype) to such tensors, and so must its right_inverse when it has one.
    current = getattr(module, tensor_name)
    result = parametrization(current)
    if not isinstance(result, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(result).__name__}.")
    if result.dtype != current.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless the "
                         "`unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {_torch_str(current.dtype)}\n"
                         f"parametrization(module.{tensor_name}).dtype: {_torch_str(result.dtype)}")
    if result.shape != current.shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless the "
                         "`unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {_torch_str(current.shape)}\n"
                         f"parametrization(module.{tensor_name}).shape: {_torch_str(result.shape)}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        back = parametrization.right_inverse(result)
    except NotImplementedError:
        return
    if not isinstance(back, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(back).__name__}")
    if back.dtype != current.dtype:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same dtype "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {_torch_str(current.dtype)}\n"
                         f"returned dtype: {_torch_str(back.dtype)}")
    if back.shape != current.shape:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same shape "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {_torch_str(current.shape)}\n"
                         f"returned shape: {_torch_str(back.shape)}")


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has a parametrization on ``tensor_name`` (on any tensor when None)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Takes the parametrizations off ``tensor_name``. With ``leave_parametrized`` the
    tensor keeps its current (parametrized) value, else it goes back to its original.
    The module gets its own class back once nothing on it is parametrized."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _point_at(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)  # grad mode on: whether it requires grad matters
        original = Parameter(value) if value.requires_grad else value

    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Registers ``from_module``'s parametrizations (of ``tensor_name``, or all) on
    ``to_module`` too, creating the parameter there when missing, and makes the two
    share the original tensors. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
