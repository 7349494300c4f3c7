"""tessera.linalg: torch.linalg's functions. Each is the generated binding of an aten
linalg_* operator (ops.yaml entries with ``python_module: linalg``), named as torch names it:
``tessera.linalg.solve`` is ``aten::linalg_solve``. The factorizations run on the LAPACK
that OpenBLAS ships, for float32, float64, complex64 and complex128 inputs.
"""
from ._C import _linalg, _LinAlgError

LinAlgError = _LinAlgError
LinAlgError.__module__ = "tessera.linalg"

_NAMES = [
    "vector_norm", "matrix_norm", "norm", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve", "solve_ex",
    "inv", "inv_ex", "det", "slogdet", "cholesky", "cholesky_ex", "solve_triangular", "eigh", "eigvalsh", "eig",
    "eigvals", "svd", "svdvals", "qr", "matrix_power", "matmul", "multi_dot", "vecdot", "vander", "cross",
    "diagonal", "pinv", "matrix_rank", "cond", "tensorinv", "tensorsolve", "matrix_exp", "householder_product",
    "lstsq", "ldl_factor", "ldl_factor_ex", "ldl_solve",
]
for _name in _NAMES:
    globals()[_name] = getattr(_linalg, "linalg_" + _name)
del _name

__all__ = ["LinAlgError"] + _NAMES
