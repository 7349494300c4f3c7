"""Convolution layers (Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy forms) with torch.nn's constructor
arguments, parameter layout, initialisation, padding modes and printed form."""
import math

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _ntuple, _pair, _quadruple, _reverse_repeat_tuple, _single, _triple  # noqa: F401

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """What Conv*d and ConvTranspose*d share: argument checks, the weight/bias layout,
    torch's initialisation and extra_repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # The F.pad amounts a non-zeros padding_mode applies before a padding-free conv
        # (for 'same', any odd total goes to the right/bottom side as torch does).
        if isinstance(padding, str):
            amounts = [0, 0] * len(kernel_size)
            if padding == "same":
                for axis, (d, k) in enumerate(zip(dilation, kernel_size)):
                    total = d * (k - 1)
                    slot = 2 * (len(kernel_size) - 1 - axis)
                    amounts[slot] = total // 2
                    amounts[slot + 1] = total - total // 2
            self._reversed_padding_repeated_twice = amounts
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_C.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_C.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a=sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the
        # weight; the bias takes the same bound.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        parts = [f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"]
        if self.padding != (0,) * len(self.padding):
            parts.append(f"padding={self.padding}")
        if self.dilation != (1,) * len(self.dilation):
            parts.append(f"dilation={self.dilation}")
        if self.output_padding != (0,) * len(self.output_padding):
            parts.append(f"output_padding={self.output_padding}")
        if self.groups != 1:
            parts.append(f"groups={self.groups}")
        if self.bias is None:
            parts.append("bias=False")
        if self.padding_mode != "zeros":
            parts.append(f"padding_mode={self.padding_mode}")
        return ", ".join(parts)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _ConvForward(_ConvNd):
    """Conv1d/2d/3d: a non-zeros padding_mode pads explicitly, then convolves unpadded."""

    _conv = None      # the F.conv*d function
    _tuple = None     # the int-to-tuple converter for this many spatial dims

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, type(self)._tuple(0), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


def _conv_init(self, tuple_of, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
               padding_mode, device, dtype):
    padding = padding if isinstance(padding, str) else tuple_of(padding)
    _ConvNd.__init__(self, in_channels, out_channels, tuple_of(kernel_size), tuple_of(stride), padding,
                     tuple_of(dilation), False, tuple_of(0), groups, bias, padding_mode, device=device, dtype=dtype)


class Conv1d(_ConvForward):
    """1-D convolution over [N, C_in, L] (or unbatched [C_in, L])."""

    _conv = staticmethod(F.conv1d)
    _tuple = staticmethod(_single)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        _conv_init(self, _single, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                   padding_mode, device, dtype)


class Conv2d(_ConvForward):
    """2-D convolution over [N, C_in, H, W] (or unbatched [C_in, H, W])."""

    _conv = staticmethod(F.conv2d)
    _tuple = staticmethod(_pair)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        _conv_init(self, _pair, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                   padding_mode, device, dtype)


class Conv3d(_ConvForward):
    """3-D convolution over [N, C_in, D, H, W] (or unbatched [C_in, D, H, W])."""

    _conv = staticmethod(F.conv3d)
    _tuple = staticmethod(_triple)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        _conv_init(self, _triple, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                   padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    """Transposed convolutions: only zeros padding, and forward's optional output_size
    picks the output_padding that reaches it."""

    _conv = None
    _num_spatial = None

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                         output_padding, groups, bias, padding_mode, device=device, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        batched = input.dim() == num_spatial_dims + 2
        leading = 2 if batched else 1
        output_size = list(output_size)
        if len(output_size) == leading + num_spatial_dims:
            output_size = output_size[leading:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {leading + num_spatial_dims} elements (got {len(output_size)})")
        smallest, largest = [], []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            size = (input.size(d + leading) - 1) * stride[d] - 2 * padding[d] + dil * (kernel_size[d] - 1) + 1
            smallest.append(size)
            largest.append(size + stride[d] - 1)
        for want, lo, hi in zip(output_size, smallest, largest):
            if want < lo or want > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                                 f"to {largest} (for an input of {input.size()[2:]})")
        return [want - lo for want, lo in zip(output_size, smallest)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {type(self).__name__}")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              type(self)._num_spatial, self.dilation)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                self.groups, self.dilation)


def _conv_transpose_init(self, tuple_of, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                         groups, bias, dilation, padding_mode, device, dtype):
    _ConvTransposeNd.__init__(self, in_channels, out_channels, tuple_of(kernel_size), tuple_of(stride),
                              tuple_of(padding), tuple_of(dilation), True, tuple_of(output_padding), groups, bias,
                              padding_mode, device=device, dtype=dtype)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the gradient of Conv1d with respect to its input)."""

    _conv = staticmethod(F.conv_transpose1d)
    _num_spatial = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        _conv_transpose_init(self, _single, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                             groups, bias, dilation, padding_mode, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (the gradient of Conv2d with respect to its input)."""

    _conv = staticmethod(F.conv_transpose2d)
    _num_spatial = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        _conv_transpose_init(self, _pair, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                             groups, bias, dilation, padding_mode, device, dtype)



class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (the gradient of Conv3d with respect to its input)."""

    _conv = staticmethod(F.conv_transpose3d)
    _num_spatial = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        _conv_transpose_init(self, _triple, in_channels, out_channels, kernel_size, stride, padding, output_padding,
                             groups, bias, dilation, padding_mode, device, dtype)


# -- lazy convolutions: in_channels comes from the first input

class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels is the input's channel dim at the first forward (dim 1, or dim 0 when
    unbatched); the weight and bias are then shaped and initialised as the ordinary
    layer's."""

    _num_spatial = None

    def _lazy_setup(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_num_spatial_dims(self):
        return type(self)._num_spatial

    def _get_in_channels(self, input):
        unbatched = self._get_num_spatial_dims() + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


def _lazy_conv_class(base, num_spatial):
    """LazyConv{n}d / LazyConvTranspose{n}d over `base`, with base's arguments less
    in_channels."""
    transposed = issubclass(base, _ConvTransposeNd)

    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            # (through the mixin, which registers the hooks and goes on to base; no bias yet)
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                                     dilation, padding_mode, device=device, dtype=dtype)
            self._lazy_setup(out_channels, bias, device, dtype)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                                     padding_mode, device=device, dtype=dtype)
            self._lazy_setup(out_channels, bias, device, dtype)

    name = f"Lazy{base.__name__}"
    doc = (f"A {base.__name__} whose in_channels is inferred from the first input; it then becomes a "
           f"{base.__name__}.")
    return type(name, (_LazyConvXdMixin, base), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                                                 "__qualname__": name, "cls_to_become": base,
                                                 "_num_spatial": num_spatial})


LazyConv1d = _lazy_conv_class(Conv1d, 1)
LazyConv2d = _lazy_conv_class(Conv2d, 2)
LazyConv3d = _lazy_conv_class(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_class(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_class(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_class(ConvTranspose3d, 3)
