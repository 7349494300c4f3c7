"""torch.linalg on LAPACK against torch 1.13: what the registry entries (opinfo_linalg.py)
do not sweep. The errors (class and message, LinAlgError naming the batch element),
user-given pivots checked before LAPACK reads them, column-major output strides, empty
and batched inputs, out=, the legacy names (torch.lu, torch.svd's V, torch.norm 'nuc'),
and gradients (gradcheck and torch's grads) through the decompositions' sign-free parts.
"""
import numpy as np
import pytest
import torch

import tessera
from tessera.autograd import gradcheck
from torch_compare import same_error


def T(t):
    return tessera.tensor(t.numpy())


def close(got, want, tol=1e-7):
    np.testing.assert_allclose(np.asarray(got.numpy()), want.resolve_conj().numpy(), rtol=tol, atol=tol)


def rand(*shape, seed=0, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)



def test_linalg_error_is_a_runtime_error():
    assert issubclass(tessera.linalg.LinAlgError, RuntimeError)
    with pytest.raises(tessera.linalg.LinAlgError):
        tessera.linalg.inv(tessera.zeros(2, 2))


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.parametrize("case", [
    lambda lib: lib.linalg.inv(lib.tensor(SINGULAR)),
    lambda lib: lib.linalg.inv(lib.tensor([[[1.0, 0.0], [0.0, 1.0]], SINGULAR])),
    lambda lib: lib.linalg.solve(lib.tensor(SINGULAR), lib.ones(2)),
    lambda lib: lib.linalg.solve(lib.tensor([[[1.0, 0.0], [0.0, 1.0]], SINGULAR]), lib.ones(2)),
    lambda lib: lib.linalg.cholesky(-lib.eye(3)),
    lambda lib: lib.linalg.cholesky(lib.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, -1.0]]])),
    lambda lib: lib.linalg.lu_factor(lib.ones(3, 3), pivot=False),
    lambda lib: lib.linalg.inv(lib.ones(3)),
    lambda lib: lib.linalg.inv(lib.ones(3, 2)),
    lambda lib: lib.linalg.inv(lib.ones(3, 3, dtype=lib.long)),
    lambda lib: lib.linalg.inv(lib.ones(3, 3, dtype=lib.half)),
    lambda lib: lib.linalg.det(lib.ones(3, 2)),
    lambda lib: lib.linalg.eigh(lib.ones(3, 3), UPLO="X"),
    lambda lib: lib.linalg.qr(lib.ones(3, 3), mode="X"),
    lambda lib: lib.linalg.qr(lib.ones(3)),
    lambda lib: lib.linalg.svd(lib.ones(3, 3), driver="gesvd"),
    lambda lib: lib.linalg.solve(lib.ones(3, 3), lib.ones(4)),
    lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(3, 3, dtype=lib.float64)),
    lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(4, 3), upper=True),
    lambda lib: lib.linalg.lu_solve(lib.eye(3), lib.tensor([1, 2, 3]), lib.ones(3, 1)),
    lambda lib: lib.linalg.lu_solve(lib.eye(3), lib.tensor([1, 2, 5], dtype=lib.int32), lib.ones(3, 1)),
    lambda lib: lib.linalg.matrix_power(lib.ones(3, 2), 2),
    lambda lib: lib.linalg.multi_dot([lib.ones(3)]),
    lambda lib: lib.norm(lib.ones(2, 2, 2), p="nuc"),
    lambda lib: lib.norm(lib.ones(2, 2, 2), p="nuc", dim=[0]),
], ids=lambda c: "")
def test_errors_as_torch(case):
    same_error(lambda: case(torch), lambda: case(tessera))


def test_lu_factor_of_a_singular_matrix_raises_linalg_error():
    # Current PyTorch raises LinAlgError here (torch 1.13 a plain RuntimeError, same words).
    for A in (torch.ones(3, 3), torch.ones(2, 3, 3)):
        with pytest.raises(RuntimeError) as want:
            torch.linalg.lu_factor(A)
        with pytest.raises(tessera.linalg.LinAlgError) as got:
            tessera.linalg.lu_factor(T(A))
        assert str(got.value) == str(want.value)


