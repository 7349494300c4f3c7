"""The Concrete / Gumbel-softmax relaxation of a Bernoulli (Maddison et al., 2017; Jang
et al., 2017): LogitRelaxedBernoulli lives on the logit scale, RelaxedBernoulli on (0, 1).
Lower temperatures bring samples closer to 0 or 1."""
import tessera

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _ProbsOrLogitsParam, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_ProbsOrLogitsParam, Distribution):
    """LogitRelaxedBernoulli(temperature, probs=None, logits=None): the logit of a
    RelaxedBernoulli sample."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        param, = self._set_probs_or_logits(probs, logits)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(LogitRelaxedBernoulli, batch_shape, _instance, ("probs", "logits"),
                                  shared=("temperature",))

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(tessera.rand(shape, dtype=probs.dtype, device=probs.device))
        # (logistic noise + logit(p)) / temperature
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _RelaxedParams:
    """Mixin for a relaxed distribution built as a transform of its logit-scale (or
    log-scale) base, self.base_dist, which holds the parameters. RelaxedOneHotCategorical
    shares it."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedParams, TransformedDistribution):
    """RelaxedBernoulli(temperature, probs=None, logits=None), on the open unit interval."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
