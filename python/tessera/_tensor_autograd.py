"""The autograd part of tessera.Tensor: requires_grad, grad, grad_fn, is_leaf,
backward(), register_hook() ... installed on the type (tessera._C._autograd does the work;
detach, detach_ and requires_grad_ are operators, bound from ops.yaml)."""
from . import _C

_A = _C._autograd


class _RemovableHandle:
    """What register_hook returns: .remove() takes the hook off again."""

    def __init__(self, tensor, handle):
        self._tensor, self._handle = tensor, handle

    def remove(self):
        if self._tensor is not None:
            _A.remove_hook(self._tensor, self._handle)
            self._tensor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _set_requires_grad(self, value):
    if not isinstance(value, bool):
        raise TypeError("requires_grad must be a bool")
    _A.set_requires_grad(self, value)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to the graph's leaves."""
    from . import autograd
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self, hook):
    """Registers hook(grad) -> Tensor or None, run on the grad flowing into this tensor."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return _RemovableHandle(self, _A.register_hook(self, hook))


_C._add_tensor_methods({
    "requires_grad": property(_A.requires_grad, _set_requires_grad),
    "grad": property(_A.grad, _A.set_grad),
    "grad_fn": property(_A.grad_fn),
    "is_leaf": property(_A.is_leaf),
    "output_nr": property(_A.output_nr),
    "_version": property(_A.version),
    "retains_grad": property(_A.retains_grad),
    "_base": property(_A.base),
    "_is_view": lambda self: _A.is_view(self),
    "data": property(_A.data, _A.set_data),
    "_make_subclass": staticmethod(_A.make_subclass),
    "retain_grad": lambda self: _A.retain_grad(self),
    "backward": backward,
    "register_hook": register_hook,
})
