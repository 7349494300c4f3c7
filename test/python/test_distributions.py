"""tessera.distributions against torch.distributions (torch 1.13).

Every distribution is built twice from the same numbers, once in tessera and once in
torch, and the deterministic quantities are compared value for value in float64 and
float32: shapes, moments (mean, mode, variance, stddev), log_prob, cdf, icdf, entropy,
enumerate_support, expand(), and the gradients of all of these with respect to the
parameters; signatures and the validation errors are compared the same way (transforms,
constraints, their registries and kl_divergence are in test_distributions_transforms.py,
the multivariate families in test_distributions_multivariate.py). Samples come from
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
