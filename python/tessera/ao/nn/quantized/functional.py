"""tessera.ao.nn.quantized.functional: torch.ao.nn.quantized.functional's activations on
quantized tensors, as thin calls of the quantized operators (aten's QuantizedCPU kernels
and quantized::*). The pooling, convolution, linear and interpolation functions need
quantized kernels tessera does not have yet and are absent."""
from .... import _C
from ....ops import ops

__all__ = ["celu", "clamp", "elu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "threshold"]


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
    """relu6(x + 3) / 6 in the fixed qparams of [0, 1] (torch has no in-place form for
    quantized tensors: inplace=True raises its NotImplementedError)."""
    _check_quantized(input, "hardsigmoid")
    if inplace:
        return _C._nn.hardsigmoid_(input)
    return _C._nn.hardsigmoid(input)


def clamp(input, min_, max_):
    """clamp(x, min_, max_) in the input's qparams."""
    _check_quantized(input, "clamp")
    return _C.clamp(input, min_, max_)
