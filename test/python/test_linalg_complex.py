"""Complex linear algebra against torch 1.13: linalg.eig and eigvals (for real and complex
input), the complex LU family, Cholesky and triangular solves, and what the registry
entries (opinfo_linalg.py, complex dtypes) do not sweep: output dtypes and strides, the
conventions torch picks (A^H for adjoint=True, |re|+|im| pivoting, log of a complex
determinant), conj-view inputs, eig's gauge check, the sign's gradient of slogdet, errors,
out= castability, Meta shapes and the legacy names around eig.
"""

import numpy as np
import pytest
import torch

import tessera
from tessera.autograd import gradcheck
from torch_compare import same_error

COMPLEX = (torch.complex64, torch.complex128)


def T(t):
    return tessera.tensor(t.resolve_conj().numpy())


def close(got, want, tol=1e-9):
    np.testing.assert_allclose(np.asarray(got.resolve_conj().numpy()), want.resolve_conj().numpy(), rtol=tol,
                               atol=tol)


def rand(*shape, seed=0, dtype=torch.complex128):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_complex:
        real = torch.randn(shape, generator=g, dtype=torch.float64)
        imag = torch.randn(shape, generator=g, dtype=torch.float64)
        return torch.complex(real, imag).to(dtype)
    return torch.randn(shape, generator=g, dtype=dtype)


def tol_of(dtype):
    return 1e-9 if dtype in (torch.float64, torch.complex128) else 2e-4


def assert_grads_like_torch(op, A, tol=1e-7):
    """op(lib, leaf) -> a real loss: tessera's grad of A is finite and equals torch's."""
    a = A.clone().requires_grad_()
    op(torch, a).backward()
    b = T(A).requires_grad_()
    op(tessera, b).backward()
    assert np.isfinite(b.grad.resolve_conj().numpy()).all()
    close(b.grad, a.grad, tol)


# ---------------------------------------------------------------- eig and eigvals

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 1, 3, 3), (1, 1)])
def test_eig_matches_torch(dtype, shape):
    # The same LAPACK (geev) in both: the same eigenvalues in the same order, and the same
    # eigenvector phases, also where a real matrix's conjugate pairs are assembled.
    A = rand(*shape, seed=sum(shape), dtype=dtype)
    want_L, want_V = torch.linalg.eig(A)
    got_L, got_V = tessera.linalg.eig(T(A))
    assert str(got_L.dtype) == str(want_L.dtype).replace("torch", "tessera")
    assert str(got_V.dtype) == str(want_V.dtype).replace("torch", "tessera")
    assert got_V.stride() == want_V.stride()
    tol = tol_of(dtype) * 100
    close(got_L, want_L, tol)
    close(got_V, want_V, tol)
    close(tessera.linalg.eigvals(T(A)), torch.linalg.eigvals(A), tol)
    # A V = V diag(L) on tessera's own results
    AV = T(A).to(got_V.dtype) @ got_V
    close(AV, torch.from_numpy(got_V.numpy()) * torch.from_numpy(got_L.numpy()).unsqueeze(-2), tol * 10)


@pytest.mark.parametrize("A", [[[0.0, -1.0], [1.0, 0.0]],          # a rotation: +-i
                               [[1.0, 1.0], [0.0, 1.0]],           # defective
                               [[2.0, 0.0, 0.0], [0.0, 1.0, -5.0], [0.0, 5.0, 1.0]]])
def test_eig_of_real_matrices_with_complex_pairs(A):
    A = torch.tensor(A, dtype=torch.float64)
    want_L, want_V = torch.linalg.eig(A)
    got_L, got_V = tessera.linalg.eig(T(A))
    close(got_L, want_L)
    close(got_V, want_V)


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0), (0, 0)])
def test_eig_of_empty_inputs(shape):
    A = torch.zeros(shape, dtype=torch.float64)
    want_L, want_V = torch.linalg.eig(A)
    got_L, got_V = tessera.linalg.eig(T(A))
    assert tuple(got_L.shape) == tuple(want_L.shape) and tuple(got_V.shape) == tuple(want_V.shape)
    assert got_L.dtype == tessera.complex128