def test_bad_pivots_never_reach_lapack():
    # A zero or too-large pivot would make getrs swap rows outside the matrix.
    for bad in ([0, 2, 3], [1, 2, 4], [1, -7, 3]):
        with pytest.raises(RuntimeError, match="Pivots given to lu_solve"):
            tessera.linalg.lu_solve(tessera.eye(3), tessera.tensor(bad, dtype=tessera.int32), tessera.ones(3, 1))
        with pytest.raises(RuntimeError, match="Pivots given to lu_solve"):
            tessera.lu_unpack(tessera.eye(3), tessera.tensor(bad, dtype=tessera.int32))


def test_infos_pivots_and_strides_match_torch():
    A = rand(2, 4, 3, seed=1)
    want = torch.linalg.lu_factor_ex(A)
    got = tessera.linalg.lu_factor_ex(T(A))
    close(got.LU, want.LU)
    assert got.pivots.dtype == tessera.int32 and got.pivots.tolist() == want.pivots.tolist()
    assert got.info.tolist() == want.info.tolist()
    assert got.LU.stride() == want.LU.stride()
    singular = torch.zeros(2, 3, 3)
    assert tessera.linalg.lu_factor_ex(T(singular)).info.tolist() == torch.linalg.lu_factor_ex(singular).info.tolist()
    assert tessera.linalg.inv_ex(T(singular)).info.tolist() == torch.linalg.inv_ex(singular).info.tolist()
    for op in ("inv", "cholesky"):
        s = torch.eye(3).expand(2, 3, 3)
        assert getattr(tessera.linalg, op)(T(s.contiguous())).stride() == getattr(torch.linalg, op)(s).stride()
    got_info = tessera.linalg.cholesky_ex(T(-torch.eye(3).expand(2, 3, 3).contiguous())).info
    assert got_info.tolist() == torch.linalg.cholesky_ex(-torch.eye(3).expand(2, 3, 3)).info.tolist()


@pytest.mark.parametrize("n", [1, 2, 5, 16, 17, 40])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.complex128, torch.complex64])
def test_small_and_lapack_paths_agree_with_torch(n, dtype):
    # real square matrices of at most 16 rows take the unblocked kernels (SmallMatrix.h),
    # larger ones and complex ones LAPACK: all give torch's pivots, factors, solves (every
    # side and transpose, A^H for complex), determinants and Cholesky factors
    tol = 1e-9 if dtype in (torch.float64, torch.complex128) else 2e-4
    A = rand(3, n, n, seed=n, dtype=dtype)
    B = rand(3, n, 2, seed=n + 1, dtype=dtype)
    LU, piv = torch.linalg.lu_factor(A)
    got_LU, got_piv = tessera.linalg.lu_factor(T(A))
    assert got_piv.tolist() == piv.tolist()
    close(got_LU, LU, tol)
    for left in (True, False):
        for adjoint in (False, True):
            rhs = B if left else B.mT
            want = torch.linalg.lu_solve(LU, piv, rhs, left=left, adjoint=adjoint)
            close(tessera.linalg.lu_solve(got_LU, got_piv, T(rhs), left=left, adjoint=adjoint), want, tol * n)
    close(tessera.linalg.solve(T(A), T(B)), torch.linalg.solve(A, B), tol * n)
    close(tessera.linalg.inv(T(A)), torch.linalg.inv(A), tol * n)
    close(tessera.linalg.det(T(A)), torch.linalg.det(A), tol * n)
    spd = A @ A.mH + n * torch.eye(n, dtype=dtype)
    for upper in (False, True):
        close(tessera.linalg.cholesky(T(spd), upper=upper), torch.linalg.cholesky(spd, upper=upper), tol * n)
    # infos: the first zero pivot, the first non-positive-definite minor
    sing = A.clone()
    sing[1, :, min(1, n - 1)] = 0
    assert tessera.linalg.lu_factor_ex(T(sing)).info.tolist() == torch.linalg.lu_factor_ex(sing).info.tolist()
    bad = spd.clone()
    bad[2, n - 1, n - 1] = -1
    assert tessera.linalg.cholesky_ex(T(bad)).info.tolist() == torch.linalg.cholesky_ex(bad).info.tolist()


