"""Gamma distribution with shape `concentration` and inverse scale `rate`. Its sampler
(and so those of Chi2, Beta, Dirichlet, StudentT, FisherSnedecor and NegativeBinomial)
draws from the standard gamma operator tessera._standard_gamma."""
import tessera

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


def _standard_gamma(concentration):
    """Gamma(concentration, 1) draws, reparameterized (their gradient is the implicit one)."""
    return tessera._standard_gamma(concentration)


def _clamp_tiny_(value):
    # in place on the data only: a draw that underflowed to 0 becomes the smallest normal
    # number (its logs stay finite) without changing the gradient
    value.detach().clamp_(min=tessera.finfo(value.dtype).tiny)
    return value


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^a x^(a-1) e^(-rate x) / Gamma(a)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        return _clamp_tiny_(_standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape))

    def log_prob(self, value):
        value = tessera.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return tessera.xlogy(a, b) + tessera.xlogy(a - 1, value) - b * value - tessera.lgamma(a)

    def entropy(self):
        a = self.concentration
        return a - tessera.log(self.rate) + tessera.lgamma(a) + (1.0 - a) * tessera.digamma(a)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return tessera.lgamma(x + 1) + (x + 1) * tessera.log(-y.reciprocal())
