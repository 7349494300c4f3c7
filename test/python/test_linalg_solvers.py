"""linalg.matrix_exp, the Householder ops (geqrf, householder_product / orgqr, ormqr),
linalg.lstsq and the LDL ops against torch 1.13: what the registry (opinfo_linalg.py) does
not sweep. Errors (class and message), every lstsq driver's four outputs and their shapes
(vector right-hand sides, broadcast batches, rank-deficient and empty inputs), matrix_exp
across norms that need many squarings, user-given LDL pivots checked before LAPACK reads
them, Meta shapes, out=, and gradients (gradcheck, gradgradcheck and torch's grads)."""
import numpy as np
import pytest
import torch

import tessera
from tessera.autograd import gradcheck, gradgradcheck
from torch_compare import same_error


def T(t):
    return tessera.tensor(t.numpy())


def close(got, want, tol=1e-9):
    np.testing.assert_allclose(np.asarray(got.numpy()), want.numpy(), rtol=tol, atol=tol)


def rand(*shape, seed=0, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@pytest.mark.parametrize("case", [
    lambda lib: lib.linalg.matrix_exp(lib.ones(2, 3)),
    lambda lib: lib.linalg.matrix_exp(lib.ones(3)),
    lambda lib: lib.matrix_exp(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.geqrf(lib.ones(3)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(3)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 3, 2), lib.ones(3, 2)),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(2, 1)),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(3), lib.ones(3, 3)),
    lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(4, 3)),
    lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(3, 4), left=False),
    lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(2, 3, 3)),
    lambda lib: lib.ormqr(lib.ones(3, 2), lib.ones(2), lib.ones(3)),
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(5, 2), driver="foo"),
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(5, 2, dtype=lib.float64)),
    lambda lib: lib.linalg.lstsq(lib.ones(3), lib.ones(3)),
    lambda lib: lib.linalg.lstsq(lib.ones(2, 5, 3), lib.ones(2, 4, 4)),
    lambda lib: lib.linalg.lstsq(lib.ones(2, 5, 3), lib.ones(2, 4)),
    lambda lib: lib.linalg.lstsq(lib.ones(2, 5, 3), lib.ones(5)),
    lambda lib: lib.linalg.lstsq(lib.ones(5, 3), lib.ones(2, 5, 2)),
    lambda lib: lib.linalg.ldl_factor(lib.ones(2, 3)),
    lambda lib: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(lib.eye(3)), lib.ones(4, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.tensor([1.0, 2.0, 3.0]), lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.tensor([1, 2], dtype=lib.int32), lib.ones(3, 2)),
    lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.tensor([1, 2, 3], dtype=lib.int32),
                                     lib.ones(3, 2, dtype=lib.float64)),
], ids=lambda c: "")
def test_errors_as_torch(case):
    same_error(lambda: case(torch), lambda: case(tessera))


@pytest.mark.parametrize("scale", [1e-3, 1.0, 5.4, 30.0, 300.0])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_matrix_exp_across_norms(scale, dtype):
    # Large norms take many squarings; a batch mixes them, each matrix scaled on its own.
    A = (rand(3, 5, 5, seed=int(scale * 10) + 1) * torch.tensor([scale, scale / 7, 0.0]).view(3, 1, 1)).to(dtype)
    want = torch.linalg.matrix_exp(A)
    got = tessera.linalg.matrix_exp(T(A))
    scale_of = want.abs().amax(dim=(-2, -1), keepdim=True).clamp_min(1.0)
    tol = 1e-12 if dtype == torch.float64 else 2e-5
    np.testing.assert_allclose((got.numpy() / scale_of.numpy()), (want / scale_of).numpy(), atol=tol * 50, rtol=0)
    # exp of a diagonal matrix, and exp(A) exp(-A) = I
    d = rand(4, seed=3, dtype=dtype)
    close(tessera.linalg.matrix_exp(T(torch.diag(d))), torch.diag(d.exp()), 1e-5 if dtype == torch.float32 else 1e-12)


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_outputs_of_every_driver(driver):
    cases = [
        (rand(2, 5, 3, seed=1), rand(2, 5, 4, seed=2)),  # tall, batched
        (rand(3, 5, seed=3), rand(3, 2, seed=4)),  # wide: minimum-norm solution
        (rand(2, 5, 3, seed=5), rand(2, 5, seed=6)),  # vector right-hand sides
        (rand(1, 5, 3, seed=7), rand(3, 5, 4, seed=8)),  # A broadcast over B's batch
        (rand(0, 5, 3, seed=9), rand(0, 5, 4, seed=10)),  # empty batch
        (rand(5, 0, seed=11), rand(5, 4, seed=12)),  # no unknowns
        (rand(0, 3, seed=13), rand(0, 4, seed=14)),  # no equations
    ]
    if driver != "gels":
        low = rand(6, 2, seed=17) @ rand(2, 3, seed=18)  # rank 2: the rank-revealing drivers
        cases.append((low, rand(6, 2, seed=19)))
    for A, B in cases:
        want = list(torch.linalg.lstsq(A, B, driver=driver))
        got = tessera.linalg.lstsq(T(A), T(B), driver=driver)
        if driver == "gels" and A.shape[-1] == 0:
            # no unknowns: the residual is all of B. torch 1.13's gels reports zeros here
            # (its gelsd/gelss the squared norms, as tessera does for every driver).
            want[1] = B.square().sum(-2)
        for g, w, name in zip(got, want, ("solution", "residuals", "rank", "singular_values")):
            assert tuple(g.shape) == tuple(w.shape), (name, A.shape, B.shape)
            assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], name
            close(g, w, 1e-8)
    # No right-hand sides: tessera still factors A (rank and singular values of A). torch
    # 1.13 skips LAPACK for gelsy (rank 0), and fails for gelsd (a LAPACK argument error)
    # and gelss (a crash), so the reference is A's own rank and singular values.
    A = rand(5, 3, seed=15)
    got = tessera.linalg.lstsq(T(A), tessera.zeros(5, 0, dtype=tessera.float64), driver=driver)
    assert tuple(got.solution.shape) == (3, 0) and got.residuals.numel() == 0
    if driver != "gels":
        assert int(got.rank) == 3
    if driver in ("gelsd", "gelss"):
        close(got.singular_values, torch.linalg.svdvals(A), 1e-12)
    # rcond cuts small singular values: a cut-off above the smallest drops the rank
    A = torch.diag(torch.tensor([1.0, 1e-3, 1e-9], dtype=torch.float64))
    B = rand(3, 1, seed=20)
    if driver != "gels":
        for rcond in (None, 1e-6, 1e-2):
            # torch 1.13 hands gelsy an uninitialised column-pivot array (LAPACK reads it as
            # columns to move first), so its gelsy rank of this matrix varies from run to run:
            # its SVD driver is the reference.
            want = torch.linalg.lstsq(A, B, rcond=rcond, driver="gelsd" if driver == "gelsy" else driver)
            got = tessera.linalg.lstsq(T(A), T(B), rcond=rcond, driver=driver)
            assert int(got.rank) == int(want.rank)
            close(got.solution, want.solution, 1e-6)


def test_lstsq_of_rank_deficient_input_with_gels_raises():
    # gels needs full rank: an exactly zero diagonal of R raises LinAlgError, as torch's.
    A = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]], dtype=torch.float64)
    B = torch.ones(3, 1, dtype=torch.float64)
    same_error(lambda: torch.linalg.lstsq(A, B, driver="gels"), lambda: tessera.linalg.lstsq(T(A), T(B), driver="gels"))


def test_dtype_errors_in_our_words():
    # torch 1.13's words here are a typo ("dtypeFloat") and a generic line; the class is the same.
    with pytest.raises(RuntimeError, match="same dtype, but input has dtype Float and other has dtype Double"):
        tessera.ormqr(tessera.ones(3, 2), tessera.ones(2), tessera.ones(3, 3, dtype=tessera.float64))
    with pytest.raises(RuntimeError, match="floating point or complex tensor as input. Got Long"):
        tessera.linalg.lstsq(tessera.ones(5, 3, dtype=tessera.int64), tessera.ones(5, 2, dtype=tessera.int64))


