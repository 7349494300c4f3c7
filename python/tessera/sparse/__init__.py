"""tessera.sparse: the sparse layouts' functions (torch.sparse). The tensors themselves
(COO on SparseCPU; CSR, CSC, BSR, BSC on SparseCsrCPU) and their operators live in C++
(aten/native/sparse); these are the Python-level entry points torch keeps here."""
from .. import _C

__all__ = ["addmm", "check_sparse_tensor_invariants", "mm", "sum"]


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
    checked whatever it says)."""
    def construct(*args, check_invariants=None, **kwargs):
        return fn(*args, **kwargs)
    construct.__name__ = fn.__name__
    construct.__doc__ = fn.__doc__
    return construct