@pytest.mark.parametrize("n", [3, 20])
def test_nan_and_singular_inputs_on_both_paths(n):
    # NaN spreads through LU and Cholesky as in torch (no skipped zero factors, a NaN is
    # never the pivot, NaN is not "not positive-definite"); a singular inverse is not finite
    A = torch.eye(n, dtype=torch.float64)
    A[1, 0] = float("nan")
    close_nan = lambda got, want: torch.testing.assert_close(torch.tensor(got.numpy()), want, equal_nan=True)
    close_nan(tessera.linalg.det(T(A)), torch.linalg.det(A))
    for g, w in zip(tessera.linalg.slogdet(T(A)), torch.linalg.slogdet(A)):
        close_nan(g, w)
    LU, piv = torch.linalg.lu_factor(A)
    got_LU, got_piv = tessera.linalg.lu_factor(T(A))
    assert got_piv.tolist() == piv.tolist()
    close_nan(got_LU, LU)
    spd = torch.eye(n, dtype=torch.float64)
    spd[0, 0] = float("nan")
    assert tessera.linalg.cholesky_ex(T(spd)).info.tolist() == torch.linalg.cholesky_ex(spd).info.tolist()
    ones = torch.ones(n, n, dtype=torch.float64)
    got, info = tessera.linalg.inv_ex(T(ones))
    want, want_info = torch.linalg.inv_ex(ones)
    assert info.tolist() == want_info.tolist() and info.item() > 0
    assert not torch.tensor(got.numpy()).isfinite().all() and not want.isfinite().all()


def test_determinants_of_singular_and_negative():
    s = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=torch.float64)
    neg = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    for m in (s, neg):
        close(tessera.linalg.det(T(m)), torch.linalg.det(m))
        sign, logabs = tessera.linalg.slogdet(T(m))
        want = torch.linalg.slogdet(m)
        close(sign, want.sign)
        close(logabs, want.logabsdet)
        close(tessera.logdet(T(m)), torch.logdet(m))


def test_empty_and_zero_batch():
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        A = torch.zeros(shape, dtype=torch.float64)
        close(tessera.linalg.det(T(A)), torch.linalg.det(A))
        close(tessera.linalg.inv(T(A)), torch.linalg.inv(A))
        assert tuple(tessera.linalg.eigvalsh(T(A)).shape) == tuple(torch.linalg.eigvalsh(A).shape)
    for shape in ((3, 0), (0, 4)):
        A = torch.zeros(shape, dtype=torch.float64)
        U, S, Vh = tessera.linalg.svd(T(A))
        want = torch.linalg.svd(A)
        close(U, want.U)
        close(Vh, want.Vh)
        Q, R = tessera.linalg.qr(T(A), mode="complete")
        want = torch.linalg.qr(A, mode="complete")
        close(Q, want.Q)
        assert tuple(R.shape) == tuple(want.R.shape)


def test_full_svd_and_legacy_svd():
    A = rand(4, 3, seed=2)
    U, S, Vh = tessera.linalg.svd(T(A), full_matrices=True)
    assert tuple(U.shape) == (4, 4) and tuple(Vh.shape) == (3, 3)
    close(U.transpose(0, 1) @ U, torch.eye(4, dtype=torch.float64))
    close(U[:, :3] @ tessera.diag(S) @ Vh, A)
    Ul, Sl, V = tessera.svd(T(A))
    close(Ul @ tessera.diag(Sl) @ V.transpose(0, 1), A)
    Uz, Sz, Vz = tessera.svd(T(A), compute_uv=False)
    want = torch.svd(A, compute_uv=False)
    close(Uz, want.U)
    close(Vz, want.V)
    close(Sz, want.S)


def test_qr_modes_and_eigh_reconstruct():
    A = rand(5, 3, seed=3)
    for mode in ("reduced", "complete"):
        Q, R = tessera.linalg.qr(T(A), mode=mode)
        want = torch.linalg.qr(A, mode=mode)
        assert tuple(Q.shape) == tuple(want.Q.shape) and tuple(R.shape) == tuple(want.R.shape)
        close(Q @ R, A)
    Q, R = tessera.linalg.qr(T(A), mode="r")
    assert Q.numel() == 0
    close(R.abs(), torch.linalg.qr(A, mode="r").R.abs())
    S = rand(3, 4, 4, seed=4)
    S = S + S.mT
    for uplo in ("L", "U"):
        L, V = tessera.linalg.eigh(T(S), UPLO=uplo)
        close(L, torch.linalg.eigvalsh(S, UPLO=uplo))
        close(V @ tessera.diag_embed(L) @ V.transpose(-2, -1), S)


