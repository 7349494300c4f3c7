"""Masked reductions and normalizations, as torch.masked's: over strided tensors, and for
sum, prod, amax, amin (and mean of CSR) over sparse COO and CSR ones too (_sparse.py).

Each function takes a tensor and an optional boolean ``mask`` that broadcasts to it (its
dimensionality no greater than the input's; a non-bool mask is read as bool). Elements
where the mask is False take no part: the function first replaces them with the
identity of its operation (0 for sums, 1 for products, -inf for maxima, +inf for minima,
NaN for the median) and then runs the ordinary tessera operator, so autograd flows
through tessera's own where/sum/amax/... and masked-out elements get zero gradient.

Output masks follow torch: a reduction's result is valid where any element it reduced was
(``_output_mask``), a normalization's result where its input was. Values at invalid
positions are whatever the identity yields (0, -inf, NaN, ...), as torch leaves them.
"""
import tessera as _T
from tessera.masked import _sparse

__all__ = []

_REDUCTIONS = frozenset({"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var", "std",
                         "logsumexp"})
_NORMALIZATIONS = frozenset({"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"})
# dtypes sum and prod widen to int64 when no dtype is given
_WIDENED_TO_INT64 = ("uint8", "bool", "int8", "int16", "int32")


def _public(fn):
    __all__.append(fn.__name__)
    return fn


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def _scalar(value, like):
    return _T.tensor(value, dtype=like.dtype, device=like.device)


def _reduction_identity(op_name, input, *args):
    """The value that leaves op_name's reduction unchanged when added to its operands, as
    a 0-dim tensor of input's dtype (the median's is NaN, of a floating dtype); None where
    no such value is defined (mean, var, std)."""
    name = op_name.rsplit(".", 1)[-1]
    dtype = input.dtype
    is_float = _T.is_floating_point(input)
    integral_bounds = not is_float and (_T.is_signed(input) or dtype == _T.uint8)
    if name in ("sum", "cumsum"):
        return _scalar(0, input)
    if name in ("prod", "cumprod"):
        return _scalar(1, input)
    if name in ("amax", "argmax", "logsumexp"):
        if is_float:
            return _scalar(float("-inf"), input)
        if integral_bounds:
            return _scalar(_T.iinfo(dtype).min, input)
    elif name in ("amin", "argmin"):
        if is_float:
            return _scalar(float("inf"), input)
        if integral_bounds:
            return _scalar(_T.iinfo(dtype).max, input)
    elif name in ("mean", "var", "std"):
        return None
    elif name == "norm":
        order = args[0] if args else 2
        if order == float("-inf"):
            assert is_float, dtype
            return _scalar(float("inf"), input)
        return _scalar(0, input)
    elif name == "median":
        return _T.tensor(float("nan"), dtype=dtype if is_float else _T.float32, device=input.device)
    raise NotImplementedError(f"identity of {name} on {dtype} input")


