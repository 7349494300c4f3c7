"""StudentT: Student's t distribution with `df` degrees of freedom, location `loc` and
scale `scale`; sampled as a normal over the root of a scaled chi-squared draw."""
import math

import tessera

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc=0., scale=1.)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0., scale=1., validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_named(StudentT, batch_shape, _instance, ("df", "loc", "scale", "_chi2"))

    @property
    def mean(self):
        # undefined for df <= 1
        return tessera.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # finite for df > 2, infinite for 1 < df <= 2, undefined for df <= 1
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return tessera.where(df > 2, finite, tessera.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * tessera.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + tessera.lgamma(0.5 * self.df) - tessera.lgamma(0.5 * (self.df + 1.)))
        return -0.5 * (self.df + 1.) * tessera.log1p(y ** 2. / self.df) - log_norm

    def entropy(self):
        half_df, half_df1 = 0.5 * self.df, 0.5 * (self.df + 1)
        lbeta = tessera.lgamma(half_df) + math.lgamma(0.5) - tessera.lgamma(half_df1)
        return (self.scale.log() + half_df1 * (tessera.digamma(half_df1) - tessera.digamma(half_df))
                + 0.5 * self.df.log() + lbeta)
