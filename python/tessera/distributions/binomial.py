"""Binomial: the number of successes in `total_count` independent Bernoulli trials."""
import tessera

from . import constraints
from .distribution import Distribution
from .utils import _enumerate_values, _ProbsOrLogitsParam

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) whose gradient at exactly 0 is 1/2 rather than 0 or 1
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_ProbsOrLogitsParam, Distribution):
    """Binomial(total_count=1, probs=None, logits=None)."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        total_count, param = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(param)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        with tessera.no_grad():
            return tessera.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_choose = tessera.lgamma(n + 1) - tessera.lgamma(value + 1) - tessera.lgamma(n - value + 1)
        # n * log(1 + exp(logits)), computed without overflow for large |logits|
        log_norm = n * _clamp_by_zero(logits) + n * tessera.log1p(tessera.exp(-tessera.abs(logits)))
        return value * logits + log_choose - log_norm

    def _common_total_count(self, what):
        top = int(self.total_count.max())
        if not self.total_count.min() == top:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return top

    def entropy(self):
        self._common_total_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(tessera.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        top = self._common_total_count("enumerate_support")
        values = tessera.arange(1 + top, dtype=self._param.dtype, device=self._param.device)
        return _enumerate_values(values, self._batch_shape, expand)
