"""Storages as pickling sees them: a TypedStorage is the whole memory block a tensor views
(all its elements, from offset 0), with a dtype. Tensors pickle as
``_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks)``, the
reduce protocol of torch's checkpoint format, and a storage pickles as its bytes.
tessera.save/load (the training-stack issue) write storages as separate records instead.
"""
from . import _C


class TypedStorage:
    """The storage under a tensor: ``tensor`` is a 1-D view of all of it."""

    def __init__(self, tensor, dtype):
        self._tensor = tensor
        self.dtype = dtype

    @classmethod
    def of(cls, t):
        """The storage under t, as a 1-D tensor over every element from offset 0."""
        numel = t._storage_nbytes() // t.element_size()
        flat = _C.as_strided(t.detach(), (numel,), (1,), 0)
        return cls(flat, t.dtype)

    def size(self):
        return self._tensor.numel()

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self._tensor.numel() * self._tensor.element_size()

    @property
    def device(self):
        return self._tensor.device

    def tolist(self):
        return self._tensor.tolist()

    def __reduce__(self):
        # Raw bytes in native byte order; numpy views them without another copy.
        data = self._tensor.view(_C.uint8).numpy().tobytes() if self.nbytes() else b""
        return (_load_from_bytes, (data, repr(self.dtype).split(".", 1)[1]))

    def __repr__(self):
        return f"tessera.TypedStorage(dtype={self.dtype}, size={self.size()})"


def _load_from_bytes(data, dtype_name):
    """A storage rebuilt from pickled bytes."""
    dtype = getattr(_C, dtype_name)
    if not data:
        return TypedStorage(_C.empty(0, dtype=dtype), dtype)
    import numpy
    raw = _C.from_numpy(numpy.frombuffer(bytearray(data), dtype=numpy.uint8))
    return TypedStorage(raw.view(dtype), dtype)
