"""tessera.distributions' multivariate families (MultivariateNormal, LowRankMultivariateNormal,
Wishart, LKJCholesky) against torch.distributions (torch 1.13), beyond the shared case
tables of test_distributions.py: gradchecks of each parametrisation, the matrix
properties, Wishart's df checks and singular-sample redraws, and LKJ's marginals (against
theory: torch 1.13's sampler is wrong past the second row)."""
import numpy as np
import pytest
import torch
import torch.distributions as TD

import tessera
import tessera.distributions as D
from test_distributions import (CASES, COV, COV_FACTOR, LOC3, N, PREC, SPD3, TRIL, VEC3, arr, close, outcome,
                                same_outcome)

RNG = np.random.default_rng(0)


def _sym(a):
    return (a + a.mT) / 2


def _tril(a):
    return a.tril()


# how each parametrisation of MultivariateNormal is fed from an unconstrained leaf, so that
# finite differences stay inside the constraint (symmetric; lower triangular)
MVN_MATRIX = {"covariance_matrix": (COV, _sym), "precision_matrix": (PREC, _sym), "scale_tril": (TRIL, _tril)}


@pytest.mark.parametrize("param", list(MVN_MATRIX))
@pytest.mark.parametrize("what", ["log_prob", "rsample", "entropy"])
def test_multivariate_normal_gradcheck(param, what):
    from tessera.autograd import gradcheck
    matrix, prepare = MVN_MATRIX[param]
    loc = tessera.tensor(np.asarray(LOC3), requires_grad=True)
    m = tessera.tensor(matrix, requires_grad=True)
    value = tessera.tensor(np.asarray(VEC3))

    def fn(loc, m):
        d = D.MultivariateNormal(loc, **{param: prepare(m)})
        if what == "rsample":
            tessera.manual_seed(3)   # the same noise on every call
            return d.rsample((2,))
        return d.log_prob(value) if what == "log_prob" else d.entropy()
    assert gradcheck(fn, (loc, m) if what != "entropy" else (loc.detach(), m))


@pytest.mark.parametrize("what", ["log_prob", "rsample", "entropy", "variance"])
def test_lowrank_multivariate_normal_gradcheck(what):
    from tessera.autograd import gradcheck
    loc = tessera.tensor(np.asarray(LOC3), requires_grad=True)
    factor = tessera.tensor(np.asarray(COV_FACTOR), requires_grad=True)
    diag = tessera.tensor([0.5, 1., 2.], dtype=tessera.float64, requires_grad=True)
    value = tessera.tensor(np.asarray(VEC3))

    def fn(loc, factor, diag):
        d = D.LowRankMultivariateNormal(loc, factor, diag)
        if what == "rsample":
            tessera.manual_seed(3)
            return d.rsample((2,))
        return d.log_prob(value) if what == "log_prob" else d.entropy() if what == "entropy" else d.variance
    assert gradcheck(fn, (loc, factor, diag))


