"""torch.svd_lowrank, torch.pca_lowrank and torch.lobpcg against torch 1.13 (and
LAPACK's full decompositions through torch.linalg). These are randomized or iterative, so
tessera's draws differ from torch's: the tests check what is determined, on fixed seeds:
exact reconstructions of exactly low-rank matrices, singular values and eigenvalues equal
to torch's, orthonormality, eigen-residuals, torch's errors, and gradients (gradcheck and
torch's lobpcg backward).
"""
import numpy as np
import pytest
import torch

import tessera
from tessera.autograd import gradcheck


def T(t):
    return tessera.tensor(t.numpy())


def N(t):
    return np.asarray(t.detach().resolve_conj().numpy()) if hasattr(t, "detach") else np.asarray(t.numpy())


def rand(*shape, seed=0, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def low_rank(m, n, rank, seed=0, dtype=torch.float64, batch=()):
    return rand(*batch, m, rank, seed=seed, dtype=dtype) @ rand(*batch, rank, n, seed=seed + 1, dtype=dtype)


def assert_orthonormal_columns(Q, tol=1e-10):
    q = N(Q)
    gram = np.swapaxes(q.conj(), -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), atol=tol)


# ---- svd_lowrank / pca_lowrank

@pytest.mark.parametrize("shape,rank,dtype", [
    ((20, 15), 3, torch.float64), ((12, 30), 4, torch.float64), ((18, 10), 2, torch.complex128),
    ((2, 16, 12), 3, torch.float64)])
def test_svd_lowrank_recovers_an_exactly_low_rank_matrix(shape, rank, dtype):
    *batch, m, n = shape
    A = low_rank(m, n, rank, seed=3, dtype=dtype, batch=tuple(batch))
    tessera.manual_seed(0)
    U, S, V = tessera.svd_lowrank(T(A), q=rank + 2)
    want_shapes = (tuple(batch) + (m, rank + 2), tuple(batch) + (rank + 2,), tuple(batch) + (n, rank + 2))
    if not dtype.is_complex:  # torch 1.13 (and current) sketch complex inputs with a float matrix and fail
        tU, tS, tV = torch.svd_lowrank(A, q=rank + 2)
        assert (tU.shape, tS.shape, tV.shape) == want_shapes
    assert (U.shape, S.shape, V.shape) == want_shapes
    assert S.dtype == tessera.float64 and U.dtype == T(A).dtype
    assert_orthonormal_columns(U)
    assert_orthonormal_columns(V)
    approx = N(U) @ (N(S)[..., :, None] * np.swapaxes(N(V).conj(), -1, -2))
    np.testing.assert_allclose(approx, A.numpy(), atol=1e-10)
    # the top singular values are A's (torch's LAPACK svdvals)
    np.testing.assert_allclose(N(S)[..., :rank], torch.linalg.svdvals(A)[..., :rank].numpy(), rtol=1e-10)


def test_svd_lowrank_with_a_mean_approximates_a_minus_m():
    A = low_rank(15, 10, 2, seed=5)
    M = rand(1, 10, seed=7)
    tessera.manual_seed(1)
    U, S, V = tessera.svd_lowrank(T(A + M), q=4, M=T(M))
    approx = N(U) @ (N(S)[:, None] * N(V).T)
    np.testing.assert_allclose(approx, A.numpy(), atol=1e-10)


def test_svd_lowrank_power_iterations_sharpen_a_full_rank_approximation():
    # a decaying spectrum: with q above the wanted rank and niter power steps, the top
    # singular values match LAPACK's closely
    Q1 = torch.linalg.qr(rand(40, 40, seed=11)).Q
    Q2 = torch.linalg.qr(rand(30, 30, seed=12)).Q
    s = 2.0 ** -torch.arange(30, dtype=torch.float64)
    A = Q1[:, :30] @ torch.diag(s) @ Q2.T
    tessera.manual_seed(2)
    _, S, _ = tessera.svd_lowrank(T(A), q=10, niter=4)
    np.testing.assert_allclose(N(S)[:5], s[:5].numpy(), rtol=1e-8)


