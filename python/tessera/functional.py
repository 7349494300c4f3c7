"""Operators whose Python API torch writes in Python (torch/functional.py), over the
generated bindings: ``unique`` (onto ``_unique2``, or ``unique_dim`` with a dim) and
``unique_consecutive``, which return only the outputs asked for, ``nonzero``, whose
``as_tuple=True`` form returns one index tensor per dimension, ``tensordot`` (dims as a
count or as two lists), ``atleast_{1,2,3}d`` (one tensor or several) and ``meshgrid``,
``cartesian_prod`` and ``block_diag``, which take their tensors as separate arguments, and
``histogramdd`` (bins as a count, counts or edge tensors, onto ``_histogramdd_*``),
``gradient`` (numpy's finite differences, written with tensor ops so autograd follows) and
``norm`` (p as a number or 'fro' / 'nuc', dim as an int or a list, onto aten::norm), and
``stft`` / ``istft``, which take torch's Python signatures (stft's ``center`` and
``pad_mode``, onto aten::stft.center) and raise torch's warnings; ``align_tensors``
raises as torch 1.13's does (it is not implemented there).

Importing this module installs ``Tensor.unique``, ``Tensor.unique_consecutive``,
``Tensor.nonzero``, ``Tensor.norm``, ``Tensor.stft`` and ``Tensor.istft``.
"""
import warnings

from . import _C


def _requested(output, inverse, counts, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return output
    result = (output,)
    if return_inverse:
        result += (inverse,)
    if return_counts:
        result += (counts,)
    return result


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)

    The distinct elements of ``input`` (or slices along ``dim``), sorted, with the index of
    each input element's entry (``return_inverse``) and each entry's count
    (``return_counts``) on request."""
    if dim is None:
        output, inverse, counts = _C._unique2(input, sorted=sorted, return_inverse=return_inverse,
                                              return_counts=return_counts)
    else:
        output, inverse, counts = _C.unique_dim(input, dim, sorted=sorted, return_inverse=return_inverse,
                                                return_counts=return_counts)
    return _requested(output, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)

    Merges each run of equal consecutive elements (or slices along ``dim``) into one."""
    output, inverse, counts = _C.unique_consecutive(input, return_inverse=return_inverse,
                                                    return_counts=return_counts, dim=dim)
    return _requested(output, inverse, counts, return_inverse, return_counts)


def _tensor_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return unique(self, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


def _tensor_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return unique_consecutive(self, return_inverse=return_inverse, return_counts=return_counts, dim=dim)


def nonzero(input, *, out=None, as_tuple=False):
    """nonzero(input, *, out=None, as_tuple=False) -> Tensor or tuple of Tensors

    The indices of the nonzero elements of ``input``: one row per element (an ``(n, ndim)``
    int64 tensor), or with ``as_tuple=True`` one 1-D tensor per dimension."""
    if as_tuple:
        if out is not None:
            raise TypeError("nonzero(): out= is not supported with as_tuple=True")
        return tuple(_C._call_op("aten::nonzero_numpy", "", (input,), None))
    if out is not None:
        return _C._call_op("aten::nonzero", "out", (input,), {"out": out})
    return _C._call_op("aten::nonzero", "", (input,), None)


def _tensor_nonzero(self, *, as_tuple=False):
    return nonzero(self, as_tuple=as_tuple)


_C._add_tensor_methods({"unique": _tensor_unique, "unique_consecutive": _tensor_unique_consecutive,
                        "nonzero": _tensor_nonzero})


def align_tensors(*tensors):
    """align_tensors(*tensors): not implemented in torch 1.13 either; raises its error."""
    raise RuntimeError("`align_tensors` not yet implemented.")


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to (ints count as 1-D shapes)."""
    result = []
    for shape in shapes:
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        for d in dims:
            if d < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension ({d}): ({d})")
        if len(dims) > len(result):
            result = [1] * (len(dims) - len(result)) + result
        for k, d in enumerate(dims, len(result) - len(dims)):
            if d != result[k] and d != 1:
                if result[k] != 1:
                    raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape")
                result[k] = d
    return _C.Size(result)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between each row of x1 and each row of x2 (batched over leading dims);
    compute_mode picks whether p = 2 goes through a matrix product (torch's three modes)."""
    modes = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
             "donot_use_mm_for_euclid_dist": 2}
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _C.cdist(x1, x2, p, modes[compute_mode])


