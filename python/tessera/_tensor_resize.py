"""Tensor methods that change which memory a tensor views, beyond the operators: ``set_``
with a storage (torch's Storage overloads, served by the operator's tensor overloads over
the storage's own 1-D tensor) and the deprecated out-of-place ``resize`` / ``resize_as``,
which autograd sees as a reshape that keeps the number of elements.

Importing this module installs them on ``tessera.Tensor``.
"""
import warnings

from . import _C
from .autograd.function import Function
from .storage import StorageBase, TypedStorage

_tensor_set_ = _C.Tensor.set_  # the generated binding: set_(), set_(Tensor), set_(Tensor, offset, size, stride)


def _storage_tensor(self, storage):
    """The storage's elements as a 1-D tensor of self's dtype, sharing its memory."""
    if isinstance(storage, TypedStorage):
        if storage.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype} or an UntypedStorage, but got type "
                               f"{storage.dtype} for argument 1 'storage'")
        return storage._tensor
    return storage._tensor.view(self.dtype)


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """set_(source=None, storage_offset=0, size=None, stride=None) -> Tensor

    Makes this tensor view other memory in place: no argument gives it an empty storage;
    a tensor `source` shares its storage, offset, sizes and strides; a storage `source`
    is viewed whole as a 1-D tensor. With `storage_offset`, `size` and optionally `stride`
    the view into `source`'s storage is that one. Dtype and device must match."""
    if source is None:
        if storage_offset is not None or size is not None or stride is not None:
            raise TypeError("set_(): storage_offset, size and stride need a source")
        return _tensor_set_(self)
    if isinstance(source, (TypedStorage, StorageBase)):
        source = _storage_tensor(self, source)
        if storage_offset is None:
            return _tensor_set_(self, source, 0, (source.numel(),), (1,))
    if storage_offset is None:
        if size is not None or stride is not None:
            raise TypeError("set_(): size and stride need a storage_offset")
        return _tensor_set_(self, source)
    if size is None:
        raise TypeError("set_(): missing required argument 'size'")
    return _tensor_set_(self, source, storage_offset, size, () if stride is None else stride)


class _Resize(Function):
    """Out-of-place resize: a reshape whose element count must not change (what torch's
    autograd allows of it); the gradient takes the input's shape back."""

    @staticmethod
    def forward(ctx, tensor, sizes):
        numel = 1
        for s in sizes:
            numel *= s
        if tensor.numel() != numel:
            raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but "
                               f"the given tensor has a size of {'x'.join(map(str, tensor.size()))} "
                               f"({tensor.numel()} elements). autograd's resize can only change the shape of a given "
                               "tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(sizes).clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


def resize(self, *sizes):
    """resize(*sizes) -> Tensor

    Deprecated (use reshape or resize_): a copy of this tensor with shape `sizes`, which
    must hold the same number of elements."""
    warnings.warn("non-inplace resize is deprecated")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, _C.Size)):
        sizes = sizes[0]
    return _Resize.apply(self, tuple(sizes))


def resize_as(self, tensor):
    """resize_as(tensor) -> Tensor

    Deprecated (use reshape_as or resize_as_): a copy of this tensor with `tensor`'s shape,
    which must hold the same number of elements."""
    warnings.warn("non-inplace resize_as is deprecated")
    return _Resize.apply(self, tuple(tensor.size()))


_C._add_tensor_methods({"set_": set_, "resize": resize, "resize_as": resize_as})