def test_pca_lowrank_matches_the_principal_components_of_centred_data():
    data = low_rank(50, 8, 3, seed=21) + 5.0  # an offset the centring removes
    tessera.manual_seed(3)
    U, S, V = tessera.pca_lowrank(T(data), q=4)
    tU, tS, tV = torch.pca_lowrank(data, q=4)
    assert (U.shape, S.shape, V.shape) == (tU.shape, tS.shape, tV.shape)
    np.testing.assert_allclose(N(S)[:3], tS[:3].numpy(), rtol=1e-9)
    # the leading directions span the same subspace as torch's
    np.testing.assert_allclose(N(V)[:, :3] @ N(V)[:, :3].T, (tV[:, :3] @ tV[:, :3].T).numpy(), atol=1e-9)
    # center=False keeps the offset, whose direction then leads
    tessera.manual_seed(3)
    _, S_raw, _ = tessera.pca_lowrank(T(data), q=4, center=False)
    np.testing.assert_allclose(N(S_raw)[0], torch.linalg.svdvals(data)[0].item(), rtol=1e-9)


def test_pca_lowrank_default_q_and_errors_as_torch():
    data = rand(5, 4, seed=30)
    assert tessera.pca_lowrank(T(data))[1].shape == torch.pca_lowrank(data)[1].shape == (4,)
    for kwargs in ({"q": 5}, {"q": -1}, {"niter": -1}):
        with pytest.raises(ValueError) as want:
            torch.pca_lowrank(data, **kwargs)
        with pytest.raises(ValueError) as got:
            tessera.pca_lowrank(T(data), **kwargs)
        assert str(got.value) == str(want.value)


def test_svd_lowrank_refuses_integer_and_one_dimensional_inputs():
    with pytest.raises(RuntimeError, match="floating point or complex"):
        tessera.svd_lowrank(tessera.ones(4, 3, dtype=tessera.int64))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tessera.svd_lowrank(tessera.ones(4))


def test_svd_lowrank_gradcheck():
    A = T(rand(6, 5, seed=40)).requires_grad_()

    def singular_values(a):
        tessera.manual_seed(4)  # the same sketch for every evaluation
        return tessera.svd_lowrank(a, q=3, niter=2)[1]

    assert gradcheck(singular_values, (A,))

    def projector(a):
        tessera.manual_seed(4)
        U, S, V = tessera.pca_lowrank(a, q=2)
        return V @ V.mT  # free of the columns' signs

    assert gradcheck(projector, (A,))


# ---- lobpcg

def spd(m, seed, spectrum=None, batch=()):
    Q = torch.linalg.qr(rand(*batch, m, m, seed=seed)).Q
    d = torch.linspace(1.0, 10.0, m, dtype=torch.float64) if spectrum is None else spectrum
    return (Q * d) @ Q.mT


def check_eigenpairs(A, E, X, B=None, tol=1e-7):
    a, e, x = A.numpy(), N(E), N(X)
    b = np.eye(a.shape[-1]) if B is None else B.numpy()
    residual = a @ x - (b @ x) * e[..., None, :]
    assert np.abs(residual).max() < tol * np.abs(a).max()
    gram = np.swapaxes(x, -1, -2) @ b @ x
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(x.shape[-1]), gram.shape), atol=1e-6)


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_finds_torch_s_eigenvalues(method, largest):
    A = spd(30, seed=50)
    tessera.manual_seed(5)
    E, X = tessera.lobpcg(T(A), k=3, largest=largest, method=method, tol=1e-9)
    torch.manual_seed(5)
    tE, tX = torch.lobpcg(A, k=3, largest=largest, method=method, tol=1e-9)
    assert (E.shape, X.shape) == (tE.shape, tX.shape)
    np.testing.assert_allclose(N(E), tE.numpy(), rtol=1e-8)
    eigvals = torch.linalg.eigvalsh(A)
    want = eigvals.flip(0)[:3] if largest else eigvals[:3]
    np.testing.assert_allclose(N(E), want.numpy(), rtol=1e-8)
    check_eigenpairs(A, E, X)