def _canonical_dim(dim, ndim):
    """dim (None, an int, or a sequence of ints) as a sorted tuple of non-negative dims;
    None and () both mean every dimension."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    bound = ndim if ndim > 0 else 1
    seen = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in seen:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if not -bound <= d < bound:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], "
                             f"but got {d})")
        seen.append(d % bound)
    return tuple(sorted(seen))


def _any(input, dims, keepdim):
    """input.any over every dim in dims (highest first, so the others keep their index)."""
    out = input
    for d in sorted(dims, reverse=True):
        out = out.any(dim=d, keepdim=keepdim)
    return out


_LAYOUTS = (_T.strided, _T.sparse_coo, _T.sparse_csr)


def _check_layout(input, what):
    if input.layout not in _LAYOUTS:
        raise ValueError(f"{what} expects strided or sparse COO or sparse CSR tensor but got {input.layout}")


def _where(mask, input, fill_value):
    """where(mask, input, fill_value) in the mask's layout (the input's, once canonical): a
    sparse result keeps the masked-in positions only (masked/_sparse.py)."""
    _check_layout(mask, "_where")
    if mask.layout == _T.sparse_coo:
        return _sparse.coo_where(mask, input, fill_value)
    if mask.layout == _T.sparse_csr:
        return _sparse.csr_where(mask, input, fill_value)
    return _T.where(mask, input, fill_value)


def _input_mask(input, *args, **kwargs):
    """The mask kwarg as a bool tensor of input's shape (broadcast; a mask with more
    dimensions than input is an IndexError)."""
    _check_layout(input, "_input_mask")
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if input.layout != _T.strided:  # (a strided input takes a mask of any layout, densified)
        _check_layout(mask, "_input_mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = _T.broadcast_to(mask.to_dense() if mask.layout != _T.strided else mask.clone(), input.shape)
    # the mask in the input's layout: a COO one over the input's sparse dims, coalesced
    if mask.layout != input.layout:
        if input.layout == _T.strided:
            mask = mask.to_dense()
        elif input.layout == _T.sparse_coo:
            mask = mask.to_sparse(input.sparse_dim()) if mask.layout == _T.strided else mask.to_sparse()
        else:
            mask = mask.to_sparse_csr()
    if mask.layout == _T.sparse_coo:
        mask = mask.coalesce()
    return mask.to(dtype=_T.bool)


def _output_mask(op, input, *args, **kwargs):
    """Where op's result is valid: for a reduction, where any reduced element was unmasked;
    for a normalization, the input mask itself."""
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} object)")
    name = op.__name__
    if name in _REDUCTIONS:
        if name == "norm" and args:
            args = args[1:]  # the order comes before dim
        dim = args[0] if args else kwargs.get("dim")
        inmask = _input_mask(input, *args, **kwargs)
        return _any(inmask, _canonical_dim(dim, input.ndim), bool(kwargs.get("keepdim", False)))
    if name in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError(f"_output_mask expected masked operation (got callable {op.__module__}.{name})")


def _combine_input_and_mask(op, input, mask, *args):
    """input with its masked-out elements replaced by op's reduction identity."""
    if mask is None:
        return input
    if not callable(op):
        raise ValueError(f"_combine_input_and_mask expected masked operation (got {type(op).__name__} object)")
    inmask = _input_mask(input, mask=mask)
    return _where(inmask, input, _reduction_identity(op.__name__, input, *args))


def _require_strided(input, what):
    if input.layout != _T.strided:
        raise ValueError(f"{what} (got {input.layout} tensor)")


def _sparse_reduction(name, masked_input, mask, dims, keepdim, dtype):
    """prod, amax, amin (and mean on CSR) of a sparse input: torch asks for an explicit mask,
    since the unspecified elements (zeros) would take part in the reduction."""
    _check_layout(masked_input, f"masked {name}")
    layout = "sparse_coo" if masked_input.layout == _T.sparse_coo else "sparse_csr"
    if mask is None:
        raise ValueError(f"masked {name} expects explicit mask for {layout} tensor input")
    reduce = _sparse.coo_reduce if layout == "sparse_coo" else _sparse.csr_reduce
    return reduce(name, masked_input, dims, bool(keepdim), dtype)


def _widened(dtype, input):
    if dtype is not None:
        return dtype
    return _T.int64 if _dtype_name(input.dtype) in _WIDENED_TO_INT64 else input.dtype


@_public
def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """sum(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The sum of the unmasked elements of ``input`` over ``dim`` (an int, a tuple of ints,
    or None for all dimensions). Integral and bool inputs sum in int64 unless ``dtype``
    says otherwise. Masked-out elements count as 0, so a fully masked-out slice sums to 0.
    ``mask`` broadcasts to ``input``; the result's mask is ``mask`` broadcast and any()-ed
    over ``dim``."""
    dtype = _widened(dtype, input)
    dims = _canonical_dim(dim, input.ndim)
    masked_input = _combine_input_and_mask(sum, input, mask)
    if masked_input.layout == _T.sparse_coo:
        return _sparse.coo_reduce("sum", masked_input, dims, bool(keepdim), dtype)
    if masked_input.layout == _T.sparse_csr:
        return _sparse.csr_reduce("sum", masked_input, dims, bool(keepdim), dtype)
    _require_strided(masked_input, "masked sum expects strided, sparse_coo or sparse_csr tensor")
    return _T.sum(masked_input, dims, bool(keepdim), dtype=dtype)


