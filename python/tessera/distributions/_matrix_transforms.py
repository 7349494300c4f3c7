"""The transforms of tessera.distributions.transforms that act on whole vectors or
matrices (softmax, stick breaking, Cholesky factors), on slices of a tensor (cat, stack),
or through a distribution's CDF. transforms.py re-exports them."""
import math

import tessera

from . import constraints
from .transforms import Transform, _clipped_sigmoid, _ParameterFree, _softplus
from .utils import _sum_rightmost, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "LowerCholeskyTransform",
           "SoftmaxTransform", "StackTransform", "StickBreakingTransform"]


def _pad_last(x, left, right, value):
    return tessera.nn.functional.pad(x, [left, right], value=value)


class SoftmaxTransform(_ParameterFree):
    """Real vectors to the simplex by softmax; not bijective (the inverse is a log, up to
    an additive constant), so it is for optimisation, not for densities."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


def _stick_offsets(x):
    # log(K - i) for i = 0..K-2 centres each break so that x = 0 maps to the simplex's centre
    k = x.shape[-1]
    return (k + 1 - x.new_ones(k).cumsum(-1)).log()


class StickBreakingTransform(_ParameterFree):
    """A bijection from R^(K-1) onto the K-simplex: each coordinate breaks off a
    sigmoid-sized fraction of what is left of the stick."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offsets(x))
        remaining = (1 - z).cumprod(-1)
        return _pad_last(z, 0, 1, 1) * _pad_last(remaining, 1, 0, 1)

    def _inverse(self, y):
        head = y[..., :-1]
        k = head.shape[-1]
        offsets = (y.shape[-1] - y.new_ones(k).cumsum(-1)).log()
        left = tessera.clamp(1 - head.cumsum(-1), min=tessera.finfo(y.dtype).tiny)
        return head.log() - left.log() + offsets

    def log_abs_det_jacobian(self, x, y):
        shifted = x - _stick_offsets(x)
        logsigmoid = tessera.nn.functional.logsigmoid
        return (-shifted + logsigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(_ParameterFree):
    """Square matrices to lower-triangular ones with a positive diagonal: keeps the
    strictly lower part and exponentiates the diagonal."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CorrCholeskyTransform(Transform):
    """Vectors of D(D-1)/2 reals to Cholesky factors of D x D correlation matrices: tanh
    maps each entry into (-1, 1), then stick breaking over each row gives it unit norm."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = tessera.finfo(x.dtype).eps
        r = vec_to_tril_matrix(tessera.tanh(x).clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + tessera.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * _pad_last(remaining[..., :-1], 1, 0, 1)

    def _inverse(self, y):
        left = _pad_last((1 - tessera.cumsum(y * y, dim=-1))[..., :-1], 1, 0, 1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return ((1 + t) / (1 - t)).log() / 2   # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = tril_matrix_to_vec(1 - (y * y).cumsum(dim=-1), diag=-2)
        stick_breaking = 0.5 * left.log().sum(-1)
        tanh = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)


class _Joined(Transform):
    """Base of CatTransform and StackTransform: transforms `tseq`, each applied to its own
    part of a tensor along `dim` (with this transform's cache size)."""

    def __init__(self, tseq, dim=0, cache_size=0):
        assert all(isinstance(t, Transform) for t in tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)


class CatTransform(_Joined):
    """Transforms `tseq` applied to consecutive slices (of sizes `lengths`) along `dim`."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(tseq, dim, cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        assert len(self.lengths) == len(self.transforms)

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, z):
        assert -z.dim() <= self.dim < z.dim()
        assert z.size(self.dim) == self.length
        start = 0
        for length in self.lengths:
            yield z.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return tessera.cat([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        return tessera.cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        # the slicing dim counted from the right of the log-det's shape (event dims removed)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return tessera.cat(terms, dim=dim)
        return sum(terms)   # the slices were inside one event: their log-dets add

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(_Joined):
    """Transforms `tseq` applied to the slices of `dim`, one each."""

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        assert -z.dim() <= self.dim < z.dim()
        assert z.size(self.dim) == len(self.transforms)
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return tessera.stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        return tessera.stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        pairs = zip(self._slice(x), self._slice(y), self.transforms)
        return tessera.stack([t.log_abs_det_jacobian(a, b) for a, b, t in pairs], dim=self.dim)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """x to distribution.cdf(x): the distribution's support onto the unit interval (for
    copulas); the log-Jacobian is the log-density."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
