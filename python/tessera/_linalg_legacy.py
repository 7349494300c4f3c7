"""torch 1.13's legacy linear-algebra names around torch.linalg: torch.eig, lstsq, solve and
matrix_rank (and the Tensor methods eig, lstsq and solve) were removed in favour of
torch.linalg and raise with torch 1.13's words (lstsq and matrix_rank with its two-part
message). torch.symeig (and Tensor.symeig) raise too, with current PyTorch's message
(torch/_linalg_utils.py); torch 1.13 still computed it, with a deprecation warning.

Importing this module installs them on ``tessera`` and ``tessera.Tensor``.
"""
from . import _C

_REMOVED = "This function was deprecated since version 1.9 and is now removed."


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed: use tessera.linalg.eig."""
    raise RuntimeError(f"{_REMOVED} Please use the `torch.linalg.eig` function instead.")


def lstsq(input, A, *, out=None):
    """Removed: use tessera.linalg.lstsq."""
    raise RuntimeError(_REMOVED, "Please use the `torch.linalg.lstsq` function instead.")


def solve(input, A, *, out=None):
    """Removed: use tessera.linalg.solve."""
    raise RuntimeError(f"{_REMOVED} Please use the `torch.linalg.solve` function instead.")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed: use tessera.linalg.matrix_rank."""
    raise RuntimeError(_REMOVED, "Please use the `torch.linalg.matrix_rank` function instead.")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed: use tessera.linalg.eigh / eigvalsh (current PyTorch's error; torch 1.13 still
    computed it, with a deprecation warning)."""
    raise RuntimeError(
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the matrix by "
        "default to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
        "and\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def _symeig_method(self, eigenvectors=False, upper=True):
    return symeig(self, eigenvectors, upper)


def _eig_method(self, eigenvectors=False):
    return eig(self, eigenvectors)


def _lstsq_method(self, other):
    return lstsq(self, other)


def _solve_method(self, other):
    return solve(self, other)


for _method, _fn in ((_eig_method, eig), (_lstsq_method, lstsq), (_solve_method, solve),
                      (_symeig_method, symeig)):
    _method.__name__, _method.__doc__ = _fn.__name__, _fn.__doc__
del _method, _fn
_C._add_tensor_methods({"eig": _eig_method, "lstsq": _lstsq_method, "solve": _solve_method,
                        "symeig": _symeig_method})
