"""Tensor methods whose schema does not start with ``self``, so the generated bindings
cannot be methods: ``x.where(condition, y)`` is ``tessera.where(condition, x, y)``.

Importing this module installs them on ``tessera.Tensor``.
"""
from . import _C


def where(self, condition, y):
    """where(condition, y) -> Tensor

    ``self.where(condition, y)`` is ``tessera.where(condition, self, y)``.
    """
    return _C.where(condition, self, y)


_C._add_tensor_methods({"where": where})
