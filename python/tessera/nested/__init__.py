"""tessera.nested: nested tensors, lists of tensors of one rank whose shapes may differ,
packed into one tensor (torch 1.13's prototype API: nested_tensor, as_nested_tensor,
to_padded_tensor). Only the operators with a NestedTensorCPU kernel accept them."""
import warnings

from .. import _C
from .._C import _nested

__all__ = ["to_padded_tensor", "as_nested_tensor", "nested_tensor"]

_warned = False


def _warn_prototype():
    # torch warns once per process, from the constructor.
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change in the near future.",
                      UserWarning, stacklevel=3)


def _check_list(tensor_list):
    # (torch's message names nested_tensor() for both constructors)
    if not isinstance(tensor_list, list) or any(not isinstance(t, _C.Tensor) for t in tensor_list):
        raise TypeError("nested_tensor(): Expected first argument to be a list of tensors ")


def nested_tensor(tensor_list, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A nested tensor holding copies of the tensors in `tensor_list` (all of one rank),
    with no autograd history: a leaf, which requires grad if `requires_grad`."""
    _check_list(tensor_list)
    _warn_prototype()
    nt = _C._nested_tensor_from_tensor_list([t.detach() for t in tensor_list], dtype, None, device, pin_memory)
    if requires_grad:
        nt.requires_grad_(requires_grad)
    return nt


def as_nested_tensor(tensor_list, dtype=None, device=None):
    """A nested tensor holding copies of the tensors in `tensor_list`, keeping their
    autograd history: a gradient of the result flows back to each tensor."""
    _check_list(tensor_list)
    _warn_prototype()
    return _C._nested_tensor_from_tensor_list(tensor_list, dtype, None, device, None)


to_padded_tensor = _nested.nested_to_padded_tensor
