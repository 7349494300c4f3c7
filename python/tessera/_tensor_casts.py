"""Tensor casts that torch defines on the Python side of its Tensor type:
``t.float()``, ``t.double()``, ..., ``t.cdouble()`` (each ``t.to(dtype)``), and
``Tensor.to``'s positional-device form ``t.to('meta')`` / ``t.to(device, dtype)``, which
the schema-driven binding of ``aten::to`` cannot express (``to.device`` requires a dtype).

Importing this module installs the methods on ``tessera.Tensor``.
"""
import builtins

from . import _C

_preserve_format = _C.preserve_format
_schema_to = _C.Tensor.__dict__["to"]  # the generated binding of aten::to's overloads


def _is_device_like(obj):
    return obj is None or isinstance(obj, (str, _C.device)) or (isinstance(obj, int) and not isinstance(obj, bool))


def to(self, *args, **kwargs):
    """to(dtype, non_blocking=False, copy=False, *, memory_format=tessera.preserve_format) -> Tensor
    to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=tessera.preserve_format) -> Tensor
    to(other, non_blocking=False, copy=False, *, memory_format=tessera.preserve_format) -> Tensor

    A tensor with the given dtype and/or device: self itself when it already has them
    (unless copy=True), else a converted copy.
    """
    if args and _is_device_like(args[0]):
        names = ("device", "dtype", "non_blocking", "copy")
        if len(args) > len(names):
            raise TypeError(f"to() takes at most {len(names)} positional arguments but {len(args)} were given")
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"to() got multiple values for argument '{name}'")
            kwargs[name] = value
        return _schema_to(self, **kwargs)
    return _schema_to(self, *args, **kwargs)


def _cast(name, dtype):
    def method(self, memory_format=_preserve_format):
        return _schema_to(self, dtype, memory_format=memory_format)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"{name}(memory_format=tessera.preserve_format) -> Tensor\n\n"
                      f"``self.{name}()`` is ``self.to({dtype})``.")
    return method


_CASTS = {
    "float": _C.float32, "double": _C.float64, "half": _C.float16, "bfloat16": _C.bfloat16,
    "int": _C.int32, "long": _C.int64, "short": _C.int16, "char": _C.int8, "byte": _C.uint8,
    "bool": _C.bool, "chalf": _C.complex32, "cfloat": _C.complex64, "cdouble": _C.complex128,
}

# torch's legacy tensor type names, which Tensor.type() reports and accepts.
_LEGACY_NAMES = {_C.float32: "FloatTensor", _C.float64: "DoubleTensor", _C.float16: "HalfTensor",
                 _C.bfloat16: "BFloat16Tensor", _C.int64: "LongTensor", _C.int32: "IntTensor",
                 _C.int16: "ShortTensor", _C.int8: "CharTensor", _C.uint8: "ByteTensor", _C.bool: "BoolTensor",
                 _C.complex32: "ComplexHalfTensor", _C.complex64: "ComplexFloatTensor",
                 _C.complex128: "ComplexDoubleTensor"}
_DTYPE_OF_NAME = {name: dtype for dtype, name in _LEGACY_NAMES.items()}


def _legacy_name(t):
    name = _LEGACY_NAMES.get(t.dtype, str(t.dtype).rpartition(".")[2])
    return "torch." + ("cuda." if t.is_cuda else "") + name


def type(self, dtype=None, non_blocking=False, **kwargs):
    """type(dtype=None, non_blocking=False) -> str or Tensor: without dtype, the legacy
    type name ('torch.FloatTensor', as torch reports it); with one (a dtype, a legacy class
    such as tessera.DoubleTensor or its name, 'torch.' or 'tessera.' prefixed), self cast to it."""
    if dtype is None:
        return _legacy_name(self)
    if builtins.type(dtype).__name__ == "tensortype":  # tessera.FloatTensor, ... (tessera._legacy_tensors)
        dtype = dtype.dtype
    if isinstance(dtype, str):
        prefix, _, name = dtype.rpartition(".")
        if prefix not in ("torch", "tessera", "torch.cuda", "tessera.cuda") or name not in _DTYPE_OF_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        target = _DTYPE_OF_NAME[name]
        device = "cuda" if prefix.endswith("cuda") else "cpu"
        if self.dtype == target and self.device.type == device:
            return self
        return _schema_to(self, device, target, non_blocking)
    if isinstance(dtype, _C.dtype):
        return self if self.dtype == dtype else _schema_to(self, dtype, non_blocking)
    raise TypeError(f"type() expected a dtype or a type name, got {builtins.type(dtype).__name__}")


def cpu(self, memory_format=_preserve_format):
    """cpu(memory_format=tessera.preserve_format) -> Tensor: self when it is already in CPU
    memory, else a copy there (``self.to('cpu')``)."""
    if self.device.type == "cpu" and memory_format is _preserve_format:
        return self
    return to(self, "cpu", memory_format=memory_format)


def typename(obj):
    """tessera.typename(obj): 'torch.FloatTensor' for a tensor, else the object's qualified
    type name, as torch.typename."""
    if isinstance(obj, _C.Tensor):
        return _legacy_name(obj)
    module = getattr(builtins.type(obj), "__module__", "")
    qualname = builtins.type(obj).__qualname__
    return qualname if module in ("", "builtins") else module + "." + qualname


_methods = {name: _cast(name, dtype) for name, dtype in _CASTS.items()}
_methods["to"] = to
_methods["type"] = type
_methods["cpu"] = cpu
_C._add_tensor_methods(_methods)
