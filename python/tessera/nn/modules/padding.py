"""Padding layers: constant/zero, reflection, replication and circular padding of the last
1, 2 or 3 dims, as torch.nn's (padding stored as a tuple in F.pad's order). ZeroPad1d/3d
and CircularPad*d are current torch's additions (after 1.13)."""
from .. import functional as F
from .utils import _ntuple, _pair, _quadruple
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]

_sextuple = _ntuple(6, "_sextuple")
_PADDING_OF = {1: _pair, 2: _quadruple, 3: _sextuple}


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _spatial = None

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _PADDING_OF[self._spatial](padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant: padding (left, right) or one int for both."""
    _spatial = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with a constant: (left, right, top, bottom) or one int."""
    _spatial = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with a constant: (left, right, top, bottom, front, back) or one int."""
    _spatial = 3


class _ZeroPad:
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last 2 dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last 3 dims with zeros."""


class _ModePadNd(Module):
    """Reflection, replication and circular padding: F.pad with a fixed mode."""

    __constants__ = ["padding"]
    _spatial = None
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _PADDING_OF[self._spatial](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """Mirrors the last dim about its edges (edge values not repeated)."""
    _spatial, _mode = 1, "reflect"


class ReflectionPad2d(_ModePadNd):
    """Mirrors the last 2 dims about their edges."""
    _spatial, _mode = 2, "reflect"


class ReflectionPad3d(_ModePadNd):
    """Mirrors the last 3 dims about their edges."""
    _spatial, _mode = 3, "reflect"


class ReplicationPad1d(_ModePadNd):
    """Repeats the edge values of the last dim."""
    _spatial, _mode = 1, "replicate"


class ReplicationPad2d(_ModePadNd):
    """Repeats the edge values of the last 2 dims."""
    _spatial, _mode = 2, "replicate"


class ReplicationPad3d(_ModePadNd):
    """Repeats the edge values of the last 3 dims."""
    _spatial, _mode = 3, "replicate"


class _CircularPadNd(_ModePadNd):
    _mode = "circular"

    def forward(self, input):
        low = self._spatial + 1
        if input.dim() not in (low, low + 1):
            raise ValueError(f"expected {low}D or {low + 1}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Wraps the last dim around (periodic padding)."""
    _spatial = 1


class CircularPad2d(_CircularPadNd):
    """Wraps the last 2 dims around (periodic padding)."""
    _spatial = 2


class CircularPad3d(_CircularPadNd):
    """Wraps the last 3 dims around (periodic padding)."""
    _spatial = 3
