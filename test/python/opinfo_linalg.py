"""Registry entries of torch.linalg on LAPACK (ops.yaml's linear-algebra section): values,
meta shapes and gradients against torch 1.13 on float32, float64, complex64 and complex128
(the LAPACK-backed families; the products and helpers, whose complex paths torch 1.13 gets
wrong in places (its 1-D complex dot returns 0), on the real dtypes).

Where a result is unique only up to signs or complex phases (eigenvectors, singular vectors,
Q), an entry's call returns what is sign- and phase-free (V*conj(V), |V|, U@Vh, |R|,
Q*conj(Q), reconstructions), so both libraries' results and gradients compare. Inputs that must be symmetric positive-definite or
triangular are made so inside the call (a @ a.mH + 3I, triu + 5I: Hermitian for complex
input), so gradients flow back to the generated leaf. test_linalg.py has the errors, pivots, batches and LinAlgError.
"""
import torch

from opinfo import OpInfo, make_torch, register

FLOATS = ("float32", "float64")
DTYPES = FLOATS + ("complex64", "complex128")
TOL = {"float32": (2e-4, 2e-4), "float64": (1e-7, 1e-7), "complex64": (2e-4, 2e-4), "complex128": (1e-7, 1e-7)}


def _mT(t):
    return t.transpose(-2, -1)


def _mH(t):
    return t.transpose(-2, -1).conj()


def _spd(lib, a):
    n = a.shape[-1]
    return a @ _mH(a) + 3 * lib.eye(n, dtype=a.dtype, device=a.device)


def _tri(lib, a, upper=True):
    n = a.shape[-1]
    return (a.triu() if upper else a.tril()) + 5 * lib.eye(n, dtype=a.dtype, device=a.device)


def square_samples(dtype):
    yield "3x3", [make_torch((3, 3), dtype, 1)], {}
    yield "batch 2x4x4", [make_torch((2, 4, 4), dtype, 2)], {}
    yield "1x1", [make_torch((1, 1), dtype, 3)], {}


def rect_samples(dtype):
    yield "4x3", [make_torch((4, 3), dtype, 4)], {}
    yield "3x5", [make_torch((3, 5), dtype, 5)], {}
    yield "batch 2x3x3", [make_torch((2, 3, 3), dtype, 6)], {}


def solve_samples(dtype):
    yield "matrix", [make_torch((3, 3), dtype, 7), make_torch((3, 2), dtype, 8)], {}
    yield "vector", [make_torch((3, 3), dtype, 9), make_torch((3,), dtype, 10)], {}
    yield "broadcast", [make_torch((2, 3, 3), dtype, 11), make_torch((3, 4), dtype, 12)], {}
    yield "right", [make_torch((3, 3), dtype, 13), make_torch((2, 3), dtype, 14)], {"left": False}


def lu_solve_samples(dtype):
    for left in (True, False):
        for adjoint in (False, True):
            b = (3, 2) if left else (2, 3)
            yield f"left={left} adjoint={adjoint}", [make_torch((3, 3), dtype, 15), make_torch(b, dtype, 16)], \
                {"left": left, "adjoint": adjoint}
    yield "batch", [make_torch((2, 3, 3), dtype, 17), make_torch((3, 1), dtype, 18)], {}


def tri_samples(dtype):
    for upper in (True, False):
        yield f"upper={upper} left", [make_torch((3, 3), dtype, 19), make_torch((3, 2), dtype, 20)], {"upper": upper}
        yield f"upper={upper} right", [make_torch((3, 3), dtype, 21), make_torch((2, 3), dtype, 22)], \
            {"upper": upper, "left": False}
    yield "unitriangular", [make_torch((2, 3, 3), dtype, 23), make_torch((3, 2), dtype, 24)], \
        {"upper": True, "unitriangular": True}


def two_matrices(dtype):
    yield "3x3 3x2", [make_torch((3, 3), dtype, 25), make_torch((3, 2), dtype, 26)], {}
    yield "batch", [make_torch((2, 3, 3), dtype, 27), make_torch((2, 3, 1), dtype, 28)], {}


# ---- the LU family
def _lu_factor(lib, a):
    return lib.linalg.lu_factor(a)


def _lu_factor_ex(lib, a):
    LU, pivots, info = lib.linalg.lu_factor_ex(a)
    return LU, pivots, info


def _lu_solve(lib, a, b, **k):
    LU, pivots = lib.linalg.lu_factor(a)
    return lib.linalg.lu_solve(LU, pivots, b, **k)


