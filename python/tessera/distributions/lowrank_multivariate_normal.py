"""LowRankMultivariateNormal: a Gaussian over vectors whose covariance is
cov_factor @ cov_factor^T + diag(cov_diag), for a cov_factor of few columns (rank m).
log_prob and entropy never form the n x n covariance: the Woodbury identity and the
matrix determinant lemma reduce them to the m x m "capacitance" matrix
C = I + W^T D^-1 W (W = cov_factor, D = diag(cov_diag))."""
import math

import tessera

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_matrix_shape, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(K):
    """K + I for a batch of square matrices."""
    return K + tessera.eye(K.size(-1), dtype=K.dtype, device=K.device)


def _factor_over_diag(W, D):
    """W^T D^-1, the piece of the Woodbury identity every formula here starts from."""
    return W.mT / D.unsqueeze(-2)


def _batch_capacitance_tril(W, D):
    """The lower Cholesky factor of C = I + W^T D^-1 W."""
    return tessera.linalg.cholesky(_plus_identity(tessera.matmul(_factor_over_diag(W, D), W)))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) = log det(C) + log det(D) (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by the Woodbury identity
    (W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1."""
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, _batch_mv(_factor_over_diag(W, D), x))


class LowRankMultivariateNormal(Distribution):
    """LowRankMultivariateNormal(loc, cov_factor, cov_diag): mean `loc` (batch_shape +
    event_shape) and covariance cov_factor @ cov_factor^T + diag(cov_diag), with cov_factor
    of shape batch_shape + event_shape + (rank,) and cov_diag positive, shaped like loc."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")

        # loc and cov_diag broadcast with cov_factor as its columns would
        try:
            loc_, self.cov_factor, cov_diag_ = tessera.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                         cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]

        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tessera.Size(batch_shape)
        vector_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(vector_shape)
        new.cov_diag = self.cov_diag.expand(vector_shape)
        new.cov_factor = self.cov_factor.expand(vector_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, and the middle factor has all
        # eigenvalues >= 1, so its Cholesky factorization is well conditioned
        # (Rasmussen & Williams, Gaussian Processes for Machine Learning, section 3.4.3)
        sqrt_diag = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled_W = self._unbroadcasted_cov_factor / sqrt_diag
        K = _plus_identity(tessera.matmul(scaled_W, scaled_W.mT))
        return (sqrt_diag * tessera.linalg.cholesky(K)).expand(_batch_matrix_shape(self))

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        covariance = tessera.matmul(W, W.mT) + tessera.diag_embed(self._unbroadcasted_cov_diag)
        return covariance.expand(_batch_matrix_shape(self))

    def _precision_factor(self):
        """A = L_C^-1 W^T D^-1 (L_C the capacitance factor): the precision is D^-1 - A^T A."""
        W_over_D = _factor_over_diag(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag)
        return tessera.linalg.solve_triangular(self._capacitance_tril, W_over_D, upper=False)

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - A^T A
        A = self._precision_factor()
        precision = tessera.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision.expand(_batch_matrix_shape(self))

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        # W eps_W + D^1/2 eps_D has covariance W W^T + D
        eps_W = _standard_normal(shape[:-1] + self.cov_factor.shape[-1:], self.loc.dtype, self.loc.device)
        eps_D = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                     self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                       value - self.loc, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
