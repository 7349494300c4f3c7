"""Multinomial: counts of each of K categories over `total_count` Categorical draws."""
import math

import tessera

from . import constraints
from .binomial import Binomial
from .categorical import Categorical, _ViaCategorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_ViaCategorical, Distribution):
    """Multinomial(total_count=1, probs=None, logits=None); total_count is one int shared
    by the whole batch (sample needs it; log_prob accepts any totals)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # like torch's, the copy has no _binomial, so its entropy() fails
        return self._expand_named(Multinomial, batch_shape, _instance, ("_categorical",), shared=("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=tessera.Size()):
        sample_shape = tessera.Size(sample_shape)
        # total_count category draws along a leading dim, moved last, then counted per category
        draws = self._categorical.sample(tessera.Size((self.total_count,)) + sample_shape)
        draws = draws.permute(*range(1, draws.dim()), 0)
        counts = draws.new_zeros(self._extended_shape(sample_shape))
        counts.scatter_add_(-1, draws, tessera.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        # H = n H(cat) - log n! + sum_i E[log x_i!], each x_i ~ Binomial(n, p_i)
        n = tessera.tensor(self.total_count)
        first = n * self._categorical.entropy() - tessera.lgamma(n + 1)
        counts = self._binomial.enumerate_support(expand=False)[1:]
        weights = tessera.exp(self._binomial.log_prob(counts))
        return first + (weights * tessera.lgamma(counts + 1)).sum([0, -1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # a category of probability 0 drawn 0 times contributes 0 * -inf := 0
        logits = tessera.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_multinomial_coef = tessera.lgamma(value.sum(-1) + 1) - tessera.lgamma(value + 1).sum(-1)
        return log_multinomial_coef + (logits * value).sum(-1)
