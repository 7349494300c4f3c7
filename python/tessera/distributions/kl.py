"""kl_divergence(p, q) and register_kl (torch.distributions.kl): closed-form KL(p || q)
for pairs of distribution types, dispatched to the most specific registered pair; this
file holds the pairs within one family, _kl_pairs.py the pairs across families."""
import math
import warnings

import tessera

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _batch_lowrank_logdet, _batch_lowrank_mahalanobis
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _half_log_det
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}   # (type_p, type_q) -> function, in registration order
_KL_MEMOIZE = {}    # (type(p), type(q)) -> the function dispatch chose, or NotImplemented


def register_kl(type_p, type_q):
    """Decorator registering fun(p, q) as KL(p || q) for p of type_p and q of type_q
    (and their subclasses, unless a more specific pair is registered)."""
    for name, cls in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {cls}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


def _precedes(a, b):
    """Lexicographic order on type pairs by subclassing: a's first type is a subclass of
    b's, and if they are the same type, a's second is a subclass of b's."""
    for x, y in zip(a, b):
        if not issubclass(x, y):
            return False
        if x is not y:
            break
    return True


def _most_specific(pairs):
    best = None
    for pair in pairs:
        if best is None or (_precedes(pair, best) and pair != best):
            best = pair
    return best


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    # most specific in p first, and in q first: when they disagree the choice is ambiguous
    left = _most_specific(matches)
    right_q, right_p = _most_specific([(q, p) for p, q in matches])
    left_fun, right_fun = _KL_REGISTRY[left], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left[0].__name__}, {right_q.__name__})", RuntimeWarning)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the batch shape. Raises
    NotImplementedError when no pair of p's and q's types (or their bases) is registered."""
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fun = _KL_MEMOIZE[key]
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} "
                                  f"and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor):
    return tessera.full_like(tensor, math.inf)


def _x_log_x(tensor):
    return tensor * tensor.log()


def _batch_trace_XXT(bmat):
    """trace(X X^T), the sum of squares of each matrix of a batch."""
    return bmat.reshape(bmat.shape[:-2] + (-1,)).pow(2).sum(-1)


def _different_event_shapes(what):
    # torch's message, including the run of spaces its source's line continuation leaves in it
    return ValueError(f"KL-divergence between two {what} with" + " " * 26
                      + "different event shapes cannot be computed")


def _lowrank_log_det(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril)


def _lowrank_mahalanobis(q, x):
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, x,
                                      q._capacitance_tril)


def _set_where(value, mask, fill):
    """value with `fill` where mask holds (the functional form of value[mask] = fill)."""
    return tessera.where(mask, tessera.full_like(value, fill), value)


# ------------------------------------------------------------------ within one family

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = tessera.nn.functional.softplus
    ones = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    ones = _set_where(_set_where(ones, q.probs == 0, math.inf), p.probs == 0, 0.)
    zeros = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    zeros = _set_where(_set_where(zeros, q.probs == 1, math.inf), p.probs == 1, 0.)
    return ones + zeros


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    p_sum = p.concentration1 + p.concentration0
    q_sum = q.concentration1 + q.concentration0
    log_norms = (q.concentration1.lgamma() + q.concentration0.lgamma() + p_sum.lgamma()
                 - p.concentration1.lgamma() - p.concentration0.lgamma() - q_sum.lgamma())
    return (log_norms + (p.concentration1 - q.concentration1) * tessera.digamma(p.concentration1)
            + (p.concentration0 - q.concentration0) * tessera.digamma(p.concentration0)
            + (q_sum - p_sum) * tessera.digamma(p_sum))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # q with more trials puts mass where p has none; p with more has support q lacks (inf)
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _set_where(kl, p.total_count > q.total_count, math.inf)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _set_where(t, (q.probs == 0).expand_as(t), math.inf)
    t = _set_where(t, (p.probs == 0).expand_as(t), 0.)
    return t.sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + tessera.log1p(-p.probs)
            - q._cont_bern_log_norm() - tessera.log1p(-q.probs))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    p_sum = p.concentration.sum(-1)
    q_sum = q.concentration.sum(-1)
    log_norms = p_sum.lgamma() - q_sum.lgamma() - (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    e_log_x = p.concentration.digamma() - p_sum.digamma().unsqueeze(-1)
    return log_norms + ((p.concentration - q.concentration) * e_log_x).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer F between the natural parameters:
    F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>."""
    if not type(p) == type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot "
                                  "be computed using Bregman divergences")
    p_params, log_norm, grads = p._log_normalizer_and_grads()
    q_params = q._natural_params
    result = q._log_normalizer(*q_params) - log_norm
    for pp, qp, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qp - pp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    return (q.concentration * (p.rate / q.rate).log()
            + tessera.lgamma(q.concentration) - tessera.lgamma(p.concentration)
            + (p.concentration - q.concentration) * tessera.digamma(p.concentration)
            + (q.rate - p.rate) * (p.concentration / p.rate))


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    scale_ratio = p.scale / q.scale
    q_loc = q.loc / q.scale
    p_loc = p.loc / q.scale
    return (-scale_ratio.log() - q_loc + p_loc + scale_ratio * euler_constant
            + tessera.exp(q_loc + (1 + scale_ratio).lgamma() - p_loc) - (1 + euler_constant))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - tessera.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -scale_ratio.log() + distance / q.scale + scale_ratio * tessera.exp(-distance / p.scale) - 1


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    shift = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + shift - 1 - var_ratio.log())


# The Gaussian pairs are all 1/2 (log det S_q - log det S_p + tr(S_q^-1 S_p)
# + (mu_q - mu_p)^T S_q^-1 (mu_q - mu_p) - n), each term computed from the factors the
# distributions keep, without forming n x n inverses.

@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise _different_event_shapes("Multivariate Normals")
    half_log_det_ratio = _half_log_det(q._unbroadcasted_scale_tril) - _half_log_det(p._unbroadcasted_scale_tril)
    n = p.event_shape[0]
    batch = tessera.broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_scale_tril.shape[:-2])
    # tr(S_q^-1 S_p) = |L_q^-1 L_p|_F^2
    trace = _batch_trace_XXT(tessera.linalg.solve_triangular(q._unbroadcasted_scale_tril.expand(batch + (n, n)),
                                                             p._unbroadcasted_scale_tril.expand(batch + (n, n)),
                                                             upper=False))
    mahalanobis = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_log_det_ratio + 0.5 * (trace + mahalanobis - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise _different_event_shapes("Low Rank Multivariate Normals")
    log_det_ratio = _lowrank_log_det(q) - _lowrank_log_det(p)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    # tr(S_q^-1 S_p) = tr((D_q^-1 - A^T A)(D_p + W_p W_p^T)), expanded into four traces
    A = q._precision_factor()
    trace = ((p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag).sum(-1)
             + _batch_trace_XXT(p._unbroadcasted_cov_factor * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
             - _batch_trace_XXT(A * p._unbroadcasted_cov_diag.sqrt().unsqueeze(-2))
             - _batch_trace_XXT(A.matmul(p._unbroadcasted_cov_factor)))
    return 0.5 * (log_det_ratio + trace + mahalanobis - p.event_shape[0])


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _set_where(result, p.support.lower_bound < q.support.lower_bound, math.inf)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # KL is invariant under a shared bijection
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _set_where(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak & Nielsen (2019)
    return ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log() - (4 * p.scale * q.scale).log()


from . import _kl_pairs  # noqa: E402,F401  (registers the cross-family pairs)


def _add_kl_info():
    rows = ["KL divergence is currently implemented for the following distribution pairs:"]
    for p, q in sorted(_KL_REGISTRY, key=lambda pq: (pq[0].__name__, pq[1].__name__)):
        rows.append(f"* :class:`~tessera.distributions.{p.__name__}` and :class:`~tessera.distributions.{q.__name__}`")
    kl_divergence.__doc__ += "\n\n    " + "\n    ".join(rows)


_add_kl_info()
