"""NegativeBinomial: failures before `total_count` successes, where each trial fails with
probability `probs`. Sampling draws a Gamma-distributed rate for a Poisson."""
import tessera

from . import constraints
from .distribution import Distribution
from .utils import _ProbsOrLogitsParam, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_ProbsOrLogitsParam, Distribution):
    """NegativeBinomial(total_count, probs=None, logits=None); total_count may be real."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0., 1.), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        total_count, param = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(param)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(NegativeBinomial, batch_shape, _instance, ("total_count", "probs", "logits"))

    @property
    def mean(self):
        return self.total_count * tessera.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.)

    @property
    def variance(self):
        return self.mean / tessera.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        from .gamma import Gamma
        # the Poisson rate's mixing law: Gamma(total_count, rate = (1 - p) / p)
        return Gamma(concentration=self.total_count, rate=tessera.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=tessera.Size()):
        with tessera.no_grad():
            return tessera.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = tessera.nn.functional.logsigmoid
        unnormalized = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        # log of Gamma(r + k) / (k! Gamma(r)); by convention 0 when r + k = 0
        r = self.total_count
        log_coef = tessera.lgamma(r + value) - tessera.lgamma(1. + value) - tessera.lgamma(r)
        log_coef = tessera.where(self.total_count + value == 0., 0., log_coef)
        return unnormalized + log_coef
