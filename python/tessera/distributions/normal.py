"""Normal (Gaussian) distribution with mean `loc` and standard deviation `scale`."""
import math
from numbers import Real

import tessera

from .exp_family import ExponentialFamily
from .utils import _LocationScale, _standard_normal

__all__ = ["Normal"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(_LocationScale, ExponentialFamily):
    """Normal(loc, scale)."""
    _mean_carrier_measure = 0

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        with tessera.no_grad():
            return tessera.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        return self.loc + _standard_normal(shape, self.loc.dtype, self.loc.device) * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - log_scale - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + tessera.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * tessera.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + tessera.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * tessera.log(-math.pi / y)
