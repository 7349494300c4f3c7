"""Tensor printing, following torch's formatting of tensor(...) reprs.

Values come from ``Tensor.tolist()`` and are formatted with torch's rules (fixed or
scientific notation chosen from the magnitudes, integral floats printed as ``1.``, common
width per tensor, wrapped lines, summarisation with ``...``), under the options that
``tessera.set_printoptions`` sets (torch's names and profiles).
"""
import builtins
import math

from . import _C


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None)

    How tensors print: digits after the point (precision), the element count above which
    they are summarised (threshold) keeping edgeitems at each end, the line width, and
    scientific notation forced on or off (sci_mode; None chooses from the values). A
    profile ("default", "short", "full") sets the first four at once."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}; expected one of {sorted(_PROFILES)}")
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict (torch.utils... _tensor_str.get_printoptions)."""
    return {name: getattr(PRINT_OPTS, name) for name in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}




def _is_floating(dtype):
    return dtype.is_floating_point


class _Formatter:
    """torch's _Formatter over a flat list of Python numbers (floats, ints or bools)."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values:
                self.max_width = builtins.max(self.max_width, len(str(v)))
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        abs_vals = [builtins.abs(v) for v in finite]
        lo, hi = builtins.min(abs_vals), builtins.max(abs_vals)
        for v in finite:
            if v != math.ceil(v):
                self.int_mode = False
                break
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                for v in finite:
                    self.max_width = builtins.max(self.max_width, len(f"{v:.{PRINT_OPTS.precision}e}"))
            else:
                for v in finite:
                    self.max_width = builtins.max(self.max_width, len(f"{v:.0f}") + 1)
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            for v in finite:
                self.max_width = builtins.max(self.max_width, len(f"{v:.{PRINT_OPTS.precision}e}"))
        else:
            for v in finite:
                self.max_width = builtins.max(self.max_width, len(f"{v:.{PRINT_OPTS.precision}f}"))

        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = str(value)
        return (self.max_width - len(ret)) * " " + ret


# Stands for the rows a summary leaves out (never printed: only the edge rows are).
_MIDDLE = object()


def _flatten(data, ndim):
    if ndim == 0:
        return [data]
    if ndim == 1:
        return [v for v in data if v is not _MIDDLE]
    out = []
    for row in data:
        if row is not _MIDDLE:
            out.extend(_flatten(row, ndim - 1))
    return out


def _edge_data(t):
    """t.tolist() with each dimension longer than 2 * edgeitems cut to its first and last
    edgeitems entries around a _MIDDLE marker (torch's get_summarized_data), read from the
    tensor so that a huge tensor is never converted whole."""
    e, n = PRINT_OPTS.edgeitems, t.size(0)
    if t.dim() == 1:
        return t[:e].tolist() + [_MIDDLE] + t[n - e:].tolist() if n > 2 * e else t.tolist()
    rows = list(range(e)) + [None] + list(range(n - e, n)) if n > 2 * e else range(n)
    return [_MIDDLE if r is None else _edge_data(t[r]) for r in rows]


def _join_complex(real_str, imag_str):
    imag_str = (imag_str + "j").lstrip()
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _val_str(v, fmt1, fmt2):
    if fmt2 is None:
        return fmt1.format(v)
    return _join_complex(fmt1.format(v.real), fmt2.format(v.imag))