def test_lobpcg_generalized_preconditioned_batched_and_float32():
    A = spd(24, seed=60)
    B = spd(24, seed=61, spectrum=torch.linspace(1.0, 2.0, 24, dtype=torch.float64))
    tessera.manual_seed(6)
    E, X = tessera.lobpcg(T(A), k=2, B=T(B), tol=1e-9)
    L = torch.linalg.cholesky(B)
    reduced = torch.linalg.solve_triangular(L, torch.linalg.solve_triangular(L, A, upper=False).mT, upper=False)
    np.testing.assert_allclose(N(E), torch.linalg.eigvalsh(reduced).flip(0)[:2].numpy(), rtol=1e-8)
    check_eigenpairs(A, E, X, B)
    # a preconditioner (the inverse of A's diagonal) leaves the answer as it was
    iK = torch.diag(1.0 / torch.diagonal(A))
    E2, _ = tessera.lobpcg(T(A), k=2, iK=T(iK), largest=False, tol=1e-9)
    np.testing.assert_allclose(N(E2), torch.linalg.eigvalsh(A)[:2].numpy(), rtol=1e-8)
    # a batch runs each matrix
    Ab = spd(21, seed=62, batch=(2,))
    Eb, Xb = tessera.lobpcg(T(Ab), k=2, tol=1e-9)
    assert Eb.shape == (2, 2) and Xb.shape == (2, 21, 2)
    np.testing.assert_allclose(N(Eb), torch.linalg.eigvalsh(Ab).flip(-1)[..., :2].numpy(), rtol=1e-8)
    # float32, with its default tolerance
    E32, X32 = tessera.lobpcg(T(A.float()), k=2)
    assert E32.dtype == tessera.float32 and X32.dtype == tessera.float32
    np.testing.assert_allclose(N(E32), torch.linalg.eigvalsh(A).flip(0)[:2].numpy(), rtol=1e-4)


def tracked_steps(lib, A, **kwargs):
    """The (istep, converged_count) pairs a tracker sees; it stops the run at step `stop`."""
    stop = kwargs.pop("stop", None)
    steps = []

    def tracker(worker):
        steps.append((worker.ivars["istep"], worker.ivars["converged_count"]))
        if stop is not None:
            worker.bvars["force_stop"] = worker.ivars["istep"] >= stop

    lib.lobpcg(A if lib is torch else T(A), tracker=tracker, **kwargs)
    return steps


def test_lobpcg_starting_vectors_niter_and_tracker():
    A = spd(30, seed=70)
    X0 = rand(30, 4, seed=71)
    E, X = tessera.lobpcg(T(A), X=T(X0), tol=1e-9)
    assert E.shape == (4,) and X.shape == (30, 4)  # k and n from X
    np.testing.assert_allclose(N(E), torch.linalg.eigvalsh(A).flip(0)[:4].numpy(), rtol=1e-8)
    steps = tracked_steps(tessera, A, X=T(X0), tol=1e-9)
    assert [s[0] for s in steps] == list(range(1, len(steps) + 1))  # the first pass is step 1
    assert steps[-1][1] == 4 and all(a[1] <= b[1] for a, b in zip(steps, steps[1:]))
    # niter counts the passes (0 and -1: until convergence) and a tracker may stop the run,
    # as torch's do
    for kwargs in ({"niter": 1}, {"niter": 3}, {"stop": 2}):
        want = [s[0] for s in tracked_steps(torch, A, k=2, tol=1e-14, **kwargs)]
        got = [s[0] for s in tracked_steps(tessera, A, k=2, tol=1e-14, **kwargs)]
        assert got == want, kwargs
    for niter in (0, -1):
        steps = tracked_steps(tessera, A, k=2, tol=1e-9, niter=niter)
        assert steps[-1][1] == 2 and len(steps) > 1


