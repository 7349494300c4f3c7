"""The parts of torch.testing that torch 1.13 keeps only for old code: the dtype-list
helpers, assert_allclose, make_non_contiguous, rand and randn. Each works as in torch and
then emits a FutureWarning naming its replacement (after a successful call, as torch does;
a failing assert_allclose raises without warning)."""
import functools
import random
import warnings

import tessera as _t

from ._comparison import assert_close

__all__ = ["rand", "randn", "assert_allclose", "get_all_device_types", "make_non_contiguous"]


def _deprecated(advice):
    """Wraps a function so each successful call warns; ``advice`` is a string or a
    function of the call's result giving one."""
    def wrap(fn):
        head = f"tessera.testing.{fn.__name__}() is deprecated (as in torch since 1.12) and will be removed. "

        @functools.wraps(fn)
        def call(*args, **kwargs):
            result = fn(*args, **kwargs)
            tail = advice(result) if callable(advice) else advice
            warnings.warn((head + tail).strip(), FutureWarning, stacklevel=2)
            return result
        return call
    return wrap


def _replace_with(result):
    return f"This call can be replaced with {result}."


class _dispatch_dtypes(tuple):
    """A tuple of dtypes whose ``+`` stays a _dispatch_dtypes (torch's type for these
    lists)."""

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only add a tuple of dtypes, not {type(other).__name__}")
        return _dispatch_dtypes(tuple.__add__(self, other))


def _checked(dtypes):
    for d in dtypes:
        if not isinstance(d, _t.dtype):
            raise AssertionError(f"expected a tessera.dtype, got {d!r}")
    return dtypes


_FLOATING = _dispatch_dtypes((_t.float32, _t.float64))
_INTEGRAL = _dispatch_dtypes((_t.uint8, _t.int8, _t.int16, _t.int32, _t.int64))
_COMPLEX = _dispatch_dtypes((_t.complex64, _t.complex128))
_ALL = _FLOATING + _INTEGRAL

# name -> the function computing the list (undecorated); decorated versions are exported.
_LISTS = {
    "empty_types": lambda: _dispatch_dtypes(()),
    "floating_types": lambda: _FLOATING,
    "floating_types_and_half": lambda: _FLOATING + (_t.half,),
    "floating_types_and": lambda *extra: _FLOATING + _checked(extra),
    "floating_and_complex_types": lambda: _FLOATING + _COMPLEX,
    "floating_and_complex_types_and": lambda *extra: _FLOATING + _COMPLEX + _checked(extra),
    "double_types": lambda: _dispatch_dtypes((_t.float64, _t.complex128)),
    "integral_types": lambda: _INTEGRAL,
    "integral_types_and": lambda *extra: _INTEGRAL + _checked(extra),
    "all_types": lambda: _ALL,
    "all_types_and": lambda *extra: _ALL + _checked(extra),
    "complex_types": lambda: _COMPLEX,
    "all_types_and_complex": lambda: _ALL + _COMPLEX,
    "all_types_and_complex_and": lambda *extra: _ALL + _COMPLEX + _checked(extra),
    "all_types_and_half": lambda: _ALL + (_t.half,),
}


def _get_all_int_dtypes():
    return [_t.uint8, _t.int8, _t.int16, _t.int32, _t.int64]


def _get_all_fp_dtypes(include_half=True, include_bfloat16=True):
    out = [_t.float32, _t.float64]
    if include_half:
        out.append(_t.float16)
    if include_bfloat16:
        out.append(_t.bfloat16)
    return out


def _get_all_complex_dtypes(include_complex32=False):
    if include_complex32:
        if not hasattr(_t, "complex32"):
            raise ValueError("get_all_complex_dtypes(include_complex32=True): tessera has no complex32 dtype")
        return [_t.complex32, _t.complex64, _t.complex128]
    return [_t.complex64, _t.complex128]


def _qint_dtypes():
    names = ("qint8", "quint8", "qint32", "quint4x2", "quint2x4")
    missing = [n for n in names if not hasattr(_t, n)]
    if missing:
        raise ValueError(f"get_all_dtypes(include_qint=True): tessera lacks the quantized dtypes {missing}")
    return [getattr(_t, n) for n in names]


