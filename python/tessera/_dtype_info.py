"""Type queries and defaults of torch's top level: finfo and iinfo (the numeric limits of a
dtype, from its bit layout), get/set_default_dtype, get/set_default_device, is_tensor."""
import math

from . import _C

# (mantissa bits, smallest normal exponent, largest finite value) per floating format.
# The largest finite value is computed from the layout: IEEE formats reserve the top
# exponent for inf/NaN; float8_e4m3fn keeps it for finite values but for one NaN pattern.
_FLOAT_LAYOUTS = {
    "float16": (10, -14, (2 - 2 ** -10) * 2.0 ** 15),
    "bfloat16": (7, -126, (2 - 2 ** -7) * 2.0 ** 127),
    "float32": (23, -126, (2 - 2 ** -23) * 2.0 ** 127),
    "float64": (52, -1022, (2 - 2 ** -52) * 2.0 ** 1023),
    "float8_e4m3fn": (3, -6, 1.75 * 2.0 ** 8),
    "float8_e5m2": (2, -14, (2 - 2 ** -2) * 2.0 ** 15),
}
_COMPLEX_PARTS = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}
_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64, "float8_e4m3fn": 8, "float8_e5m2": 8,
         "uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def _dtype_name(dtype):
    return repr(dtype).split(".", 1)[1]


class finfo:
    """finfo(type=None): the limits of a floating (or complex) dtype: bits, eps, max, min,
    tiny (= smallest_normal), resolution and dtype; the default dtype's when not given."""

    def __init__(self, type=None):  # noqa: A002 (torch's parameter name)
        dtype = _C._get_default_dtype() if type is None else type
        if not isinstance(dtype, _C.dtype):
            raise TypeError(f"finfo(): argument 'type' must be tessera.dtype, not {dtype.__class__.__name__}")
        name = _dtype_name(dtype)
        real = _COMPLEX_PARTS.get(name, name)
        if real not in _FLOAT_LAYOUTS:
            raise TypeError("finfo(): argument 'type' must be a floating point or complex dtype, "
                            f"got tessera.{name}")
        mantissa, min_exponent, largest = _FLOAT_LAYOUTS[real]
        self.bits = _BITS[real]
        self.eps = 2.0 ** -mantissa
        self.max = largest
        self.min = -largest
        self.smallest_normal = 2.0 ** min_exponent
        self.tiny = self.smallest_normal
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = real

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """iinfo(type): the limits of an integer dtype: bits, min, max and dtype."""

    def __init__(self, type):  # noqa: A002
        if not isinstance(type, _C.dtype):
            raise TypeError(f"iinfo(): argument 'type' must be tessera.dtype, not {type.__class__.__name__}")
        given = _dtype_name(type)
        # a quantized dtype's limits are those of the integer it stores (a byte for the
        # packed sub-byte types, as their zero points range over it)
        name = {"qint8": "int8", "quint8": "uint8", "qint32": "int32", "quint4x2": "uint8",
                "quint2x4": "uint8"}.get(given, given)
        if name not in _BITS or name in _FLOAT_LAYOUTS:
            raise TypeError(f"tessera.{name} is not supported by tessera.iinfo")
        self.bits = _BITS[name]
        if name == "uint8":
            self.min, self.max = 0, 2 ** self.bits - 1
        else:
            self.min, self.max = -(2 ** (self.bits - 1)), 2 ** (self.bits - 1) - 1
        self.dtype = given

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def get_default_dtype():
    """get_default_dtype() -> tessera.dtype

    The dtype of floating results nothing else decides: factories without a dtype, Python
    floats, true division and float-valued ops on integers."""
    return _C._get_default_dtype()


def set_default_dtype(d):
    """set_default_dtype(d): makes d (float32, float64, float16 or bfloat16) the default
    floating dtype; the default complex dtype becomes complex128 for float64, else complex64."""
    _C._set_default_dtype(d)


def set_default_device(device):
    """set_default_device(device): factories called without device= (zeros, rand, arange,
    tensor, ...: the functions with no tensor argument) make their tensors on `device` (a
    tessera.device, a string or a CUDA index); None goes back to the CPU. Ops given a tensor
    (zeros_like, x.new_zeros, ...) keep following it. As current PyTorch's, from Python only,
    and per thread. A CUDA device is refused at once in a build without CUDA (torch accepts it
    and fails at the next factory)."""
    if device is not None:
        device = _C.device(device) if not isinstance(device, int) else _C.device("cuda", device)
        if device.type == "cuda":
            from . import cuda
            if not cuda.is_available():
                raise RuntimeError("set_default_device: tessera was built without CUDA (or no GPU is present), so "
                                   "no tensor can be made on a CUDA device")
    _C._set_default_device(device)


def get_default_device():
    """get_default_device() -> tessera.device: where factories put tensors when given no
    device (the CPU unless set_default_device chose another)."""
    device = _C._get_default_device()
    return device if device is not None else _C.device("cpu")


def is_tensor(obj):
    """Whether obj is a tessera.Tensor (or an instance of a subclass)."""
    return isinstance(obj, _C.Tensor)
