"""tessera.autograd.DeviceType: the device kinds torch's profiler reports events on
(torch._C._autograd.DeviceType), with torch's member names and numbers, behaving as that
pybind11 enum does: DeviceType(n) for any int, members equal by value, int() and hash."""
import operator


class _EnumType(type):
    @property
    def __members__(cls):
        """{name: member}, a fresh dict each time."""
        return {name: cls(value) for value, name in _NAMES.items()}


class DeviceType(metaclass=_EnumType):
    """A device kind: DeviceType.CPU (0), CUDA (1), ... as torch's c10 numbers them.
    A number with no member is allowed and named '???'."""

    __slots__ = ("_value",)

    def __init__(self, value):
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            "supported:\n    1. tessera.autograd.DeviceType(value: int)\n\n"
                            f"Invoked with: {value!r}") from None
        self._value = value

    @property
    def value(self):
        return self._value

    @property
    def name(self):
        return _NAMES.get(self._value, "???")

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def __hash__(self):
        return self._value

    def __eq__(self, other):
        return type(other) is DeviceType and other._value == self._value

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        return f"<DeviceType.{self.name}: {self._value}>"

    def __str__(self):
        return f"DeviceType.{self.name}"

    def __reduce__(self):
        return (DeviceType, (self._value,))


_NAMES = dict(enumerate(("CPU", "CUDA", "MKLDNN", "OPENGL", "OPENCL", "IDEEP", "HIP", "FPGA", "ORT", "XLA", "Vulkan",
                         "Metal", "XPU", "MPS", "Meta", "HPU", "VE", "Lazy", "IPU")))
for _value, _name in _NAMES.items():
    setattr(DeviceType, _name, DeviceType(_value))
del _value, _name
