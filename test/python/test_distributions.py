"""tessera.distributions against torch.distributions (torch 1.13).

Every distribution is built twice from the same numbers, once in tessera and once in
torch, and the deterministic quantities are compared value for value in float64 and
float32: shapes, moments (mean, mode, variance, stddev), log_prob, cdf, icdf, entropy,
enumerate_support, expand(), kl_divergence for every pair torch registers among them, and
the gradients of all of these with respect to the parameters. Transforms (forward,
inverse, log|det J|, shapes, caching), constraints (check, repr, event_dim), biject_to /
transform_to, signatures and the validation errors are compared the same way. Samples come from
tessera's generator, not torch's, so sampling is checked statistically with a fixed seed:
shape, dtype, support, and sample moments against the distribution's own.
"""
import math

import numpy as np
import pytest
import torch
import torch.distributions as TD

import tessera
import tessera.distributions as D

TOL = {"float64": dict(rtol=1e-9, atol=1e-11), "float32": dict(rtol=2e-5, atol=2e-6)}


def arr(t):
    return np.asarray(t.detach().numpy())


def close(got, want, dtype="float64", **kw):
    if isinstance(want, torch.Tensor):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
        assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    if str(got.dtype).endswith("float32"):
        dtype = "float32"
    tol = dict(TOL[dtype], **kw)
    np.testing.assert_allclose(arr(got), arr(want), equal_nan=True, **tol)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is compared
        return "error", e


class Lib:
    """What a case builder sees: the distributions module and a tensor maker, for one of
    tessera and torch. With grad=True the float tensors made are leaves requiring grad,
    recorded in .leaves in creation order (the same order for both libraries)."""

    def __init__(self, mod, dtype, grad=False):
        self.mod, self.grad, self.leaves = mod, grad, []
        self.D = D if mod is tessera else TD
        self.dtype = getattr(mod, dtype)

    def __call__(self, values):
        t = self.mod.tensor(np.asarray(values, dtype=np.float64)).to(self.dtype)
        if self.grad and t.is_floating_point():
            t.requires_grad_()
            self.leaves.append(t)
        return t


class Case:
    """One distribution: build(lib) makes it from lib's tensors; value is a point to score
    (log_prob, cdf), icdf the probabilities to invert (for those that have an icdf)."""

    def __init__(self, id, build, value=None, icdf=None, moments="both"):
        self.id, self.build, self.value, self.icdf = id, build, value, icdf
        self.moments = moments   # which sample moments converge fast enough to test: both / mean / none

    def pair(self, dtype="float64", grad=False):
        ours, theirs = Lib(tessera, dtype, grad), Lib(torch, dtype, grad)
        return self.build(ours), self.build(theirs), ours, theirs


X = [0.3, 1.2, -0.5]
POS = [0.3, 1.2, 2.5]
UNIT = [0.3, 0.6, 0.55]
PROBS = [[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]]
LOGITS = [[0.1, -1.2, 0.3, 2.0], [0.0, 0.5, -0.4, 1.0]]
Q = [0.1, 0.5, 0.85]
# the multivariate families: a batch of two 3 x 3 covariances, their inverses and Cholesky
# factors; points for MultivariateNormal (VEC3), for Wishart (SPD3: positive definite) and
# for LKJCholesky (CORR_CHOL: Cholesky factors of correlation matrices)
COV = np.array([[[2., 0.5, 0.2], [0.5, 1., 0.3], [0.2, 0.3, 1.5]],
                [[1., -0.3, 0.], [-0.3, 2., 0.4], [0., 0.4, 0.8]]])
PREC = np.linalg.inv(COV)
PREC = (PREC + PREC.swapaxes(-1, -2)) / 2
TRIL = np.linalg.cholesky(COV)
LOC3 = [[0., 1., -2.], [0.5, 0., 0.3]]
VEC3 = [[0.3, 1.2, -0.5], [1., -1., 0.]]
COV_FACTOR = [[[1., 0.5], [0., -0.3], [0.2, 0.8]], [[0.4, 0.], [-1., 0.2], [0.3, 0.3]]]
SPD3 = np.array([[[3., 1., 0.], [1., 2., 0.5], [0., 0.5, 1.]], [[1.5, -0.2, 0.3], [-0.2, 0.7, 0.1], [0.3, 0.1, 2.]]])
CORR = np.array([[[1., 0.3, -0.2], [0.3, 1., 0.5], [-0.2, 0.5, 1.]], [[1., -0.6, 0.1], [-0.6, 1., 0.], [0.1, 0., 1.]]])
CORR_CHOL = np.linalg.cholesky(CORR)

CASES = [
    Case("Normal", lambda L: L.D.Normal(L([0., 1., -2.]), L([1., 2., 0.5])), X, Q),
    Case("Normal-scalar", lambda L: L.D.Normal(0.5, 2.0), [0.3, -1.0], Q),
    Case("Laplace", lambda L: L.D.Laplace(L([0., 1., -2.]), L([1., 2., 0.5])), X, Q),
    Case("Cauchy", lambda L: L.D.Cauchy(L([0., 1., -2.]), L([1., 2., 0.5])), X, Q, moments="none"),
    Case("Exponential", lambda L: L.D.Exponential(L([1., 2., 0.5])), POS, Q),
    Case("Uniform", lambda L: L.D.Uniform(L([-1., 0., -2.]), L([1., 2., 0.5])), [0.3, 1.2, -0.5], Q),
    Case("Gumbel", lambda L: L.D.Gumbel(L([0., 1., -2.]), L([1., 2., 0.5])), X),
    Case("HalfNormal", lambda L: L.D.HalfNormal(L([1., 2., 0.5])), POS, Q),
    Case("HalfCauchy", lambda L: L.D.HalfCauchy(L([1., 2., 0.5])), POS, Q, moments="none"),
    Case("LogNormal", lambda L: L.D.LogNormal(L([0., 0.3, -1.]), L([0.5, 0.2, 0.4])), POS, Q),
    # heavy tailed: its sample variance converges too slowly to test
    Case("Pareto", lambda L: L.D.Pareto(L([0.1, 0.2, 0.3]), L([5., 6., 7.5])), [0.35, 1.2, 2.5], Q, moments="mean"),
    Case("Weibull", lambda L: L.D.Weibull(L([1., 2., 0.5]), L([1.5, 2., 3.])), POS, Q),
    Case("Kumaraswamy", lambda L: L.D.Kumaraswamy(L([1.5, 2., 3.]), L([1.5, 2., 0.5])), UNIT, Q),
    Case("ContinuousBernoulli", lambda L: L.D.ContinuousBernoulli(L([0.2, 0.5, 0.9])), UNIT, Q),
    Case("ContinuousBernoulli-logits", lambda L: L.D.ContinuousBernoulli(logits=L([-1.0, 0.001, 2.0])), UNIT, Q),
    Case("VonMises", lambda L: L.D.VonMises(L([0., 1., -2.]), L([1., 5., 0.5])), X, moments="none"),
    Case("Gamma", lambda L: L.D.Gamma(L([1.5, 2., 3.]), L([1.5, 2., 0.5])), POS),
    # not df = 2: at concentration 1, tessera's xlogy(concentration - 1, x) has gradient 0 in its
    # first argument where torch's has log(x) (an operator discrepancy, not the distribution's)
    Case("Chi2", lambda L: L.D.Chi2(L([1.5, 2.5, 3.])), POS),
    Case("Beta", lambda L: L.D.Beta(L([1.5, 2., 3.]), L([1.5, 2., 0.5])), UNIT),
    Case("Beta-scalar", lambda L: L.D.Beta(2.0, 3.0), UNIT),
    Case("Dirichlet", lambda L: L.D.Dirichlet(L([[1.5, 2., 3.], [0.5, 0.7, 4.]])), [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    Case("StudentT", lambda L: L.D.StudentT(L([5.5, 8., 30.]), L([0., 1., -2.]), L([1., 2., 0.5])), X),
    Case("FisherSnedecor", lambda L: L.D.FisherSnedecor(L([3., 5., 8.]), L([10., 12., 20.])), POS, moments="mean"),
    Case("Bernoulli", lambda L: L.D.Bernoulli(L([0.2, 0.5, 0.9])), [0., 1., 1.]),
    Case("Bernoulli-logits", lambda L: L.D.Bernoulli(logits=L([-1.0, 0.0, 2.0])), [0., 1., 1.]),
    Case("Binomial", lambda L: L.D.Binomial(L([5., 10., 10.]), L([0.2, 0.5, 0.9])), [0., 1., 3.]),
    Case("Binomial-logits", lambda L: L.D.Binomial(10, logits=L([-1.0, 0.0, 2.0])), [0., 1., 10.]),
    Case("Categorical", lambda L: L.D.Categorical(L(PROBS)), [[0., 3.], [2., 1.]], moments="none"),
    Case("Categorical-logits", lambda L: L.D.Categorical(logits=L(LOGITS)), [1., 3.], moments="none"),
    Case("OneHotCategorical", lambda L: L.D.OneHotCategorical(L(PROBS)), [[0., 0., 1., 0.], [1., 0., 0., 0.]]),
    Case("OneHotCategoricalStraightThrough", lambda L: L.D.OneHotCategoricalStraightThrough(logits=L(LOGITS)),
         [[0., 1., 0., 0.], [0., 0., 0., 1.]]),
    Case("Multinomial", lambda L: L.D.Multinomial(6, L(PROBS)), [[1., 2., 3., 0.], [0., 0., 6., 0.]]),
    Case("Geometric", lambda L: L.D.Geometric(L([0.2, 0.5, 0.9])), [0., 1., 3.]),
    Case("Geometric-logits", lambda L: L.D.Geometric(logits=L([-1.0, 0.0, 2.0])), [0., 1., 3.]),
    Case("Poisson", lambda L: L.D.Poisson(L([0.2, 1.5, 3.9])), [0., 1., 3.]),
    Case("NegativeBinomial", lambda L: L.D.NegativeBinomial(L([1.5, 2., 3.]), L([0.2, 0.5, 0.7])), [0., 1., 3.]),
    Case("NegativeBinomial-logits", lambda L: L.D.NegativeBinomial(L([1.5, 2., 3.]), logits=L([-1., 0., 0.5])),
         [0., 1., 3.]),
    Case("RelaxedBernoulli", lambda L: L.D.RelaxedBernoulli(L(0.7), L([0.2, 0.5, 0.9])), UNIT, moments="none"),
    Case("LogitRelaxedBernoulli",
         lambda L: L.D.relaxed_bernoulli.LogitRelaxedBernoulli(L(0.7), logits=L([-1., 0., 2.])), X, moments="none"),
    Case("RelaxedOneHotCategorical", lambda L: L.D.RelaxedOneHotCategorical(L(0.5), L(PROBS)),
         [[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]], moments="none"),
    Case("ExpRelaxedCategorical", lambda L: L.D.relaxed_categorical.ExpRelaxedCategorical(L(0.5), logits=L(LOGITS)),
         np.log([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]]), moments="none"),
    Case("LogisticNormal", lambda L: L.D.LogisticNormal(L([0., 1., -0.5]), L([1., 0.5, 0.3])),
         [0.2, 0.3, 0.4, 0.1], moments="none"),
    Case("Independent", lambda L: L.D.Independent(L.D.Normal(L([[0., 1., 2.], [1., 1., 1.]]), L([1., 2., 0.5])), 1),
         [[0.3, 1.2, -0.5], [0., 0., 0.]]),
    Case("MixtureSameFamily",
         lambda L: L.D.MixtureSameFamily(L.D.Categorical(L([0.3, 0.7])), L.D.Normal(L([-1., 2.]), L([0.5, 1.5]))),
         [0.3, 1.2, -0.5]),
    Case("MixtureSameFamily-batched",
         lambda L: L.D.MixtureSameFamily(L.D.Categorical(logits=L([[0.3, 0.7, 0.], [1., 0., -1.]])),
                                         L.D.Independent(L.D.Normal(L([[[-1.], [2.], [0.]], [[1.], [0.], [3.]]]),
                                                                    L([0.5])), 1)),
         [[0.3], [-0.5]]),
    Case("MultivariateNormal", lambda L: L.D.MultivariateNormal(L(LOC3), covariance_matrix=L(COV)), VEC3),
    Case("MultivariateNormal-precision", lambda L: L.D.MultivariateNormal(L(LOC3), precision_matrix=L(PREC)), VEC3),
    # one factor for the whole batch of locations
    Case("MultivariateNormal-scale_tril", lambda L: L.D.MultivariateNormal(L(LOC3), scale_tril=L(TRIL[0])), VEC3),
    Case("LowRankMultivariateNormal",
         lambda L: L.D.LowRankMultivariateNormal(L(LOC3), L(COV_FACTOR), L([0.5, 1., 2.])), VEC3),
    Case("Wishart", lambda L: L.D.Wishart(L([4.5, 6.]), covariance_matrix=L(COV)), SPD3),
    # a number df with a batch of matrices: torch 1.13's mean and variance raise (df stays 0-d and
    # cannot be viewed as batch_shape + (1, 1)), and so do these, so no sample moments either
    Case("Wishart-precision", lambda L: L.D.Wishart(5., precision_matrix=L(PREC)), SPD3, moments="none"),
    # df 3.5 < p + 1: no mode. tril(): tessera's cholesky_solve gives the factor a gradient
    # only below the diagonal, where torch's has one above it too (an operator discrepancy)
    Case("Wishart-scale_tril", lambda L: L.D.Wishart(L([3.5]), scale_tril=L(TRIL).tril()), SPD3),
    Case("LKJCholesky", lambda L: L.D.LKJCholesky(3, L([0.5, 2.])), CORR_CHOL, moments="none"),
    Case("LKJCholesky-scalar", lambda L: L.D.LKJCholesky(2, 1.5), CORR_CHOL[:, :2, :2] / np.linalg.norm(
        CORR_CHOL[:, :2, :2], axis=-1, keepdims=True), moments="none"),
    Case("TransformedDistribution",
         lambda L: L.D.TransformedDistribution(L.D.Normal(L([0., 1., -1.]), L([1., 0.5, 0.3])),
                                               [L.D.AffineTransform(L(2.0), L(-3.0)), L.D.ExpTransform()]),
         POS, Q, moments="none"),
]
IDS = [c.id for c in CASES]
BY_ID = dict(zip(IDS, CASES))


def same_outcome(ours, theirs, dtype, check=None):
    a, b = outcome(theirs), outcome(ours)
    if a[0] == "error":
        assert b[0] == "error", f"torch raised {a[1]!r}, tessera gave {b[1]!r}"
        assert type(b[1]).__name__ == type(a[1]).__name__, (b[1], a[1])
        return None
    assert b[0] == "ok", f"tessera raised {b[1]!r}"
    (check or close)(b[1], a[1], dtype)
    return b[1]


# ================================================================ module surface

def test_namespace_matches_torch():
    assert tessera.distributions is D
    assert D.__all__ == TD.__all__
    theirs = {n for n in dir(TD) if not n.startswith("_")}
    ours = {n for n in dir(D) if not n.startswith("_")}
    assert ours == theirs
    assert set(D.transforms.__all__) == set(TD.transforms.__all__)
    assert set(D.constraints.__all__) == set(TD.constraints.__all__)
    for name in D.__all__:
        assert getattr(D, name).__doc__, name


def test_signatures_match_torch():
    import inspect
    names = list(D.__all__) + ["relaxed_bernoulli.LogitRelaxedBernoulli",
                               "relaxed_categorical.ExpRelaxedCategorical"]
    for name in names:
        mine, theirs = D, TD
        for part in name.split("."):
            mine, theirs = getattr(mine, part), getattr(theirs, part)
        members = [getattr(mine, m) for m in ("__init__", "sample", "rsample", "log_prob", "cdf", "icdf", "entropy",
                                              "enumerate_support", "expand", "log_abs_det_jacobian", "with_cache",
                                              "forward_shape", "inverse_shape", "register")
                   if inspect.isclass(mine) and hasattr(theirs, m)] if inspect.isclass(mine) else [mine]
        for ours in members:
            ref = getattr(theirs, ours.__name__) if inspect.isclass(theirs) else theirs
            a, b = inspect.signature(ours), inspect.signature(ref)
            assert list(a.parameters) == list(b.parameters), (name, ours.__name__, a, b)
            for p in a.parameters.values():
                want = b.parameters[p.name].default
                if isinstance(want, (torch.Size, tuple)):
                    assert tuple(p.default) == tuple(want), (name, p.name)
                elif not isinstance(want, torch.Tensor):
                    assert p.default == want, (name, ours.__name__, p.name)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_shapes_flags_and_constraints(case):
    d, td, _, _ = case.pair()
    assert tuple(d.batch_shape) == tuple(td.batch_shape) and isinstance(d.batch_shape, tessera.Size)
    assert tuple(d.event_shape) == tuple(td.event_shape)
    assert d.has_rsample == td.has_rsample and d.has_enumerate_support == td.has_enumerate_support
    assert sorted(d.arg_constraints) == sorted(td.arg_constraints)
    for name, c in d.arg_constraints.items():
        assert type(c).__name__ == type(td.arg_constraints[name]).__name__
    assert type(d.support).__name__ == type(td.support).__name__
    assert d.support.event_dim == td.support.event_dim and d.support.is_discrete == td.support.is_discrete
    assert tuple(d._extended_shape((4, 2))) == tuple(td._extended_shape((4, 2)))


# ================================================================ deterministic quantities

@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_moments(case, dtype):
    d, td, _, _ = case.pair(dtype)
    for name in ["mean", "variance", "stddev", "mode"]:
        if case.id == "Kumaraswamy" and name == "mode":
            continue   # torch 1.13's formula is nan everywhere: test_kumaraswamy_mode checks ours
        same_outcome(lambda: getattr(d, name), lambda: getattr(td, name), dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob_cdf_icdf_entropy(case, dtype):
    d, td, L, TL = case.pair(dtype)
    value, tvalue = L(case.value), TL(case.value)
    lp = same_outcome(lambda: d.log_prob(value), lambda: td.log_prob(tvalue), dtype)
    assert lp is not None
    same_outcome(lambda: d.cdf(value), lambda: td.cdf(tvalue), dtype)
    same_outcome(lambda: d.entropy(), lambda: td.entropy(), dtype)
    same_outcome(lambda: d.perplexity(), lambda: td.perplexity(), dtype)
    if case.icdf is not None:
        q = np.broadcast_to(np.asarray(case.icdf), tuple(td.batch_shape) or (len(case.icdf),))
        close(d.icdf(L(q)), td.icdf(TL(q)), dtype)
        # the cdf inverts the icdf
        close(d.cdf(d.icdf(L(q))), TL(q), dtype, rtol=1e-4 if dtype == "float32" else 1e-9)


def test_kumaraswamy_mode():
    # the closed form ((a - 1) / (a b - 1)) ** (1 / a), nan when a or b is below 1
    a, b = np.array([1.5, 2., 3., 0.5]), np.array([1.5, 3., 0.5, 3.])
    mode = D.Kumaraswamy(tessera.tensor(a), tessera.tensor(b)).mode
    want = ((a - 1) / (a * b - 1)) ** (1 / a)
    want[(a < 1) | (b < 1)] = np.nan
    np.testing.assert_allclose(arr(mode), want, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob_broadcasts_over_sample_shape(case):
    d, td, L, TL = case.pair()
    value = np.broadcast_to(np.asarray(case.value), (5,) + np.shape(case.value))
    close(d.log_prob(L(value)), td.log_prob(TL(value)))


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.filterwarnings("ignore:Singular sample detected")   # torch 1.13's Wishart check is inverted
def test_expand(case):
    d, td, L, TL = case.pair()
    shape = (2,) + tuple(td.batch_shape)
    e, te = d.expand(tessera.Size(shape)), td.expand(torch.Size(shape))
    assert type(e) is type(d) and tuple(e.batch_shape) == shape and tuple(e.event_shape) == tuple(td.event_shape)
    assert e._validate_args == d._validate_args
    value = te.sample()   # any point of the support, shaped like the expanded distribution
    close(e.log_prob(tessera.tensor(arr(value))), te.log_prob(value))
    same_outcome(lambda: e.mean, lambda: te.mean, "float64")


def weighted_backward(mine, theirs):
    """Backpropagates sum(w * value) over the finite entries of torch's value, in both."""
    w = np.where(np.isfinite(arr(theirs)), np.linspace(0.5, 1.5, theirs.numel()).reshape(tuple(theirs.shape)), 0.)
    (theirs.nan_to_num(0., 0., 0.) * torch.tensor(w)).sum().backward()
    (mine.nan_to_num(0., 0., 0.) * tessera.tensor(w)).sum().backward()


def same_grads(L, TL):
    """The leaves' gradients agree (a missing gradient counts as zero); how many were nonzero."""
    nonzero = 0
    for mine, theirs in zip(L.leaves, TL.leaves):
        want = np.zeros(tuple(theirs.shape)) if theirs.grad is None else arr(theirs.grad)
        got = np.zeros(tuple(mine.shape)) if mine.grad is None else arr(mine.grad)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)
        nonzero += bool(want.any())
    return nonzero


@pytest.mark.parametrize("case", [c for c in CASES if not c.id.endswith("-scalar")], ids=lambda c: c.id)
def test_log_prob_gradients(case):
    d, td, L, TL = case.pair(grad=True)
    lp = d.log_prob(tessera.tensor(np.asarray(case.value, dtype=np.float64)))
    tlp = td.log_prob(torch.tensor(np.asarray(case.value, dtype=np.float64)))
    assert len(L.leaves) == len(TL.leaves) > 0
    weighted_backward(lp, tlp)
    assert same_grads(L, TL) > 0


@pytest.mark.parametrize("what", ["entropy", "cdf", "mean", "variance"])
@pytest.mark.parametrize("case", [c for c in CASES if not c.id.endswith("-scalar")], ids=lambda c: c.id)
def test_gradients_of_entropy_cdf_and_moments(case, what):
    d, td, L, TL = case.pair(grad=True)

    def run(dist, mod):
        if what == "cdf":
            return dist.cdf(mod.tensor(np.asarray(case.value, dtype=np.float64)))
        return dist.entropy() if what == "entropy" else getattr(dist, what)
    a, b = outcome(lambda: run(td, torch)), outcome(lambda: run(d, tessera))
    assert a[0] == b[0], (a, b)
    if a[0] == "error" or not a[1].requires_grad:
        return
    weighted_backward(b[1], a[1])
    same_grads(L, TL)


@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "Bernoulli", "Binomial-logits", "Categorical", "OneHotCategorical", "Independent")], ids=lambda c: c.id)
def test_enumerate_support(case):
    d, td, _, _ = case.pair()
    if case.id == "Independent":
        d = D.Independent(D.Bernoulli(tessera.tensor([[0.2, 0.4]])), 0)
        td = TD.Independent(TD.Bernoulli(torch.tensor([[0.2, 0.4]])), 0)
    for expand in (True, False):
        close(d.enumerate_support(expand), td.enumerate_support(expand))
    with pytest.raises(NotImplementedError):
        D.Binomial(tessera.tensor([2., 3.]), tessera.tensor([0.5, 0.5])).enumerate_support()
    with pytest.raises(NotImplementedError):
        D.Independent(D.Bernoulli(tessera.tensor([0.2, 0.4])), 1).enumerate_support()


def test_stddev_and_perplexity_defaults():
    d = D.Gamma(tessera.tensor([2., 3.]), tessera.tensor([1., 4.]))
    close(d.stddev, TD.Gamma(torch.tensor([2., 3.]), torch.tensor([1., 4.])).stddev, "float32")
    with pytest.warns(UserWarning):
        assert tuple(D.Normal(0., 1.).sample_n(3).shape) == (3,)


def test_repr_matches_torch():
    eye = [[1., 0.], [0., 1.]]
    for build in [lambda M: M.Normal(0., 1.), lambda M: M.Categorical(probs=torch_or(M, [[0.5, 0.5]] * 2)),
                  lambda M: M.Independent(M.Normal(torch_or(M, [0., 1.]), 1.), 1),
                  lambda M: M.MultivariateNormal(torch_or(M, [0., 1.]), torch_or(M, eye)),
                  lambda M: M.MultivariateNormal(torch_or(M, [[0., 1.]] * 3), scale_tril=torch_or(M, eye)),
                  lambda M: M.LowRankMultivariateNormal(torch_or(M, [0., 1.]), torch_or(M, [[1.], [0.]]),
                                                        torch_or(M, [1., 2.])),
                  lambda M: M.Wishart(3., precision_matrix=torch_or(M, eye)),
                  lambda M: M.Wishart(torch_or(M, [3., 4.]), torch_or(M, eye)),
                  lambda M: M.LKJCholesky(3, 0.5), lambda M: M.LKJCholesky(2, torch_or(M, [0.5, 1.]))]:
        assert repr(build(D)).replace("tessera", "torch") == repr(build(TD))


