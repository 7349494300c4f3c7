"""tessera.sparse: the sparse layouts' functions (torch.sparse). The tensors themselves
(COO on SparseCPU; CSR, CSC, BSR, BSC on SparseCsrCPU) and their operators live in C++
(aten/native/sparse); these are the Python-level entry points torch keeps here."""
from .. import _C

__all__ = ["addmm", "check_sparse_tensor_invariants", "log_softmax", "mm", "sampled_addmm", "softmax", "sum"]


def mm(mat1, mat2, reduce=None):
    """mat1 @ mat2 for a sparse mat1 (COO or CSR) and a dense or sparse mat2. With a dense
    mat2 the result is dense and mat1's gradient keeps its sparsity pattern."""
    if reduce is not None:
        raise NotImplementedError("tessera.sparse.mm: reduce= is not supported yet")
    if mat1.is_sparse and mat2.layout == _C.strided:
        return _C._sparse_mm(mat1, mat2)
    if mat1.is_sparse and mat2.is_sparse:
        return _C._sparse_sparse_matmul(mat1, mat2)
    return _C.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * mat + alpha * (mat1 @ mat2) for a sparse mat1; mat1's gradient keeps its
    sparsity pattern."""
    return _C._sparse_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    """The sum of a COO tensor over all dims (a dense scalar) or over `dim` (sparse while
    any sparse dim remains). The gradient keeps the input's sparsity pattern."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return _C._sparse_sum(input)
    return _C._sparse_sum(input, [dim] if isinstance(dim, int) else list(dim))


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at the specified entries of the CSR tensor
    input only; the result keeps input's pattern."""
    if out is not None:
        raise NotImplementedError("tessera.sparse.sampled_addmm: out= is not supported")
    return _C.sparse_sampled_addmm(input, mat1, mat2, beta=beta, alpha=alpha)


