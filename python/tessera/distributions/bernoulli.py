"""Bernoulli: a single trial that is 1 with probability `probs` (or sigmoid(`logits`))."""
import math

import tessera

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _enumerate_values, _ProbsOrLogitsParam, broadcast_all

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, target):
    return tessera.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")


class Bernoulli(_ProbsOrLogitsParam, ExponentialFamily):
    """Bernoulli(probs=None, logits=None): 1 with probability probs, else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        param, = self._set_probs_or_logits(probs, logits)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Bernoulli, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        # a fair coin has no single mode
        one_if_likelier = (self.probs >= 0.5).to(self.probs)
        return tessera.where(self.probs == 0.5, math.nan, one_if_likelier)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        with tessera.no_grad():
            return tessera.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = tessera.arange(2, dtype=self._param.dtype, device=self._param.device)
        return _enumerate_values(values, self._batch_shape, expand)

    @property
    def _natural_params(self):
        return (tessera.log(self.probs / (1 - self.probs)),)

    def _log_normalizer(self, x):
        return tessera.log(1 + tessera.exp(x))