def torch_or(M, values):
    return (tessera if M is D else torch).tensor(values)


# ================================================================ sampling (statistical)

N = 20000


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.filterwarnings("ignore:Singular sample detected")   # torch 1.13's Wishart check is inverted
def test_samples_have_shape_dtype_support_and_moments(case):
    d, td, _, _ = case.pair()
    tessera.manual_seed(1234)
    small = d.sample((3, 2))
    assert tuple(small.shape) == (3, 2) + tuple(td.batch_shape) + tuple(td.event_shape)
    assert str(small.dtype).split(".")[-1] == str(td.sample().dtype).split(".")[-1]
    if case.id == "MixtureSameFamily-batched":
        return   # its Categorical batch and component batch differ in rank
    x = d.sample((N,))
    if case.id != "VonMises":   # angles are wrapped into [-pi, pi)
        assert d.support.check(x).all()
    else:
        assert bool(((x >= -math.pi) & (x < math.pi)).all())
    if d.has_rsample:
        assert tuple(d.rsample((4,)).shape) == (4,) + tuple(td.batch_shape) + tuple(td.event_shape)
    if case.moments == "none":
        return
    xs = arr(x).astype(np.float64)
    mean, var = arr(td.mean).astype(np.float64), arr(td.variance).astype(np.float64)
    # five standard errors of the sample mean
    np.testing.assert_array_less(np.abs(xs.mean(0) - mean), 5 * np.sqrt(var / N) + 1e-12)
    if case.moments == "both":
        np.testing.assert_allclose(xs.var(0), var, rtol=0.1, atol=1e-6)


def test_sampling_is_seeded():
    d = D.Normal(tessera.zeros(5), tessera.ones(5))
    tessera.manual_seed(7)
    a = d.sample((3,))
    tessera.manual_seed(7)
    b = d.sample((3,))
    assert np.array_equal(arr(a), arr(b))
    assert not d.sample().requires_grad


def test_categorical_sample_frequencies():
    tessera.manual_seed(0)
    probs = np.array(PROBS)
    x = arr(D.Categorical(tessera.tensor(probs)).sample((N,)))
    assert x.dtype == np.int64
    freq = np.stack([(x == k).mean(0) for k in range(4)], -1)
    np.testing.assert_allclose(freq, probs, atol=0.015)
    counts = arr(D.Multinomial(6, tessera.tensor(probs)).sample((N,)))
    assert (counts.sum(-1) == 6).all()


def test_vonmises_circular_moments():
    tessera.manual_seed(3)
    loc, k = np.array([0.5, -2.0]), np.array([2.0, 8.0])
    d = D.VonMises(tessera.tensor(loc), tessera.tensor(k))
    x = arr(d.sample((N,)))
    # the mean resultant direction is loc; its length is 1 - circular variance
    c, s = np.cos(x).mean(0), np.sin(x).mean(0)
    np.testing.assert_allclose(np.arctan2(s, c), loc, atol=0.03)
    np.testing.assert_allclose(np.hypot(c, s), 1 - arr(d.variance), atol=0.01)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "Cauchy", "Gumbel", "Uniform", "Exponential", "HalfNormal",
                                  "LogNormal"])
def test_rsample_gradients(name):
    loc = tessera.tensor([0.5, -1.0], requires_grad=True)
    scale = tessera.tensor([1.5, 0.5], requires_grad=True)
    tessera.manual_seed(5)
    if name == "Uniform":
        d = D.Uniform(loc, loc + scale)
    elif name in ("Exponential", "HalfNormal"):
        d = getattr(D, name)(scale)
    else:
        d = getattr(D, name)(loc, scale)
    assert d.has_rsample
    x = d.rsample((1000,))
    x.sum().backward()
    xs, lo, sc = arr(x), arr(loc), arr(scale)
    if name == "Exponential":       # x = E / rate
        np.testing.assert_allclose(arr(scale.grad), -(xs / sc).sum(0), rtol=1e-4)
    elif name == "HalfNormal":      # x = scale |eps|
        np.testing.assert_allclose(arr(scale.grad), (xs / sc).sum(0), rtol=1e-4)
    elif name == "LogNormal":       # x = exp(loc + scale eps): dx/dloc = x
        np.testing.assert_allclose(arr(loc.grad), xs.sum(0), rtol=1e-4)
    else:                           # x = loc + scale eps: dx/dloc = 1, dx/dscale = eps
        np.testing.assert_allclose(arr(loc.grad), [1000., 1000.])
        np.testing.assert_allclose(arr(scale.grad), ((xs - lo) / sc).sum(0), rtol=1e-4, atol=1e-3)


def test_straight_through_and_relaxed_rsample_gradients():
    logits = tessera.tensor([0.2, -0.3, 1.0], requires_grad=True)
    tessera.manual_seed(2)
    s = D.OneHotCategoricalStraightThrough(logits=logits).rsample((10,))
    assert set(np.unique(arr(s))) <= {0.0, 1.0} and (arr(s).sum(-1) == 1).all()
    (s * tessera.tensor([1., 2., 3.])).sum().backward()
    # straight through: the one-hot values carry the gradient of the probabilities
    tl = torch.tensor([0.2, -0.3, 1.0], requires_grad=True)
    (10 * torch.softmax(tl, -1) * torch.tensor([1., 2., 3.])).sum().backward()
    close(logits.grad, tl.grad, "float32")
    logits.grad = None
    y = D.RelaxedOneHotCategorical(tessera.tensor(0.5), logits=logits).rsample((7,))
    np.testing.assert_allclose(arr(y).sum(-1), 1.0, rtol=1e-5)
    (y[:, 0]).sum().backward()
    assert logits.grad is not None and arr(logits.grad)[0] > 0   # a larger logit, a larger share


def test_gamma_rsample_is_reparameterized():
    conc = tessera.tensor([2.0, 5.0], requires_grad=True)
    rate = tessera.tensor([1.0, 3.0], requires_grad=True)
    tessera.manual_seed(11)
    x = D.Gamma(conc, rate).rsample((2000,))
    x.sum().backward()
    # x = g / rate with g independent of rate: d/drate = -x / rate
    np.testing.assert_allclose(arr(rate.grad), -(arr(x) / arr(rate)).sum(0), rtol=1e-4)
    assert np.all(arr(conc.grad) > 0)   # larger shape, larger draws


# ================================================================ validation