def test_ldl_matches_torch_and_solves():
    for A in (rand(4, 4, seed=30), torch.tensor([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=torch.float64),
              rand(2, 5, 5, seed=31)):
        A = A + A.mT
        LD, pivots, info = torch.linalg.ldl_factor_ex(A)
        got = tessera.linalg.ldl_factor_ex(T(A))
        close(got[0], LD, 1e-10)
        assert got[1].numpy().tolist() == pivots.numpy().tolist() and got[2].numpy().tolist() == info.numpy().tolist()
        assert got[0].stride() == LD.stride()  # column-major, as torch
        B = rand(*A.shape[:-1], 3, seed=32)
        close(tessera.linalg.ldl_solve(got[0], got[1], T(B)), torch.linalg.solve(A, B), 1e-9)
    # batch broadcast of LD against B
    A = rand(3, 3, seed=33)
    A = A + A.mT
    LD, pivots = tessera.linalg.ldl_factor(T(A))
    B = rand(2, 3, 1, seed=34)
    close(tessera.linalg.ldl_solve(LD, pivots, T(B)), torch.linalg.solve(A, B), 1e-9)


def test_ldl_of_a_singular_matrix():
    LD, pivots, info = tessera.linalg.ldl_factor_ex(tessera.zeros(3, 3))
    assert int(info) == 1
    with pytest.raises(tessera.linalg.LinAlgError, match="exactly zero"):
        tessera.linalg.ldl_factor(tessera.zeros(3, 3))
    with pytest.raises(tessera.linalg.LinAlgError, match=r"Batch element 1"):
        tessera.linalg.ldl_factor_ex(tessera.stack([tessera.eye(2), tessera.zeros(2, 2)]), check_errors=True)


def test_bad_ldl_pivots_never_reach_lapack():
    # sytrs follows the pivots: out of range, or a 2x2 block cut off at the end, would read
    # outside the matrix.
    for bad in ([0, 2, 3], [1, 2, 4], [1, -7, -7], [1, 2, -3], [-1, 2, 3], [-2**31, -2**31, 3]):
        with pytest.raises(RuntimeError, match="ldl_solve"):
            tessera.linalg.ldl_solve(tessera.eye(3), tessera.tensor(bad, dtype=tessera.int32), tessera.ones(3, 1))
    # int64 pivots are checked before LAPACK's int: 2^32 + k must not pass as k
    for bad in ([2**32 + 1, 2**32 + 2, 2**32 + 3], [2**31, 2, 3]):
        with pytest.raises(RuntimeError, match="ldl_solve"):
            tessera.linalg.ldl_solve(tessera.eye(3), tessera.tensor(bad, dtype=tessera.int64), tessera.ones(3, 1))
    # a genuine 2x2 block passes
    A = tessera.tensor([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=tessera.float64)
    LD, pivots = tessera.linalg.ldl_factor(A)
    assert (pivots.numpy() < 0).any()
    tessera.linalg.ldl_solve(LD, pivots, tessera.ones(3, 1, dtype=tessera.float64))


def test_meta_shapes():
    m = tessera.empty(2, 5, 3, device="meta", dtype=tessera.float64)
    a, tau = tessera.geqrf(m)
    assert a.is_meta and tuple(tau.shape) == (2, 3)
    assert tuple(tessera.linalg.householder_product(m, tau).shape) == (2, 5, 3)
    assert tuple(tessera.ormqr(m, tau, tessera.empty(2, 5, 4, device="meta", dtype=tessera.float64)).shape) == (2, 5, 4)
    sol, res, rank, sv = tessera.linalg.lstsq(m, tessera.empty(2, 5, 4, device="meta", dtype=tessera.float64),
                                              driver="gelsd")
    assert [tuple(t.shape) for t in (sol, res, rank, sv)] == [(2, 3, 4), (2, 4), (2,), (2, 3)]
    sq = tessera.empty(2, 4, 4, device="meta")
    assert tessera.linalg.matrix_exp(sq).is_meta
    LD, piv, info = tessera.linalg.ldl_factor_ex(sq)
    assert (tuple(LD.shape), tuple(piv.shape), tuple(info.shape)) == ((2, 4, 4), (2, 4), (2,))
    assert tuple(tessera.linalg.ldl_solve(LD, piv, tessera.empty(4, 2, device="meta")).shape) == (2, 4, 2)


def test_out_forms():
    A, B = rand(5, 3, seed=40), rand(5, 2, seed=41)
    outs = [tessera.empty(0, dtype=tessera.float64), tessera.empty(0, dtype=tessera.float64),
            tessera.empty(0, dtype=tessera.int64), tessera.empty(0, dtype=tessera.float64)]
    tessera.linalg.lstsq(T(A), T(B), driver="gelsd", out=tuple(outs))
    close(outs[0], torch.linalg.lstsq(A, B, driver="gelsd").solution, 1e-9)
    out = tessera.empty(0, dtype=tessera.float64)
    tessera.linalg.matrix_exp(T(A[:3]), out=out)
    close(out, torch.linalg.matrix_exp(A[:3]), 1e-12)
    a, tau = tessera.empty(0, dtype=tessera.float64), tessera.empty(0, dtype=tessera.float64)
    tessera.geqrf(T(A), out=(a, tau))
    close(tessera.linalg.householder_product(a, tau) @ a.triu()[:3], A, 1e-12)


# ---- gradients
def grad_case(fn, *inputs, gradgrad=False):
    leaves = [T(x).requires_grad_() for x in inputs]
    assert gradcheck(lambda *a: fn(tessera, *a), leaves)
    if gradgrad:
        assert gradgradcheck(lambda *a: fn(tessera, *a), leaves)
    ref = [x.clone().requires_grad_() for x in inputs]
    out_t, out_m = fn(torch, *ref), fn(tessera, *leaves)
    w = rand(*out_t.shape, seed=60)
    (out_t * w).sum().backward()
    (out_m * T(w)).sum().backward()
    for mine, ref_leaf in zip(leaves, ref):
        close(mine.grad, ref_leaf.grad, 1e-7)


def test_grads():
    grad_case(lambda lib, a: lib.linalg.matrix_exp(a), rand(2, 3, 3, seed=70) * 3, gradgrad=True)
    grad_case(lambda lib, a, t: lib.linalg.householder_product(a, t), rand(5, 3, seed=71), rand(2, seed=72),
              gradgrad=True)
    # torch 1.13 has no ormqr derivative (current PyTorch has one): the reference is the
    # same product through householder_product, Q formed.
    def ormqr_as_product(lib, a, t, c, left, transpose):
        if lib is tessera:
            return lib.ormqr(a, t, c, left=left, transpose=transpose)
        square = torch.cat([a, torch.zeros(a.shape[0], a.shape[0] - a.shape[1], dtype=a.dtype)], -1)
        Q = torch.linalg.householder_product(square, t)
        Q = Q.mT if transpose else Q
        return Q @ c if left else c @ Q

    for left in (True, False):
        for transpose in (False, True):
            c = rand(4, 2, seed=73) if left else rand(2, 4, seed=73)
            grad_case(lambda lib, a, t, c, left=left, transpose=transpose: ormqr_as_product(lib, a, t, c, left, transpose),
                      rand(4, 3, seed=74), rand(3, seed=75), c)
    grad_case(lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gelsd").solution, rand(2, 5, 3, seed=76),
              rand(2, 5, 2, seed=77))
    # a vector right-hand side (wide A: the minimum-norm solution); torch 1.13's backward
    # fails on vectors (a dim error), so its reference takes the vector as a column
    grad_case(lambda lib, a, b: lib.linalg.lstsq(a, b).solution if lib is tessera else
              lib.linalg.lstsq(a, b.unsqueeze(-1)).solution.squeeze(-1), rand(3, 5, seed=78), rand(3, seed=79))
