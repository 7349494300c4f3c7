"""ContinuousBernoulli (Loaiza-Ganem & Cunningham, 2019): the density p^x (1-p)^(1-x),
normalised on [0, 1]. Near p = 1/2 the closed forms divide 0 by 0, so probabilities in
`lims` use Taylor expansions around 1/2 instead."""
import math

import tessera

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _probs_or_logits, _ProbsOrLogitsParam, broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_ProbsOrLogitsParam, ExponentialFamily):
    """ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        # not _set_probs_or_logits: probs are clamped between broadcasting and storing
        name, value = _probs_or_logits(probs, logits)
        param, = broadcast_all(value)
        if name == "probs":
            # checked before the clamp below would hide a bad value
            if validate_args is not None and not self.arg_constraints["probs"].check(param).all():
                raise ValueError("The parameter probs has invalid values")
            param = clamp_probs(param)
        setattr(self, name, param)
        self._param = param
        self._lims = lims
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"), shared=("_lims",))

    def _outside_unstable_region(self):
        return tessera.le(self.probs, self._lims[0]) | tessera.gt(self.probs, self._lims[1])

    def _cut_probs(self):
        # inside the unstable region the closed forms get a harmless stand-in value
        return tessera.where(self._outside_unstable_region(), self.probs,
                             self._lims[0] * tessera.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(p), C(p) = 2 atanh(1 - 2p) / (1 - 2p) (2 at p = 1/2)."""
        p = self._cut_probs()
        below = tessera.where(p <= 0.5, p, tessera.zeros_like(p))
        above = tessera.where(p >= 0.5, p, tessera.ones_like(p))
        log_norm = (tessera.log(tessera.abs(tessera.log1p(-p) - tessera.log(p)))
                    - tessera.where(p <= 0.5, tessera.log1p(-2.0 * below), tessera.log(2.0 * above - 1.0)))
        x = tessera.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tessera.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        closed = p / (2.0 * p - 1.0) + 1.0 / (tessera.log1p(-p) - tessera.log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * tessera.pow(x, 2)) * x
        return tessera.where(self._outside_unstable_region(), closed, taylor)

    @property
    def stddev(self):
        return tessera.sqrt(self.variance)

    @property
    def variance(self):
        p = self._cut_probs()
        closed = (p * (p - 1.0) / tessera.pow(1.0 - 2.0 * p, 2)
                  + 1.0 / tessera.pow(tessera.log1p(-p) - tessera.log(p), 2))
        x = tessera.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128. / 945.0 * x) * x
        return tessera.where(self._outside_unstable_region(), closed, taylor)

    @lazy_property
    def probs(self):
        # kept off 0 and 1 like given probs (see __init__)
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=tessera.Size()):
        u = tessera.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with tessera.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=tessera.Size()):
        u = tessera.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = tessera.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        closed = (tessera.pow(p, value) * tessera.pow(1.0 - p, 1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = tessera.where(self._outside_unstable_region(), closed, value)
        return tessera.where(value <= 0.0, tessera.zeros_like(value),
                             tessera.where(value >= 1.0, tessera.ones_like(value), inside))

    def icdf(self, value):
        p = self._cut_probs()
        closed = ((tessera.log1p(-p + value * (2.0 * p - 1.0)) - tessera.log1p(-p))
                  / (tessera.log(p) - tessera.log1p(-p)))
        return tessera.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        log_q = tessera.log1p(-self.probs)
        log_p = tessera.log(self.probs)
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log of the integral of exp(x t) over [0, 1]: log((e^x - 1) / x), Taylor near 0."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = tessera.where(outside, x, (self._lims[0] - 0.5) * tessera.ones_like(x))
        log_norm = tessera.log(tessera.abs(tessera.exp(cut) - 1.0)) - tessera.log(tessera.abs(cut))
        taylor = 0.5 * x + tessera.pow(x, 2) / 24.0 - tessera.pow(x, 4) / 2880.0
        return tessera.where(outside, log_norm, taylor)
