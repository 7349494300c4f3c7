"""OneHotCategorical: a Categorical whose samples are one-hot vectors of length K; its
straight-through variant passes gradients to the probabilities through rsample."""
import tessera

from . import constraints
from .categorical import Categorical, _ViaCategorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(_ViaCategorical, Distribution):
    """OneHotCategorical(probs=None, logits=None); event_shape is (K,)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(OneHotCategorical, batch_shape, _instance, ("_categorical",))

    @property
    def _param(self):
        return self._categorical._param

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return tessera.nn.functional.one_hot(probs.argmax(-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape=tessera.Size()):
        indices = self._categorical.sample(tessera.Size(sample_shape))
        return tessera.nn.functional.one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = tessera.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with the straight-through gradient estimator (Bengio et al., 2013):
    rsample's value is a one-hot sample, its gradient that of the probabilities."""
    has_rsample = True

    def rsample(self, sample_shape=tessera.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