def _legacy_lu_solve(lib, a, b):
    LU, pivots = lib.linalg.lu_factor(a)
    return lib.lu_solve(b, LU, pivots)


def _lu_unpack(lib, a):
    LU, pivots = lib.linalg.lu_factor(a)
    return lib.lu_unpack(LU, pivots)


# ---- symmetric and triangular
def _cholesky(lib, a, upper=False):
    return lib.linalg.cholesky(_spd(lib, a), upper=upper)


def _cholesky_ex(lib, a):
    L, info = lib.linalg.cholesky_ex(_spd(lib, a))
    return L, info


def _cholesky_solve(lib, a, b, upper=False):
    return lib.cholesky_solve(b, lib.linalg.cholesky(_spd(lib, a), upper=upper), upper=upper)


def _herm(a):
    return a + _mH(a)


def _eigh(lib, a, UPLO="L"):
    L, V = lib.linalg.eigh(_herm(a), UPLO=UPLO)
    return L, V * V.conj()


def _eig(lib, a):
    # eigenvectors are unique up to a complex phase: their moduli are not
    L, V = lib.linalg.eig(a)
    return L, V.abs()


def _svd(lib, a, full_matrices=False):
    U, S, Vh = lib.linalg.svd(a, full_matrices=full_matrices)
    k = S.shape[-1]
    return U[..., :, :k] @ Vh[..., :k, :], S


def _qr(lib, a, mode="reduced"):
    Q, R = lib.linalg.qr(a, mode=mode)
    return Q @ R, R.abs(), Q * Q.conj()


E = dict(dtypes=FLOATS, supports_out=False, dtype_tolerances=TOL)
# the LAPACK-backed families, complex included
C = dict(E, dtypes=DTYPES)
register(
    OpInfo("linalg_lu_factor", _lu_factor, sample_inputs=rect_samples, covers=("linalg_lu_factor_ex",), **C),
    OpInfo("linalg_lu_factor_ex", _lu_factor_ex, sample_inputs=rect_samples, **C),
    OpInfo("linalg_lu", lambda lib, a: lib.linalg.lu(a), sample_inputs=rect_samples, covers=("lu_unpack",), **C),
    OpInfo("lu_unpack", _lu_unpack, sample_inputs=rect_samples, **C),
    OpInfo("linalg_lu_solve", _lu_solve, sample_inputs=lu_solve_samples, **C),
    OpInfo("lu_solve", _legacy_lu_solve, sample_inputs=two_matrices, **C),
    OpInfo("linalg_solve", lambda lib, a, b, **k: lib.linalg.solve(a, b, **k), sample_inputs=solve_samples,
           covers=("_linalg_solve_ex",), **C),
    OpInfo("linalg_solve_ex", lambda lib, a, b, **k: lib.linalg.solve_ex(a, b, **k), sample_inputs=solve_samples, **C),
    OpInfo("linalg_inv", lambda lib, a: lib.linalg.inv(a), sample_inputs=square_samples, covers=("linalg_inv_ex",),
           **C),
    OpInfo("linalg_inv_ex", lambda lib, a: lib.linalg.inv_ex(a), sample_inputs=square_samples, **C),
    OpInfo("inverse", lambda lib, a: lib.inverse(a), sample_inputs=square_samples, method="inverse", **C),
    OpInfo("linalg_det", lambda lib, a: lib.linalg.det(a), sample_inputs=square_samples, covers=("_linalg_det",),
           **C),
    OpInfo("det", lambda lib, a: lib.det(a), sample_inputs=square_samples, method="det", **C),
    OpInfo("linalg_slogdet", lambda lib, a: lib.linalg.slogdet(a), sample_inputs=square_samples,
           covers=("_linalg_slogdet",), **C),
    OpInfo("slogdet", lambda lib, a: lib.slogdet(a), sample_inputs=square_samples, method="slogdet", **C),
    OpInfo("logdet", lambda lib, a: lib.logdet(_spd(lib, a)), sample_inputs=square_samples, **C),
    OpInfo("linalg_cholesky", _cholesky, sample_inputs=square_samples, kwargs=({}, {"upper": True}), **C),
    OpInfo("linalg_cholesky_ex", _cholesky_ex, sample_inputs=square_samples, **C),
    OpInfo("cholesky", lambda lib, a: lib.cholesky(_spd(lib, a)), sample_inputs=square_samples, **C),
    OpInfo("cholesky_solve", _cholesky_solve, sample_inputs=two_matrices, **C),
    OpInfo("cholesky_inverse", lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(_spd(lib, a))),
           sample_inputs=square_samples, **C),
    OpInfo("linalg_solve_triangular",
           lambda lib, a, b, upper=True, **k: lib.linalg.solve_triangular(_tri(lib, a, upper), b, upper=upper, **k),
           sample_inputs=tri_samples, **C),
    OpInfo("triangular_solve", lambda lib, a, b: lib.triangular_solve(b, _tri(lib, a)), sample_inputs=two_matrices,
           **C),
    OpInfo("linalg_eigh", _eigh, sample_inputs=square_samples, covers=("_linalg_eigh",), **C),
    OpInfo("linalg_eigvalsh", lambda lib, a: lib.linalg.eigvalsh(_herm(a)), sample_inputs=square_samples, **C),
    OpInfo("linalg_eig", _eig, sample_inputs=square_samples, **C),
    OpInfo("linalg_eigvals", lambda lib, a: lib.linalg.eigvals(a), sample_inputs=square_samples, **C),
    OpInfo("linalg_svd", _svd, sample_inputs=rect_samples, covers=("_linalg_svd",), **C),
    OpInfo("linalg_svdvals", lambda lib, a: lib.linalg.svdvals(a), sample_inputs=rect_samples, **C),
    OpInfo("svd", lambda lib, a: lib.svd(a)[1], sample_inputs=rect_samples, **C),
    OpInfo("linalg_qr", _qr, sample_inputs=rect_samples, **C),
    OpInfo("qr", lambda lib, a: lib.qr(a)[0] @ lib.qr(a)[1], sample_inputs=rect_samples, **C),
)