@_public
def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """prod(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The product of the unmasked elements of ``input`` over ``dim`` (an int, a tuple of
    ints, or None for all). Integral and bool inputs multiply in int64 unless ``dtype``
    is given. Masked-out elements count as 1."""
    dtype = _widened(dtype, input)
    dims = _canonical_dim(dim, input.ndim)
    masked_input = _combine_input_and_mask(prod, input, mask)
    if masked_input.layout != _T.strided:
        return _sparse_reduction("prod", masked_input, mask, dims, keepdim, dtype)
    _require_strided(masked_input, "masked prod expects strided, sparse_coo or sparse_csr tensor")
    out = masked_input.to(dtype=dtype)
    for d in sorted(dims, reverse=True):
        out = out.prod(dim=d, keepdim=bool(keepdim))
    return out


@_public
def cumsum(input, dim, *, dtype=None, mask=None):
    """cumsum(input, dim, *, dtype=None, mask=None) -> Tensor

    Running sums of ``input`` along ``dim`` where masked-out elements count as 0. The
    result has ``dtype`` (default: input's dtype, with no widening)."""
    if dtype is None:
        dtype = input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked_input = _combine_input_and_mask(sum, input, mask)
    _require_strided(masked_input, "masked cumsum expects strided tensor")
    return _T.cumsum(masked_input, d, dtype=dtype).to(dtype=dtype)


@_public
def cumprod(input, dim, *, dtype=None, mask=None):
    """cumprod(input, dim, *, dtype=None, mask=None) -> Tensor

    Running products of ``input`` along ``dim`` where masked-out elements count as 1. The
    result has ``dtype`` (default: input's dtype)."""
    if dtype is None:
        dtype = input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked_input = _combine_input_and_mask(prod, input, mask)
    _require_strided(masked_input, "masked cumprod expects strided tensor")
    return _T.cumprod(masked_input, d, dtype=dtype).to(dtype=dtype)


@_public
def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """amax(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The maximum of the unmasked elements over ``dim``. Masked-out elements count as the
    lowest value of input's dtype (-inf for floating dtypes), which is what a fully
    masked-out slice yields. The result is cast to ``dtype`` (default: input's)."""
    if dtype is None:
        dtype = input.dtype
    masked_input = _combine_input_and_mask(amax, input, mask)
    dims = _canonical_dim(dim, masked_input.ndim)
    if masked_input.layout != _T.strided:
        return _sparse_reduction("amax", masked_input, mask, dims, keepdim, dtype)
    _require_strided(masked_input, "masked amax expects strided, sparse_coo or sparse_csr tensor")
    return _T.amax(masked_input, dims, bool(keepdim)).to(dtype=dtype)


@_public
def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """amin(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The minimum of the unmasked elements over ``dim``. Masked-out elements count as the
    highest value of input's dtype (+inf for floating dtypes). The result is cast to
    ``dtype`` (default: input's)."""
    if dtype is None:
        dtype = input.dtype
    masked_input = _combine_input_and_mask(amin, input, mask)
    dims = _canonical_dim(dim, masked_input.ndim)
    if masked_input.layout != _T.strided:
        return _sparse_reduction("amin", masked_input, mask, dims, keepdim, dtype)
    _require_strided(masked_input, "masked amin expects strided, sparse_coo or sparse_csr tensor")
    return _T.amin(masked_input, dims, bool(keepdim)).to(dtype=dtype)


@_public
def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """argmax(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The index of the largest unmasked element along ``dim`` (an int; None: of the
    flattened input). As torch's, the indices are cast to ``dtype``, which defaults to
    input's dtype (so a float input gives float indices). A fully masked-out slice gives 0."""
    if dtype is None:
        dtype = input.dtype
    masked_input = _combine_input_and_mask(argmax, input, mask)
    _require_strided(masked_input, "masked argmax expects strided tensor")
    return _T.argmax(masked_input, dim, bool(keepdim)).to(dtype=dtype)


