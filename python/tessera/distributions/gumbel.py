"""Gumbel (type-I extreme value) distribution, built as loc - scale * log(-log U) for
U ~ Uniform(0, 1)."""
import math

import tessera

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import _expand_params, broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = tessera.finfo(self.loc.dtype)
        # U kept inside (0, 1) so both logs stay finite
        base = Uniform(tessera.full_like(self.loc, finfo.tiny), tessera.full_like(self.loc, 1 - finfo.eps))
        chain = [ExpTransform().inv, AffineTransform(loc=0, scale=-tessera.ones_like(self.scale)),
                 ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        _expand_params(self, new, batch_shape, ("loc", "scale"))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