def test_out_and_legacy_forms():
    A, B = rand(3, 3, seed=5), rand(3, 2, seed=6)
    out = tessera.empty(0, dtype=tessera.float64)
    assert tessera.linalg.solve(T(A), T(B), out=out) is out
    close(out, torch.linalg.solve(A, B))
    out = tessera.empty(0, dtype=tessera.float64)
    assert tessera.inverse(T(A), out=out) is out
    close(out, torch.inverse(A))
    LU, piv = tessera.lu(T(A))
    want = torch.lu(A)
    close(LU, want[0])
    assert piv.tolist() == want[1].tolist()
    assert len(tessera.lu(T(A), get_infos=True)) == 3
    close(T(A).lu()[0], want[0])
    X, M = tessera.triangular_solve(T(B), T(A), upper=False, transpose=True)
    want = torch.triangular_solve(B, A, upper=False, transpose=True)
    close(X, want.solution)
    close(M, want.cloned_coefficient)
    close(tessera.norm(T(A), p="nuc"), torch.norm(A, p="nuc"))
    close(tessera.norm(T(rand(2, 3, 4, seed=7)), p="nuc", dim=(1, 2), keepdim=True),
          torch.norm(rand(2, 3, 4, seed=7), p="nuc", dim=(1, 2), keepdim=True))


def test_meta_shapes():
    m = tessera.empty(2, 5, 3, device="meta", dtype=tessera.float64)
    LU, piv, info = tessera.linalg.lu_factor_ex(m)
    assert LU.is_meta and tuple(piv.shape) == (2, 3) and tuple(info.shape) == (2,)
    U, S, Vh = tessera.linalg.svd(m, full_matrices=False)
    assert (tuple(U.shape), tuple(S.shape), tuple(Vh.shape)) == ((2, 5, 3), (2, 3), (2, 3, 3))
    Q, R = tessera.linalg.qr(m, mode="complete")
    assert (tuple(Q.shape), tuple(R.shape)) == ((2, 5, 5), (2, 5, 3))
    sq = tessera.empty(4, 4, device="meta")
    assert tessera.linalg.inv(sq).is_meta and tuple(tessera.linalg.eigh(sq)[1].shape) == (4, 4)
    assert tuple(tessera.linalg.solve(sq, tessera.empty(4, device="meta")).shape) == (4,)


# ---- gradients: gradcheck in float64, and torch's gradients on the same leaves
def grad_case(fn, *inputs):
    leaves = [T(x).requires_grad_() for x in inputs]
    assert gradcheck(lambda *a: fn(tessera, *a), leaves)
    ref = [x.clone().requires_grad_() for x in inputs]
    outs_t = fn(torch, *ref)
    outs_m = fn(tessera, *leaves)
    outs_t = outs_t if isinstance(outs_t, tuple) else (outs_t,)
    outs_m = outs_m if isinstance(outs_m, tuple) else (outs_m,)
    weights = [rand(*o.shape, seed=50 + i) for i, o in enumerate(outs_t)]
    sum(((o * w).sum() for o, w in zip(outs_t, weights)), torch.zeros((), dtype=torch.float64)).backward()
    loss = None
    for o, w in zip(outs_m, weights):
        term = (o * T(w)).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    for mine, ref_leaf in zip(leaves, ref):
        close(mine.grad, ref_leaf.grad, 1e-6)


def test_grad_lu_non_square():
    grad_case(lambda lib, a: lib.linalg.lu_factor(a)[0], rand(5, 3, seed=10))
    grad_case(lambda lib, a: lib.linalg.lu_factor(a)[0], rand(3, 5, seed=11))
    grad_case(lambda lib, a: lib.linalg.lu(a)[1:], rand(4, 2, seed=12))