@_public
def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """argmin(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The index of the smallest unmasked element along ``dim`` (an int; None: of the
    flattened input), cast to ``dtype`` (default: input's dtype)."""
    if dtype is None:
        dtype = input.dtype
    masked_input = _combine_input_and_mask(argmin, input, mask)
    _require_strided(masked_input, "masked argmin expects strided tensor")
    return _T.argmin(masked_input, dim, bool(keepdim)).to(dtype=dtype)


@_public
def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """mean(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The masked sum over ``dim`` (in ``dtype``, default input's dtype) divided by the number
    of unmasked elements; a fully masked-out slice gives NaN (0 / 0)."""
    if dtype is None:
        dtype = input.dtype
    if input.layout == _T.sparse_csr:
        masked_input = _combine_input_and_mask(sum, input, mask)
        return _sparse_reduction("mean", masked_input, mask, _canonical_dim(dim, input.ndim), keepdim, dtype)
    if input.layout != _T.strided:
        raise ValueError(f"masked mean expects strided or sparse_csr tensor (got {input.layout} tensor)")
    ones = _T.ones(input.shape, dtype=_T.int64, device=input.device)
    inmask = None if mask is None else _input_mask(input, mask=mask)
    count = sum(ones, dim, keepdim=keepdim, mask=inmask)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


@_public
def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """median(input, dim=-1, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The lower median of the unmasked elements along ``dim`` (an int). A fully masked-out
    slice gives NaN for a floating input; for an integral input (computed in float32 and
    cast back to ``dtype``) it is a ValueError. A floating result keeps input's dtype."""
    if dtype is None:
        dtype = input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = _T.is_floating_point(input)
    if not is_float:
        input = input.to(dtype=_T.float32)
    masked_input = _combine_input_and_mask(median, input, mask)
    _require_strided(masked_input, "masked median expects strided tensor")
    out = _T.nanmedian(masked_input, d, keepdim).values
    if is_float:
        return out
    if not bool(_T.isnan(out).any()):
        return out.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


