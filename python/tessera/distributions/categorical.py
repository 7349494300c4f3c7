"""Categorical: one of K categories 0..K-1, with probabilities `probs` (normalised over
the last dimension) or unnormalised log-probabilities `logits`."""
import math

import tessera

from . import constraints
from .distribution import Distribution
from .utils import _enumerate_values, _probs_or_logits, _ProbsOrLogitsParam

__all__ = ["Categorical"]


class Categorical(_ProbsOrLogitsParam, Distribution):
    """Categorical(probs=None, logits=None); the last dimension of the parameter indexes
    the categories, the others are batch."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _is_binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        # not _set_probs_or_logits: the parameter is normalised over the categories, not broadcast
        name, value = _probs_or_logits(probs, logits)
        if value.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if name == "probs":
            self.probs = value / value.sum(-1, keepdim=True)
        else:
            self.logits = value - value.logsumexp(dim=-1, keepdim=True)
        self._param = self.__dict__[name]
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else tessera.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Categorical, batch_shape, _instance, ("probs", "logits"), shared=("_num_events",),
                                  param_tail=(self._num_events,))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        # categories are labels, not numbers: no mean or variance
        return tessera.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return tessera.full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    def sample(self, sample_shape=tessera.Size()):
        sample_shape = tessera.Size(sample_shape)
        rows = self.probs.reshape(-1, self._num_events)
        draws = tessera.multinomial(rows, sample_shape.numel(), True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        index, log_pmf = tessera.broadcast_tensors(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self):
        # a zero probability has logit -inf; clamping makes its 0 * logit term 0, not nan
        logits = tessera.clamp(self.logits, min=tessera.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = tessera.arange(self._num_events, dtype=tessera.long, device=self._param.device)
        return _enumerate_values(values, self._batch_shape, expand)


class _ViaCategorical:
    """Mixin for a distribution that keeps its parameters in an inner Categorical,
    self._categorical (OneHotCategorical, Multinomial, ExpRelaxedCategorical)."""

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape
