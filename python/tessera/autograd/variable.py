"""Variable, torch's pre-0.4 wrapper kept for old code: ``Variable(t)`` returns a tensor
(a detached alias of ``t``), and every tensor is an instance of Variable."""
import warnings

from .. import _C

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: a new tensor sharing
    ``data``'s storage, detached from its graph, with ``requires_grad`` set. ``volatile``
    no longer does anything (use tessera.no_grad()); it only warns. With no arguments,
    an empty float tensor."""

    def __new__(cls, data=None, requires_grad=False, volatile=False, **kwargs):
        if kwargs:
            raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with tessera.no_grad():` instead.",
                          stacklevel=2)
        if data is None:
            data = _C.empty(0)
        elif not isinstance(data, _C.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad_(bool(requires_grad))
        return out
