"""Geometric: the number of failures before the first success in Bernoulli(probs) trials."""
import tessera

from . import constraints
from .distribution import Distribution, _invalid_values
from .utils import _ProbsOrLogits, broadcast_all

__all__ = ["Geometric"]


class Geometric(_ProbsOrLogits, Distribution):
    """Geometric(probs=None, logits=None), on 0, 1, 2, ..."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        param, = self._set_probs_or_logits(probs, logits)
        super().__init__(param.size(), validate_args=validate_args)
        # probs = 0 satisfies unit_interval but never succeeds
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not valid.all():
                raise _invalid_values("parameter probs", self.probs, f"of distribution {self!r} to be positive",
                                      shown=self.probs.detach()[~valid])

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return tessera.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = tessera.finfo(self.probs.dtype).tiny
        with tessera.no_grad():
            # inversion: floor(log U / log(1 - p)), U kept away from 0
            u = self.probs.new_empty(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and k = 0: the 0 * log(0) term is 0
        probs = tessera.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = tessera.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs
