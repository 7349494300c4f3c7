"""Storages as pickling sees them: a TypedStorage is the whole memory block a tensor views
(all its elements, from offset 0), with a dtype. Tensors pickle as
``_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks)``, the
reduce protocol of torch's checkpoint format, and a storage pickles as its bytes.
tessera.save/load (the training-stack issue) write storages as separate records instead.

torch's legacy storage classes live here too: ``FloatStorage(3)`` / ``LongStorage([1, 2])``
make TypedStorages, and isinstance(s, FloatStorage) asks for a float32 one.
UntypedStorage is a block of bytes.
"""
from . import _C


def _physical(t):
    """t detached with its conj/neg bits cleared: a view of the raw memory, which is what a
    storage holds (the bits travel beside it, as tensor metadata)."""
    t = t.detach()
    if t.is_conj():
        t = t._conj()
    if t.is_neg():
        t = t._neg_view()
    return t


class TypedStorage:
    """The storage under a tensor: ``tensor`` is a 1-D view of all of it."""

    def __init__(self, tensor, dtype):
        self._tensor = tensor
        self.dtype = dtype

    @classmethod
    def of(cls, t):
        """The storage under t, as a 1-D tensor over every element from offset 0."""
        numel = t._storage_nbytes() // t.element_size()
        if t.has_names():  # names describe t's dims, not the storage's
            t = t.rename(None)
        flat = _C.as_strided(_physical(t), (numel,), (1,), 0)
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


    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError(f"storage indices must be integers, not {type(index).__name__}")
        return self._tensor[index].item()

    def __iter__(self):
        return iter(self.tolist())


class StorageBase:
    """The byte-block core of UntypedStorage (torch._C.StorageBase): ``StorageBase(nbytes)``
    (uninitialized) or ``StorageBase(sequence of bytes)``. As in torch, the typed storages
    (TypedStorage, FloatStorage, ...) do not derive from it; UntypedStorage does."""

    def __init__(self, *args, device=None):
        data = args[0] if len(args) == 1 else None
        if len(args) > 1 or isinstance(data, bool) or not (data is None or isinstance(data, (int, list, tuple))):
            raise TypeError(f"{type(self).__name__}(): expected no arguments, (int size) or (Sequence data), got "
                            + ", ".join(type(a).__name__ for a in args))
        if isinstance(data, int):
            self._tensor = _C.empty(data, dtype=_C.uint8, device=device)
        else:
            self._tensor = _C.tensor(list(data or ()), dtype=_C.uint8, device=device)

    @property
    def device(self):
        return self._tensor.device

    def nbytes(self):
        return self._tensor.numel()

    def element_size(self):
        return 1


class UntypedStorage(StorageBase):
    """A block of bytes on a device, as torch.UntypedStorage: ``UntypedStorage(nbytes)``
    (uninitialized) or ``UntypedStorage(sequence of bytes)``."""

    def size(self):
        return self.nbytes()

    __len__ = size

    def tolist(self):
        return self._tensor.tolist()

    def __getitem__(self, index):
        return TypedStorage.__getitem__(self, index)

    def __repr__(self):
        return f"tessera.UntypedStorage(device={self.device}, nbytes={self.nbytes()})"


class _LegacyStorageType(type):
    """The type of FloatStorage, LongStorage, ...: torch's legacy typed storage classes.
    Calling one makes a TypedStorage of its dtype, and isinstance(s, FloatStorage) holds
    for every TypedStorage of float32, as in torch."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, TypedStorage) and obj.dtype == cls.dtype

    def __call__(cls, *args, **kwargs):
        data = args[0] if len(args) == 1 else None
        expected = (f"{cls!r}.__new__ received an invalid combination of arguments. Expected one of: no arguments, "
                    "(int size), (Sequence data). ")
        if kwargs:
            raise RuntimeError(expected + f"Keyword argument '{next(iter(kwargs))}' cannot be specified")
        if len(args) > 1 or not (data is None or isinstance(data, (int, list, tuple))):
            raise TypeError(expected + "Argument types not recognized: " + ", ".join(str(type(a)) for a in args))
        if isinstance(data, int):
            return TypedStorage(_C.empty(data, dtype=cls.dtype), cls.dtype)
        return TypedStorage(_C.tensor(list(data) if data is not None else [], dtype=cls.dtype), cls.dtype)


def _legacy_storage(name, dtype):
    return _LegacyStorageType(name, (), {"dtype": dtype, "__module__": "tessera",
                                         "__doc__": f"Legacy storage class: a TypedStorage of {dtype}."})


LEGACY_STORAGES = {dtype: _legacy_storage(name, dtype) for name, dtype in [
    ("FloatStorage", _C.float32), ("DoubleStorage", _C.float64), ("HalfStorage", _C.float16),
    ("BFloat16Storage", _C.bfloat16), ("ByteStorage", _C.uint8), ("CharStorage", _C.int8),
    ("ShortStorage", _C.int16), ("IntStorage", _C.int32), ("LongStorage", _C.int64), ("BoolStorage", _C.bool),
    ("ComplexFloatStorage", _C.complex64), ("ComplexDoubleStorage", _C.complex128)]}


def is_storage(obj):
    """Whether obj is a storage (typed or untyped)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))


def _load_from_bytes(data, dtype_name):
    """A storage rebuilt from pickled bytes."""
    dtype = getattr(_C, dtype_name)
    if not data:
        return TypedStorage(_C.empty(0, dtype=dtype), dtype)
    import numpy
    raw = _C.from_numpy(numpy.frombuffer(bytearray(data), dtype=numpy.uint8))
    return TypedStorage(raw.view(dtype), dtype)