@_public
def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """logsumexp(input, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    log(sum(exp(x))) over the unmasked elements along ``dim``; masked-out elements count
    as -inf, so a fully masked-out slice gives -inf. Cast to ``dtype`` (default: input's)."""
    if dtype is None:
        dtype = input.dtype
    dims = _canonical_dim(dim, input.ndim)
    masked_input = _combine_input_and_mask(logsumexp, input, mask)
    _require_strided(masked_input, "masked logsumexp expects strided tensor")
    return _T.logsumexp(masked_input, dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None) -> Tensor

    log(exp(input) + exp(other)) elementwise, where masked-out elements of either operand
    (per its own mask) count as -inf. Cast to ``dtype`` (default: input's)."""
    if dtype is None:
        dtype = input.dtype
    if input.layout != _T.strided or other.layout != _T.strided:
        raise ValueError(f"masked logaddexp expects strided tensors (got {input.layout} tensor for input, "
                         f"{other.layout} for other)")
    a = _combine_input_and_mask(logsumexp, input, input_mask)
    b = _combine_input_and_mask(logsumexp, other, other_mask)
    return _T.logaddexp(a, b).to(dtype=dtype)


@_public
def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """norm(input, ord=2.0, dim, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The vector norm of order ``ord`` (see tessera.linalg.vector_norm) of the unmasked
    elements over ``dim``. Masked-out elements count as 0 (as +inf for ``ord=-inf``)."""
    if dtype is None:
        dtype = input.dtype
    masked_input = _combine_input_and_mask(norm, input, mask, ord)
    _require_strided(masked_input, "masked norm expects strided tensor")
    dims = _canonical_dim(dim, input.ndim)
    return _T.linalg.vector_norm(masked_input, ord, dims, bool(keepdim), dtype=dtype)


def _moment(input, dim, unbiased, keepdim, dtype, mask, root):
    """var (root=False) or std (root=True) of the unmasked elements."""
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _T.float32
    accumulate = dtype if (dtype.is_floating_point or dtype.is_complex) else _T.float32
    if input.layout != _T.strided:
        raise ValueError(f"masked std/var expects strided tensor (got {input.layout} tensor)")
    inmask = None if mask is None else _input_mask(input, mask=mask)
    ones = _T.ones(input.shape, dtype=_T.int64, device=input.device)
    count = sum(ones, dim, keepdim=True, mask=inmask)
    centred = _T.subtract(input, _T.divide(sum(input, dim, keepdim=True, dtype=dtype, mask=inmask), count))
    if centred.is_complex():
        # |x|^2 as x * conj(x) gives it: re*re + im*im, as a complex number
        parts = _T.view_as_real(centred)
        squares = (parts * parts).sum(-1).to(dtype=centred.dtype)
    else:
        squares = centred * centred
    total = sum(squares, dim, keepdim=keepdim, dtype=accumulate, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if unbiased:
        count = _T.maximum(_T.subtract(count, 1), count.new_zeros([]))
    out = _T.divide(total, count).to(dtype=dtype)
    return _T.sqrt(out) if root else out


@_public
def var(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    """var(input, dim, unbiased=False, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The variance of the unmasked elements over ``dim``, with Bessel's correction when
    ``unbiased``. Integral inputs give float32 unless ``dtype`` is given. A fully
    masked-out slice (or one element with ``unbiased``) gives NaN or inf."""
    return _moment(input, dim, unbiased, keepdim, dtype, mask, root=False)


@_public
def std(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    """std(input, dim, unbiased=False, *, keepdim=False, dtype=None, mask=None) -> Tensor

    The standard deviation (square root of the masked var) of the unmasked elements over
    ``dim``."""
    return _moment(input, dim, unbiased, keepdim, dtype, mask, root=True)


@_public
def softmax(input, dim, *, dtype=None, mask=None):
    """softmax(input, dim, *, dtype=None, mask=None) -> Tensor

    Softmax along ``dim`` over the unmasked elements: masked-out elements count as -inf,
    so they get probability 0, and a fully masked-out slice gives NaN."""
    if dtype is None:
        dtype = input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked_input = _combine_input_and_mask(amax, input, mask)
    _require_strided(masked_input, "masked softmax expects strided tensor")
    return _T.nn.functional.softmax(masked_input, d, dtype=dtype)


@_public
def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax(input, dim, *, dtype=None, mask=None) -> Tensor

    Log-softmax along ``dim`` over the unmasked elements (masked-out elements give -inf,
    a fully masked-out slice NaN)."""
    if dtype is None:
        dtype = input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked_input = _combine_input_and_mask(amax, input, mask)
    _require_strided(masked_input, "masked log_softmax expects strided tensor")
    return _T.nn.functional.log_softmax(masked_input, d, dtype=dtype)


@_public
def softmin(input, dim, *, dtype=None, mask=None):
    """softmin(input, dim, *, dtype=None, mask=None) -> Tensor

    Softmin (softmax of -input) along ``dim`` over the unmasked elements, which count as
    +inf when masked out."""
    if dtype is None:
        dtype = input.dtype
    d = _canonical_dim(dim, input.ndim)[0]
    masked_input = _combine_input_and_mask(amin, input, mask)
    _require_strided(masked_input, "masked softmin expects strided tensor")
    return _T.nn.functional.softmin(masked_input, d, dtype=dtype)


@_public
def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None) -> Tensor

    ``input`` divided along ``dim`` by max(masked norm of order ``ord``, ``eps``);
    masked-out elements become 0. ``dtype`` is the dtype the norm is computed in."""
    if dtype is None:
        dtype = input.dtype
    _canonical_dim(dim, input.ndim)
    masked_input = _combine_input_and_mask(sum, input, mask)
    _require_strided(masked_input, "masked normalize expects strided tensor")
    length = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _T.divide(masked_input, _T.maximum(length, length.new_full([], eps)))
