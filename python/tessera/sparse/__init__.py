"""tessera.sparse: the sparse layouts' functions (torch.sparse). The tensors themselves
(COO on SparseCPU; CSR, CSC, BSR, BSC on SparseCsrCPU) and their operators live in C++
(aten/native/sparse); these are the Python-level entry points torch keeps here."""
from .. import _C

__all__ = ["addmm", "check_sparse_tensor_invariants", "log_softmax", "mm", "softmax", "sum"]


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


def softmax(input, dim, *, dtype=None):
    """Softmax of a COO tensor along dim over its specified elements (unspecified ones
    count as -inf and stay unspecified)."""
    return _C._sparse_softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax of a COO tensor along dim over its specified elements."""
    return _C._sparse_log_softmax(input, dim, dtype=dtype)


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


def _is_size(arg):
    """A bare size (sparse_coo_tensor((2, 3))): a tuple or list of ints, or a Size."""
    return isinstance(arg, (tuple, list)) and all(isinstance(n, int) for n in arg)
