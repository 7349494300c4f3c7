"""Flattening a model's parameters into one vector and writing such a vector back, as
torch.nn.utils.parameters_to_vector / vector_to_parameters (used by second-order and
evolutionary optimisers that treat the model as a point in R^n)."""
import tessera as _t

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _typename(obj):
    # torch.typename's spelling: the object's own __module__ / __qualname__ when it has them
    # (classes, functions), else its class's bare name ("list", "ndarray").
    module = getattr(obj, "__module__", None)
    prefix = "" if module in (None, "builtins", "__builtin__") else module + "."
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return prefix + name


def _check_same_device(param, first_device):
    # All parameters must share one device: the vector lives in a single allocation.
    if first_device is None:
        return param.device
    if param.device != first_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return first_device


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's elements, in iteration order."""
    device = None
    flat = []
    for param in parameters:
        device = _check_same_device(param, device)
        flat.append(param.view(-1))
    return _t.cat(flat)


def vector_to_parameters(vec, parameters):
    """Points each parameter's data at the next ``param.numel()`` elements of ``vec``
    (views of ``vec``, not copies), in iteration order."""
    if not isinstance(vec, _t.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device = None
    offset = 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec[offset:offset + n].view_as(param).data
        offset += n