def test_grad_svd_full_and_wide_qr():
    def svd_parts(lib, a):
        U, S, Vh = lib.linalg.svd(a, full_matrices=True)
        return S, U[:, :3] @ Vh[:3, :]
    grad_case(svd_parts, rand(3, 5, seed=13))
    grad_case(lambda lib, a: (lambda q, r: (q @ r, r.abs()))(*lib.linalg.qr(a)), rand(3, 5, seed=14))
    with pytest.raises(RuntimeError, match="mode='r'"):
        a = T(rand(3, 3, seed=15)).requires_grad_()
        tessera.linalg.qr(a, mode="r")[1].sum().backward()


def test_grad_solve_double_backward_and_det_singular():
    from tessera.autograd import gradgradcheck
    A, B = T(rand(3, 3, seed=16)).requires_grad_(), T(rand(3, 2, seed=17)).requires_grad_()
    assert gradgradcheck(lambda a, b: tessera.linalg.solve(a, b), [A, B])
    assert gradgradcheck(lambda a: tessera.linalg.inv(a), [A])
    # At a singular matrix the gradient of det is still the cofactor matrix. torch 1.13
    # returns zeros there; current PyTorch (2.x, linalg_det_backward through the SVD) and
    # tessera return the cofactors, checked here from the minors.
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])
    leaf = tessera.tensor(singular).requires_grad_()
    assert gradcheck(lambda a: tessera.linalg.det(a), [leaf])
    tessera.linalg.det(leaf).backward()
    cofactors = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(singular, i, 0), j, 1))
                           for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(np.asarray(leaf.grad.numpy()), cofactors, atol=1e-9)


def test_out_forms_of_several_results():
    A = rand(4, 3, seed=30)
    S3 = rand(3, 3, seed=31)
    spd = S3 @ S3.mT + 3 * torch.eye(3, dtype=torch.float64)

    def empties(n, dtypes=None):
        dtypes = dtypes or [tessera.float64] * n
        return tuple(tessera.empty(0, dtype=d) for d in dtypes)

    cases = [
        (lambda lib, out: lib.linalg.lu_factor_ex(A if lib is torch else T(A), out=out),
         [tessera.float64, tessera.int32, tessera.int32]),
        (lambda lib, out: lib.linalg.lu_factor(A if lib is torch else T(A), out=out), [tessera.float64, tessera.int32]),
        (lambda lib, out: lib.linalg.lu(A if lib is torch else T(A), out=out), None),
        (lambda lib, out: lib.linalg.inv_ex(S3 if lib is torch else T(S3), out=out), [tessera.float64, tessera.int32]),
        (lambda lib, out: lib.linalg.slogdet(S3 if lib is torch else T(S3), out=out), None),
        (lambda lib, out: lib.slogdet(S3 if lib is torch else T(S3), out=out), None),
        (lambda lib, out: lib.linalg.cholesky_ex(spd if lib is torch else T(spd), out=out),
         [tessera.float64, tessera.int32]),
        (lambda lib, out: lib.linalg.solve_ex(S3 if lib is torch else T(S3), S3 if lib is torch else T(S3), out=out),
         [tessera.float64, tessera.int32]),
        (lambda lib, out: lib.linalg.svd(A if lib is torch else T(A), full_matrices=False, out=out), None),
        (lambda lib, out: lib.linalg.qr(A if lib is torch else T(A), out=out), None),
        (lambda lib, out: lib.linalg.eigh(spd if lib is torch else T(spd), out=out), None),
    ]
    for fn, dtypes in cases:
        want = fn(torch, None)
        n = len(want)
        outs = empties(n, dtypes)
        got = fn(tessera, outs)
        assert all(g is o for g, o in zip(got, outs))
        for g, w in zip(outs, want):
            assert tuple(g.shape) == tuple(w.shape)
        # results determined up to signs: compare what is sign-free
        for g, w in zip(outs, want):
            close(g.abs() if g.is_floating_point() else g.double(), w.abs() if w.is_floating_point() else w.double())
    out = tessera.empty(0, dtype=tessera.float64)
    assert tessera.lu_solve(T(A[:3]), *tessera.linalg.lu_factor(T(S3)), out=out) is out
    close(out, torch.lu_solve(A[:3], *torch.linalg.lu_factor(S3)))
    with pytest.raises(RuntimeError):
        tessera.linalg.inv_ex(T(S3), out=(tessera.empty(0, dtype=tessera.int64), tessera.empty(0, dtype=tessera.int32)))