@pytest.mark.parametrize("case", [
    lambda lib: lib.linalg.eig(lib.tensor([[1.0, float("nan")], [0.0, 1.0]])),
    lambda lib: lib.linalg.eig(lib.tensor([[1.0, float("inf")], [0.0, 1.0]], dtype=lib.complex64)),
    lambda lib: lib.linalg.eig(lib.ones(3, 2)),
    lambda lib: lib.linalg.eig(lib.ones(3)),
    lambda lib: lib.linalg.eigvals(lib.ones(2, 3, 2)),
    lambda lib: lib.linalg.eig(lib.eye(2), out=(lib.empty(0), lib.empty(0, dtype=lib.complex64))),
    lambda lib: lib.linalg.eig(lib.eye(2, dtype=lib.float64),
                               out=(lib.empty(0, dtype=lib.complex128), lib.empty(0, dtype=lib.float64))),
    lambda lib: lib.linalg.eigvals(lib.eye(2, dtype=lib.float64), out=lib.empty(0)),
], ids=lambda c: "")
def test_eig_errors_as_torch(case):
    same_error(lambda: case(torch), lambda: case(tessera))


def test_eig_errors_compared_by_class():
    # torch 1.13 fails these inside its type dispatch ("Unknown Complex ScalarType for
    # Long") or on an internal assert after LAPACK's argument error; tessera raises its
    # dtype check's and NaN check's words. (torch 1.13's eigvals skips linalg.eig's NaN
    # check, so a NaN LAPACK happens to survive passes there; tessera checks for both.)
    for case in (lambda lib: lib.linalg.eig(lib.ones(2, 2, dtype=lib.int64)),
                 lambda lib: lib.linalg.eigvals(lib.full((3, 3), float("nan")))):
        with pytest.raises(RuntimeError):
            case(torch)
        with pytest.raises(RuntimeError):
            case(tessera)


def test_eig_out_casts_as_torch():
    A = rand(3, 3, seed=3, dtype=torch.float64)
    # a complex64 out= for float64 input is a safe cast in torch's rule
    got_L, got_V = tessera.empty(0, dtype=tessera.complex64), tessera.empty(0, dtype=tessera.complex64)
    tessera.linalg.eig(T(A), out=(got_L, got_V))
    want_L, want_V = torch.empty(0, dtype=torch.complex64), torch.empty(0, dtype=torch.complex64)
    torch.linalg.eig(A, out=(want_L, want_V))
    close(got_L, want_L, 1e-5)
    close(got_V, want_V, 1e-5)
    out = tessera.empty(0, dtype=tessera.complex128)
    assert tessera.linalg.eigvals(T(A), out=out) is out
    close(out, torch.linalg.eigvals(A))


def test_eig_meta_shapes():
    for dtype, want in ((tessera.float32, tessera.complex64), (tessera.complex128, tessera.complex128)):
        L, V = tessera.linalg.eig(tessera.empty(2, 4, 4, dtype=dtype, device="meta"))
        assert L.device.type == "meta" and tuple(L.shape) == (2, 4) and L.dtype == want
        assert tuple(V.shape) == (2, 4, 4) and V.stride() == (16, 1, 4)
        assert tuple(tessera.linalg.eigvals(tessera.empty(3, 3, dtype=dtype, device="meta")).shape) == (3,)


# ---------------------------------------------------------------- eig gradients

def _eig_loss(lib, A):
    # depends on V only through |V|: invariant under V -> V e^{i phi}
    L, V = lib.linalg.eig(A)
    return (L * L).real.sum() + L.imag.sum() + (V.abs() * lib.arange(V.shape[-1], dtype=V.real.dtype)).sum()


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_eig_grads_match_torch(dtype):
    A = rand(4, 4, seed=11, dtype=dtype)
    a = A.clone().requires_grad_()
    _eig_loss(torch, a).backward()
    b = T(A).requires_grad_()
    _eig_loss(tessera, b).backward()
    assert b.grad.dtype == b.dtype
    close(b.grad, a.grad, 1e-7)
    assert gradcheck(lambda x: _eig_loss(tessera, x), (T(A).requires_grad_(),))