def softmax(input, dim, *, dtype=None):
    """Softmax of a COO tensor along dim over its specified elements (unspecified ones
    count as -inf and stay unspecified)."""
    return _C._sparse_softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax of a COO tensor along dim over its specified elements."""
    return _C._sparse_log_softmax(input, dim, dtype=dtype)


# ---- scipy.sparse interop (tessera's own: torch has none; its users pass the arrays to
# the constructors, which these do without copies)

_SCIPY_LAYOUTS = {"coo": "sparse_coo", "csr": "sparse_csr", "csc": "sparse_csc", "bsr": "sparse_bsr"}


def spdiags(diagonals, offsets, shape, layout=None):
    """spdiags(diagonals, offsets, shape, layout=None) -> Tensor

    A sparse 2-D tensor of ``shape`` with row ``k`` of ``diagonals`` placed along diagonal
    ``offsets[k]`` (0 the main one, above it positive, below negative): element
    ``diagonals[k, j]`` lands at ``(j - offsets[k], j)`` where that lies inside ``shape``.
    ``layout`` is ``tessera.sparse_coo`` (the default), ``sparse_csr`` or ``sparse_csc``.
    """
    return _C._spdiags(diagonals, offsets, shape, layout)


def from_scipy(matrix):
    """A sparse tensor over a scipy.sparse matrix or array in COO, CSR, CSC or BSR format,
    sharing its arrays: the compressed formats' indptr, indices and data become the
    tensor's members as they are (int32 or int64 indices), so writes through either side
    show in the other; COO's row and col arrays are stacked into the one int64 [2, nnz]
    array the layout keeps (a copy), its data is shared. The arrays are checked as the
    constructors check them: a CSR/CSC matrix needs sorted indices without duplicates
    (scipy's sort_indices() and sum_duplicates() make them so)."""
    import numpy as np
    fmt = getattr(matrix, "format", None)
    if fmt not in _SCIPY_LAYOUTS:
        raise TypeError(f"tessera.sparse.from_scipy expects a scipy.sparse matrix in coo, csr, csc or bsr format, "
                        f"got {type(matrix).__name__}" + (f" in {fmt} format" if fmt else ""))
    data = _C.from_numpy(np.ascontiguousarray(matrix.data))
    if fmt == "coo":
        indices = _C.from_numpy(np.stack([matrix.row, matrix.col]).astype(np.int64, copy=False))
        # (not marked coalesced: scipy's canonical COO order is column-major, tessera's row-major)
        return _C.sparse_coo_tensor(indices, data, matrix.shape)
    indptr, indices = _C.from_numpy(matrix.indptr), _C.from_numpy(matrix.indices)
    make = {"csr": _C.sparse_csr_tensor, "csc": _C.sparse_csc_tensor, "bsr": _C.sparse_bsr_tensor}[fmt]
    return make(indptr, indices, data, matrix.shape)


def to_scipy(tensor):
    """The scipy.sparse matrix of a 2-D sparse tensor (COO, CSR, CSC or BSR, no dense
    dims) over the tensor's own arrays: scipy's data, indices and indptr (row and col for
    COO) are numpy views of the members, not copies, whatever their integer width (scipy's
    constructors would narrow int64 indices to int32 by copying, so the arrays are
    attached directly)."""
    import scipy.sparse
    layout = tensor.layout
    names = {v: k for k, v in _SCIPY_LAYOUTS.items()}
    fmt = names.get(str(layout).split(".")[-1])
    if fmt is None or tensor.dim() != 2 or tensor.dense_dim() != 0:
        raise TypeError("tessera.sparse.to_scipy expects a 2-D sparse COO, CSR, CSC or BSR tensor without dense "
                        f"dims, got a {tensor.dim()}-D tensor with layout {layout}")
    tensor = tensor.detach()
    shape = tuple(tensor.shape)
    if fmt == "coo":
        indices = tensor._indices()
        matrix = scipy.sparse.coo_matrix(shape, dtype=tensor._values().numpy().dtype)
        matrix.data, matrix.row, matrix.col = tensor._values().numpy(), indices[0].numpy(), indices[1].numpy()
        matrix.has_canonical_format = False  # scipy's canonical order is column-major
    else:
        compressed = tensor.ccol_indices() if fmt == "csc" else tensor.crow_indices()
        plain = tensor.row_indices() if fmt == "csc" else tensor.col_indices()
        values = tensor.values().numpy()
        kind = {"csr": scipy.sparse.csr_matrix, "csc": scipy.sparse.csc_matrix, "bsr": scipy.sparse.bsr_matrix}[fmt]
        matrix = kind(shape, dtype=values.dtype, blocksize=values.shape[1:]) if fmt == "bsr" \
            else kind(shape, dtype=values.dtype)
        matrix.data, matrix.indices, matrix.indptr = values, plain.numpy(), compressed.numpy()
        matrix.check_format(full_check=False)
        matrix.has_sorted_indices = _sorted_within(matrix.indptr, matrix.indices)
    return matrix


class check_sparse_tensor_invariants:
    """Current torch's switch for checking the constructors' arguments. Tessera always
    checks them (torch 1.13's behaviour), since unchecked indices could address memory
    outside the tensor; the switch is kept so that code using it runs."""

    _enabled = True

    @staticmethod
    def is_enabled():
        return True

    @staticmethod
    def enable():
        pass

    @staticmethod
    def disable():
        pass

    def __init__(self, enable=True):
        self.state = enable

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        return fn


def _constructor(fn):
    """A sparse constructor taking current torch's check_invariants= (the arguments are
    checked whatever it says) and, as torch does, array-likes (lists, numpy arrays) for its
    member arguments: index members become tensors of their own dtype, values of `dtype`."""
    def construct(*args, check_invariants=None, **kwargs):
        if args and not isinstance(args[0], _C.Tensor) and not _is_size(args[0]):
            members = 2 if fn.__name__ == "sparse_coo_tensor" else 3
            args = list(args)
            for k in range(min(members, len(args))):
                if not isinstance(args[k], _C.Tensor):
                    is_values = k == members - 1
                    args[k] = _C.tensor(args[k], dtype=kwargs.get("dtype") if is_values else None)
        return fn(*args, **kwargs)
    construct.__name__ = fn.__name__
    construct.__doc__ = fn.__doc__
    return construct


def _sorted_within(indptr, indices):
    """Whether each row's (column's) indices are nondecreasing, as scipy's flag means."""
    import numpy as np
    if indices.size < 2:
        return True
    rises = np.diff(indices) >= 0
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.size)]
    rises[starts - 1] = True  # the first index of a row is not compared with the row before
    return bool(rises.all())


def _is_size(arg):
    """A bare size (sparse_coo_tensor((2, 3))): a tuple or list of ints, or a Size."""
    return isinstance(arg, (tuple, list)) and all(isinstance(n, int) for n in arg)
