"""Dirichlet: distributions over the simplex with parameter vector `concentration`.
Samples normalise independent Gamma(concentration_i, 1) draws."""
import tessera

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import _clamp_tiny_, _standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): the last dimension is the event."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(Dirichlet, batch_shape, _instance, ("concentration",), param_tail=self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # gradients reach concentration through the gamma draws' reparameterization. Drawn
        # and normalised in double and kept inside (0, 1), as torch's sampler: float draws
        # of small concentrations underflow to rows of ties and exact ones.
        conc = self.concentration.expand(shape)
        draws = _clamp_tiny_(_standard_gamma(conc.double()))
        shares = (draws / draws.sum(-1, True)).to(conc.dtype)
        finfo = tessera.finfo(conc.dtype)
        return shares.clamp(min=finfo.tiny, max=1 - finfo.eps / 2)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (tessera.log(value) * (a - 1.0)).sum(-1) + tessera.lgamma(a.sum(-1)) - tessera.lgamma(a).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        a1 = (self.concentration - 1).clamp(min=0.)
        mode = a1 / a1.sum(-1, True)
        # all concentrations below 1: the density peaks at the vertex of the largest one
        all_below_one = (self.concentration < 1).all(-1, keepdim=True)
        vertex = tessera.nn.functional.one_hot(mode.argmax(-1), a1.shape[-1]).to(mode)
        return tessera.where(all_below_one, vertex, mode)

    @property
    def variance(self):
        a = self.concentration
        a0 = a.sum(-1, True)
        return a * (a0 - a) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        a = self.concentration
        k = a.size(-1)
        a0 = a.sum(-1)
        return (tessera.lgamma(a).sum(-1) - tessera.lgamma(a0) - (k - a0) * tessera.digamma(a0)
                - ((a - 1.0) * tessera.digamma(a)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - tessera.lgamma(x.sum(-1))
