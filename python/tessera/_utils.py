"""What unpickling a tensor calls: torch's _rebuild_tensor_v2 protocol over tessera's
storages (tessera.storage)."""
from collections import OrderedDict

from . import _C


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """The tensor viewing `storage` with the given geometry, as torch rebuilds one."""
    t = _C.as_strided(storage._tensor, tuple(size), tuple(stride), storage_offset)
    if requires_grad:
        t.requires_grad_(True)
    # Hooks are not pickled (torch warns about them and drops them as well).
    del backward_hooks, metadata
    return t


def _reduce_ex(self, proto):
    """Tensor.__reduce_ex__: (_rebuild_tensor_v2, (storage, offset, size, stride, requires_grad, hooks))."""
    from .storage import TypedStorage
    if self.device.type != "cpu":
        raise NotImplementedError(f"pickling tensors on {self.device.type} is not supported yet; move them to the CPU")
    args = (TypedStorage.of(self), self.storage_offset(), tuple(self.size()), self.stride(), self.requires_grad,
            OrderedDict())
    return (_rebuild_tensor_v2, args)


_C._add_tensor_methods({"__reduce_ex__": _reduce_ex})
