"""torch's legacy typed tensor classes (FloatTensor, LongTensor, ...) and their
constructor, which Tensor.new shares, plus set_default_tensor_type.

``FloatTensor`` is not a subclass of Tensor: it is an instance of ``tensortype`` that
answers isinstance() by dtype and device (a CPU float32 tensor is a FloatTensor, whatever
its Python class) and that, called, builds a float32 tensor the legacy way:
``FloatTensor(2, 3)`` (uninitialized), ``FloatTensor([1, 2])`` (copied data),
``FloatTensor(size)``, ``FloatTensor(tensor)`` / ``FloatTensor(storage)`` (aliases).
"""
import builtins
import importlib
import sys

from . import _C
from ._tensor_casts import _LEGACY_NAMES
from .storage import LEGACY_STORAGES, TypedStorage


def _describe(args, kwargs):
    parts = [builtins.type(a).__name__ for a in args] + [f"{k}={builtins.type(v).__name__}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def legacy_new(dtype, device, args, kwargs):
    if str(dtype).rsplit(".", 1)[-1] in ("qint8", "quint8", "qint32", "quint4x2", "quint2x4"):
        raise RuntimeError(f"new(): not supported for quantized tensors ({dtype}): use _empty_affine_quantized or "
                           "quantize_per_tensor")
    """A tensor of `dtype` on `device` from the legacy constructor's arguments: (),
    (*sizes), (Size), (sequence data), (tensor) or (storage), with only device= allowed
    as a keyword (and only the device it is for)."""
    if any(k != "device" for k in kwargs):
        raise TypeError("new() received an invalid combination of arguments - got " + _describe(args, kwargs)
                        + ", but expected one of: (*, device), (Storage storage), (Tensor other), "
                          "(tuple of ints size, *, device), (object data, *, device)")
    if kwargs.get("device") is not None:
        asked = _C.device(kwargs["device"])
        if asked.type != device.type:
            raise RuntimeError(f"legacy constructor expects device type: {device.type} but device type: "
                               f"{asked.type} was passed")
    if not args:
        return _C.empty(0, dtype=dtype, device=device)
    first = args[0]
    if len(args) == 1 and isinstance(first, _C.Tensor):
        if first.dtype != dtype or first.device.type != device.type:
            raise TypeError(f"expected a tensor of type {_LEGACY_NAMES.get(dtype, dtype)} on {device.type} "
                            f"(got {first.type()})")
        return first.view_as(first)  # an alias that stays in first's graph, as torch's
    if len(args) == 1 and isinstance(first, TypedStorage):
        if first.dtype != dtype:
            raise TypeError(f"expected a storage of {dtype} (got one of {first.dtype})")
        return first._tensor.detach()
    if len(args) == 1 and isinstance(first, _C.Size):
        return _C.empty(first, dtype=dtype, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return _C.empty(args, dtype=dtype, device=device)
    if len(args) == 1:
        if isinstance(first, (str, bytes)) or not hasattr(first, "__len__"):
            raise TypeError(f"new(): data must be a sequence (got {builtins.type(first).__name__})")
        return _C.tensor(first, dtype=dtype, device=device)
    raise TypeError("new() received an invalid combination of arguments - got " + _describe(args, kwargs)
                    + ", but expected one of: (*, device), (Storage storage), (Tensor other), "
                      "(tuple of ints size, *, device), (object data, *, device)")


_CPU = _C.device("cpu")


class tensortype(builtins.type):
    """The type of the legacy tensor classes: isinstance() compares dtype and device, and
    calling one builds a tensor of its dtype on the CPU (see the module's docstring)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu" and not obj.is_sparse

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, _CPU, args, kwargs)

    def __getattr__(cls, name):
        # FloatTensor.add, FloatTensor.storage_type, ...: Tensor's own methods, as in torch.
        return getattr(_C.Tensor, name)

    def __repr__(cls):
        return f"<class 'tessera.{cls.__name__}'>"


def _typed_class(dtype):
    name = _LEGACY_NAMES[dtype]

    def storage_type(cls=None):
        return LEGACY_STORAGES[dtype]

    return tensortype(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "layout": _C.strided,
                                 "__module__": "tessera", "storage_type": staticmethod(storage_type),
                                 "__doc__": f"The legacy class of CPU tensors of {dtype}."})


TENSOR_TYPES = {dtype: _typed_class(dtype) for dtype in (
    _C.float32, _C.float64, _C.float16, _C.bfloat16, _C.uint8, _C.int8, _C.int16, _C.int32, _C.int64, _C.bool)}


def set_default_tensor_type(t):
    """set_default_tensor_type(t): makes the floating type t (tessera.DoubleTensor, or a
    name such as 'torch.DoubleTensor' / 'tessera.DoubleTensor') the default: its dtype
    becomes the default dtype and tessera.Storage its storage class."""
    if isinstance(t, str):
        if t.startswith(("torch.cuda.", "tessera.cuda.")):
            raise TypeError(f"type {t} not available. Tessera has no CUDA backend in this build (CPU only).")
        # A dotted name imported as torch does, with 'torch' read as tessera.
        first, *rest = t.split(".")
        obj = sys.modules[__package__] if first == "torch" else importlib.import_module(first)
        for part in rest:
            obj = getattr(obj, part)
        t = obj
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C._set_default_dtype(t.dtype)
    sys.modules[__package__].Storage = LEGACY_STORAGES[t.dtype]