# ---- composites over products and norms (the products on real dtypes: see the docstring)
def power_samples(dtype):
    for n in (-2, 0, 1, 3):
        yield f"n={n}", [make_torch((3, 3), dtype, 30 + n)], {"n": n}


def multi_dot_samples(dtype):
    yield "matrices", [make_torch((2, 3), dtype, 40), make_torch((3, 4), dtype, 41), make_torch((4, 2), dtype, 42)], {}
    yield "vector ends", [make_torch((3,), dtype, 43), make_torch((3, 4), dtype, 44), make_torch((4,), dtype, 45)], {}


def vecdot_samples(dtype):
    yield "last", [make_torch((2, 3), dtype, 50), make_torch((3,), dtype, 51)], {}
    yield "dim 0", [make_torch((3, 2), dtype, 52), make_torch((3, 2), dtype, 53)], {"dim": 0}


def vander_samples(dtype):
    yield "default N", [make_torch((4,), dtype, 60)], {}
    yield "batched N=3", [make_torch((2, 3), dtype, 61)], {"N": 3}


def legacy_vander_samples(dtype):
    yield "default N", [make_torch((4,), dtype, 62)], {}
    yield "N=5 increasing", [make_torch((3,), dtype, 63)], {"N": 5, "increasing": True}
    yield "N=2", [make_torch((4,), dtype, 64)], {"N": 2}


def frobenius_samples(dtype):
    yield "all", [make_torch((2, 3, 4), dtype, 65)], {}
    yield "one dim", [make_torch((2, 3, 4), dtype, 66)], {"dim": [1]}
    yield "two dims keepdim", [make_torch((2, 3, 4), dtype, 67)], {"dim": (0, 2), "keepdim": True}


def nuclear_samples(dtype):
    yield "matrix", [make_torch((3, 4), dtype, 68)], {}
    yield "keepdim", [make_torch((4, 3), dtype, 69)], {"keepdim": True}
    yield "dims of a batch", [make_torch((3, 2, 4), dtype, 59)], {"dim": (0, 2)}


def cross_samples(dtype):
    yield "last", [make_torch((2, 3), dtype, 70), make_torch((2, 3), dtype, 71)], {}
    yield "broadcast dim 0", [make_torch((3, 2), dtype, 72), make_torch((3, 1), dtype, 73)], {"dim": 0}


def norm_samples(dtype):
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        yield f"ord={ord}", [make_torch((3, 4), dtype, 80)], {"ord": ord}
    yield "dims keepdim", [make_torch((2, 3, 4), dtype, 81)], {"ord": 1, "dim": (0, 2), "keepdim": True}


def linalg_norm_samples(dtype):
    yield "default", [make_torch((2, 3), dtype, 90)], {}
    yield "vector dim", [make_torch((2, 3), dtype, 91)], {"ord": 3, "dim": 1}
    yield "matrix ord", [make_torch((3, 3), dtype, 92)], {"ord": "nuc"}
    yield "matrix inf", [make_torch((3, 3), dtype, 93)], {"ord": float("inf")}