def test_invalid_parameters_raise_like_torch():
    bad = [lambda M, t: M.Normal(t([0.]), t([-1.])), lambda M, t: M.Bernoulli(t([1.5])),
           lambda M, t: M.Categorical(t([[0.5, -0.1, 0.6]])), lambda M, t: M.Uniform(t([1.]), t([0.])),
           lambda M, t: M.Geometric(t([0.])), lambda M, t: M.Binomial(t([2.5]), t([0.5])),
           lambda M, t: M.Dirichlet(t([[1., -1.]])), lambda M, t: M.Beta(t([1.]), t([0.])),
           lambda M, t: M.Bernoulli(t([0.5]), t([0.5])), lambda M, t: M.ContinuousBernoulli(t([1.5]),
                                                                                           validate_args=True),
           lambda M, t: M.Categorical(t(1.0)), lambda M, t: M.Independent(M.Normal(t([0.]), t([1.])), 2),
           lambda M, t: M.Multinomial(t(2.), t([0.5, 0.5])), lambda M, t: M.Exponential("x")]
    eye = [[1., 0.], [0., 1.]]
    bad += [lambda M, t: M.MultivariateNormal(t(0.), t(eye)),
            lambda M, t: M.MultivariateNormal(t([0., 0.])),
            lambda M, t: M.MultivariateNormal(t([0., 0.]), t(eye), scale_tril=t(eye)),
            lambda M, t: M.MultivariateNormal(t([0., 0.]), t([1., 1.])),
            lambda M, t: M.MultivariateNormal(t([0., 0.]), precision_matrix=t([1., 1.])),
            lambda M, t: M.MultivariateNormal(t([0., 0.]), scale_tril=t([1., 1.])),
            lambda M, t: M.MultivariateNormal(t([0., 0.]), t([[1., 2.], [2., 1.]])),        # indefinite
            lambda M, t: M.MultivariateNormal(t([0., 0.]), t([[1., 0.5], [0., 1.]])),       # not symmetric
            lambda M, t: M.MultivariateNormal(t([0., 0.]), precision_matrix=t([[-1., 0.], [0., 1.]])),
            lambda M, t: M.MultivariateNormal(t([0., 0.]), scale_tril=t([[1., 0.], [1., -1.]])),
            lambda M, t: M.MultivariateNormal(t([0., 0.]), scale_tril=t([[1., 0.5], [0., 1.]])),
            lambda M, t: M.MultivariateNormal(t([[0., 0.]] * 3), t([eye, eye])),           # batch 3 vs 2
            lambda M, t: M.MultivariateNormal(t([0., 0.]), t([[1., 2.], [2., 1.]]), validate_args=False),
            lambda M, t: M.LowRankMultivariateNormal(t(0.), t([[1.]]), t([1.])),
            lambda M, t: M.LowRankMultivariateNormal(t([0., 0.]), t([1., 1.]), t([1., 1.])),
            lambda M, t: M.LowRankMultivariateNormal(t([0., 0.]), t([[1.], [1.], [1.]]), t([1., 1.])),
            lambda M, t: M.LowRankMultivariateNormal(t([0., 0.]), t([[1.], [1.]]), t([1., 1., 1.])),
            lambda M, t: M.LowRankMultivariateNormal(t([[0., 0.]] * 3), t([[[1.], [1.]]] * 2), t([1., 1.])),
            lambda M, t: M.LowRankMultivariateNormal(t([0., 0.]), t([[0.], [0.]]), t([1., -1.])),
            lambda M, t: M.Wishart(3.),
            lambda M, t: M.Wishart(3., t(eye), t(eye)),
            lambda M, t: M.Wishart(3., t([1., 1.])),
            lambda M, t: M.Wishart(1., t(eye)),                                              # df <= p - 1
            lambda M, t: M.Wishart(t([3., 0.5]), scale_tril=t(eye)),
            lambda M, t: M.Wishart(3., t([[1., 2.], [2., 1.]])),
            lambda M, t: M.Wishart(3., scale_tril=t([[-1., 0.], [0., 1.]])),
            lambda M, t: M.Wishart(t([3., 3., 3.]), precision_matrix=t([eye, eye])),
            lambda M, t: M.LKJCholesky(1),
            lambda M, t: M.LKJCholesky(3, t([1., -1.])),
            lambda M, t: M.LKJCholesky(3, -1., validate_args=False)]
    for build in bad:
        a = outcome(lambda: build(TD, torch.tensor))
        b = outcome(lambda: build(D, tessera.tensor))
        assert a[0] == b[0] == "error", (a, b)
        assert type(a[1]).__name__ == type(b[1]).__name__, (a[1], b[1])
        assert str(b[1]).replace("tessera", "torch").split(" (")[0] == str(a[1]).split(" (")[0]
    # validate_args=False builds them anyway
    D.Normal(tessera.tensor([0.]), tessera.tensor([-1.]), validate_args=False)


def test_invalid_samples_raise_like_torch():
    cases = [(lambda M, t: M.Normal(t([0., 1.]), t([1., 1.])), [[0., 1., 2.]]),
             (lambda M, t: M.Exponential(t([1.])), [-1.]),
             (lambda M, t: M.Bernoulli(t([0.3])), [0.5]),
             (lambda M, t: M.Categorical(t([0.3, 0.7])), [2.]),
             (lambda M, t: M.Dirichlet(t([1., 1.])), [[0.3]]),
             (lambda M, t: M.Beta(t([1.]), t([1.])), [1.5])]
    for build, value in cases:
        a = outcome(lambda: build(TD, torch.tensor).log_prob(torch.tensor(value)))
        b = outcome(lambda: build(D, tessera.tensor).log_prob(tessera.tensor(value)))
        assert a[0] == b[0] == "error" and type(a[1]) is type(b[1]) is ValueError, (a, b)
        assert str(b[1]).split(" (")[0].split(":")[0] == str(a[1]).split(" (")[0].split(":")[0]
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0., 1.).log_prob(0.5)


def test_set_default_validate_args():
    assert D.Distribution._validate_args is True
    try:
        D.Distribution.set_default_validate_args(False)
        d = D.Normal(tessera.tensor([0.]), tessera.tensor([-1.]))   # not checked
        assert d._validate_args is False
        assert arr(D.Exponential(tessera.tensor([1.])).log_prob(tessera.tensor([-1.]))).shape == (1,)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(tessera.tensor([0.]), tessera.tensor([-1.]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(2)


def test_custom_subclass_must_define_expand():
    class MyNormal(D.Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    theirs = type("MyNormal", (TD.Normal,), {"__init__": lambda self, loc: TD.Normal.__init__(self, loc, 1.0)})
    a = outcome(lambda: theirs(torch.zeros(2)).expand((3, 2)))
    b = outcome(lambda: MyNormal(tessera.zeros(2)).expand((3, 2)))
    assert type(a[1]) is type(b[1]) is NotImplementedError and str(a[1]) == str(b[1]).replace("tessera", "torch")


# ================================================================ transforms

RNG = np.random.default_rng(0)
REAL = RNG.normal(size=(2, 3))
REAL3 = RNG.normal(size=(2, 3, 3))


def transform_cases():
    # (id, builder(M, t) -> transform, input values)
    return [
        ("Exp", lambda M, t: M.ExpTransform(), REAL),
        ("Power", lambda M, t: M.PowerTransform(t(2.5)), np.abs(REAL) + 0.1),
        ("Power-tensor", lambda M, t: M.PowerTransform(t([0.5, 2., 3.])), np.abs(REAL) + 0.1),
        ("Sigmoid", lambda M, t: M.SigmoidTransform(), REAL * 3),
        ("Softplus", lambda M, t: M.SoftplusTransform(), REAL * 3),
        ("Tanh", lambda M, t: M.TanhTransform(), REAL),
        ("Abs", lambda M, t: M.AbsTransform(), REAL),
        ("Affine", lambda M, t: M.AffineTransform(t([1., 2., 3.]), t([2., -3., 0.5])), REAL),
        ("Affine-numbers", lambda M, t: M.AffineTransform(1.5, -2.0), REAL),
        ("Affine-event", lambda M, t: M.AffineTransform(t([1., 2., 3.]), t([2., -3., 0.5]), event_dim=1), REAL),
        ("Softmax", lambda M, t: M.SoftmaxTransform(), REAL),
        ("StickBreaking", lambda M, t: M.StickBreakingTransform(), REAL),
        ("LowerCholesky", lambda M, t: M.LowerCholeskyTransform(), REAL3),
        ("CorrCholesky", lambda M, t: M.CorrCholeskyTransform(), REAL),
        ("Cat", lambda M, t: M.CatTransform([M.ExpTransform(), M.AffineTransform(0., 2.)], dim=1, lengths=[2, 1]),
         REAL),
        ("Cat-events-cat", lambda M, t: M.CatTransform([M.IndependentTransform(M.ExpTransform(), 1),
                                                       M.AffineTransform(0., 2., event_dim=1)], dim=0), REAL),
        ("Cat-events-sum", lambda M, t: M.CatTransform([M.ExpTransform(), M.IndependentTransform(
            M.SigmoidTransform(), 1)], dim=-1, lengths=[2, 1]), REAL),
        ("Stack", lambda M, t: M.StackTransform([M.ExpTransform(), M.SigmoidTransform(), M.TanhTransform()], dim=1),
         REAL),
        ("Independent", lambda M, t: M.IndependentTransform(M.SigmoidTransform(), 1), REAL),
        ("Reshape", lambda M, t: M.ReshapeTransform((3,), (3, 1)), REAL),
        ("Compose", lambda M, t: M.ComposeTransform([M.AffineTransform(t(1.), t(-2.)), M.ExpTransform()]), REAL),
        ("Compose-events", lambda M, t: M.ComposeTransform([M.ExpTransform(), M.StickBreakingTransform().inv.inv,
                                                            M.ReshapeTransform((4,), (2, 2))]), REAL),
        ("identity", lambda M, t: M.identity_transform, REAL),
        ("CDF", lambda M, t: M.CumulativeDistributionTransform(M.Normal(t(0.5), t(2.))), REAL),
        ("Inverse-Exp", lambda M, t: M.ExpTransform().inv, np.abs(REAL) + 0.2),
        ("Inverse-Compose", lambda M, t: M.ComposeTransform([M.SigmoidTransform(), M.AffineTransform(1., 2.)]).inv,
         RNG.uniform(1.1, 2.9, size=(2, 3))),
    ]


TRANSFORMS = transform_cases()


@pytest.mark.parametrize("case", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transform_forward_inverse_log_det(case):
    _, build, x = case
    mine, theirs = build(D, tessera.tensor), build(TD, torch.tensor)
    X, TX = tessera.tensor(x), torch.tensor(x)
    y = same_outcome(lambda: mine(X), lambda: theirs(TX), "float64")
    ty = theirs(TX)
    same_outcome(lambda: mine.inv(y), lambda: theirs.inv(ty), "float64")
    same_outcome(lambda: mine.log_abs_det_jacobian(X, y), lambda: theirs.log_abs_det_jacobian(TX, ty), "float64")
    for attr in ["bijective", "event_dim"]:
        a, b = outcome(lambda: getattr(theirs, attr)), outcome(lambda: getattr(mine, attr))
        assert a[0] == b[0] and (a[0] == "error" or a[1] == b[1]), (attr, a, b)
    assert mine.domain.event_dim == theirs.domain.event_dim and mine.codomain.event_dim == theirs.codomain.event_dim
    a, b = outcome(lambda: theirs.sign), outcome(lambda: mine.sign)
    assert a[0] == b[0], (a, b)
    if a[0] == "ok":
        as_array = (lambda s: arr(s) if hasattr(s, "detach") else np.asarray(s))
        np.testing.assert_array_equal(as_array(b[1]), as_array(a[1]))
    for fn in ("forward_shape", "inverse_shape"):
        for shape in [tuple(x.shape), tuple(ty.shape)]:
            a = outcome(lambda: tuple(getattr(theirs, fn)(torch.Size(shape))))
            b = outcome(lambda: tuple(getattr(mine, fn)(tessera.Size(shape))))
            assert a[0] == b[0] and (a[0] == "error" or a[1] == b[1]), (fn, shape, a, b)
    assert repr(mine).replace("tessera", "torch") == repr(theirs) or "CumulativeDistribution" in repr(mine)


def test_transform_caching_equality_and_inverse_identity():
    x = tessera.tensor(REAL)
    t = D.ExpTransform(cache_size=1)
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    assert D.ExpTransform()(x) is not D.ExpTransform()(x)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)
    assert D.ExpTransform().with_cache(1)._cache_size == 1
    assert D.AffineTransform(1., 2.).with_cache()._cache_size == 1
    composed = D.ComposeTransform([D.ExpTransform(), D.AffineTransform(1., 2.)], cache_size=1)
    assert all(p._cache_size == 1 for p in composed.parts)
    inv = t.inv
    assert inv.inv is t and t.inv is inv   # the inverse is kept while referenced
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.AffineTransform(1., 2.) == D.AffineTransform(1., 2.) != D.AffineTransform(1., 3.)
    assert D.PowerTransform(tessera.tensor(2.)) == D.PowerTransform(tessera.tensor(2.))
    assert D.ExpTransform().inv == D.ExpTransform().inv
    assert D.ComposeTransform([D.ExpTransform()]) == D.ComposeTransform([D.ExpTransform()])
    c = D.ComposeTransform([D.ExpTransform(), D.AffineTransform(0., 2.)])
    assert c.inv.inv is c
    assert D.identity_transform(x) is x
    with pytest.raises(NotImplementedError):
        D.Transform().with_cache(0).sign
    with pytest.raises(ValueError, match="different numbers of elements"):
        D.ReshapeTransform((2,), (3,))
    import pickle
    assert isinstance(pickle.loads(pickle.dumps(D.ExpTransform().inv)), D.transforms._InverseTransform)


# ================================================================ constraints

CONSTRAINT_VALUES = [np.array([-1.5, 0., 0.5, 1., 2., np.nan]), np.array([[0.2, 0.8], [0.5, 0.6], [0., 1.]]),
                     np.array([0., 1., 2., 3.5, -1.])]
MATRICES = [np.array([[[1., 0.], [0.5, 2.]], [[1., 0.2], [0.2, 1.]], [[-1., 0.], [0., 1.]], [[0.6, 0.], [0.6, 0.8]]]),
            # all symmetric, so the definiteness checks get past their symmetry test
            np.array([[[2., 1.], [1., 2.]], [[1., 2.], [2., 1.]], [[0., 0.], [0., 0.]], [[1., 0.], [0., 3.]]]),
            # Cholesky factors of correlation matrices and near misses (row norm, sign, upper entry)
            np.array([[[1., 0.], [0.6, 0.8]], [[1., 0.], [0.8, 0.7]], [[1., 0.], [0.6, -0.8]],
                      [[1., 1e-7], [0.6, 0.8]]]),
            # 3 x 3: definite, negative definite, a correlation factor, not symmetric
            np.stack([COV[0], -COV[1], CORR_CHOL[0], TRIL[1]]),
            np.zeros((2, 3, 2))]


def constraint_cases():
    return [
        ("real", lambda C: C.real), ("boolean", lambda C: C.boolean), ("positive", lambda C: C.positive),
        ("nonnegative", lambda C: C.nonnegative), ("greater_than", lambda C: C.greater_than(0.5)),
        ("greater_than_eq", lambda C: C.greater_than_eq(0.5)), ("less_than", lambda C: C.less_than(1.)),
        ("interval", lambda C: C.interval(0., 1.)), ("half_open_interval", lambda C: C.half_open_interval(0., 1.)),
        ("unit_interval", lambda C: C.unit_interval), ("integer_interval", lambda C: C.integer_interval(0, 2)),
        ("nonnegative_integer", lambda C: C.nonnegative_integer),
        ("positive_integer", lambda C: C.positive_integer), ("simplex", lambda C: C.simplex),
        ("real_vector", lambda C: C.real_vector), ("one_hot", lambda C: C.one_hot),
        ("multinomial", lambda C: C.multinomial(1)), ("independent", lambda C: C.independent(C.positive, 1)),
        ("cat", lambda C: C.cat([C.positive, C.real], dim=-1, lengths=[1, 1])),
        ("stack", lambda C: C.stack([C.unit_interval, C.positive], dim=-1)),
        ("lower_triangular", lambda C: C.lower_triangular), ("lower_cholesky", lambda C: C.lower_cholesky),
        ("corr_cholesky", lambda C: C.corr_cholesky), ("square", lambda C: C.square),
        ("symmetric", lambda C: C.symmetric), ("positive_definite", lambda C: C.positive_definite),
        ("positive_semidefinite", lambda C: C.positive_semidefinite),
    ]


CONSTRAINTS = constraint_cases()


@pytest.mark.parametrize("case", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraint_checks(case):
    name, build = case
    mine, theirs = build(D.constraints), build(TD.constraints)
    assert repr(mine) == repr(theirs)
    assert (mine.event_dim, mine.is_discrete) == (theirs.event_dim, theirs.is_discrete)
    checked = 0
    for values in (MATRICES if mine.event_dim == 2 else CONSTRAINT_VALUES):
        a = outcome(lambda: theirs.check(torch.tensor(values)))
        b = outcome(lambda: mine.check(tessera.tensor(values)))
        assert a[0] == b[0], (values, a, b)
        if a[0] == "ok":
            assert arr(b[1]).dtype == np.bool_
            np.testing.assert_array_equal(arr(b[1]), arr(a[1]))
            checked += 1
    assert checked


def test_dependent_constraints():
    C, TC = D.constraints, TD.constraints
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity"):
        C.dependent.check(tessera.zeros(2))
    with pytest.raises(NotImplementedError):
        C.dependent.event_dim
    dep = C.dependent(is_discrete=True, event_dim=1)
    assert (dep.is_discrete, dep.event_dim) == (True, 1) and repr(dep) == repr(TC.dependent(event_dim=1))
    # a dependent_property is a property on instances and a dependent constraint on the class
    assert C.is_dependent(D.Uniform.support) and D.Uniform.support.event_dim == 0
    s = D.Uniform(0., 2.).support
    assert type(s) is type(C.interval(0, 1)) and float(s.upper_bound) == 2.0
    assert C.is_dependent(D.Binomial.support) and D.Binomial.support.is_discrete


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("case", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_biject_to_and_transform_to(case, registry):
    name, build = case
    mine_c, theirs_c = build(D.constraints), build(TD.constraints)
    a = outcome(lambda: getattr(TD, registry)(theirs_c))
    b = outcome(lambda: getattr(D, registry)(mine_c))
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert type(a[1]) is type(b[1]) and str(a[1]) == str(b[1])
        return
    assert repr(b[1]).replace("tessera", "torch") == repr(a[1])
    x = RNG.normal(size=(4,) + tuple(b[1].inverse_shape(tessera.Size([2] * max(mine_c.event_dim, 1)))))
    y, ty = b[1](tessera.tensor(x)), a[1](torch.tensor(x))
    close(y, ty)
    assert mine_c.check(y).all()


def test_registry_rejects_non_constraints():
    with pytest.raises(TypeError, match="Expected constraint"):
        D.biject_to.register(int, lambda c: None)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(D.constraints.boolean)
    registry = D.constraint_registry.ConstraintRegistry()

    @registry.register(D.constraints.positive)
    def _factory(constraint):
        return D.ExpTransform()
    assert isinstance(registry(D.constraints.greater_than(3.)), D.ExpTransform)


# ================================================================ kl_divergence

def kl_examples(L):
    t = L
    return {
        "Bernoulli": [L.D.Bernoulli(t([0.2, 0.0, 1.0])), L.D.Bernoulli(t([0.5, 0.3, 0.0]))],
        "Beta": [L.D.Beta(t([1.5, 2., 3.]), t([1.5, 2., 0.5])), L.D.Beta(t([2., 1., 1.]), t([3., 1., 4.]))],
        "Binomial": [L.D.Binomial(t([5., 6., 7.]), t([0.2, 0.5, 0.9])),
                     L.D.Binomial(t([5., 5., 7.]), t([0.3, 0.5, 0.5]))],
        "Categorical": [L.D.Categorical(t([[0.2, 0.8, 0.], [0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])),
                        L.D.Categorical(t([[0.5, 0.5, 0.], [0.2, 0., 0.8], [0.3, 0.3, 0.4]]))],
        "Cauchy": [L.D.Cauchy(t([0., 1., 2.]), t([1., 2., 0.5])), L.D.Cauchy(t([1., 1., -2.]), t([0.5, 1., 2.]))],
        "ContinuousBernoulli": [L.D.ContinuousBernoulli(t([0.2, 0.5, 0.9])),
                                L.D.ContinuousBernoulli(t([0.7, 0.4, 0.5]))],
        "Dirichlet": [L.D.Dirichlet(t([[1., 2.], [3., 4.], [0.5, 0.5]])),
                      L.D.Dirichlet(t([[2., 2.], [1., 4.], [1., 0.5]]))],
        "Exponential": [L.D.Exponential(t([1., 2., 0.5])), L.D.Exponential(t([0.5, 3., 1.]))],
        "Gamma": [L.D.Gamma(t([1.5, 2., 3.]), t([1.5, 2., 0.5])), L.D.Gamma(t([1., 4., 2.]), t([0.5, 1., 2.]))],
        "Geometric": [L.D.Geometric(t([0.2, 0.5, 0.9])), L.D.Geometric(t([0.4, 0.1, 0.6]))],
        "Gumbel": [L.D.Gumbel(t([0., 1., 2.]), t([1., 2., 0.5])), L.D.Gumbel(t([1., -1., 0.]), t([2., 1., 1.]))],
        "HalfNormal": [L.D.HalfNormal(t([1., 2., 0.5])), L.D.HalfNormal(t([2., 1., 1.]))],
        "Independent": [L.D.Independent(L.D.Normal(t([[0., 1.], [1., 2.], [0., 0.]]), t([1., 2.])), 1),
                        L.D.Independent(L.D.Normal(t([[1., 1.], [0., 2.], [0., 1.]]), t([2., 1.])), 1)],
        "Laplace": [L.D.Laplace(t([0., 1., 2.]), t([1., 2., 0.5])), L.D.Laplace(t([1., -1., 0.]), t([2., 1., 1.]))],
        "Normal": [L.D.Normal(t([0., 1., 0.4]), t([1., 2., 0.5])), L.D.Normal(t([1., -1., 0.]), t([2., 1., 1.]))],
        "OneHotCategorical": [L.D.OneHotCategorical(t([[0.2, 0.8], [0.5, 0.5], [0., 1.]])),
                              L.D.OneHotCategorical(t([[0.5, 0.5], [0.9, 0.1], [0.3, 0.7]]))],
        "Pareto": [L.D.Pareto(t([1., 2., 0.5]), t([3., 1.5, 0.8])), L.D.Pareto(t([0.5, 2.5, 0.5]), t([2., 2., 1.]))],
        "Poisson": [L.D.Poisson(t([1., 2., 0.5])), L.D.Poisson(t([0.5, 3., 1.]))],
        "TransformedDistribution": [
            L.D.TransformedDistribution(L.D.Normal(t([0., 1., 0.]), t([1., 2., 1.])), [L.D.ExpTransform()]),
            L.D.TransformedDistribution(L.D.Normal(t([1., 0., 0.]), t([1., 1., 3.])), [L.D.ExpTransform()])],
        "Uniform": [L.D.Uniform(t([0.1, 0.2, -1.]), t([0.5, 0.9, 1.])),
                    L.D.Uniform(t([0., 0.3, -2.]), t([1., 0.8, 2.]))],
        # a batch of three over R^2; p and q parametrised differently, one factor shared by the batch
        "MultivariateNormal": [
            L.D.MultivariateNormal(t([[0., 1.], [1., -1.], [0.5, 0.5]]),
                                   covariance_matrix=t([[[2., 0.3], [0.3, 1.]], [[1., 0.], [0., 1.]],
                                                        [[0.5, -0.2], [-0.2, 3.]]])),
            L.D.MultivariateNormal(t([[1., 1.], [0., 0.], [0.5, -1.]]), scale_tril=t([[1.5, 0.], [-0.4, 0.7]]))],
        "LowRankMultivariateNormal": [
            L.D.LowRankMultivariateNormal(t([[0., 1.], [1., -1.], [0.5, 0.5]]),
                                          t([[[1.], [0.5]], [[0.], [1.]], [[-0.3], [0.8]]]), t([0.5, 1.5])),
            L.D.LowRankMultivariateNormal(t([0.5, 0.]), t([[[0.2, 1.], [0.7, -0.1]]]),
                                          t([[1., 2.], [0.3, 0.4], [2., 1.]]))],
    }


def test_kl_divergence_for_every_registered_pair():
    from torch.distributions.kl import _KL_REGISTRY as THEIR_REGISTRY
    mine, theirs = kl_examples(Lib(tessera, "float64")), kl_examples(Lib(torch, "float64"))
    done = 0
    for type_p, type_q in THEIR_REGISTRY:
        p_name, q_name = type_p.__name__, type_q.__name__
        if p_name not in theirs or q_name not in theirs:
            assert p_name == "ExponentialFamily", p_name
            continue
        assert (getattr(D, p_name), getattr(D, q_name)) in D.kl._KL_REGISTRY
        for i, j in [(0, 1), (1, 0), (0, 0)]:
            if p_name == q_name == "Binomial" and i == 1:
                continue
            got = D.kl_divergence(mine[p_name][i], mine[q_name][j])
            want = TD.kl_divergence(theirs[p_name][i], theirs[q_name][j])
            close(got, want, rtol=1e-9, atol=1e-12)
        done += 1
    assert done == len(D.kl._KL_REGISTRY) - 1   # all but (ExponentialFamily, ExponentialFamily)
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(mine["Binomial"][1], mine["Binomial"][0])


def test_kl_divergence_gradients():
    from torch.distributions.kl import _KL_REGISTRY as THEIR_REGISTRY
    nonzero = 0
    for type_p, type_q in THEIR_REGISTRY:
        L, TL = Lib(tessera, "float64", grad=True), Lib(torch, "float64", grad=True)
        mine, theirs = kl_examples(L), kl_examples(TL)
        if type_p.__name__ not in theirs or type_q.__name__ not in theirs:
            continue
        want = TD.kl_divergence(theirs[type_p.__name__][0], theirs[type_q.__name__][1])
        got = D.kl_divergence(mine[type_p.__name__][0], mine[type_q.__name__][1])
        if want.requires_grad:
            weighted_backward(got, want)
            nonzero += same_grads(L, TL)
    assert nonzero > 50


def test_kl_exponential_family_bregman_divergence():
    from tessera.distributions.kl import _kl_expfamily_expfamily
    from torch.distributions.kl import _kl_expfamily_expfamily as theirs
    for name in ("Normal", "Gamma", "Exponential", "Poisson", "Beta", "Dirichlet", "Bernoulli", "ContinuousBernoulli"):
        p, q = kl_examples(Lib(tessera, "float64"))[name]
        tp, tq = kl_examples(Lib(torch, "float64"))[name]
        close(_kl_expfamily_expfamily(p, q), theirs(tp, tq), rtol=1e-7, atol=1e-9)
        if name in ("Normal", "Gamma", "Exponential", "Bernoulli", "ContinuousBernoulli"):
            # the generic entropy, from the log normalizer's gradient, agrees with the closed form
            close(D.ExponentialFamily.entropy(p), TD.ExponentialFamily.entropy(tp), rtol=1e-7, atol=1e-9)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        _kl_expfamily_expfamily(D.Normal(0., 1.), D.Exponential(1.))


def test_kl_dispatch_picks_the_most_specific_pair():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type "
                                                  "Categorical"):
        D.kl_divergence(D.Normal(0., 1.), D.Categorical(tessera.tensor([0.5, 0.5])))

    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(D.Normal(0., 1.), D.Normal)

    class A(D.Normal):
        pass

    class B(D.Normal):
        pass
    p, q = A(tessera.tensor(0.), tessera.tensor(1.)), B(tessera.tensor(1.), tessera.tensor(2.))
    close(D.kl_divergence(p, q), TD.kl_divergence(TD.Normal(torch.tensor(0.), torch.tensor(1.)),
                                                   TD.Normal(torch.tensor(1.), torch.tensor(2.))), "float32")
    try:
        D.register_kl(A, D.Normal)(lambda p, q: tessera.tensor(1.))
        D.register_kl(D.Normal, B)(lambda p, q: tessera.tensor(2.))
        with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence\\(A, B\\). Please register_kl\\(A, B\\)"):
            assert float(D.kl_divergence(p, q)) == 1.0
        D.register_kl(A, B)(lambda p, q: tessera.tensor(3.))
        assert float(D.kl_divergence(p, q)) == 3.0
        assert float(D.kl_divergence(p, D.Normal(0., 1.))) == 1.0
    finally:
        for key in [(A, D.Normal), (D.Normal, B), (A, B)]:
            D.kl._KL_REGISTRY.pop(key, None)
        D.kl._KL_MEMOIZE.clear()


# ================================================================ utils, composites

def test_utils_match_torch():
    from tessera.distributions import utils as U
    from torch.distributions import utils as TU
    p = np.array([[0.0, 0.3, 1.0], [0.5, 1e-9, 0.999]])
    for fn in ("probs_to_logits", "clamp_probs"):
        close(getattr(U, fn)(tessera.tensor(p)), getattr(TU, fn)(torch.tensor(p)))
    close(U.probs_to_logits(tessera.tensor(p), True), TU.probs_to_logits(torch.tensor(p), True))
    close(U.logits_to_probs(tessera.tensor(p)), TU.logits_to_probs(torch.tensor(p)))
    close(U.logits_to_probs(tessera.tensor(p), True), TU.logits_to_probs(torch.tensor(p), True))
    a, b = U.broadcast_all(tessera.tensor([1., 2.], dtype=tessera.float64), 3)
    assert a.dtype == b.dtype == tessera.float64 and tuple(b.shape) == (2,) and arr(b).tolist() == [3., 3.]
    assert U.broadcast_all(1, 2.5)[0].dtype == tessera.get_default_dtype()
    with pytest.raises(ValueError, match="Input arguments must all be instances of numbers.Number"):
        U.broadcast_all("a", 1)
    m = RNG.normal(size=(2, 4, 4))
    for diag in (0, -1, 1):
        v = U.tril_matrix_to_vec(tessera.tensor(m), diag)
        close(v, TU.tril_matrix_to_vec(torch.tensor(m), diag))
        close(U.vec_to_tril_matrix(v, diag), TU.vec_to_tril_matrix(torch.tensor(arr(v)), diag))
    assert U.euler_constant == TU.euler_constant

    class Thing:
        calls = 0

        @U.lazy_property
        def value(self):
            Thing.calls += 1
            return 42
    thing = Thing()
    assert thing.value == thing.value == 42 and Thing.calls == 1 and isinstance(Thing.value, property)


def test_transformed_distribution_shapes_and_cdf():
    base = D.Normal(tessera.zeros(3, dtype=tessera.float64), tessera.ones(3, dtype=tessera.float64))
    tbase = TD.Normal(torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
    # a decreasing map: the cdf is flipped back to increasing
    for build in [lambda M, b: M.TransformedDistribution(b, [M.AffineTransform(1., -2.)]),
                  lambda M, b: M.TransformedDistribution(b, M.StickBreakingTransform()),
                  lambda M, b: M.TransformedDistribution(b, [M.ReshapeTransform((3,), (3, 1)), M.ExpTransform()])]:
        d, td = build(D, base), build(TD, tbase)
        assert (tuple(d.batch_shape), tuple(d.event_shape)) == (tuple(td.batch_shape), tuple(td.event_shape))
        assert repr(d.support) == repr(td.support)
        v = td.sample((2,))
        close(d.log_prob(tessera.tensor(v.numpy())), td.log_prob(v))
        same_outcome(lambda: d.cdf(tessera.tensor(v.numpy())), lambda: td.cdf(v), "float64")
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        D.TransformedDistribution(base, "exp")


def test_mixture_same_family_checks_and_sample():
    cat = D.Categorical(tessera.tensor([0.3, 0.7]))
    with pytest.raises(ValueError, match="needs to be an  instance"):
        D.MixtureSameFamily(D.Normal(0., 1.), D.Normal(tessera.zeros(2), tessera.ones(2)))
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(cat, D.Normal(tessera.zeros(3), tessera.ones(3)))
    m = D.MixtureSameFamily(cat, D.Normal(tessera.tensor([-5., 5.]), tessera.tensor([0.1, 0.1])))
    tessera.manual_seed(9)
    x = arr(m.sample((N,)))
    np.testing.assert_allclose((x > 0).mean(), 0.7, atol=0.015)
    assert repr(m).startswith("MixtureSameFamily(\n  Categorical(probs: torch.Size([2])".replace("torch", "tessera"))