def _vector_str(data, indent, summarize, fmt1, fmt2):
    element_length = fmt1.width() + 2
    if fmt2 is not None:
        element_length += fmt2.width() + 1
    elements_per_line = builtins.max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    if summarize and len(data) > 2 * PRINT_OPTS.edgeitems:
        items = ([_val_str(v, fmt1, fmt2) for v in data[:PRINT_OPTS.edgeitems]] + [" ..."] +
                 [_val_str(v, fmt1, fmt2) for v in data[-PRINT_OPTS.edgeitems:]])
    else:
        items = [_val_str(v, fmt1, fmt2) for v in data]
    lines = [", ".join(items[i:i + elements_per_line]) for i in range(0, len(items), elements_per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(data, ndim, indent, summarize, fmt1, fmt2):
    if ndim == 0:
        return _val_str(data, fmt1, fmt2)
    if ndim == 1:
        return _vector_str(data, indent, summarize, fmt1, fmt2)
    if summarize and len(data) > 2 * PRINT_OPTS.edgeitems:
        slices = ([_nested_str(r, ndim - 1, indent + 1, summarize, fmt1, fmt2) for r in data[:PRINT_OPTS.edgeitems]] +
                  ["..."] +
                  [_nested_str(r, ndim - 1, indent + 1, summarize, fmt1, fmt2) for r in data[-PRINT_OPTS.edgeitems:]])
    else:
        slices = [_nested_str(r, ndim - 1, indent + 1, summarize, fmt1, fmt2) for r in data]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(t, indent):
    if t.numel() == 0:
        return "[]"
    ndim = t.dim()
    summarize = t.numel() > PRINT_OPTS.threshold
    if summarize and not PRINT_OPTS.edgeitems:
        return "[...]"
    data = _edge_data(t) if summarize and ndim > 0 else t.tolist()
    sample = _flatten(data, ndim)
    if t.dtype.is_complex:
        fmt1 = _Formatter([v.real for v in sample], True)
        fmt2 = _Formatter([v.imag for v in sample], True)
    else:
        fmt1, fmt2 = _Formatter(sample, _is_floating(t.dtype)), None
    return _nested_str(data, ndim, indent, summarize, fmt1, fmt2)


def _add_suffixes(tensor_str, suffixes, indent, force_newline=False):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _default_dtype_names():
    default = repr(_C._get_default_dtype()).split(".", 1)[1]
    complex_default = "complex128" if default == "float64" else "complex64"
    return default, (default, complex_default, "int64", "bool")


def _nested_tensor_str(t):
    """repr of a nested tensor: its components, one per line, as torch prints them."""
    with _no_grad():
        parts = [c.detach() for c in t.unbind()]
    lines = []
    for c in parts:
        if t.requires_grad and c.is_floating_point():
            c.requires_grad_(True)
        lines.append("  " + _str(c).replace("\n", "\n  "))
    suffixes = []
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "nested_tensor([\n" + ",\n".join(lines) + "\n]" + "".join(", " + s for s in suffixes) + ")"


def _sparse_members_str(t, indent):
    """The member tensors of a sparse tensor, one `name=tensor(...)` per line, as torch
    prints them: COO's indices and values, a compressed layout's compressed indices,
    plain indices and values."""
    if t.layout == _C.sparse_coo:
        members = (("indices", t._indices()), ("values", t._values()))
    elif t.layout in (_C.sparse_csr, _C.sparse_bsr):
        members = (("crow_indices", t.crow_indices()), ("col_indices", t.col_indices()), ("values", t.values()))
    else:
        members = (("ccol_indices", t.ccol_indices()), ("row_indices", t.row_indices()), ("values", t.values()))
    lines = []
    for name, member in members:
        head = name + "=tensor("
        member = member.detach()
        if member.is_meta:  # a meta tensor's members have shapes, not values
            lines.append(head + "..., size=" + str(tuple(member.shape)) + ")")
            continue
        body = _tensor_str(member, indent + len(head))
        if member.numel() == 0:
            body += ", size=" + str(tuple(member.shape))
        lines.append(head + body + ")")
    return (",\n" + " " * indent).join(lines)


def _no_grad():
    from .autograd import no_grad
    return no_grad()


def _quantizer_suffixes(t):
    """The quantization suffixes torch prints after a quantized tensor's size and dtype: its
    scheme, then scale= and zero_point= (numbers for a per-tensor scheme; the per-channel
    tensors, printed as tensors, and axis= for a per-channel one)."""
    qscheme = t.qscheme()
    scheme = str(qscheme).rsplit(".", 1)[-1]
    suffixes = ["quantization_scheme=" + str(qscheme)]
    if scheme in ("per_tensor_affine", "per_tensor_symmetric"):
        suffixes.append("scale=" + str(t.q_scale()))
        suffixes.append("zero_point=" + str(t.q_zero_point()))
    elif scheme in ("per_channel_affine", "per_channel_symmetric", "per_channel_affine_float_qparams"):
        suffixes.append("scale=" + _str(t.q_per_channel_scales()))
        suffixes.append("zero_point=" + _str(t.q_per_channel_zero_points()))
        suffixes.append("axis=" + str(t.q_per_channel_axis()))
    return suffixes


def _str(t):
    """repr(t) / str(t) of a tessera.Tensor, as torch prints the same tensor."""
    if t.is_nested:
        return _nested_tensor_str(t)
    layout_suffix = []
    values = t
    if t.has_names():
        # Operators refuse most named tensors: format an unnamed view, name the dims after.
        with _no_grad():
            values = t.rename(None)
    sparse = t.layout in (_C.sparse_coo, _C.sparse_csr, _C.sparse_csc, _C.sparse_bsr, _C.sparse_bsc)
    if t.layout != _C.strided and not sparse:
        # An mkldnn tensor prints its values (from a dense copy) and its layout.
        layout_suffix.append("layout=" + repr(t.layout))
        with _no_grad():
            values = t.to_dense()
    # a subclass prints its own name, as torch (Parameter prints its contents as a tensor)
    from .nn.parameter import Parameter
    prefix = "tensor(" if type(t) in (_C.Tensor, Parameter) else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes = []
    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    dtype_name = repr(t.dtype)
    default_float, default_names = _default_dtype_names()
    is_default_float = dtype_name.split(".", 1)[1] == default_float
    has_default_dtype = dtype_name.split(".", 1)[1] in default_names
    if t.is_quantized:
        # The dequantized values, always with the size (even when it has values) and dtype.
        suffixes.append("size=" + str(tuple(t.shape)))
        suffixes.append("dtype=" + dtype_name)
        suffixes += _quantizer_suffixes(t)
        tensor_str = "..." if t.is_meta else _tensor_str(t.dequantize(), indent)
    elif sparse:
        suffixes.append("size=" + str(tuple(t.shape)))
        suffixes.append("nnz=" + str(t._nnz()))
        if not has_default_dtype:
            suffixes.append("dtype=" + dtype_name)
        with _no_grad():
            tensor_str = _sparse_members_str(t, indent)
        layout_suffix.append("layout=" + repr(t.layout))
    elif t.is_meta:
        suffixes.append("size=" + str(tuple(t.shape)))
        if not is_default_float:
            suffixes.append("dtype=" + dtype_name)
        tensor_str = "..."
    elif t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if not is_default_float:
            suffixes.append("dtype=" + dtype_name)
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(t.shape)))
        if not has_default_dtype:
            suffixes.append("dtype=" + dtype_name)
        tensor_str = _tensor_str(values, indent)
    suffixes += layout_suffix
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if t.has_names():
        suffixes.append(f"names={t.names}")
    return _add_suffixes(prefix + tensor_str, suffixes, indent, force_newline=t.layout == _C.sparse_coo)
