"""Kumaraswamy: a Beta-like law on [0, 1] with a closed-form CDF, built as
(1 - U ** (1 / b)) ** (1 / a) for U ~ Uniform(0, 1)."""
import math

import tessera

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import _expand_params, broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b B(1 + n/a, b)."""
    arg = 1 + n / a
    return b * tessera.exp(tessera.lgamma(arg) + tessera.lgamma(b) - tessera.lgamma(arg + b))


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1, concentration0): a = concentration1, b = concentration0."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(tessera.full_like(self.concentration0, 0), tessera.full_like(self.concentration0, 1),
                       validate_args=validate_args)
        chain = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                 PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        _expand_params(self, new, batch_shape, ("concentration1", "concentration0"))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        # ((a - 1) / (a b - 1)) ** (1 / a), defined for a, b >= 1. torch 1.13 evaluates
        # log1p(-b) here, which is nan for every b > 1; this is the closed form instead.
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        return tessera.where((b < 1) | (a < 1), math.nan, log_mode.exp())

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - tessera.pow(self.mean, 2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = tessera.digamma(b + 1) + euler_constant
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - tessera.log(a) - tessera.log(b)
