"""tessera.ao.nn.quantized.functional: torch.ao.nn.quantized.functional on quantized tensors,
as thin calls of the quantized operators (aten's QuantizedCPU kernels and quantized::*): the
activations, 1-d/2-d/3-d pooling and interpolation (not 5-d nearest yet) keep the input's qparams;
conv1d/2d/3d and linear pack their weight on every call (the modules pack it once)."""
import collections.abc
import warnings

from .... import _C
from ....nn import functional as F
from ....nn.modules.utils import _pair, _triple
from ....ops import ops

__all__ = ["adaptive_avg_pool2d", "adaptive_avg_pool3d", "avg_pool2d", "avg_pool3d", "celu", "clamp", "conv1d",
           "conv2d", "conv3d", "elu", "hardsigmoid", "hardswish", "hardtanh", "interpolate", "leaky_relu", "linear",
           "max_pool1d", "max_pool2d", "threshold", "upsample", "upsample_bilinear", "upsample_nearest"]


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-d average pooling of a quantized tensor, in its qparams."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.avg_pool2d' must be quantized!")
    return F.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool2d(input, output_size):
    """2-d adaptive average pooling of a quantized tensor, in its qparams."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.functional.adaptive_avg_pool2d' must be quantized!")
    return F.adaptive_avg_pool2d(input, output_size)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling of a quantized tensor, in its qparams."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.avg_pool3d' must be quantized!")
    return F.avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool3d(input, output_size):
    """3-d adaptive average pooling of a quantized tensor, in its qparams."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.functional.adaptive_avg_pool3d' must be quantized!")
    return F.adaptive_avg_pool3d(input, output_size)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Nearest or bilinear resizing of a quantized tensor, in its qparams."""
    if not input.is_quantized:
        raise ValueError("Input to 'quantized.interpolate' must be quantized!")
    return F.interpolate(input, size, scale_factor, mode, align_corners)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated name of interpolate."""
    warnings.warn("nn.quantized.functional.upsample is deprecated. Use nn.quantized.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='bilinear', align_corners=True)."""
    warnings.warn("nn.quantized.functional.upsample_bilinear is deprecated. Use nn.quantized.functional.interpolate "
                  "instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='nearest')."""
    warnings.warn("nn.quantized.functional.upsample_nearest is deprecated. Use nn.quantized.functional.interpolate "
                  "instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def linear(input, weight, bias=None, scale=None, zero_point=None):
    """input (quint8) times the qint8 weight, plus bias, quantized with (scale, zero_point) (the
    input's when absent)."""
    if scale is None:
        scale = input.q_scale()
    if zero_point is None:
        zero_point = input.q_zero_point()
    return ops.quantized.linear(input, ops.quantized.linear_prepack(weight, bias), scale, zero_point)


def _first_repeated(value, n):
    """torch's _ntuple_from_first: nested sequences unwrapped to the first of length n (or a
    scalar), that value repeated n times."""
    while isinstance(value, collections.abc.Sequence):
        if len(value) == n:
            break
        value = value[0]
    return tuple([value] * n)


def _conv(dims, input, weight, bias, stride, padding, dilation, groups, padding_mode, scale, zero_point, dtype):
    if padding_mode != "zeros":
        raise NotImplementedError("Only zero-padding is supported!")
    if input.dtype != _C.quint8:
        raise NotImplementedError("Only torch.quint8 is supported for activation tensor!")
    if weight.dtype != _C.qint8:
        raise NotImplementedError("Only torch.qint8 is supported for weight tensor!")
    if input.ndim != dims + 2:
        raise ValueError({1: "Input shape must be `(N, C, L)`!", 2: "Input shape must be `(N, C, H, W)`!",
                          3: "Input shape must be `(N, C, D, H, W)`!"}[dims])
    expand = {1: lambda v: _first_repeated(v, 2), 2: _pair, 3: _triple}[dims]
    packed = getattr(ops.quantized, f"conv{dims}d_prepack")(weight, bias, expand(stride), expand(padding),
                                                             expand(dilation), groups)
    return getattr(ops.quantized, f"conv{dims}d")(input, packed, scale, zero_point)


def conv1d(input, weight, bias, stride=1, padding=0, dilation=1, groups=1, padding_mode="zeros", scale=1.0,
           zero_point=0, dtype=_C.quint8):
    """1-d convolution of a quint8 input with a qint8 weight, quantized with (scale, zero_point)."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups, padding_mode, scale, zero_point, dtype)


def conv2d(input, weight, bias, stride=1, padding=0, dilation=1, groups=1, padding_mode="zeros", scale=1.0,
           zero_point=0, dtype=_C.quint8):
    """2-d convolution of a quint8 input with a qint8 weight, quantized with (scale, zero_point)."""
    return _conv(2, input, weight, bias, stride, padding, dilation, groups, padding_mode, scale, zero_point, dtype)


def conv3d(input, weight, bias, stride=1, padding=0, dilation=1, groups=1, padding_mode="zeros", scale=1.0,
           zero_point=0, dtype=_C.quint8):
    """3-d convolution of a quint8 input with a qint8 weight, quantized with (scale, zero_point)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups, padding_mode, scale, zero_point, dtype)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling of a quantized tensor (no indices)."""
    if return_indices:
        raise NotImplementedError("return_indices is not yet implemented!")
    return F.max_pool1d(input, kernel_size, [] if stride is None else stride, padding, dilation,
                        ceil_mode=ceil_mode, return_indices=return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling of a quantized tensor (no indices)."""
    if return_indices:
        raise NotImplementedError("return_indices is not yet implemented!")
    return F.max_pool2d(input, kernel_size, [] if stride is None else stride, padding, dilation,
                        ceil_mode=ceil_mode, return_indices=return_indices)


def _check_quantized(input, name):
    if not input.is_quantized:
        raise ValueError(f"Input to 'quantized.{name}' must be quantized!")


def celu(input, scale, zero_point, alpha=1.):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), quantized with (scale, zero_point)."""
    _check_quantized(input, "celu")
    return ops.quantized.celu(input, scale, zero_point, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False, scale=None, zero_point=None):
    """leaky_relu in the input's qparams, or into (scale, zero_point) when both are given."""
    if scale is not None and zero_point is not None:
        assert not inplace, "Cannot rescale with `inplace`"
        output = _C._empty_affine_quantized(list(input.shape), scale=scale, zero_point=int(zero_point),
                                            dtype=input.dtype)
        _C._nn.leaky_relu(input, negative_slope, out=output)
        return output
    if inplace:
        return _C._nn.leaky_relu_(input, negative_slope)
    return _C._nn.leaky_relu(input, negative_slope)


def hardtanh(input, min_val=-1., max_val=1., inplace=False):
    """clamp(x, min_val, max_val) in the input's qparams."""
    _check_quantized(input, "hardtanh")
    if inplace:
        return _C._nn.hardtanh_(input, min_val, max_val)
    return _C._nn.hardtanh(input, min_val, max_val)


def hardswish(input, scale, zero_point):
    """x * relu6(x + 3) / 6, quantized with (scale, zero_point)."""
    _check_quantized(input, "hardswish")
    return ops.quantized.hardswish(input, scale, zero_point)


def threshold(input, threshold, value):
    """x where x > threshold, else value, in the input's qparams."""
    _check_quantized(input, "threshold")
    if threshold is None:
        raise ValueError("Input to 'threshold' must be specified!")
    if value is None:
        raise ValueError("Input to 'value' must be specified!")
    return ops.quantized.threshold(input, threshold, value)


def elu(input, scale, zero_point, alpha=1.):
    """x for x > 0, alpha * (exp(x) - 1) otherwise, quantized with (scale, zero_point)."""
    _check_quantized(input, "elu")
    return ops.quantized.elu(input, scale, zero_point, alpha)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6 in the fixed qparams of [0, 1]; inplace=True writes the input (and
    gives it those qparams)."""
    _check_quantized(input, "hardsigmoid")
    if inplace:
        return _C._nn.hardsigmoid_(input)
    return _C._nn.hardsigmoid(input)


def clamp(input, min_, max_):
    """clamp(x, min_, max_) in the input's qparams."""
    _check_quantized(input, "clamp")
    return _C.clamp(input, min_, max_)