def test_eig_phase_dependent_loss_raises_torch_message():
    A = rand(3, 3, seed=12, dtype=torch.complex128)
    for lib, x in ((torch, A.clone().requires_grad_()), (tessera, T(A).requires_grad_())):
        with pytest.raises(RuntimeError) as err:
            lib.linalg.eig(x)[1].sum().real.backward()
        assert str(err.value).startswith("linalg_eig_backward: The eigenvectors in the complex case are specified "
                                         "up to multiplication by e^{i phi}. The specified loss function depends "
                                         "on this quantity, so it is ill-defined.")


def test_eigvals_grad_matches_torch():
    assert_grads_like_torch(lambda lib, x: lib.linalg.eigvals(x).imag.abs().sum(), rand(2, 3, 3, seed=13,
                                                                                       dtype=torch.float64))


# ---------------------------------------------------------------- LU family conventions

@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [2, 5, 20])
def test_lu_solve_adjoint_is_the_conjugate_transpose(dtype, n):
    A, B, Br = rand(n, n, seed=n, dtype=dtype), rand(n, 2, seed=n + 1, dtype=dtype), rand(2, n, seed=n + 2, dtype=dtype)
    LU, piv = torch.linalg.lu_factor(A)
    gLU, gpiv = tessera.linalg.lu_factor(T(A))
    assert gpiv.tolist() == piv.tolist()
    close(gLU, LU, tol_of(dtype))
    for left, rhs in ((True, B), (False, Br)):
        for adjoint in (False, True):
            want = torch.linalg.lu_solve(LU, piv, rhs, left=left, adjoint=adjoint)
            got = tessera.linalg.lu_solve(gLU, gpiv, T(rhs), left=left, adjoint=adjoint)
            close(got, want, tol_of(dtype) * 10)
    # adjoint=True solves with A^H (not A^T)
    X = tessera.linalg.lu_solve(gLU, gpiv, T(B), adjoint=True)
    close(T(A).mH @ X, B, tol_of(dtype) * 10)


def test_lu_pivots_on_the_sum_of_absolute_parts():
    # BLAS's izamax takes |re| + |im|: 2+2j (4) beats 3 (3), though |2+2j| < 3
    A = torch.tensor([[3, 1], [2 + 2j, 5]], dtype=torch.complex128)
    assert tessera.linalg.lu_factor(T(A)).pivots.tolist() == torch.linalg.lu_factor(A).pivots.tolist() == [2, 2]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_dtypes_of_complex_results(dtype):
    A = rand(2, 3, 3, seed=5, dtype=dtype)
    real = {torch.complex64: tessera.float32, torch.complex128: tessera.float64}[dtype]
    sign, logabs = tessera.linalg.slogdet(T(A))
    assert sign.dtype == T(A).dtype and logabs.dtype == real
    want_sign, want_logabs = torch.linalg.slogdet(A)
    close(sign, want_sign, tol_of(dtype))
    close(logabs, want_logabs, tol_of(dtype))
    assert tessera.linalg.det(T(A)).dtype == T(A).dtype
    assert tessera.linalg.lu_factor(T(A)).pivots.dtype == tessera.int32
    P, L, U = tessera.linalg.lu(T(A))
    assert P.dtype == L.dtype == U.dtype == T(A).dtype
    assert tessera.linalg.matrix_exp(T(A)).dtype == T(A).dtype


def test_logdet_and_slogdet_of_special_complex_matrices():
    minus_identity = -torch.eye(3, dtype=torch.complex128)
    close(tessera.logdet(T(minus_identity)), torch.logdet(minus_identity))  # 0 + pi i
    singular = torch.tensor([[1, 2j], [1, 2j]], dtype=torch.complex128)
    got, want = tessera.logdet(T(singular)), torch.logdet(singular)
    assert str(got.item()) == str(want.item())  # -inf + nan j
    gs, gl = tessera.linalg.slogdet(T(singular))
    ws, wl = torch.linalg.slogdet(singular)
    assert abs(gs.item()) == abs(ws.item()) == 0 and gl.item() == wl.item() == float("-inf")
    nan_diagonal = torch.tensor([[float("nan"), 0], [0, 1]], dtype=torch.complex128)
    gs, ws = tessera.linalg.slogdet(T(nan_diagonal))[0].item(), torch.linalg.slogdet(nan_diagonal)[0].item()
    assert np.isnan(gs.real) and np.isnan(gs.imag) and np.isnan(ws.real) and np.isnan(ws.imag)