def test_names_match_torch_linalg():
    public = {n for n in dir(torch.linalg) if not n.startswith("_") and callable(getattr(torch.linalg, n))}
    public -= {"Tensor"}  # torch.linalg re-exports the Tensor type
    assert public <= set(tessera.linalg.__all__)


def test_linalg_matmul_is_matmul():
    a, b = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
    ta, tb = tessera.from_numpy(a.numpy()), tessera.from_numpy(b.numpy())
    np.testing.assert_allclose(tessera.linalg.matmul(ta, tb).numpy(), torch.linalg.matmul(a, b).numpy())
    out = tessera.empty(0, dtype=tessera.float64)
    assert tessera.linalg.matmul(ta, tb, out=out) is out
    np.testing.assert_allclose(out.numpy(), (a @ b).numpy())
    same_error(lambda: torch.linalg.matmul(a, a), lambda: tessera.linalg.matmul(ta, ta))


# ---- torch.vander, torch.frobenius_norm, torch.nuclear_norm (the legacy names)

@pytest.mark.parametrize("case", [
    lambda lib: lib.vander(lib.ones(2, 2)),
    lambda lib: lib.vander(lib.ones(())),
    lambda lib: lib.vander(lib.ones(3), N=-1),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3, 4), [0, 1, 2]),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3, 4), [1, 1]),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3, 4), [1, -2]),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3, dtype=lib.int64), [1]),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3, dtype=lib.int64)),
    lambda lib: lib.frobenius_norm(lib.ones(2, 3, 4), [1, 4]),
    lambda lib: lib.frobenius_norm(lib.ones(()), [0, -1]),
    lambda lib: lib.nuclear_norm(lib.ones(2, 3, 4)),
    lambda lib: lib.nuclear_norm(lib.ones(3)),
    lambda lib: lib.nuclear_norm(lib.ones(2, 3, 4), [0]),
    lambda lib: lib.nuclear_norm(lib.ones(3, 4), [1, -1]),
    lambda lib: lib.nuclear_norm(lib.ones(3, 4), [1, 5]),
], ids=["vander 2-D", "vander 0-D", "vander N<0", "fro 3 dims", "fro same dims", "fro same wrapped dims",
        "fro int dim", "fro int", "fro dim out of range", "fro 0-D same dims", "nuc 3-D", "nuc 1-D", "nuc one dim",
        "nuc same dims", "nuc dim out of range"])
def test_legacy_norm_and_vander_errors_as_torch(case):
    same_error(lambda: case(torch), lambda: case(tessera))


def test_nuclear_norm_of_an_integer_tensor_is_refused():
    # torch 1.13 words it from svd ("linalg.svd: ..."); current PyTorch checks in matrix_norm first
    with pytest.raises(RuntimeError, match="floating point or complex"):
        tessera.nuclear_norm(tessera.ones(3, 4, dtype=tessera.int64))


@pytest.mark.parametrize("dtype", [torch.int64, torch.bool, torch.float32, torch.complex128])
@pytest.mark.parametrize("N", [None, 0, 1, 4])
def test_vander_dtypes_and_sizes_as_torch(dtype, N):
    x = torch.tensor([2, 0, 3, 1]).to(dtype)
    for increasing in (False, True):
        want = torch.vander(x, N=N, increasing=increasing)
        got = tessera.vander(T(x), N=N, increasing=increasing)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1] and got.shape == want.shape
        close(got, want, 0)
    assert tessera.vander(tessera.ones(0)).shape == (0, 0)


def test_legacy_norms_out_and_gradients():
    a = rand(3, 4, seed=300)
    out = tessera.empty(0, dtype=tessera.float64)
    assert tessera.nuclear_norm(T(a), out=out) is out
    close(out, torch.nuclear_norm(a))
    out2 = tessera.empty(0, dtype=tessera.float64)
    assert tessera.frobenius_norm(T(a), [0], True, out=out2) is out2
    close(out2, torch.frobenius_norm(a, [0], True))
    x = T(rand(5, seed=301)).requires_grad_()
    assert gradcheck(lambda t: tessera.vander(t), (x,))
    assert gradcheck(lambda t: tessera.vander(t, N=3, increasing=True), (x,))
