"""Calling a module with other tensors in place of its parameters and buffers, as
torch.nn.utils.stateless.functional_call (1.13): for the call, each named submodule's
class is swapped for a subclass whose attribute lookup answers the given tensors."""
import contextlib
import warnings

from tessera import Tensor  # noqa: F401 (torch's module namespace has it)

__all__ = ["functional_call"]


def _change_class(module, params_and_buffers):
    cls = module.__class__
    attr_to_path = module._attr_to_path

    def _getattribute(self, name):
        if name in attr_to_path:
            return params_and_buffers[attr_to_path[name]]
        return cls.__getattribute__(self, name)

    def _setattr(self, name, value):
        if name in attr_to_path:
            params_and_buffers[attr_to_path[name]] = value
        else:
            return cls.__setattr__(self, name, value)

    module.__class__ = type(f"StatelessReplacer{cls.__name__}", (cls,),
                            {"__getattribute__": _getattribute, "__setattr__": _setattr})
    module._orig_class = cls


def _swap_in(params_and_buffers, replaced):
    def swap(module, tensor_name, full_path, tensor):
        if hasattr(module, tensor_name):
            # Tied weights: only the paths given are replaced. Two different values given
            # for one shared tensor earn the warning torch 1.13 gives.
            old = getattr(module, tensor_name)
            if id(old) not in replaced:
                replaced[id(old)] = (old, tensor)
            elif replaced[id(old)][1] is not tensor:
                warnings.warn("functional_call was passed multiple values for tied weights. "
                              "This behavior is deprecated and will be an error in future versions")
        if hasattr(module, "_attr_to_path"):
            module._attr_to_path[tensor_name] = full_path
        else:
            module._attr_to_path = {tensor_name: full_path}
            _change_class(module, params_and_buffers)
    return swap


def _swap_out(module, name, full_path):
    if hasattr(module, "_orig_class"):
        module.__class__ = module._orig_class
        delattr(module, "_orig_class")
        delattr(module, "_attr_to_path")


def _apply_to_submodule(func, module, path, full_path, args):
    for name in path[:-1]:
        module = getattr(module, name)
    func(module, path[-1], full_path, *args)


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers):
    replaced = {}
    for name, tensor in parameters_and_buffers.items():
        _apply_to_submodule(_swap_in(parameters_and_buffers, replaced), module, name.split("."), name, (tensor,))
    try:
        yield
    finally:
        for name in parameters_and_buffers:
            _apply_to_submodule(_swap_out, module, name.split("."), name, ())


def functional_call(module, parameters_and_buffers, args, kwargs=None):
    """``module(*args, **kwargs)`` with the tensors of ``parameters_and_buffers`` (keys as
    in ``named_parameters``/``named_buffers``, e.g. ``"0.weight"``) used in place of the
    module's own; the module is unchanged afterwards. ``args`` that is not a tuple is
    passed as the single argument."""
    if kwargs is None:
        kwargs = {}
    with _reparametrize_module(module, parameters_and_buffers):
        if isinstance(args, tuple):
            return module(*args, **kwargs)
        return module(args, **kwargs)