def broadcast_tensors(*tensors):
    """Views of the tensors expanded to their common broadcast shape."""
    return tuple(_C.broadcast_tensors(tensors))


def tensordot(a, b, dims=2, out=None):
    """Contracts a and b over dims: an int n pairs a's last n dimensions with b's first n;
    a pair of lists ([a dims], [b dims]) (or a 2 x k tensor) names them. The result has
    a's remaining dimensions, then b's."""
    if isinstance(dims, _C.Tensor):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, bool) or not isinstance(dims, (int, tuple, list)):
        raise RuntimeError("tensordot expects dims to be int or Tuple[List[int], List[int]] or List[List[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if out is None:
        return _C.tensordot(a, b, dims_a, dims_b)
    return _C.tensordot(a, b, dims_a, dims_b, out=out)


def _atleast(name):
    op = getattr(_C, name)

    def atleast(*tensors):
        if len(tensors) == 1:
            tensors = tensors[0]
        return op(tensors) if isinstance(tensors, _C.Tensor) else tuple(op(list(tensors)))
    atleast.__name__ = name
    atleast.__doc__ = (f"{name}(*tensors): each tensor viewed with at least {name[-2]} dimensions; one tensor "
                       "gives a tensor, several (or a list) give a tuple.")
    return atleast


atleast_1d, atleast_2d, atleast_3d = _atleast("atleast_1d"), _atleast("atleast_2d"), _atleast("atleast_3d")


def _tensor_list(tensors):
    # (tensors as separate arguments, or one list or tuple of them, as torch accepts)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output i holds input i's values along dim i, broadcast over the
    others ("ij"); "xy" swaps the first two dims, as NumPy's default."""
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")
        indexing = "ij"
    return tuple(_C._call_op("aten::meshgrid", "indexing", (_tensor_list(tensors),), {"indexing": indexing}))


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D input, one per row."""
    return _C._call_op("aten::cartesian_prod", "", (_tensor_list(tensors),), None)


def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-D as 1 x 1, 1-D as one row)."""
    return _C._call_op("aten::block_diag", "", (list(tensors),), None)


def deprecated_range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
                     requires_grad=False):
    """Deprecated: like arange but the end is included (and the default floating dtype)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).")
    if end is None:
        start, end = 0, start
    if device is None:
        device = _C._get_default_device()
    result = _C._call_op("aten::range", "step", (start, end, step),
                         {"dtype": dtype, "layout": layout, "device": device})
    if out is not None:
        return _copy_out(result, out)
    return result.requires_grad_() if requires_grad else result


def _copy_out(result, out):
    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(f"range: out= must have shape {tuple(result.shape)}, got {tuple(out.shape)}")
    return out.copy_(result)


def chain_matmul(*matrices, out=None):
    """Deprecated: the product of the matrices, left to right (linalg.multi_dot's job)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.")
    result = _C._call_op("aten::chain_matmul", "", (list(matrices),), None)
    if out is not None:
        out.copy_(result)
        return out
    return result


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002 (torch's names)
    """histogramdd(input, bins, *, range=None, weight=None, density=False) -> (hist, bin_edges)

    The D-dimensional histogram of the points in `input`'s innermost dimension (size D):
    `bins` is one bin count for every dimension, a count per dimension (equal-width bins
    over `range`, D pairs of floats, or the data's extent), or a sequence of D increasing
    1-D tensors of bin edges. `weight` weighs each point; `density` normalises the
    histogram to integrate to one. Returns the counts and the D edge tensors."""
    def result_type(hist, bin_edges):
        return _C._named_tuple("histogramdd", ["hist", "bin_edges"], (hist, bin_edges))

    if isinstance(bins, _C.Tensor):
        raise TypeError("histogramdd(): bins must be an int, a sequence of ints or a sequence of 1-D tensors, "
                        "not a single Tensor")
    if isinstance(bins, int):
        bins = [bins] * (input.shape[-1] if input.dim() else 1)
    bins = list(bins)
    if bins and all(isinstance(b, _C.Tensor) for b in bins):
        if range is not None:
            raise TypeError("histogramdd(): range cannot be given with bin edge tensors")
        hist = _C._histogramdd_from_bin_tensors(input, bins, weight=weight, density=density)
        return result_type(hist, tuple(bins))
    edges = _C._histogramdd_bin_edges(input, bins, range=range, weight=weight, density=density)
    hist = _C._histogramdd_from_bin_cts(input, bins, range=range, weight=weight, density=density)
    return result_type(hist, tuple(edges))


def gradient(input, *, spacing=1, dim=None, edge_order=1):  # noqa: A002 (torch's names)
    """gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple of Tensors

    Estimates the derivative of the function sampled by `input` along each dimension in
    `dim` (all by default) with second-order central differences inside and first- or
    second-order one-sided differences (`edge_order`) at the ends. `spacing` is the
    distance between samples (one number, or one per dimension) or, as tensors, the
    coordinates of the samples along each dimension (then unevenly spaced)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if input.dim() == 0:
        return ()
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [d + input.dim() if d < 0 else d for d in dims]
    for d in dims:
        if not 0 <= d < input.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                             f"{input.dim() - 1}], but got {d})")
    if len(set(dims)) != len(dims):
        repeated = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                               f"{len(dims)} but got a list of length {len(spacing)}")
        spacings = list(spacing)
    elif isinstance(spacing, _C.Tensor):
        raise TypeError("gradient(): spacing given as tensors must be a list or tuple of 1-D tensors, one per dim")
    else:
        spacings = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    values = input if input.is_floating_point() or input.is_complex() else input.to(_C._get_default_dtype())
    return tuple(_gradient_along(values, d, h, edge_order) for d, h in zip(dims, spacings))


def _refuse_names(p, dim, dims):
    """1.13's frobenius_norm / nuclear_norm take int dims only; torch's parser words the two apart."""
    if dims is None or not any(isinstance(d, str) for d in dims):
        return
    if p == "nuc":
        raise TypeError(f"nuclear_norm() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}, keepdim=bool), but expected one of:\n"
                        " * (Tensor input, bool keepdim, *, Tensor out)\n"
                        " * (Tensor input, tuple of ints dim, bool keepdim, *, Tensor out)")
    raise TypeError(f"frobenius_norm(): argument 'dim' (position 2) must be tuple of ints, not {type(dim).__name__}")


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002 (torch's names)
    """norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None)

    The p-norm of ``input`` over ``dim`` (every dim by default), as torch 1.13 computes it:
    a number p (None meaning 2) is aten::norm's vector norm of the flattened dims; 'fro' is
    the 2-norm over at most two dims; 'nuc' is the nuclear norm (sum of singular values) of
    a matrix or of the two dims given."""
    dims = [dim] if isinstance(dim, (int, str)) else dim
    if isinstance(p, str):
        if p == "fro":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in frobenius norm")
            _refuse_names(p, dim, dims)
            # (with neither dim nor out, 1.13 takes the whole tensor without the two-dim limit)
            if dims is None:
                dims = [] if out is None else list(range(input.dim()))
            dims = list(dims)
            if len(dims) > 2:
                raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
            p = 2
        elif p == "nuc":
            if dtype is not None:
                raise ValueError("dtype argument is not supported in nuclear norm")
            _refuse_names(p, dim, dims)
            if dims is None:
                if input.dim() != 2:
                    raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with {input.dim()} "
                                       "dimensions instead.")
                dims = [0, 1]
            if len(dims) != 2:
                raise RuntimeError("nuclear norm requires a 'dim' argument of size 2")
            result = _C._linalg.linalg_matrix_norm(input, "nuc", list(dims), keepdim)
            return result if out is None else out.resize_(result.shape).copy_(result)
        else:
            raise RuntimeError(f"only valid string values are 'fro' and 'nuc', found {p}")
    if dims is None:
        dims = list(range(input.dim()))
    extra = {} if dtype is None else {"dtype": dtype}
    if out is not None:
        extra["out"] = out
    return _C.norm(input, p, list(dims), keepdim, **extra)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """norm(p='fro', dim=None, keepdim=False, dtype=None) -> Tensor

    The p-norm of this tensor over ``dim``: see ``tessera.norm``."""
    return norm(self, p, dim, keepdim, dtype=dtype)


_C._add_tensor_methods({"norm": _tensor_norm})


def _gradient_along(f, d, spacing, edge_order):
    n = f.shape[d]

    def part(start, length):
        return f.narrow(d, start, length)

    if not isinstance(spacing, _C.Tensor):
        h = spacing
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (part(1, 1) - part(0, 1)) / h, (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (part(0, 1) * -1.5 + part(1, 1) * 2 - part(2, 1) * 0.5) / h
            last = (part(n - 3, 1) * 0.5 - part(n - 2, 1) * 2 + part(n - 1, 1) * 1.5) / h
        return _C.cat([first, inner, last], d)
    if spacing.dim() != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {spacing.dim()} dimensions!")
    if spacing.numel() != n:
        raise RuntimeError(f"torch.gradient expected the coordinates along dimension {d} to have {n} elements, "
                           f"one per sample, but got {spacing.numel()}")
    x = spacing if spacing.is_floating_point() else spacing.to(f.dtype)
    shape = [1] * f.dim()
    shape[d] = -1

    def along(t):  # coordinates broadcast against f along d
        return t.reshape(shape)

    steps = x[1:] - x[:-1]
    left, right = steps[:-1], steps[1:]
    a = along(-right / (left * (left + right)))
    b = along((right - left) / (left * right))
    c = along(left / (right * (left + right)))
    inner = a * part(0, n - 2) + b * part(1, n - 2) + c * part(2, n - 2)
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / along(steps[:1])
        last = (part(n - 1, 1) - part(n - 2, 1)) / along(steps[-1:])
    else:
        s1, s2 = steps[0:1], steps[1:2]
        first = (along(-(2 * s1 + s2) / (s1 * (s1 + s2))) * part(0, 1) + along((s1 + s2) / (s1 * s2)) * part(1, 1)
                 + along(-s1 / (s2 * (s1 + s2))) * part(2, 1))
        s1, s2 = steps[-2:-1], steps[-1:]
        last = (along(s2 / (s1 * (s1 + s2))) * part(n - 3, 1) + along(-(s2 + s1) / (s1 * s2)) * part(n - 2, 1)
                + along((2 * s2 + s1) / (s2 * (s1 + s2))) * part(n - 1, 1))
    return _C.cat([first, inner, last], d)


def lu(A, pivot=True, get_infos=False, out=None):
    """lu(A, pivot=True, get_infos=False, out=None) -> (LU, pivots) or (LU, pivots, infos)

    The compact LU factorization of each matrix of ``A`` (torch's deprecated torch.lu):
    ``linalg.lu_factor_ex``'s LU and int32 pivots, with the LAPACK infos if ``get_infos``;
    without it, a singular matrix raises."""
    LU, pivots, infos = _C._linalg.linalg_lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    result = (LU, pivots, infos) if get_infos else (LU, pivots)
    if out is None:
        return result
    for dst, src in zip(out, result):
        dst.resize_(src.shape).copy_(src)
    return out


def _tensor_lu(self, pivot=True, get_infos=False):
    """lu(pivot=True, get_infos=False) -> (LU, pivots) or (LU, pivots, infos)

    This tensor's compact LU factorization: see ``tessera.lu``."""
    return lu(self, pivot, get_infos)


_C._add_tensor_methods({"lu": _tensor_lu})


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",  # noqa: A002
         normalized=False, onesided=None, return_complex=None):
    """stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode='reflect',
         normalized=False, onesided=None, return_complex=None) -> Tensor

    The short-time Fourier transform of a 1-D signal or a 2-D batch of signals: frames of
    ``n_fft`` points every ``hop_length`` (default n_fft // 4), each multiplied by
    ``window`` (``win_length`` points, default n_fft, centred in n_fft; none: ones), then
    transformed. ``center`` first pads n_fft // 2 points on each side with ``pad_mode``
    ("reflect", "constant", "replicate" or "circular"); ``normalized`` scales by
    n_fft ** -0.5. The result is (batch?, freq, frames): n_fft // 2 + 1 frequencies for a
    real signal and window unless ``onesided=False``, n_fft for complex ones. A real signal
    and window need ``return_complex``, as in current PyTorch: True gives the complex
    spectrum, False (deprecated) its real and imaginary parts in a last dim of size 2."""
    if return_complex is False:  # (current PyTorch warns; 1.13 did not)
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.")
    return _C.stft(input, n_fft, hop_length=hop_length, win_length=win_length, window=window, center=center,
                   pad_mode=pad_mode, normalized=normalized, onesided=onesided, return_complex=return_complex)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,  # noqa: A002
          onesided=None, length=None, return_complex=False):
    """istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False) -> Tensor

    The inverse of ``stft`` with the same arguments: each frame of the complex spectrum
    ``input`` (batch?, freq, frames) is transformed back, multiplied by the window, and
    added in where it came from; the sum is divided by the overlap-add of the squared
    window, which must stay above 1e-11 everywhere (the NOLA condition). ``length`` trims
    or zero-pads the result to that many points. Returns a real signal, or a complex one
    with ``return_complex=True`` (from a two-sided spectrum). A real input whose last dim
    holds (real, imaginary) pairs is accepted, deprecated, as torch 1.13 does."""
    if not input.is_complex():
        warnings.warn("istft will require a complex-valued input tensor in a future PyTorch release. Matching the "
                      "output from stft with return_complex=True.")
    elif length is not None and input.dim() in (2, 3):
        hop = n_fft // 4 if hop_length is None else hop_length
        frames_end = n_fft + hop * (input.shape[-1] - 1)
        if (n_fft // 2 if center else 0) + length > frames_end:
            warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with "
                          "zeros in the tail. Please check your center and hop_length settings.")
    return _C.istft(input, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                    return_complex)


def _tensor_stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
                 normalized=False, onesided=None, return_complex=None):
    """stft(n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode='reflect', normalized=False,
         onesided=None, return_complex=None) -> Tensor

    This signal's short-time Fourier transform: see ``tessera.stft``."""
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex)


def _tensor_istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
                  onesided=None, length=None, return_complex=False):
    """istft(n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
          length=None, return_complex=False) -> Tensor

    The signal whose short-time Fourier transform this is: see ``tessera.istft``."""
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)


_C._add_tensor_methods({"stft": _tensor_stft, "istft": _tensor_istft})


def _assert(condition, message):
    """torch._assert: ``assert condition, message`` as a function, so model code can check
    shapes in a form tracers record (__torch_function__ types can take it over)."""
    if type(condition) is not _C.Tensor:
        from .overrides import handle_torch_function, has_torch_function
        if has_torch_function((condition,)):
            return handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message
