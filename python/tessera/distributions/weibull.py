"""Weibull: scale * E ** (1 / concentration) for E ~ Exponential(1)."""
import tessera

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import _expand_params, broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(tessera.ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, self._chain(), validate_args=validate_args)

    def _chain(self):
        return [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        _expand_params(self, new, batch_shape, ("scale", "concentration"))
        new.concentration_reciprocal = new.concentration.reciprocal()
        # the transforms hold the parameters, so they are rebuilt from the expanded ones
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape), new._chain(), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * tessera.exp(tessera.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        inv_k = self.concentration_reciprocal
        return self.scale.pow(2) * (tessera.exp(tessera.lgamma(1 + 2 * inv_k))
                                    - tessera.exp(2 * tessera.lgamma(1 + inv_k)))

    def entropy(self):
        inv_k = self.concentration_reciprocal
        return euler_constant * (1 - inv_k) + tessera.log(self.scale * inv_k) + 1