def test_multivariate_normal_matrices_agree_across_parametrisations():
    value = tessera.tensor(np.asarray(VEC3))
    ds = [D.MultivariateNormal(tessera.tensor(np.asarray(LOC3)), **{p: tessera.tensor(m)})
          for p, m in (("covariance_matrix", COV), ("precision_matrix", PREC), ("scale_tril", TRIL))]
    for d in ds[1:]:
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            np.testing.assert_allclose(arr(getattr(d, name)), arr(getattr(ds[0], name)), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(arr(d.log_prob(value)), arr(ds[0].log_prob(value)), rtol=1e-10)
    # a low-rank covariance W W^T + diag is the same Gaussian
    W, diag = np.asarray(COV_FACTOR), np.array([0.5, 1., 2.])
    low = D.LowRankMultivariateNormal(tessera.tensor(np.asarray(LOC3)), tessera.tensor(W), tessera.tensor(diag))
    full = D.MultivariateNormal(tessera.tensor(np.asarray(LOC3)),
                                tessera.tensor(W @ W.swapaxes(-1, -2) + np.diag(diag)))
    for name in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        np.testing.assert_allclose(arr(getattr(low, name)), arr(getattr(full, name)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(arr(low.log_prob(value)), arr(full.log_prob(value)), rtol=1e-10)
    np.testing.assert_allclose(arr(low.entropy()), arr(full.entropy()), rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", [c for c in CASES if c.id.startswith(("MultivariateNormal", "LowRank", "Wishart"))],
                         ids=lambda c: c.id)
def test_matrix_parameters_match_torch(case, dtype):
    d, td, _, _ = case.pair(dtype)
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        same_outcome(lambda: getattr(d, name), lambda: getattr(td, name), dtype)
    # the factor kept for the computations has the matrix's own batch shape, as torch's
    mine = d.__dict__.get("_unbroadcasted_scale_tril", d.__dict__.get("_capacitance_tril"))
    theirs = td.__dict__.get("_unbroadcasted_scale_tril", td.__dict__.get("_capacitance_tril"))
    close(mine, theirs, dtype)


@pytest.mark.parametrize("l_batch,x_batch", [((), (5,)), ((2,), (4, 2)), ((2, 1), (2, 4)), ((3,), ()),
                                             ((1, 2), (3, 1)), ((2, 3), (4, 1, 3))])
def test_batch_mahalanobis_broadcasts(l_batch, x_batch):
    from tessera.distributions.multivariate_normal import _batch_mahalanobis
    n = 3
    a = RNG.normal(size=l_batch + (n, n))
    L = np.linalg.cholesky(a @ a.swapaxes(-1, -2) + n * np.eye(n))
    x = RNG.normal(size=x_batch + (n,))
    got = _batch_mahalanobis(tessera.tensor(L), tessera.tensor(x))
    shape = np.broadcast_shapes(l_batch, x_batch)
    Lb, xb = np.broadcast_to(L, shape + (n, n)), np.broadcast_to(x, shape + (n,))
    want = (np.linalg.solve(Lb, xb[..., None])[..., 0] ** 2).sum(-1)
    assert tuple(got.shape) == shape
    np.testing.assert_allclose(arr(got), want, rtol=1e-12)
    # torch's needs x to have the factors' batch dimensions, each a multiple of theirs
    tail = x_batch[len(x_batch) - len(l_batch):]
    if len(x_batch) >= len(l_batch) and all(sx % sl == 0 for sl, sx in zip(l_batch, tail)):
        from torch.distributions.multivariate_normal import _batch_mahalanobis as theirs
        close(got, theirs(torch.tensor(L), torch.tensor(x)))


def test_multivariate_normal_expand_keeps_the_factor():
    d = D.MultivariateNormal(tessera.tensor(np.asarray(LOC3)), scale_tril=tessera.tensor(TRIL[0]))
    e = d.expand((4, 2))
    assert e._unbroadcasted_scale_tril is d._unbroadcasted_scale_tril
    assert "covariance_matrix" not in e.__dict__ and "precision_matrix" not in e.__dict__
    assert tuple(e.covariance_matrix.shape) == (4, 2, 3, 3) and tuple(e.scale_tril.shape) == (4, 2, 3, 3)
    d.precision_matrix   # derived now: carried over
    assert tuple(d.expand((5, 2)).__dict__["precision_matrix"].shape) == (5, 2, 3, 3)
    low = D.LowRankMultivariateNormal(tessera.zeros(3), tessera.ones(3, 1), tessera.ones(3)).expand((2,))
    assert tuple(low.cov_factor.shape) == (2, 3, 1) and tuple(low.rsample((4,)).shape) == (4, 2, 3)


@pytest.mark.parametrize("name", ["MultivariateNormal", "LowRankMultivariateNormal"])
def test_multivariate_normal_sample_covariance(name):
    loc = tessera.tensor(np.asarray(LOC3))
    if name == "MultivariateNormal":
        d = D.MultivariateNormal(loc, precision_matrix=tessera.tensor(PREC))
    else:
        d = D.LowRankMultivariateNormal(loc, tessera.tensor(np.asarray(COV_FACTOR)), tessera.tensor([0.5, 1., 2.]))
    tessera.manual_seed(21)
    x = arr(d.sample((N,)))
    assert x.shape == (N, 2, 3) and not d.sample().requires_grad
    cov = arr(d.covariance_matrix)
    centred = x - x.mean(0)
    sample_cov = np.einsum("nbi,nbj->bij", centred, centred) / (N - 1)
    # five standard errors of each sample covariance entry
    se = np.sqrt((np.einsum("bii,bjj->bij", cov, cov) + cov ** 2) / N)
    np.testing.assert_array_less(np.abs(sample_cov - cov), 5 * se)
    np.testing.assert_array_less(np.abs(x.mean(0) - np.asarray(LOC3)), 5 * np.sqrt(np.einsum("bii->bi", cov) / N))


def test_kl_between_gaussians_of_different_sizes_raises_like_torch():
    def pair(M, t):
        mvn = [M.MultivariateNormal(t([0., 0.]), t([[1., 0.], [0., 1.]])), M.MultivariateNormal(t([0.]), t([[1.]]))]
        low = [M.LowRankMultivariateNormal(t([0., 0.]), t([[1.], [0.]]), t([1., 1.])),
               M.LowRankMultivariateNormal(t([0.]), t([[1.]]), t([1.]))]
        return [(mvn[0], mvn[1]), (low[0], low[1]), (mvn[0], low[1]), (low[0], mvn[1])]
    for (p, q), (tp, tq) in zip(pair(D, tessera.tensor), pair(TD, torch.tensor)):
        a, b = outcome(lambda: TD.kl_divergence(tp, tq)), outcome(lambda: D.kl_divergence(p, q))
        assert a[0] == b[0] == "error" and type(b[1]) is ValueError and str(a[1]) == str(b[1]), (a, b)


def test_mvlgamma_matches_torch():
    from tessera.distributions.utils import _mvlgamma
    x = np.array([0.3, 1.1, 2.5, 7.0])   # some below the domain (p - 1) / 2: torch 1.13 does not check
    for p in (1, 2, 3, 5):
        close(_mvlgamma(tessera.tensor(x), p), torch.mvlgamma(torch.tensor(x), p=p))
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        _mvlgamma(tessera.tensor(x), 0)


def test_wishart_df_broadcasts_and_bounds():
    df = np.array([[3.], [4.5], [7.]])
    d = D.Wishart(tessera.tensor(df), covariance_matrix=tessera.tensor(COV))
    td = TD.Wishart(torch.tensor(df), covariance_matrix=torch.tensor(COV))
    assert tuple(d.batch_shape) == tuple(td.batch_shape) == (3, 2)
    for name in ("mean", "variance", "mode", "precision_matrix"):
        close(getattr(d, name), getattr(td, name))
    close(d.log_prob(tessera.tensor(SPD3)), td.log_prob(torch.tensor(SPD3)))
    close(d.entropy(), td.entropy())
    # df must exceed p - 1: this instance's constraint says so
    assert repr(d.arg_constraints["df"]) == repr(TD.constraints.greater_than(2))
    assert repr(D.Wishart(2.5, tessera.eye(2)).arg_constraints["df"]) == repr(TD.constraints.greater_than(1))
    with pytest.warns(UserWarning, match="Low df values detected"):
        D.Wishart(2.5, tessera.eye(3))
    with pytest.raises(ValueError, match=r"Value of df=2 expected to be greater than ndim - 1 = 2\."):
        D.Wishart(2, tessera.eye(3))
    e, te = d.expand((4, 3, 2)), td.expand((4, 3, 2))
    assert type(e) is D.Wishart and tuple(e._dist_chi2.batch_shape) == (4, 3, 2, 3)
    close(e.log_prob(tessera.tensor(SPD3)), te.log_prob(torch.tensor(SPD3)))
    close(e.entropy(), te.entropy())


def test_wishart_is_an_exponential_family():
    from tessera.distributions.kl import _kl_expfamily_expfamily
    from torch.distributions.kl import _kl_expfamily_expfamily as theirs

    def pair(M, t):
        return (M.Wishart(t([4., 6.]), covariance_matrix=t(COV)), M.Wishart(t([5., 3.5]), precision_matrix=t(PREC)))
    (p, q), (tp, tq) = pair(D, tessera.tensor), pair(TD, torch.tensor)
    close(p._log_normalizer(*p._natural_params), tp._log_normalizer(*tp._natural_params))
    close(_kl_expfamily_expfamily(p, q), theirs(tp, tq), rtol=1e-7, atol=1e-9)
    close(_kl_expfamily_expfamily(q, p), theirs(tq, tp), rtol=1e-7, atol=1e-9)
    # the entropy from the log normalizer's gradient agrees with the closed form
    close(D.ExponentialFamily.entropy(p), p.entropy(), rtol=1e-7, atol=1e-9)


def test_wishart_rsample_redraws_singular_samples():
    d = D.Wishart(tessera.tensor([3., 4.]), covariance_matrix=tessera.tensor(COV))
    good = tessera.tensor(np.broadcast_to(SPD3, (5, 2, 3, 3)).copy())
    bad = good.clone()
    bad[1, 0] = 0.   # one singular matrix: sample index 1 is redrawn, for the whole batch
    bad[3, 1] = 0.
    draws = [bad, bad, good * 2]
    d._bartlett_sampling = lambda sample_shape: draws.pop(0)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.rsample((5,))
    want = arr(good).copy()
    want[[1, 3]] *= 2
    np.testing.assert_array_equal(arr(x), want)
    # max_try_correction=0: the singular ones are left as they are (with the warning)
    draws[:] = [bad]
    with pytest.warns(UserWarning, match="Singular sample detected"):
        assert not d.support.check(d.rsample((5,), max_try_correction=0)).all()


def test_wishart_rsample_is_reparameterized():
    # E[X] = df S, so the pathwise gradients of <W, X> are unbiased for d<W, df S>/d df = <W, S>
    # and d<W, df S>/d S = df W. Each of the n draws gets its own df and S leaves, so the
    # per-draw gradients are separate samples and their mean is checked against those values
    # within 5 standard errors estimated from the same draws.
    n = 4000
    dfs = np.array([4., 6.])
    tessera.manual_seed(8)
    df = tessera.tensor(np.broadcast_to(dfs, (n, 2)).copy(), dtype=tessera.float64, requires_grad=True)
    cov = tessera.tensor(np.broadcast_to(COV, (n, 2, 3, 3)).copy(), dtype=tessera.float64, requires_grad=True)
    x = D.Wishart(df, covariance_matrix=cov).rsample()
    assert tuple(x.shape) == (n, 2, 3, 3) and D.constraints.positive_definite.check(x.detach()).all()
    for i, j in zip(*np.tril_indices(3)):
        W = np.zeros((3, 3))
        W[i, j] += 1.
        W[j, i] += 1.
        g_df, g_cov = tessera.autograd.grad((x * tessera.tensor(W)).sum(), (df, cov), retain_graph=True)
        # only the symmetric part of a gradient with respect to S is defined (S is symmetric)
        g_cov = arr(g_cov)
        g_cov = (g_cov + g_cov.swapaxes(-1, -2)) / 2
        for g, want in ((arr(g_df), (W * COV).sum((-1, -2))), (g_cov, dfs[:, None, None] * W)):
            tol = 5 * g.std(0, ddof=1) / np.sqrt(n) + 1e-12
            np.testing.assert_array_less(np.abs(g.mean(0) - want), tol, err_msg=f"W = E{i}{j} + E{j}{i}")


@pytest.mark.parametrize("dim,concentration", [(2, 1.), (3, 1.), (4, 2.), (5, 0.5)])
def test_lkj_cholesky_samples_have_the_lkj_marginals(dim, concentration):
    # under LKJ(eta) every correlation L L^T [i, j] is 2 Beta(b, b) - 1 with b = eta - 1 + dim / 2:
    # mean 0, variance 1 / (2 b + 1). (torch 1.13's sampler gives rows below the second too much.)
    tessera.manual_seed(17)
    d = D.LKJCholesky(dim, tessera.tensor([concentration], dtype=tessera.float64))
    L = d.sample((N,))
    assert tuple(L.shape) == (N, 1, dim, dim) and d.support.check(L).all()
    corr = arr(L @ L.mT)[:, 0]
    i, j = np.tril_indices(dim, -1)
    r = corr[:, i, j]
    var = 1 / (2 * (concentration - 1 + dim / 2) + 1)
    np.testing.assert_array_less(np.abs(r.mean(0)), 5 * np.sqrt(var / N))
    np.testing.assert_allclose(r.var(0), var, rtol=0.06)
    np.testing.assert_allclose(np.einsum("nii->ni", corr), 1.0, rtol=1e-12)
