"""FisherSnedecor: the F distribution, the ratio of two chi-squared variables each divided
by its degrees of freedom (df1, df2)."""
import math

import tessera

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """FisherSnedecor(df1, df2)."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        # chi2(d) / d is Gamma(d / 2, rate d)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(FisherSnedecor, batch_shape, _instance, ("df1", "df2", "_gamma1", "_gamma2"))

    @property
    def mean(self):
        df2 = tessera.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return tessera.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = tessera.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=tessera.Size(())):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = tessera.finfo(x2.dtype).tiny
        x2.detach().clamp_(min=tiny)
        y = x1 / x2
        y.detach().clamp_(min=tiny)
        return y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_beta_inv = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        return (log_beta_inv + h1 * ratio.log() + (h1 - 1) * tessera.log(value)
                - (h1 + h2) * tessera.log1p(ratio * value))
