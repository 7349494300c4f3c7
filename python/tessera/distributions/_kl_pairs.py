"""KL(p || q) between distributions of different families, registered with kl.py's
register_kl. Where q's support misses part of p's, the divergence is infinite.

Most pairs are KL(p || q) = -H(p) + E_p[-log q(x)], and for q of a given family the cross
entropy E_p[-log q(x)] needs only a few expectations under p (its mean, variance or mean
log); the _*_cross_entropy helpers take those, and each pair supplies p's."""
import math

import tessera

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import (_batch_trace_XXT, _different_event_shapes, _infinite_like, _lowrank_log_det, _lowrank_mahalanobis,
                 _set_where, _x_log_x, register_kl)
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _half_log_det
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant

_LOG_2PI = math.log(2 * math.pi)


def _register_infinite(types_p, types_q, param):
    """Registers KL(p || q) = inf for every p type in types_p and q type in types_q: q's
    support misses a part of p's that has mass. The result has the shape of p's `param`."""
    def kl_infinite(p, q):
        return _infinite_like(getattr(p, param))
    for type_p in types_p:
        for type_q in types_q:
            register_kl(type_p, type_q)(kl_infinite)


# Pareto lives on [scale, inf) with scale > 0, so it never covers all of [0, 1]
_register_infinite([Beta], [Pareto], "concentration1")
_register_infinite([ContinuousBernoulli], [Pareto], "probs")
# mass on all of [0, inf), against supports bounded above or starting above 0
_register_infinite([Exponential], [Beta, ContinuousBernoulli, Pareto, Uniform], "rate")
_register_infinite([Gamma], [Beta, ContinuousBernoulli, Pareto, Uniform], "concentration")
# mass on all of [scale, inf), against bounded supports
_register_infinite([Pareto], [Beta, ContinuousBernoulli, Uniform], "scale")
# mass on the whole real line, against supports that are only part of it
_register_infinite([Gumbel, Laplace, Normal], [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], "loc")
# unbounded counts against at most total_count successes
_register_infinite([Poisson], [Bernoulli, Binomial], "rate")


def _continuous_bernoulli_cross_entropy(q, mean):
    """E_p[-log q(x)] for a ContinuousBernoulli q, from p's mean (p on [0, 1])."""
    return -mean * q.logits - tessera.log1p(-q.probs) - q._cont_bern_log_norm()


def _exponential_cross_entropy(q, mean):
    """E_p[-log q(x)] for an Exponential q, from p's mean (p on [0, inf))."""
    return q.rate * mean - q.rate.log()


def _gamma_cross_entropy(q, mean, mean_log):
    """E_p[-log q(x)] for a Gamma q, from p's mean and E_p[log x] (p on [0, inf))."""
    return (q.concentration.lgamma() - q.concentration * q.rate.log() - (q.concentration - 1) * mean_log
            + q.rate * mean)


def _normal_cross_entropy(q, mean, variance):
    """E_p[-log q(x)] for a Normal q, from p's mean and variance."""
    return 0.5 * _LOG_2PI + q.scale.log() + (variance + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2))


def _uniform_mean_log(p):
    """E[log x] for p Uniform on [low, high] (nan where low < 0, which callers mask)."""
    width = p.high - p.low
    return (_x_log_x(p.high) - _x_log_x(p.low) - width) / width


def _pareto_mean(p):
    # alpha * scale / (alpha - 1) as it stands: Pareto.mean clamps alpha, which would turn the
    # masked (alpha <= 1) entries' gradients into nan where torch's are 0
    return p.alpha * p.scale / (p.alpha - 1)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _continuous_bernoulli_cross_entropy(q, p.mean)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _continuous_bernoulli_cross_entropy(q, p.mean)
    return tessera.where(tessera.ge(p.high, q.support.upper_bound) | tessera.le(p.low, q.support.lower_bound),
                         tessera.ones_like(result) * math.inf, result)


