"""Laplace (double exponential) distribution with location `loc` and scale `scale`."""
import tessera

from .distribution import Distribution
from .utils import _LocationScale

__all__ = ["Laplace"]


class Laplace(_LocationScale, Distribution):
    """Laplace(loc, scale)."""

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        # u in (-1, 1): its sign picks the side, -log(1 - |u|) the exponential distance
        u = self.loc.new_empty(shape).uniform_(tessera.finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * tessera.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -tessera.log(2 * self.scale) - tessera.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * tessera.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * tessera.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + tessera.log(2 * self.scale)