def test_slogdet_sign_gradient_matches_torch():
    # a complex determinant's sign moves with A: its grad flows (a real one's does not)
    A = rand(3, 3, seed=21)
    a = A.clone().requires_grad_()
    s, l = torch.linalg.slogdet(a)
    (s.imag + 0.5 * s.real + l).backward()
    b = T(A).requires_grad_()
    s, l = tessera.linalg.slogdet(b)
    (s.imag + 0.5 * s.real + l).backward()
    close(b.grad, a.grad)

    def fn(x):
        s, l = tessera.linalg.slogdet(x)
        return s, l
    assert gradcheck(fn, (T(A).requires_grad_(),))


# ---------------------------------------------------------------- Cholesky and triangular

@pytest.mark.parametrize("dtype", COMPLEX)
def test_cholesky_reads_one_triangle_and_the_real_diagonal(dtype):
    M = rand(4, 4, seed=31, dtype=dtype)
    A = M @ M.mH + 4 * torch.eye(4, dtype=dtype)
    # garbage in the unread triangle and an imaginary part on the diagonal: both ignored
    noisy = A.tril() + 7j * torch.eye(4, dtype=dtype) + torch.ones(4, 4, dtype=dtype).triu(1) * (3 - 1j)
    for upper in (False, True):
        src = noisy.mH if upper else noisy
        close(tessera.linalg.cholesky(T(src), upper=upper), torch.linalg.cholesky(src, upper=upper), tol_of(dtype))
    L = tessera.linalg.cholesky(T(A))
    close(L @ L.mH, A, tol_of(dtype) * 10)


def test_solve_triangular_promotes_and_triangular_solve_transposes_plainly():
    A = (rand(3, 3, seed=41, dtype=torch.complex64).triu() + 4 * torch.eye(3)).to(torch.complex64)
    B = rand(3, 2, seed=42, dtype=torch.float32)
    got = tessera.linalg.solve_triangular(T(A), T(B), upper=True)
    assert got.dtype == tessera.complex64
    close(got, torch.linalg.solve_triangular(A, B.to(torch.complex64), upper=True), 1e-5)
    # torch.triangular_solve's transpose=True is A^T, not A^H
    Bc = rand(3, 2, seed=43, dtype=torch.complex64)
    close(tessera.triangular_solve(T(Bc), T(A), transpose=True)[0], torch.triangular_solve(Bc, A, transpose=True)[0],
          1e-5)


# ---------------------------------------------------------------- conj views in, grads out

CONJ_CASES = [
    lambda lib, A, B: lib.linalg.solve(A, B),
    lambda lib, A, B: lib.linalg.solve(A, B.mT, left=False),
    lambda lib, A, B: lib.linalg.inv(A),
    lambda lib, A, B: lib.linalg.det(A),
    lambda lib, A, B: lib.linalg.slogdet(A)[0],
    lambda lib, A, B: lib.linalg.lu_factor(A)[0],
    lambda lib, A, B: lib.linalg.cholesky(A @ A.mH + 3 * lib.eye(3)),
    lambda lib, A, B: lib.cholesky_solve(B, lib.linalg.cholesky(A @ A.mH + 3 * lib.eye(3)), upper=False),
    lambda lib, A, B: lib.linalg.solve_triangular(A.triu() + 3 * lib.eye(3), B, upper=True),
    lambda lib, A, B: lib.linalg.eigvals(A),
    lambda lib, A, B: lib.linalg.matrix_exp(A),
]


@pytest.mark.parametrize("case", CONJ_CASES, ids=lambda c: "")
def test_conj_views_as_inputs(case):
    A, B = rand(3, 3, seed=51), rand(3, 2, seed=52)
    want = case(torch, A.conj(), B.conj())
    got = case(tessera, T(A).conj(), T(B).conj())
    close(got, want)


@pytest.mark.parametrize("op", [
    lambda lib, A: lib.linalg.solve(A, A.mH @ A + lib.eye(3)).abs().sum(),
    lambda lib, A: (lib.linalg.inv(A) * A.mT).sum().real,
    lambda lib, A: lib.linalg.det(A).abs(),
    lambda lib, A: lib.linalg.det(A).angle(),
    lambda lib, A: lib.logdet(A @ A.mH + lib.eye(3)).real,
    lambda lib, A: lib.linalg.cholesky(A @ A.mH + lib.eye(3)).abs().sum(),
    lambda lib, A: lib.linalg.cholesky(A @ A.mH + lib.eye(3), upper=True).imag.sum(),
    lambda lib, A: lib.cholesky_inverse(lib.linalg.cholesky(A @ A.mH + lib.eye(3))).abs().sum(),
    lambda lib, A: lib.linalg.matrix_exp(A * 0.3).real.sum(),
], ids=lambda c: "")
def test_complex_grads_match_torch(op):
    assert_grads_like_torch(op, rand(3, 3, seed=61))


# ---------------------------------------------------------------- legacy names

@pytest.mark.parametrize("case", [
    lambda lib: lib.eig(lib.eye(2)),
    lambda lib: lib.eye(2).eig(),
    lambda lib: lib.lstsq(lib.eye(2), lib.eye(2)),
    lambda lib: lib.eye(2).lstsq(lib.eye(2)),
    lambda lib: lib.solve(lib.eye(2), lib.eye(2)),
    lambda lib: lib.eye(2).solve(lib.eye(2)),
    lambda lib: lib.matrix_rank(lib.eye(2)),
], ids=lambda c: "")
def test_removed_names_raise_torch_messages(case):
    with pytest.raises(RuntimeError) as want:
        case(torch)
    with pytest.raises(RuntimeError) as got:
        case(tessera)
    assert got.value.args == want.value.args


def test_symeig_raises_current_pytorchs_removal_error():
    # torch 1.13 still computed symeig (with a warning); current PyTorch removed it
    # (torch/_linalg_utils.py), as issue 24 asks: the message names its replacements
    A = torch.eye(3, dtype=torch.float64)
    for call in (lambda: tessera.symeig(T(A)), lambda: T(A).symeig(eigenvectors=True),
                 lambda: tessera.symeig(T(A), True, False)):
        with pytest.raises(RuntimeError) as err:
            call()
        message = str(err.value)
        assert message.startswith("This function was deprecated since version 1.9 and is now removed.")
        assert "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')" in message
        assert "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')" in message


def test_pinverse_is_pinv():
    A = rand(4, 3, seed=81, dtype=torch.float64)
    close(tessera.pinverse(T(A)), torch.pinverse(A))
    close(T(A).pinverse(rcond=0.5), A.pinverse(rcond=0.5))


# ---------------------------------------------------------------- eigh, SVD, QR, LDL, lstsq

def test_logdet_sign_of_a_real_valued_complex_matrix():
    # the row swap's parity multiplies the sign as a number: -1+0j, so log(sign) is +pi i
    A = torch.tensor([[1, 2], [3, 4]], dtype=torch.complex128)
    close(tessera.logdet(T(A)), torch.logdet(A))
    for g, w in zip(tessera.linalg.slogdet(T(A)), torch.linalg.slogdet(A)):
        assert str(g.item()) == str(w.item())
    assert str(tessera.linalg.det(T(A)).item()) == str(torch.linalg.det(A).item())


def test_eig_out_takes_column_major_strides():
    A = rand(3, 3, seed=4, dtype=torch.complex128)
    got = tessera.empty(0, dtype=tessera.complex128), tessera.empty(0, dtype=tessera.complex128)
    want = torch.empty(0, dtype=torch.complex128), torch.empty(0, dtype=torch.complex128)
    tessera.linalg.eig(T(A), out=got)
    torch.linalg.eig(A, out=want)
    assert got[1].stride() == want[1].stride()
    close(got[1], want[1])


@pytest.mark.parametrize("dtype", COMPLEX)
def test_eigh_and_svd_of_complex_matrices(dtype):
    A = rand(2, 4, 4, seed=91, dtype=dtype)
    H = A + A.mH
    for uplo in ("L", "U"):
        want_L, want_V = torch.linalg.eigh(H, UPLO=uplo)
        got_L, got_V = tessera.linalg.eigh(T(H), UPLO=uplo)
        assert got_L.dtype == {torch.complex64: tessera.float32, torch.complex128: tessera.float64}[dtype]
        close(got_L, want_L, tol_of(dtype) * 10)
        close(got_V * got_V.conj(), want_V * want_V.conj(), tol_of(dtype) * 10)
    for full in (False, True):
        R = rand(3, 5, seed=92, dtype=dtype)
        want_U, want_S, want_Vh = torch.linalg.svd(R, full_matrices=full)
        got_U, got_S, got_Vh = tessera.linalg.svd(T(R), full_matrices=full)
        close(got_S, want_S, tol_of(dtype) * 10)
        close(got_U[:, :3] @ got_Vh[:3], want_U[:, :3] @ want_Vh[:3], tol_of(dtype) * 10)
        assert got_U.stride() == want_U.stride() and got_Vh.stride() == want_Vh.stride()
    # torch.svd's V is Vh^H, a conj view in both libraries
    U, S, V = tessera.svd(T(A))
    assert V.is_conj() == torch.svd(A)[2].is_conj() is True
    close(U @ (S.to(U.dtype).unsqueeze(-1) * V.mH), A, tol_of(dtype) * 10)


@pytest.mark.parametrize("case", [
    ("linalg_eigh_backward", lambda lib, A: lib.linalg.eigh(A + A.mH)[1].sum().real),
    ("svd_backward", lambda lib, A: lib.linalg.svd(A)[0].sum().real),
], ids=lambda c: c[0] if isinstance(c, tuple) else "")
def test_phase_dependent_losses_raise_torch_messages(case):
    prefix, loss = case
    A = rand(3, 3, seed=93)
    messages = []
    for lib, x in ((torch, A.clone().requires_grad_()), (tessera, T(A).requires_grad_())):
        with pytest.raises(RuntimeError) as err:
            loss(lib, x).backward()
        messages.append(str(err.value))
    assert messages[1].startswith(prefix + ": The ") and messages[0].startswith(messages[1])


@pytest.mark.parametrize("op", [
    lambda lib, A: (lib.linalg.eigh(A + A.mH)[1].abs() * lib.arange(3.0)).sum() + lib.linalg.eigvalsh(A + A.mH).sum(),
    lambda lib, A: (lambda U, S, Vh: (U @ Vh).real.sum() + S.sum())(*lib.linalg.svd(A)),
    lambda lib, A: (lambda Q, R: (Q * Q.conj()).real.sum() + R.abs().sum())(*lib.linalg.qr(A)),
    lambda lib, A: lib.linalg.det(A @ lib.diag(lib.tensor([1.0, 1.0, 0.0], dtype=A.dtype))).real,
    lambda lib, A: lib.linalg.pinv(A).abs().sum(),
    lambda lib, A: lib.linalg.pinv(A + A.mH, hermitian=True).real.sum(),
    lambda lib, A: lib.linalg.matrix_norm(A, "nuc") + lib.linalg.matrix_norm(A, 2) + lib.linalg.cond(A),
    lambda lib, A: lib.linalg.lstsq(A, A[:, :2])[0].abs().sum(),
], ids=lambda c: "")
def test_spectral_grads_match_torch(op):
    assert_grads_like_torch(op, rand(3, 3, seed=94))


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_lstsq_drivers_on_complex_input(driver, dtype):
    A, B = rand(2, 5, 3, seed=95, dtype=dtype), rand(2, 5, 2, seed=96, dtype=dtype)
    want = torch.linalg.lstsq(A, B, driver=driver)
    got = tessera.linalg.lstsq(T(A), T(B), driver=driver)
    for g, w in zip(got, want):
        assert str(g.dtype) == str(w.dtype).replace("torch", "tessera") and tuple(g.shape) == tuple(w.shape)
        close(g, w, tol_of(dtype) * 100)


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_ldl_with_both_flags(hermitian, dtype):
    A = rand(4, 4, seed=97, dtype=dtype)
    S = A + (A.mH if hermitian else A.mT)
    B = rand(4, 2, seed=98, dtype=dtype)
    want_LD, want_piv = torch.linalg.ldl_factor(S, hermitian=hermitian)
    got_LD, got_piv = tessera.linalg.ldl_factor(T(S), hermitian=hermitian)
    assert got_piv.tolist() == want_piv.tolist()
    close(got_LD, want_LD, tol_of(dtype) * 10)
    got_X = tessera.linalg.ldl_solve(got_LD, got_piv, T(B), hermitian=hermitian)
    close(got_X, torch.linalg.ldl_solve(want_LD, want_piv, B, hermitian=hermitian), tol_of(dtype) * 100)
    close(T(S) @ got_X, B, tol_of(dtype) * 100)


def test_ormqr_transpose_applies_the_conjugate_transpose():
    A, C = rand(4, 3, seed=99), rand(4, 2, seed=100)
    a, tau = tessera.geqrf(T(A))
    close(tessera.ormqr(a, tau, T(C), transpose=True), torch.ormqr(*torch.geqrf(A), C, transpose=True))
    # the full Q from ormqr of the identity; transpose=True applies its conjugate transpose
    full_Q = tessera.ormqr(a, tau, tessera.eye(4, dtype=tessera.complex128))
    close(full_Q[:, :3], tessera.linalg.householder_product(a, tau))
    Qh_C = torch.from_numpy(full_Q.numpy()).mH @ C
    close(tessera.ormqr(a, tau, T(C), transpose=True), Qh_C)


@pytest.mark.parametrize("case", [
    lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, dtype=lib.complex128), dtype=lib.float64),
    lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, dtype=lib.complex128), "nuc", dtype=lib.complex64),
    lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, dtype=lib.float64), 1, dtype=lib.complex128),
    lambda lib: lib.linalg.pinv(lib.ones(2, 2, dtype=lib.complex128), atol=lib.tensor(1j)),
    lambda lib: lib.linalg.matrix_rank(lib.ones(2, 2, dtype=lib.complex128), rtol=lib.tensor(1j)),
    lambda lib: lib.linalg.eigh(lib.ones(2, 3, dtype=lib.complex64)),
], ids=lambda c: "")
def test_complex_norm_and_tolerance_errors_as_torch(case):
    same_error(lambda: case(torch), lambda: case(tessera))


def test_complex_norms_are_real():
    A = rand(2, 3, 3, seed=101)
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        got, want = tessera.linalg.matrix_norm(T(A), ord), torch.linalg.matrix_norm(A, ord)
        assert got.dtype == tessera.float64
        close(got, want)
    close(tessera.linalg.matrix_norm(T(A), "nuc", dtype=tessera.complex128),
          torch.linalg.matrix_norm(A, "nuc", dtype=torch.complex128))
    close(tessera.linalg.cond(T(A)), torch.linalg.cond(A))
    assert tessera.linalg.matrix_rank(T(A)).tolist() == torch.linalg.matrix_rank(A).tolist()


# ---------------------------------------------------------------- degenerate spectra

@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("op", [
    lambda lib, A: lib.linalg.eigvalsh(A).sum(),
    lambda lib, A: lib.linalg.svdvals(A).sum(),
    lambda lib, A: lib.linalg.matrix_norm(A, 2),
    lambda lib, A: lib.linalg.matrix_norm(A * 0, "nuc"),
    lambda lib, A: lib.linalg.cond(A @ lib.diag(lib.tensor([2.0, 1.0, 1.0], dtype=A.dtype))),
    lambda lib, A: lib.linalg.pinv(A @ lib.diag(lib.tensor([2.0, 0.0, 0.0], dtype=A.dtype))).abs().sum(),
    lambda lib, A: lib.linalg.pinv(lib.diag(lib.tensor([2.0, 0.0, 0.0], dtype=A.dtype)) * A,
                                   hermitian=True).abs().sum(),
], ids=lambda c: "")
def test_repeated_and_zero_values_give_torchs_finite_grads(dtype, op):
    # only the eigen- or singular values used: no 1 / (s_j - s_i) term, whatever the
    # multiplicities (an identity has one eigenvalue three times)
    assert_grads_like_torch(op, torch.eye(3, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("op", [
    lambda lib, A: lib.linalg.svdvals(A).sum(),
    lambda lib, A: (lambda U, S, Vh: (U @ Vh).real.sum())(*lib.linalg.svd(A, full_matrices=False)),
    lambda lib, A: lib.linalg.eigvalsh(A + A.mH).pow(2).sum(),
    lambda lib, A: (lib.linalg.eigh(A + A.mH)[1].abs() * lib.arange(3.0, dtype=A.real.dtype)).sum(),
    lambda lib, A: lib.linalg.pinv(A).abs().sum(),
], ids=lambda c: "")
def test_second_derivatives_of_spectral_ops_match_torch(dtype, op):
    A = rand(3, 3, seed=111, dtype=dtype)
    results = []
    for lib, x in ((torch, A.clone().requires_grad_()), (tessera, T(A).requires_grad_())):
        g, = lib.autograd.grad(op(lib, x), x, create_graph=True)
        gg, = lib.autograd.grad(g.abs().sum(), x)
        results.append(gg)
    assert np.isfinite(results[1].numpy()).all()
    close(results[1], results[0], 1e-6)


def test_svd_gauge_check_has_torchs_tolerance():
    # a slightly phase-dependent loss: torch raises at this scale, and so does tessera
    torch.manual_seed(1)
    A = torch.randn(4, 3, dtype=torch.complex128)
    for lib, x in ((torch, A.clone().requires_grad_()), (tessera, T(A).requires_grad_())):
        with pytest.raises(RuntimeError, match="^svd_backward: The singular vectors in the complex case"):
            (lib.linalg.svd(x, full_matrices=False)[0].imag.sum() * 0.006).backward()


@pytest.mark.parametrize("case", [
    lambda lib: lib.linalg.pinv(lib.eye(2, dtype=lib.complex128), lib.tensor(0.5 + 0j)),
    lambda lib: lib.linalg.matrix_rank(lib.eye(2, dtype=lib.complex128), lib.tensor(0.5 + 0j)),
    lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, dtype=lib.complex128), 3, dtype=lib.float64),
    lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2, dtype=lib.complex128), "abc", dtype=lib.float64),
], ids=lambda c: "")
def test_tolerance_and_order_errors_as_torch(case):
    same_error(lambda: case(torch), lambda: case(tessera))


def test_norm_over_two_dims_without_ord_is_the_vector_norm():
    A = rand(2, 3, 4, seed=112)
    close(tessera.linalg.norm(T(A), dim=(0, 1)), torch.linalg.norm(A, dim=(0, 1)))
    close(tessera.linalg.norm(T(A).real, dim=(0, 2)), torch.linalg.norm(A.real, dim=(0, 2)))


def test_cond_of_empty_matrices_is_zero():
    for dtype in (torch.float64, torch.complex128):
        A = torch.zeros(2, 0, 0, dtype=dtype)
        close(tessera.linalg.cond(T(A)), torch.linalg.cond(A))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [1, 4, 16, 17])
def test_complex_lu_of_tiny_and_larger_matrices_as_torch(dtype, n):
    # up to 16 rows the unblocked loops run (SmallMatrix.h), past it LAPACK: both give
    # torch's pivots (|re| + |im| pivoting), factors and every form of solve
    A, B = rand(64, n, n, seed=n, dtype=dtype), rand(64, n, 3, seed=n + 1, dtype=dtype)
    LU, piv = torch.linalg.lu_factor(A)
    tLU, tpiv = tessera.linalg.lu_factor(T(A))
    np.testing.assert_array_equal(tpiv.numpy(), piv.numpy())
    close(tLU, LU, tol_of(dtype))
    for left in (True, False):
        for adjoint in (False, True):
            rhs = B if left else B.mT
            want = torch.linalg.lu_solve(LU, piv, rhs, left=left, adjoint=adjoint)
            close(tessera.linalg.lu_solve(tLU, tpiv, T(rhs), left=left, adjoint=adjoint), want, tol_of(dtype) * 10)
    close(tessera.linalg.inv(T(A)), torch.linalg.inv(A), tol_of(dtype) * 10)
    close(tessera.linalg.det(T(A)), torch.linalg.det(A), tol_of(dtype) * 10)
    singular = A.clone()
    singular[:, :, -1] = 0
    same_error(lambda: torch.linalg.inv(singular), lambda: tessera.linalg.inv(T(singular)))