def _get_all_dtypes(include_half=True, include_bfloat16=True, include_bool=True, include_complex=True,
                   include_complex32=False, include_qint=False):
    out = _get_all_int_dtypes() + _get_all_fp_dtypes(include_half=include_half, include_bfloat16=include_bfloat16)
    if include_bool:
        out.append(_t.bool)
    if include_complex:
        out += _get_all_complex_dtypes(include_complex32)
    if include_qint:
        out += _qint_dtypes()
    return out


def _get_all_math_dtypes(device):
    return (_get_all_int_dtypes() + _get_all_fp_dtypes(include_half=device.startswith("cuda"), include_bfloat16=False)
            + _get_all_complex_dtypes())


def _get_all_device_types():
    return ["cpu", "cuda"] if _t.cuda.is_available() else ["cpu"]


_GETTERS = dict(_LISTS, get_all_int_dtypes=_get_all_int_dtypes, get_all_fp_dtypes=_get_all_fp_dtypes,
                get_all_complex_dtypes=_get_all_complex_dtypes, get_all_dtypes=_get_all_dtypes,
                get_all_math_dtypes=_get_all_math_dtypes, get_all_device_types=_get_all_device_types)
for _name, _fn in _GETTERS.items():
    _fn.__name__ = _fn.__qualname__ = _name  # the name the warning and help() show
    globals()[_name] = _deprecated(_replace_with)(_fn)
    if _name not in __all__:
        __all__.append(_name)

rand = _deprecated("Use tessera.rand() instead.")(_t.rand)
randn = _deprecated("Use tessera.randn() instead.")(_t.randn)

# assert_allclose's own defaults (looser than assert_close's).
_ALLCLOSE_TOLERANCES = {_t.float16: (1e-3, 1e-3), _t.float32: (1e-4, 1e-5), _t.float64: (1e-5, 1e-8)}


@_deprecated("Use tessera.testing.assert_close() instead; see https://github.com/pytorch/pytorch/issues/61844 for "
             "how the arguments map.")
def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """torch 1.13's assert_allclose: non-tensors become tensors (``expected`` in
    ``actual``'s dtype), NaNs compare equal by default, dtypes may differ, and the default
    tolerances are float16 1e-3/1e-3, float32 1e-4/1e-5, float64 1e-5/1e-8."""
    __tracebackhide__ = True
    if not isinstance(actual, _t.Tensor):
        actual = _t.tensor(actual)
    if not isinstance(expected, _t.Tensor):
        expected = _t.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtols, atols = zip(*(_ALLCLOSE_TOLERANCES.get(x.dtype, (0.0, 0.0)) for x in (actual, expected)))
        rtol, atol = max(rtols), max(atols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


@_deprecated("For random noncontiguous values use tessera.testing.make_tensor(..., noncontiguous=True); for a given "
             "tensor use tessera.repeat_interleave(input, 2, dim=-1)[..., ::2].")
def make_non_contiguous(tensor):
    """A noncontiguous copy of ``tensor``: its values written into a randomly placed
    window of a larger buffer with an extra trailing dimension (a clone for tensors of at
    most one element)."""
    if tensor.numel() <= 1:
        return tensor.clone()
    big = list(tensor.size())
    for _ in range(2):  # widen two (possibly equal) random dimensions
        big[random.randint(0, len(big) - 1)] += random.randint(4, 15)
    # Slicing the extra last dimension makes the view noncontiguous even when only dim 0
    # was widened.
    buf = _t.empty(big + [random.randint(2, 3)], dtype=tensor.dtype, device=tensor.device)
    view = buf.select(buf.dim() - 1, random.randint(0, 1))
    for dim, size in enumerate(tensor.size()):
        if view.size(dim) != size:
            view = view.narrow(dim, random.randint(1, view.size(dim) - size), size)
    view.copy_(tensor)
    return view.detach()