def pinv_samples(dtype):
    yield "4x3", [make_torch((4, 3), dtype, 100)], {}
    yield "rank 1 rtol", [make_torch((3, 1), dtype, 101) @ make_torch((1, 3), dtype, 102)], {"rtol": 1e-3}
    yield "atol", [make_torch((2, 3, 3), dtype, 103)], {"atol": 0.5}


def cond_samples(dtype):
    for p in (None, 2, -2, 1, -1, float("inf"), "fro", "nuc"):
        yield f"p={p}", [make_torch((3, 3), dtype, 110)], {"p": p}


def _rank(lib, a, hermitian=False, **k):
    m = a @ _mH(a) if hermitian else a
    return lib.linalg.matrix_rank(m, hermitian=hermitian, **k)


def rank_samples(dtype):
    low = make_torch((4, 2), dtype, 120) @ make_torch((2, 4), dtype, 121)
    yield "full", [make_torch((3, 4), dtype, 122)], {}
    yield "rank 2", [low], {}
    yield "hermitian", [low], {"hermitian": True}
    yield "atol", [make_torch((3, 3), dtype, 123)], {"atol": 1.0, "rtol": 0.0}


register(
    OpInfo("linalg_matrix_power", lambda lib, a, n: lib.linalg.matrix_power(a, n), sample_inputs=power_samples, **C),
    OpInfo("matrix_power", lambda lib, a, n: lib.matrix_power(a, n), sample_inputs=power_samples,
           method="matrix_power", **C),
    OpInfo("linalg_multi_dot", lambda lib, *ts: lib.linalg.multi_dot(list(ts)), sample_inputs=multi_dot_samples, **E),
    OpInfo("linalg_vecdot", lambda lib, x, y, **k: lib.linalg.vecdot(x, y, **k), sample_inputs=vecdot_samples, **E),
    OpInfo("linalg_vander", lambda lib, x, **k: lib.linalg.vander(x, **k), sample_inputs=vander_samples, **E),
    OpInfo("vander", lambda lib, x, **k: lib.vander(x, **k), sample_inputs=legacy_vander_samples, **E),
    OpInfo("frobenius_norm", lambda lib, a, **k: lib.frobenius_norm(a, **k), sample_inputs=frobenius_samples,
           **dict(C, supports_out=True)),
    OpInfo("nuclear_norm", lambda lib, a, **k: lib.nuclear_norm(a, **k), sample_inputs=nuclear_samples,
           **dict(C, supports_out=True)),
    OpInfo("linalg_cross", lambda lib, a, b, **k: lib.linalg.cross(a, b, **k), sample_inputs=cross_samples, **E),
    OpInfo("cross", lambda lib, a, b, **k: lib.cross(a, b, **k), sample_inputs=cross_samples, method="cross", **E),
    OpInfo("linalg_diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=1), sample_inputs=rect_samples, **E),
    OpInfo("linalg_matrix_norm", lambda lib, a, **k: lib.linalg.matrix_norm(a, **k), sample_inputs=norm_samples, **C),
    OpInfo("linalg_norm", lambda lib, a, **k: lib.linalg.norm(a, **k), sample_inputs=linalg_norm_samples, **C),
    OpInfo("linalg_pinv", lambda lib, a, **k: lib.linalg.pinv(a, **k), sample_inputs=pinv_samples, **C),
    OpInfo("pinverse", lambda lib, a: lib.pinverse(a), sample_inputs=rect_samples, method="pinverse", **C),
    OpInfo("linalg_matrix_rank", _rank, sample_inputs=rank_samples, exempt={"grad": "an integer count"}, **C),
    OpInfo("linalg_cond", lambda lib, a, **k: lib.linalg.cond(a, **k), sample_inputs=cond_samples, **C),
    OpInfo("linalg_tensorinv", lambda lib, a: lib.linalg.tensorinv(a, ind=1),
           sample_inputs=lambda d: iter([("4x2x2", [make_torch((4, 2, 2), d, 130)], {})]), **C),
    OpInfo("linalg_tensorsolve", lambda lib, a, b: lib.linalg.tensorsolve(a, b),
           sample_inputs=lambda d: iter([("2x3x6", [make_torch((2, 3, 6), d, 131), make_torch((2, 3), d, 132)], {})]),
           **C),
)


# ---- matrix exponential, Householder reflectors, least squares, LDL
def exp_samples(dtype):
    yield "3x3", [make_torch((3, 3), dtype, 140)], {}
    yield "batch of mixed norms", [make_torch((3, 4, 4), dtype, 141) * torch.tensor([0.01, 1.0, 6.0]).view(3, 1, 1)
                                   .to(getattr(torch, dtype))], {}
    yield "1x1", [make_torch((1, 1), dtype, 142)], {}


def _reflectors(dtype, m, n, k, seed, batch=()):
    return [make_torch(batch + (m, n), dtype, seed), make_torch(batch + (k,), dtype, seed + 1)]


def householder_samples(dtype):
    yield "4x3 k=3", _reflectors(dtype, 4, 3, 3, 150), {}
    yield "5x3 k=2", _reflectors(dtype, 5, 3, 2, 152), {}
    yield "batch 2x3x3 k=3", _reflectors(dtype, 3, 3, 3, 154, (2,)), {}


def ormqr_samples(dtype):
    for left in (True, False):
        for transpose in (False, True):
            other = (4, 2) if left else (2, 4)
            yield f"left={left} transpose={transpose}", _reflectors(dtype, 4, 3, 3, 160) + \
                [make_torch(other, dtype, 162)], {"left": left, "transpose": transpose}
    yield "wide input k=2", _reflectors(dtype, 3, 4, 2, 164) + [make_torch((3, 2), dtype, 166)], {}


def _geqrf(lib, a):
    # R and the reflectors are LAPACK's; the reconstruction Q R = A is what both share.
    compact, tau = lib.geqrf(a)
    k = min(a.shape[-2], a.shape[-1])
    Q = lib.linalg.householder_product(compact[..., :, :k], tau)
    return Q @ compact.triu()[..., :k, :], tau.abs()


def lstsq_samples(dtype):
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        yield f"tall {driver}", [make_torch((5, 3), dtype, 170), make_torch((5, 2), dtype, 171)], {"driver": driver}
    yield "wide gelsd", [make_torch((3, 5), dtype, 172), make_torch((3, 2), dtype, 173)], {"driver": "gelsd"}
    yield "vector rhs", [make_torch((2, 5, 3), dtype, 174), make_torch((2, 5), dtype, 175)], {}
    yield "broadcast batch", [make_torch((1, 4, 3), dtype, 176), make_torch((2, 4, 2), dtype, 177)], {"driver": "gels"}


def _lstsq(lib, a, b, **k):
    # residuals and singular values take no grad (test_linalg_solvers.py compares them)
    solution, residuals, rank, sv = lib.linalg.lstsq(a, b, **k)
    return solution, rank


def _sym(a):
    return a + _mT(a)


def _ldl_solve(lib, a, b):
    LD, pivots = lib.linalg.ldl_factor(_sym(a))
    return lib.linalg.ldl_solve(LD, pivots, b)


register(
    OpInfo("linalg_matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), sample_inputs=exp_samples, gradgrad=True,
           **C),
    OpInfo("matrix_exp", lambda lib, a: lib.matrix_exp(a), sample_inputs=exp_samples, method="matrix_exp", **C),
    OpInfo("geqrf", _geqrf, sample_inputs=rect_samples, **C),
    OpInfo("linalg_householder_product", lambda lib, a, tau: lib.linalg.householder_product(a, tau),
           sample_inputs=householder_samples, gradgrad=True, **C),
    OpInfo("orgqr", lambda lib, a, tau: lib.orgqr(a, tau), sample_inputs=householder_samples, method="orgqr", **C),
    OpInfo("ormqr", lambda lib, a, tau, c, **k: lib.ormqr(a, tau, c, **k), sample_inputs=ormqr_samples,
           method="ormqr", exempt={"torch_grad": "torch 1.13 has no ormqr derivative; current PyTorch's has, and "
                                                 "test_linalg_solvers.py checks it through householder_product"},
           **C),
    OpInfo("linalg_lstsq", _lstsq, sample_inputs=lstsq_samples, **C),
    OpInfo("linalg_ldl_factor_ex", lambda lib, a: lib.linalg.ldl_factor_ex(_sym(a)), sample_inputs=square_samples,
           **C),
    OpInfo("linalg_ldl_factor", lambda lib, a: lib.linalg.ldl_factor(_sym(a)), sample_inputs=square_samples, **C),
    OpInfo("linalg_ldl_solve", _ldl_solve, sample_inputs=two_matrices, **C),
)
