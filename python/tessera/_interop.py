"""numpy, DLPack and buffer interop at torch's top level: as_tensor and asarray (sharing
memory where they can), from_dlpack, frombuffer (over any object with the buffer protocol),
from_file (a memory-mapped file), and the Tensor methods numpy calls (__array__,
__array_wrap__). The
zero-copy work (Tensor.numpy, from_numpy, __dlpack__) is in tessera._C.

Importing this module installs the Tensor methods.
"""
from . import _C


def _is_ndarray(obj):
    return type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray"


def as_tensor(data, dtype=None, device=None):
    """as_tensor(data, dtype=None, device=None) -> Tensor

    data as a tensor, sharing its memory where possible: a tensor with the asked dtype and
    device is returned as is, and a numpy array becomes a tensor over its memory (when its
    dtype is supported and its strides are not negative); otherwise the data is copied.
    Without device=, set_default_device's device applies (as in current PyTorch)."""
    if device is None:
        device = _C._get_default_device()
    if isinstance(data, _C.Tensor):
        if dtype is None and device is None:
            return data
        return data.to(device=device if device is not None else data.device,
                       dtype=dtype if dtype is not None else data.dtype)
    if _is_ndarray(data):
        try:
            shared = _C.from_numpy(data)
        except (TypeError, ValueError):
            shared = None
        if shared is not None:
            if dtype is None and device is None:
                return shared
            return shared.to(device=device if device is not None else shared.device,
                             dtype=dtype if dtype is not None else shared.dtype)
    return _C.tensor(data, dtype=dtype, device=device)


def from_dlpack(ext_tensor):
    """from_dlpack(ext_tensor) -> Tensor

    A tensor over the memory of an object that supports DLPack (``__dlpack__``: a torch
    tensor, a numpy array, ...) or of a DLPack capsule, without copying."""
    if hasattr(ext_tensor, "__dlpack__"):
        device_type, _ = ext_tensor.__dlpack_device__()
        if device_type not in (1, 3):  # kDLCPU, kDLCUDAHost: no stream to agree on
            raise NotImplementedError("from_dlpack: only CPU producers are supported (tessera has no CUDA streams yet)")
        capsule = ext_tensor.__dlpack__()
    else:
        capsule = ext_tensor
    return _C._from_dlpack(capsule)


def _array(self, dtype=None):
    """numpy's conversion hook: the tensor's memory as an ndarray (cast if dtype is given)."""
    array = self.numpy()
    return array if dtype is None else array.astype(dtype, copy=False)


def _array_wrap(self, array):
    """numpy's result hook: a ufunc applied to a tensor returns a tensor, as in torch."""
    if array.dtype == bool:
        array = array.astype("uint8")
    return _C.from_numpy(array)


_C._add_tensor_methods({"__array__": _array, "__array_wrap__": _array_wrap})


# ---------------------------------------------------------------- asarray, frombuffer, from_file

def _numpy():
    import numpy
    return numpy


def _bytes_as(array, dtype):
    """A uint8 ndarray's memory as a 1-D tensor of dtype, without copying."""
    return _C.from_numpy(array).view(dtype)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor

    A 1-D tensor over the memory of an object that implements Python's buffer protocol
    (bytearray, array.array, mmap, ...): `count` elements of `dtype` (all of them with -1)
    starting `offset` bytes in. The tensor shares the buffer's memory and keeps it alive;
    a read-only buffer can still be written through the tensor, as in torch."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    itemsize = _C.empty(0, dtype=dtype).element_size()
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0:
        if (length - offset) % itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                             f"of element size ({itemsize})")
        count = (length - offset) // itemsize
    elif offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    raw = _numpy().frombuffer(buffer, dtype="uint8", count=count * itemsize, offset=offset)
    result = _bytes_as(raw if raw.flags.writeable else _writable_alias(raw), dtype)
    return result.requires_grad_() if requires_grad else result


