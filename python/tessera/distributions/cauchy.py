"""Cauchy (Lorentz) distribution: the ratio of two independent standard normals, shifted
and scaled; it has no mean and infinite variance."""
import math

import tessera

from .distribution import Distribution
from .utils import _LocationScale

__all__ = ["Cauchy"]


class Cauchy(_LocationScale, Distribution):
    """Cauchy(loc, scale)."""

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return tessera.full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self):
        return tessera.full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        return self.loc + self.loc.new_empty(shape).cauchy_() * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (1 + z ** 2).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tessera.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tessera.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