@register_kl(Beta, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
@register_kl(Gamma, Exponential)
def _kl_to_exponential(p, q):
    return -p.entropy() + _exponential_cross_entropy(q, p.mean)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    result = -p.entropy() + _exponential_cross_entropy(q, _pareto_mean(p))
    return _set_where(result, p.alpha <= 1, math.inf)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = -p.entropy() + _exponential_cross_entropy(q, p.mean)
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    a, b = p.concentration1, p.concentration0
    return -p.entropy() + _gamma_cross_entropy(q, p.mean, a.digamma() - (a + b).digamma())


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    # E[log x] = -(Euler's constant) - log(rate) for x ~ Exponential(rate)
    return -p.entropy() + _gamma_cross_entropy(q, p.mean, -euler_constant - p.rate.log())


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    result = -p.entropy() + _gamma_cross_entropy(q, _pareto_mean(p), p.scale.log() + p.alpha.reciprocal())
    return _set_where(result, p.alpha <= 1, math.inf)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _gamma_cross_entropy(q, p.mean, _uniform_mean_log(p))
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


@register_kl(Beta, Normal)
@register_kl(ContinuousBernoulli, Normal)
@register_kl(Exponential, Normal)
@register_kl(Gamma, Normal)
@register_kl(Gumbel, Normal)
@register_kl(Laplace, Normal)
@register_kl(Uniform, Normal)
def _kl_to_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(q, p.mean, p.variance)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    # not p.variance, which like p.mean clamps alpha (see _pareto_mean)
    variance = p.alpha * (p.scale / (p.alpha - 1)).pow(2) / (p.alpha - 2)
    result = -p.entropy() + _normal_cross_entropy(q, _pareto_mean(p), variance)
    return _set_where(result, p.alpha <= 2, math.inf)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _set_where(result, (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound), math.inf)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # torch marks the result infinite when q.low >= 0 or q.high <= 1, i.e. whenever q's
    # interval does not extend strictly past [0, 1] on both sides
    outside = tessera.ge(q.low, p.support.lower_bound) | tessera.le(q.high, p.support.upper_bound)
    return tessera.where(outside, tessera.ones_like(result) * math.inf, result)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = q.concentration1.lgamma() + q.concentration0.lgamma() - (q.concentration1 + q.concentration0).lgamma()
    result = t3 + t4 - tessera.log(width) - t2
    return _set_where(result, (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound), math.inf)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    rate_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    return (rate_scale.log() - 1 - loc_scale + tessera.exp(loc_scale) * rate_scale / (rate_scale + 1)
            + rate_scale.reciprocal())


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    a = p.concentration
    rate_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    return ((a - 1) * a.digamma() - a.lgamma() - a + rate_scale.log() + a / rate_scale
            + tessera.exp(loc_scale) * (1 + rate_scale.reciprocal()).pow(-a) - loc_scale)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_scale = q.loc / q.scale
    return (-var_ratio.log() * 0.5 + mean_scale - loc_scale
            + tessera.exp(-mean_scale + 0.5 * var_ratio + loc_scale) - 0.5 * (1 + _LOG_2PI))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    ratio = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    return ratio.log() + 0.5 * (high + low) - ratio * (tessera.exp(-high) - tessera.exp(-low))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    shift = p.loc - q.loc
    z = shift / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * tessera.exp(-0.5 * z.pow(2))
    t3 = shift * tessera.erf(math.sqrt(0.5) * z)
    return -tessera.log(p.scale / q.scale) + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    result = _uniform_mean_log(p) * (q.alpha + 1) - t1
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


# ------------------------------------------------------------------ Gaussians, full and low rank

@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise _different_event_shapes("(Low Rank) Multivariate Normals")
    log_det_ratio = _lowrank_log_det(q) - 2 * _half_log_det(p._unbroadcasted_scale_tril)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    # tr(S_q^-1 S_p) = tr((D_q^-1 - A^T A) L_p L_p^T)
    A = q._precision_factor()
    trace = (_batch_trace_XXT(p._unbroadcasted_scale_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
             - _batch_trace_XXT(A.matmul(p._unbroadcasted_scale_tril)))
    return 0.5 * (log_det_ratio + trace + mahalanobis - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise _different_event_shapes("(Low Rank) Multivariate Normals")
    log_det_ratio = 2 * _half_log_det(q._unbroadcasted_scale_tril) - _lowrank_log_det(p)
    mahalanobis = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    # tr(S_q^-1 (W_p W_p^T + D_p)) = |L_q^-1 W_p|_F^2 + |L_q^-1 D_p^1/2|_F^2
    n = p.event_shape[0]
    batch = tessera.broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2])
    q_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_factor = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    p_sqrt_diag = tessera.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    trace = (_batch_trace_XXT(tessera.linalg.solve_triangular(q_tril, p_factor, upper=False))
             + _batch_trace_XXT(tessera.linalg.solve_triangular(q_tril, p_sqrt_diag, upper=False)))
    return 0.5 * (log_det_ratio + trace + mahalanobis - n)
