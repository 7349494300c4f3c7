"""Tensor methods whose schema does not start with ``self``, so the generated bindings
cannot be methods: ``x.where(condition, y)`` is ``tessera.where(condition, x, y)``; the
``real`` and ``imag`` properties, views over the functions of those names; and
``to_sparse_coo``, which torch defines in Python as ``to_sparse()``.

Importing this module installs them on ``tessera.Tensor``.
"""
from . import _C


def where(self, condition, y):
    """where(condition, y) -> Tensor

    ``self.where(condition, y)`` is ``tessera.where(condition, self, y)``.
    """
    return _C.where(condition, self, y)


def to_sparse_coo(self):
    """to_sparse_coo() -> Tensor

    The tensor in the sparse COO layout: ``self.to_sparse()``.
    """
    return self.to_sparse()


def _write_into(view, value):
    if isinstance(value, _C.Tensor):
        view.copy_(value)
    else:
        view.fill_(value)


def _real_get(self):
    return _C.real(self)


def _real_set(self, value):
    _write_into(_C.real(self), value)


def _imag_get(self):
    return _C.imag(self)


def _imag_set(self, value):
    _write_into(_C.imag(self), value)


_C._add_tensor_methods({
    "where": where,
    "to_sparse_coo": to_sparse_coo,
    "real": property(_real_get, _real_set, doc="The real parts (a view); a real tensor itself. Assigning writes "
                                               "into them."),
    "imag": property(_imag_get, _imag_set, doc="The imaginary parts of a complex tensor (a view). Assigning writes "
                                               "into them."),
})
