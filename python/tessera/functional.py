"""Operators whose Python API torch writes in Python (torch/functional.py), over the
generated bindings: ``unique`` (onto ``_unique2``, or ``unique_dim`` with a dim) and
``unique_consecutive``, which return only the outputs asked for.

Importing this module installs ``Tensor.unique`` and ``Tensor.unique_consecutive``.
"""
from . import _C


def _requested(output, inverse, counts, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return output
    result = (output,)
    if return_inverse:
        result += (inverse,)
    if return_counts:
        result += (counts,)
    return result


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)

    The distinct elements of ``input`` (or slices along ``dim``), sorted, with the index of
    each input element's entry (``return_inverse``) and each entry's count
    (``return_counts``) on request."""
    if dim is None:
        output, inverse, counts = _C._unique2(input, sorted=sorted, return_inverse=return_inverse,
                                              return_counts=return_counts)
    else:
        output, inverse, counts = _C.unique_dim(input, dim, sorted=sorted, return_inverse=return_inverse,
                                                return_counts=return_counts)
    return _requested(output, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)

    Merges each run of equal consecutive elements (or slices along ``dim``) into one."""
    output, inverse, counts = _C.unique_consecutive(input, return_inverse=return_inverse,
                                                    return_counts=return_counts, dim=dim)
    return _requested(output, inverse, counts, return_inverse, return_counts)


def _tensor_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return unique(self, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


def _tensor_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return unique_consecutive(self, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


_C._add_tensor_methods({"unique": _tensor_unique, "unique_consecutive": _tensor_unique_consecutive})
