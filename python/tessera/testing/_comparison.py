"""assert_close: compares tensors, numbers, booleans and None, or sequences and mappings
of them, with torch 1.13's rules (tolerances per dtype, attribute checks, the same
exception types and the same message lines)."""
import cmath
import collections.abc

import tessera as _t

try:
    import numpy as _np
except ModuleNotFoundError:  # numpy is optional here, as in torch
    _np = None

__all__ = ["assert_close"]

# Default (rtol, atol) per dtype; a dtype missing here compares exactly. Quantized dtypes
# take float32's, since they are compared after dequantizing.
_TOLERANCES = {
    _t.float16: (1e-3, 1e-5),
    _t.bfloat16: (1.6e-2, 1e-5),
    _t.float32: (1.3e-6, 1e-5),
    _t.float64: (1e-7, 1e-7),
    _t.complex64: (1.3e-6, 1e-5),
    _t.complex128: (1e-7, 1e-7),
}
for _name in ("complex32", "chalf"):
    if hasattr(_t, _name):
        _TOLERANCES[getattr(_t, _name)] = (1e-3, 1e-5)
for _name in ("quint8", "qint8", "qint32", "quint4x2", "quint2x4"):
    if hasattr(_t, _name):
        _TOLERANCES[getattr(_t, _name)] = _TOLERANCES[_t.float32]

# The dtype a Python number stands for when choosing its default tolerances.
_NUMBER_DTYPES = {int: _t.int64, float: _t.float64, complex: _t.complex128}


class _Failure(Exception):
    """A user-facing failure found while pairing or comparing: the exception type to
    raise, its message and where in the nested inputs it happened."""

    def __init__(self, kind, text, where=()):
        super().__init__(text)
        self.kind, self.text, self.where = kind, text, where

    def build(self, msg=None):
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.text
        if self.where:
            text += "\n\nThe failure occurred for item " + "".join(str([k]) for k in self.where)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """A leaf kind that does not handle these inputs; the next kind is tried."""


def _default_tolerances(*dtypes):
    rtols, atols = zip(*(_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes))
    return max(rtols), max(atols)


def _tolerances(dtypes, rtol, atol, where):
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise _Failure(ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.",
                       where)
    if rtol is None:
        return _default_tolerances(*dtypes)
    return rtol, atol


def _diff_line(kind, diff, index, tol, exact):
    if index is None:
        line = f"{kind.title()} difference: {diff}"
    else:
        line = f"Greatest {kind} difference: {diff} at index {index}"
    return line if exact else f"{line} (up to {tol} allowed)"


