"""Wishart: distributions over symmetric positive-definite p x p matrices with `df`
degrees of freedom and a scale matrix given as a covariance, a precision or the lower
Cholesky factor of the covariance (as MultivariateNormal takes it). Samples come from
the Bartlett decomposition, whose diagonal needs Chi2 (so tessera._standard_gamma)
draws."""
import math
import warnings
from numbers import Number

import tessera

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _mvlgamma, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The derivative of the log multivariate gamma function of dimension p."""
    assert x.gt((p - 1) / 2).all(), "Wrong domain for multivariate digamma function."
    halves = tessera.arange(p, dtype=x.dtype, device=x.device).div(2)
    return tessera.digamma(x.unsqueeze(-1) - halves).sum(-1)


def _clamp_above_eps(x):
    # for positive x: keep it at least eps, so that a factor's diagonal stays invertible
    return x.clamp(min=tessera.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None): exactly
    one of the three matrix parameters is given; df (a number or a tensor broadcasting with
    the matrices' batch shape) must exceed p - 1. With p - 1 < df < p, samples are singular
    with high probability. LKJCholesky is a restricted Wishart distribution (Wang, Wu and
    Chu, On equivalence of the LKJ distribution and the restricted Wishart distribution)."""
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        assert len(given) == 1, \
            "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")

        if isinstance(df, Number):
            batch_shape = tessera.Size(param.shape[:-2])
            self.df = tessera.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tessera.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if self.df.le(p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))

        # df's lower bound depends on p. torch writes it into the class-wide dict (so every
        # Wishart then reports the bound of the last one built); here it is per instance
        self.arg_constraints = dict(Wishart.arg_constraints, df=constraints.greater_than(p - 1))
        if self.df.lt(p).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for "
                          "ndim - 1 < df < ndim.")

        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]

        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = tessera.linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self):
        # the Bartlett factor's i-th squared diagonal entry is Chi2(df - i)
        L = self._unbroadcasted_scale_tril
        offsets = tessera.arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(df=self.df.unsqueeze(-1) - offsets.expand(self._batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tessera.Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(matrix_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        if "arg_constraints" in self.__dict__:
            new.arg_constraints = self.arg_constraints
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        self._finish_expand(new, batch_shape)
        new._dist_chi2 = new._bartlett_chi2()
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = tessera.eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return tessera.cholesky_solve(eye, L).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self, df):
        # df (batch_shape) against matrices (batch_shape + event_shape)
        return df.reshape(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        # (df - p - 1) V, which exists only for df > p + 1
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = tessera.where(factor <= 0, tessera.full_like(factor, math.nan), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=tessera.Size()):
        # A lower triangular with sqrt(Chi2(df - i)) on the diagonal and standard normals
        # below it: L A (L A)^T is Wishart
        p = self._event_shape[-1]
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = tessera.tril_indices(p, p, offset=-1)
        below = tessera.zeros_like(diagonal)
        below[..., i, j] = tessera.randn(tessera.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                                         dtype=diagonal.dtype, device=diagonal.device)
        chol = self._unbroadcasted_scale_tril @ (diagonal + below)
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        # per sample index: whether any matrix of the batch failed the check
        singular = ~self.support.check(sample)
        return singular.amax(self._batch_dims) if self._batch_shape else singular

    def rsample(self, sample_shape=tessera.Size(), max_try_correction=None):
        """Draws by the Bartlett decomposition. It may return singular matrices (whose
        log_prob is -inf); those are redrawn, the whole batch of a sample index at a time,
        up to max_try_correction times (default 10), after a warning. Where singular samples
        persist, check them and raise df or max_try_correction."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = tessera.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if singular.any():
            warnings.warn("Singular sample detected.")
            # the flag broadcast over the batch and event dimensions of the samples
            spread = (1,) * (len(self._batch_shape) + 2)
            for _ in range(max_try_correction):
                fresh = self._bartlett_sampling(sample_shape)
                sample = tessera.where(singular.reshape(singular.shape + spread), fresh, sample)
                singular = singular & self._singular(fresh)
                if not singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_L = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = tessera.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_L) - _mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * tessera.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det_L = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_L) + _mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-tessera.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + _mvlgamma(y + (p + 1) / 2, p))
