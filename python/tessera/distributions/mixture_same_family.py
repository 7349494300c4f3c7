"""MixtureSameFamily: a mixture whose components are the last batch dimension of one
distribution, weighted by a Categorical."""
import tessera

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """MixtureSameFamily(mixture_distribution, component_distribution): the Categorical's
    K categories select among the component distribution's rightmost batch dim (size K)."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distribtutions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of torch.distributions.Distribution")
        mix_batch = mixture_distribution.batch_shape
        comp_batch = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mix_batch), reversed(comp_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mix_batch}) is not compatible with "
                                 f"`component_distribution.batch_shape`({comp_batch})")
        k_mix = mixture_distribution.logits.shape[-1]
        k_comp = component_distribution.batch_shape[-1]
        if k_mix != k_comp:
            raise ValueError(f"`mixture_distribution component` ({k_mix}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({k_comp})")
        self._num_component = k_mix
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=comp_batch, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tessera.Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return self._finish_expand(new, batch_shape, new._component_distribution.event_shape)

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _weights(self):
        # mixture probs with singleton dims for the event, to broadcast against components
        probs = self.mixture_distribution.probs
        return probs.reshape(probs.shape + (1,) * self._event_ndims)

    @property
    def mean(self):
        return tessera.sum(self._weights() * self.component_distribution.mean, dim=-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: E[Var(X | k)] + Var(E[X | k])
        w = self._weights()
        comp = self.component_distribution
        within = tessera.sum(w * comp.variance, dim=-1 - self._event_ndims)
        between = tessera.sum(w * (comp.mean - self._pad(self.mean)).pow(2.0), dim=-1 - self._event_ndims)
        return within + between

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return tessera.sum(cdf_x * self.mixture_distribution.probs, dim=-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_weights = tessera.log_softmax(self.mixture_distribution.logits, dim=-1)
        return tessera.logsumexp(log_prob_x + log_weights, dim=-1)

    def sample(self, sample_shape=tessera.Size()):
        with tessera.no_grad():
            sample_shape = tessera.Size(sample_shape)
            gather_dim = len(sample_shape) + len(self.batch_shape)
            event_shape = self.event_shape
            picks = self.mixture_distribution.sample(sample_shape)
            draws = self.component_distribution.sample(sample_shape)
            # index of the picked component, repeated over the event, along the component dim
            index = picks.reshape(picks.shape + (1,) * (len(event_shape) + 1))
            index = index.repeat((1,) * picks.dim() + (1,) + tuple(event_shape))
            return tessera.gather(draws, gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
