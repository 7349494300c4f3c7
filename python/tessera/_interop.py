"""numpy and DLPack interop at torch's top level: as_tensor (sharing memory where it can),
from_dlpack, and the Tensor methods numpy calls (__array__, __array_wrap__). The
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
    dtype is supported and its strides are not negative); otherwise the data is copied."""
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
