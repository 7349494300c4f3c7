"""The Concrete / Gumbel-softmax relaxation of a one-hot Categorical: ExpRelaxedCategorical
gives the log of a point on the simplex, RelaxedOneHotCategorical the point itself."""
import tessera

from . import constraints
from .categorical import Categorical, _ViaCategorical
from .distribution import Distribution
from .relaxed_bernoulli import _RelaxedParams
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(_ViaCategorical, Distribution):
    """ExpRelaxedCategorical(temperature, probs=None, logits=None): log-simplex samples of
    log_softmax((logits + Gumbel noise) / temperature)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector   # strictly, log-simplex points
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(ExpRelaxedCategorical, batch_shape, _instance, ("_categorical",),
                                  shared=("temperature",))

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(tessera.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -(-u.log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # log((K-1)!) + (K-1) log(temperature): the density's normaliser
        log_scale = tessera.full_like(self.temperature, float(k)).lgamma() + self.temperature.log().mul(k - 1)
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_RelaxedParams, TransformedDistribution):
    """RelaxedOneHotCategorical(temperature, probs=None, logits=None), on the simplex."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)
