"""HalfNormal: |X| for X ~ Normal(0, scale). Also _FoldedAtZero, what HalfNormal and
HalfCauchy share: the law of |X| for X symmetric about 0, computed from X's."""
import math

import tessera

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class _FoldedAtZero(TransformedDistribution):
    """Base of the half distributions: `_unfolded`(0, scale), a family symmetric about 0,
    folded onto [0, inf) by AbsTransform. Folding adds the mass at -x to that at x."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _unfolded = None   # the symmetric family, set by each subclass

    def __init__(self, scale, validate_args=None):
        super().__init__(self._unfolded(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return tessera.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._folded_log_prob(value)

    def _folded_log_prob(self, value):
        # twice the base density on the nonnegative half line, nothing below it
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tessera.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_FoldedAtZero):
    """HalfNormal(scale)."""
    _unfolded = Normal

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
