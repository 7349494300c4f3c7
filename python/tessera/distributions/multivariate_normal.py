"""MultivariateNormal: the Gaussian over vectors with mean `loc`, given by its covariance
matrix, its precision matrix or the lower Cholesky factor of the covariance (scale_tril).
Everything is computed from the Cholesky factor; the other two are derived on request."""
import math

import tessera

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """bmat @ bvec for a batch of matrices and a batch of vectors whose batch shapes
    broadcast together."""
    return tessera.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_matrix_shape(d):
    """batch_shape + (n, n) for a distribution d over vectors of length n: the shape of its
    covariance, precision and scale_tril (shared with LowRankMultivariateNormal)."""
    return d._batch_shape + d._event_shape + d._event_shape


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x = |L^-1 x|^2 for lower-triangular factors bL (batch shape B) and
    vectors bx (batch shape broadcastable with B), of shape broadcast(bx, B).

    bL is not copied over the batch dimensions where only bx varies: those are folded into
    the right-hand-side columns of a single triangular solve per distinct factor."""
    n = bx.size(-1)
    shape = tessera.broadcast_shapes(bx.shape[:-1], bL.shape[:-2])
    bx = bx.expand(shape + (n,))
    k = len(shape)
    l_shape = (1,) * (k - (bL.dim() - 2)) + tuple(bL.shape[:-2])
    keep = [d for d in range(k) if l_shape[d] != 1]     # where the factors differ: solve batch
    fold = [d for d in range(k) if l_shape[d] == 1]     # where they repeat: solve columns
    kept = tuple(shape[d] for d in keep)
    rhs = bx.permute(keep + fold + [k]).reshape(kept + (-1, n)).transpose(-1, -2)
    solved = tessera.linalg.solve_triangular(bL.reshape(kept + (n, n)), rhs, upper=False)
    m = solved.pow(2).sum(-2).reshape(kept + tuple(shape[d] for d in fold))
    # back from (keep, fold) order to the batch order
    inverse = [0] * k
    for position, d in enumerate(keep + fold):
        inverse[d] = position
    return m.permute(inverse)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 without inverting P: with J the exchange matrix,
    chol(J P J) = J U J for the upper factor U of P = U^T U, and P^-1 = U^-1 U^-T; U^-1
    is then one triangular solve."""
    flipped = tessera.linalg.cholesky(tessera.flip(P, (-2, -1)))
    upper_t = tessera.flip(flipped, (-2, -1)).transpose(-2, -1)   # U^T, lower triangular
    eye = tessera.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return tessera.linalg.solve_triangular(upper_t, eye, upper=False)


def _half_log_det(scale_tril):
    """log sqrt(det(L L^T)) for lower Cholesky factors L."""
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class MultivariateNormal(Distribution):
    """MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None):
    exactly one of the three matrix parameters is given (positive-definite covariance or
    precision, or a lower-triangular factor of the covariance with a positive diagonal).
    scale_tril is the cheapest: the other two are only used to compute it."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = tessera.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)

        # the factor keeps the matrix's own batch shape: nothing is copied over the batch
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = tessera.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tessera.Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        # only the matrices given or already derived are carried over; the others stay lazy
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        return self._finish_expand(new, batch_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(_batch_matrix_shape(self))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return tessera.matmul(L, L.mT).expand(_batch_matrix_shape(self))

    @lazy_property
    def precision_matrix(self):
        return tessera.cholesky_inverse(self._unbroadcasted_scale_tril).expand(_batch_matrix_shape(self))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # the diagonal of L L^T: the squared norms of L's rows
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=tessera.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + M) - _half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self):
        n = self._event_shape[0]
        H = 0.5 * n * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
