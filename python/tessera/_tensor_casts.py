"""Tensor casts that torch defines on the Python side of its Tensor type:
``t.float()``, ``t.double()``, ..., ``t.cdouble()`` (each ``t.to(dtype)``), and
``Tensor.to``'s positional-device form ``t.to('meta')`` / ``t.to(device, dtype)``, which
the schema-driven binding of ``aten::to`` cannot express (``to.device`` requires a dtype).

Importing this module installs the methods on ``tessera.Tensor``.
"""
from . import _C

_preserve_format = _C.preserve_format
_schema_to = _C.Tensor.__dict__["to"]  # the generated binding of aten::to's overloads


def _is_device_like(obj):
    return isinstance(obj, (str, _C.device)) or (isinstance(obj, int) and not isinstance(obj, bool))


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
    "bool": _C.bool, "cfloat": _C.complex64, "cdouble": _C.complex128,
}

_methods = {name: _cast(name, dtype) for name, dtype in _CASTS.items()}
_methods["to"] = to
_C._add_tensor_methods(_methods)