def _writable_alias(array):
    """torch lets a tensor write into a read-only buffer (with a warning); numpy will not
    mark such an array writable, so the tensor aliases its memory through the array
    interface instead."""
    import warnings
    warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This means "
                  "you can write to the underlying (supposedly non-writable) buffer using the tensor. You may want to "
                  "copy the buffer to protect its data or make it writable before converting it to a tensor.")
    np = _numpy()

    class _Alias:
        def __init__(self, base):
            self.base = base
            interface = dict(base.__array_interface__)
            interface["data"] = (interface["data"][0], False)
            self.__array_interface__ = interface

    return np.asarray(_Alias(array))


def _scalar_type_name(dtype):
    """The C++ ScalarType name torch's messages use: Float, Long, ComplexDouble, ..."""
    from ._tensor_casts import _LEGACY_NAMES
    return _LEGACY_NAMES.get(dtype, str(dtype).rpartition(".")[2]).replace("Tensor", "")


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor

    `obj` (a tensor, a numpy array, a DLPack producer, an object with the buffer protocol,
    a number or a nested sequence of them) as a tensor. With copy=None the result shares
    obj's memory when dtype and device allow it and copies otherwise; copy=True always
    copies and copy=False raises where sharing is impossible. A buffer is read as `dtype`
    (the default dtype when not given). Without device=, set_default_device's device applies."""
    if device is None:
        device = _C._get_default_device()

    def finish(tensor, shared):
        if copy is False and not shared:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        if copy:
            tensor = tensor.clone() if shared else tensor
        if requires_grad:
            tensor = (tensor.detach() if shared else tensor).requires_grad_()
        return tensor

    def aliased(tensor):
        """tensor converted to dtype and device, and whether that still shares its memory."""
        want_dtype = dtype if dtype is not None else tensor.dtype
        want_device = _C.device(device) if device is not None else tensor.device
        if want_dtype == tensor.dtype and want_device == tensor.device:
            return tensor, True
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_scalar_type_name(tensor.dtype)}' into dtype "
                             f"'{_scalar_type_name(want_dtype)}'." if want_dtype != tensor.dtype else
                             f"can't alias tensor on device '{tensor.device}' into device '{want_device}'.")
        return tensor.to(device=want_device, dtype=want_dtype), False

    if isinstance(obj, _C.Tensor):
        return finish(*aliased(obj))
    if _is_ndarray(obj):
        try:
            shared = _C.from_numpy(obj)
        except (TypeError, ValueError):
            return finish(_C.tensor(obj, dtype=dtype, device=device), False)
        return finish(*aliased(shared))
    if hasattr(obj, "__dlpack__"):
        return finish(*aliased(from_dlpack(obj)))
    if not isinstance(obj, (list, tuple)):
        try:
            memoryview(obj)
        except TypeError:
            pass
        else:
            tensor = frombuffer(obj, dtype=dtype if dtype is not None else _C._get_default_dtype())
            return finish(*aliased(tensor))
    return finish(_C.tensor(obj, dtype=dtype, device=device), False)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
    pin_memory=False) -> Tensor

    A 1-D tensor of `size` elements of `dtype` (the default dtype) read from the start of
    a file by memory-mapping it. With shared=True writes to the tensor go to the file;
    otherwise the tensor's memory is private (copy on write)."""
    import os
    if layout is not None and layout != _C.strided:
        raise RuntimeError(f"from_file: layout {layout} is not supported; only torch.strided")
    if device is not None and _C.device(device).type != "cpu":
        raise RuntimeError("from_file: only CPU tensors can map a file")
    if pin_memory:
        raise NotImplementedError("from_file: pin_memory=True needs CUDA")
    dtype = dtype if dtype is not None else _C._get_default_dtype()
    itemsize = _C.empty(0, dtype=dtype).element_size()
    mode = "read-write" if shared else "read-only"
    try:
        available = os.path.getsize(filename)
    except OSError as error:
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {error.strerror} ({error.errno})") from None
    nbytes = size * itemsize
    if available < nbytes:
        raise RuntimeError(f"file <{filename}> size is smaller than the required mapping size <{nbytes}>")
    if nbytes == 0:
        result = _C.empty(0, dtype=dtype)
    else:
        np = _numpy()
        mapped = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c", shape=(nbytes,))
        result = _bytes_as(mapped, dtype)
    return result.requires_grad_() if requires_grad else result
