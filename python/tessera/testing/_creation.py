"""make_tensor: random test tensors with torch.testing.make_tensor's value ranges."""
import collections.abc
import math

import tessera as _t

__all__ = ["make_tensor"]

_INTEGRAL = (_t.uint8, _t.int8, _t.int16, _t.int32, _t.int64)
_FLOATING = (_t.float16, _t.bfloat16, _t.float32, _t.float64)
# A complex dtype and the real dtype of its parts.
_COMPLEX = {_t.complex64: _t.float32, _t.complex128: _t.float64}
if hasattr(_t, "complex32"):
    _COMPLEX[_t.complex32] = _t.float16


def _bounds(low, high, lowest, highest, default_low, default_high, integral):
    """[low, high) as make_tensor uses it: defaults filled in, clamped to what the dtype
    can hold, widened to whole numbers for integral dtypes."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if low != low or high != high:
        raise ValueError("make_tensor: one of low or high was NaN!")
    if low > high:
        raise ValueError("make_tensor: low must be weakly less than high!")
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if integral:
        return math.floor(low), math.ceil(high)
    return low, high


def _uniform(shape, low, high, dtype, device):
    u = _t.rand(shape, device=device, dtype=dtype)
    return high * u + low * (1 - u)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` on ``device`` with values drawn uniformly from [low, high),
    as torch.testing.make_tensor.

    When ``low`` or ``high`` is None it defaults by dtype: bool [0, 2), unsigned integers
    [0, 10), signed integers [-9, 10), floating and complex types [-9, 9] (the real and
    imaginary parts each). Bounds outside the dtype's finite range are clamped to it.
    ``noncontiguous=True`` returns a strided view (tensors of two or more elements);
    ``exclude_zero=True`` replaces zeros by 1 (integers, bool) or the dtype's smallest
    normal number (both parts for complex). ``requires_grad`` is only allowed for floating
    and complex dtypes. ``memory_format`` (a tessera extension: torch 1.13 lacks it, later
    torch has it) lays the result out in that format and cannot be combined with
    ``noncontiguous``.

    Raises ValueError for requires_grad on an integral dtype, ``low > high``, a NaN bound
    or ``noncontiguous`` with ``memory_format``; TypeError for an unsupported dtype.
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if requires_grad and dtype not in _FLOATING and dtype not in _COMPLEX:
        raise ValueError("make_tensor: requires_grad must be False for integral dtype")
    if noncontiguous and memory_format is not None:
        raise ValueError(f"make_tensor: noncontiguous=True and memory_format={memory_format} cannot be combined; "
                         "pass one of them")

    if dtype is _t.bool:
        result = _t.randint(0, 2, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = _t.iinfo(dtype)
        default_low = 0 if dtype is _t.uint8 else -9
        low, high = _bounds(low, high, info.min, info.max, default_low, 10, True)
        result = _t.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING:
        info = _t.finfo(dtype)
        low, high = _bounds(low, high, info.min, info.max, -9, 9, False)
        result = _uniform(shape, low, high, dtype, device)
    elif dtype in _COMPLEX:
        part = _COMPLEX[dtype]
        info = _t.finfo(part)
        low, high = _bounds(low, high, info.min, info.max, -9, 9, False)
        real, imag = _uniform(shape, low, high, part, device), _uniform(shape, low, high, part, device)
        result = _t.view_as_complex(_t.stack([real, imag], -1))
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by tessera.testing.make_tensor(): it makes "
                        "bool, integral, floating and complex tensors.")

    if noncontiguous and result.numel() > 1:
        # Every other element of a tensor twice as wide in its last dimension.
        result = _t.repeat_interleave(result, 2, dim=-1)[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)

    if exclude_zero:
        if dtype in _COMPLEX:
            tiny = _t.finfo(_COMPLEX[dtype]).tiny
            replacement = _t.tensor(complex(tiny, tiny), device=device, dtype=dtype)
        elif dtype in _FLOATING:
            replacement = _t.tensor(_t.finfo(dtype).tiny, device=device, dtype=dtype)
        else:
            replacement = _t.tensor(1, device=device, dtype=dtype)
        result[result == 0] = replacement

    if dtype in _FLOATING or dtype in _COMPLEX:
        result.requires_grad = requires_grad
    return result
