"""tessera.ao.nn.quantized.functional: torch.ao.nn.quantized.functional's activations and 2-d
pooling on quantized tensors, as thin calls of the quantized operators (aten's QuantizedCPU
kernels and quantized::*); the input's qparams carry over to pooling's output. The 3-d
pooling, convolution, linear and interpolation functions need quantized kernels tessera
does not have yet and are absent."""
from .... import _C
from ....nn import functional as F
from ....ops import ops

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "celu", "clamp", "elu", "hardsigmoid", "hardswish", "hardtanh",
           "leaky_relu", "max_pool1d", "max_pool2d", "threshold"]


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