def test_lobpcg_float32_smallest_of_a_wide_spectrum():
    Q = torch.linalg.qr(rand(60, 60, seed=75)).Q
    A = (Q * torch.logspace(0, 3, 60, dtype=torch.float64)) @ Q.T
    exact = torch.linalg.eigvalsh(A)[:3].numpy()
    for seed in range(3):
        tessera.manual_seed(seed)
        E, _ = tessera.lobpcg(T(A.float()), k=3, largest=False)
        torch.manual_seed(seed)
        tE, _ = torch.lobpcg(A.float(), k=3, largest=False)
        err = np.abs(N(E) - exact) / exact
        torch_err = np.abs(tE.numpy() - exact) / exact
        assert err.max() < max(5 * torch_err.max(), 2e-3), (err, torch_err)


def test_lobpcg_basic_with_an_exact_eigenvector_among_the_starting_vectors():
    A = torch.diag(torch.arange(1.0, 16.0, dtype=torch.float64))
    X0 = torch.zeros(15, 2, dtype=torch.float64)
    X0[14, 0] = 1.0  # the largest eigenvector: its residual is exactly zero
    X0[:, 1] = rand(15, seed=76)
    E, X = tessera.lobpcg(T(A), X=T(X0), method="basic", tol=1e-9)
    np.testing.assert_allclose(N(E), [15.0, 14.0], rtol=1e-8)
    check_eigenpairs(A, E, X)


def test_lobpcg_errors():
    A = spd(8, seed=80)
    with pytest.raises(ValueError) as want:
        torch.lobpcg(A, k=3)
    with pytest.raises(ValueError) as got:
        tessera.lobpcg(T(A), k=3)
    assert str(got.value) == str(want.value)  # m < 3n
    with pytest.raises(ValueError, match="square"):
        tessera.lobpcg(tessera.ones(9, 8, dtype=tessera.float64))
    with pytest.raises(ValueError, match="B must have"):
        tessera.lobpcg(T(spd(9, seed=81)), B=tessera.eye(8, dtype=tessera.float64))
    with pytest.raises(NotImplementedError, match="complex"):
        tessera.lobpcg(tessera.eye(9, dtype=tessera.complex128))
    with pytest.raises(ValueError, match="method"):
        tessera.lobpcg(T(spd(9, seed=82)), method="fast")


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_gradients_match_torch(largest):
    A = spd(12, seed=90, spectrum=torch.tensor([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], dtype=torch.float64))
    weights = rand(12, 12, seed=91)
    X0 = rand(12, 3, seed=92)

    def loss(lib, a):
        E, X = lib.lobpcg(a, k=2, X=X0 if lib is torch else T(X0), largest=largest, tol=1e-14, niter=500)
        # sign-free in X: its projector
        return (E * E).sum() + ((X @ X.mT) * (weights if lib is torch else T(weights))).sum()

    a_torch = A.clone().requires_grad_()
    loss(torch, a_torch).backward()
    a_tessera = T(A).requires_grad_()
    loss(tessera, a_tessera).backward()
    np.testing.assert_allclose(N(a_tessera.grad), a_torch.grad.numpy(), atol=1e-7)

    def outputs(a):
        E, X = tessera.lobpcg(a, k=2, X=T(X0), largest=largest, tol=1e-14, niter=500)
        return E, X @ X.mT

    assert gradcheck(outputs, (T(A).requires_grad_(),), atol=1e-6)


def test_lobpcg_backward_refuses_b():
    A = T(spd(9, seed=95)).requires_grad_()
    E, _ = tessera.lobpcg(A, k=1, B=tessera.eye(9, dtype=tessera.float64))
    with pytest.raises(ValueError, match="B != I"):
        E.sum().backward()


def test_svd_and_pca_lowrank_on_meta_tensors_give_torch_s_shapes():
    for lib in (torch, tessera):
        A = lib.empty(2, 10, 8, device="meta")
        got = [tuple(t.shape) for t in lib.svd_lowrank(A, q=3)] + [tuple(t.shape) for t in lib.pca_lowrank(A, q=3)]
        assert got == [(2, 10, 3), (2, 3), (2, 8, 3)] * 2
        assert all(t.is_meta for t in lib.svd_lowrank(A, q=3))