def _mismatch_text(default_name, name, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    exact = rtol == 0 and atol == 0
    if name is None:
        name = default_name
    elif callable(name):
        name = name(default_name)
    lines = [f"{name} are not {'equal' if exact else 'close'}!", ""]
    if extra:
        lines.append(extra.strip())
    lines.append(_diff_line("absolute", abs_diff, abs_idx, atol, exact))
    lines.append(_diff_line("relative", rel_diff, rel_idx, rtol, exact))
    return "\n".join(lines)


def _scalar_mismatch_text(actual, expected, rtol, atol, name=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_text("Scalars", name, None, abs_diff, None, atol, rel_diff, None, rtol)


def _unflatten(flat, shape):
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return tuple(reversed(index))


def _tensor_mismatch_text(actual, expected, mismatches, rtol, atol, name=None):
    total = mismatches.numel()
    bad = int(mismatches.sum().item())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    a, b = actual.flatten(), expected.flatten()
    matches = ~mismatches.flatten()
    abs_diff = (a - b).abs()
    abs_diff[matches] = 0  # only the mismatched elements compete for the maximum
    max_abs, abs_at = _t.max(abs_diff, 0)
    rel_diff = abs_diff / b.abs()
    rel_diff[matches] = 0
    max_rel, rel_at = _t.max(rel_diff, 0)
    shape = tuple(mismatches.shape)
    return _mismatch_text("Tensor-likes", name, extra, max_abs.item(), _unflatten(int(abs_at), shape), atol,
                          max_rel.item(), _unflatten(int(rel_at), shape), rtol)


class _NoneLeaf:
    def __init__(self, actual, expected, where, **options):
        if actual is not None and expected is not None:
            raise _Unsupported
        self.actual, self.expected, self.where = actual, expected, where

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise _Failure(AssertionError, f"None mismatch: {self.actual} is not {self.expected}", self.where)


class _BoolLeaf:
    def __init__(self, actual, expected, where, **options):
        kinds = (bool,) if _np is None else (bool, _np.bool_)
        if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
            raise _Unsupported
        self.actual, self.expected, self.where = bool(actual), bool(expected), where

    def compare(self):
        if self.actual is not self.expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}", self.where)


class _NumberLeaf:
    def __init__(self, actual, expected, where, rtol=None, atol=None, equal_nan=False, check_dtype=False, **options):
        kinds = (int, float, complex) if _np is None else (int, float, complex, _np.number)
        if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
            raise _Unsupported
        if _np is not None:
            actual, expected = [x.item() if isinstance(x, _np.number) else x for x in (actual, expected)]
        self.actual, self.expected, self.where = actual, expected, where
        # A bool against an int has no entry here; torch fails the same way (KeyError,
        # reported as an unexpected error).
        dtypes = [_NUMBER_DTYPES[type(x)] for x in (actual, expected)]
        self.rtol, self.atol = _tolerances(dtypes, rtol, atol, where)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            raise _Failure(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", self.where)
        if a == e or (self.equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        raise _Failure(AssertionError, _scalar_mismatch_text(a, e, self.rtol, self.atol), self.where)


class _TensorLeaf:
    def __init__(self, actual, expected, where, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, **options):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = self._as_tensor(actual), self._as_tensor(expected)
        for x in (actual, expected):
            if x.layout not in _SUPPORTED_LAYOUTS:
                raise _Failure(ValueError, f"Unsupported tensor layout {x.layout}", where)
        self.actual, self.expected, self.where = actual, expected, where
        self.rtol, self.atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, where)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype = check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _as_tensor(x):
        if isinstance(x, _t.Tensor):
            return x
        try:
            return _t.as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def _differ(self, attribute, a, e):
        raise _Failure(AssertionError, f"The values for attribute '{attribute}' do not match: {a} != {e}.", self.where)

    def compare(self):
        a, e = self.actual, self.expected
        if a.shape != e.shape:
            self._differ("shape", a.shape, e.shape)
        if a.is_quantized != e.is_quantized:
            self._differ("is_quantized", a.is_quantized, e.is_quantized)
        if a.layout != e.layout:
            if self.check_layout:
                self._differ("layout", a.layout, e.layout)
        elif a.layout == _t.strided and self.check_stride and a.stride() != e.stride():
            self._differ("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            self._differ("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            self._differ("dtype", a.dtype, e.dtype)
        if a.device.type == "meta" or e.device.type == "meta":
            return

        # Bring both to one device, dtype and (strided) layout, then compare values in
        # the widest dtype of their kind.
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            common = _t.promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        a, e = [x if x.layout == _t.strided else x.to_dense() for x in (a, e)]
        if a.is_quantized:
            a, e = a.dequantize(), e.dequantize()
        wide = _t.complex128 if a.dtype.is_complex else _t.float64 if a.dtype.is_floating_point else _t.int64
        a, e = a.to(wide), e.to(wide)
        close = _t.isclose(a, e, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)
        if bool(close.all()):
            return
        if a.dim() == 0:
            text = _scalar_mismatch_text(a.item(), e.item(), self.rtol, self.atol)
        else:
            text = _tensor_mismatch_text(a, e, ~close, self.rtol, self.atol)
        raise _Failure(AssertionError, text, self.where)

    def __repr__(self):
        return f"_TensorLeaf(id={self.where}, actual={self.actual}, expected={self.expected})"


_SUPPORTED_LAYOUTS = {getattr(_t, n) for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                                               "sparse_bsc") if hasattr(_t, n)}
_LEAF_KINDS = (_NoneLeaf, _BoolLeaf, _NumberLeaf, _TensorLeaf)


def _where_text(where):
    return "".join(str([k]) for k in where)


def _leaves(actual, expected, where, options):
    """The leaf comparisons of two (possibly nested) inputs, or a _Failure for a
    structural mismatch or inputs no leaf kind handles."""
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(actual, str) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                           where)
        out = []
        for i in range(len(actual)):
            out += _leaves(actual[i], expected[i], (*where, i), options)
        return out
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise _Failure(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                           f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}", where)
        try:
            keys = sorted(a_keys)  # the first failure is reported: make it deterministic
        except Exception:
            keys = list(a_keys)
        out = []
        for k in keys:
            out += _leaves(actual[k], expected[k], (*where, k), options)
        return out
    for kind in _LEAF_KINDS:
        try:
            return [kind(actual, expected, where, **options)]
        except _Unsupported:
            continue
        except _Failure:
            raise
        except Exception as err:
            raise RuntimeError(
                f"Originating a {kind.__name__}() at item {_where_text(where)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n{type(expected).__name__}(): {expected}\n\n"
                "resulted in the unexpected exception above.") from err
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                   f"{type(expected)}.", where)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False, check_device=True,
                 check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Asserts that ``actual`` and ``expected`` are close, as torch.testing.assert_close.

    Tensors (and tensor-likes such as numpy arrays, converted with ``as_tensor``) must
    agree in shape and, unless the matching ``check_*`` flag is off, in device, dtype,
    layout and stride; their values must satisfy
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise (NaN equals NaN only
    with ``equal_nan``). Python and numpy numbers are compared the same way, booleans and
    None by identity; sequences and mappings are compared item by item.

    ``rtol`` and ``atol`` go together; when both are omitted they default per dtype
    (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 and complex64 1.3e-6/1e-5, float64
    and complex128 1e-7/1e-7, every other dtype 0/0). ``msg`` replaces the message of a
    value mismatch, or, if callable, receives it and returns the one to raise.

    Raises AssertionError for a mismatch, ValueError for a bad tolerance or unsupported
    layout and TypeError for inputs nothing can compare.
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    try:
        leaves = _leaves(actual, expected, (), options)
    except _Failure as failure:
        raise failure.build() from None
    for leaf in leaves:
        try:
            leaf.compare()
        except _Failure as failure:
            raise failure.build(msg) from None
        except Exception as err:
            raise RuntimeError(f"Comparing\n\n{leaf!r}\n\nresulted in the unexpected exception above.") from err
