"""tessera.distributions' transforms, constraints, constraint registries (biject_to /
transform_to), kl_divergence and its registry, the utils module, TransformedDistribution
and MixtureSameFamily, each against torch.distributions (torch 1.13) on the same numbers.
The distribution families themselves are in test_distributions.py.
"""
import numpy as np
import pytest
import torch
import torch.distributions as TD

import tessera
import tessera.distributions as D
from test_distributions import (CORR_CHOL, COV, N, TRIL, Lib, arr, close, outcome, same_grads, same_outcome,
                                weighted_backward)

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
