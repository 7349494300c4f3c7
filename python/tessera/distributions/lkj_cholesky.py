"""LKJCholesky: the LKJ distribution over lower Cholesky factors L of dim x dim
correlation matrices, with density of M = L L^T proportional to det(M)^(concentration - 1)
(concentration 1: uniform over correlation matrices). Sampling follows the onion method of
Lewandowski, Kurowicka and Joe (Generating random correlation matrices based on vines and
extended onion method, section 3.2), as NumPyro does it, and needs Beta (so
tessera._standard_gamma) draws."""
import math

import tessera

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _mvlgamma, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.): `dim` (at least 2) is the matrices' size and
    `concentration` (eta, a number or tensor) their shape parameter. L ~ LKJCholesky gives
    L @ L^T ~ LKJCorr."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1., validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = tessera.Size((dim, dim))
        # The onion method: row i >= 1 of L has squared off-diagonal norm
        # y_i ~ Beta(i / 2, eta + (dim - 1 - i) / 2); row 0 has no off-diagonal part, so its
        # Beta(1/2, .) draw only keeps the rows aligned and is never used. (torch 1.13 takes i - 1/2 for the first parameter, which
        # is right for row 1 only: its rows below the second come out too correlated.)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = tessera.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = tessera.cat([offset.new_zeros((1,)), offset])   # i - 1, and 0 for row 0
        self._beta = Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tessera.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        return self._finish_expand(new, batch_shape)

    def sample(self, sample_shape=tessera.Size()):
        # The onion method, vectorised over the rows and batch, for the Cholesky factor
        # directly: row i is sqrt(y_i) times a uniform direction in its first i coordinates,
        # completed to unit length by the diagonal.
        with tessera.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = tessera.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            direction = u / u.norm(dim=-1, keepdim=True)
            direction[..., 0, :].fill_(0.)   # row 0 has no off-diagonal entries (0 / 0 above)
            w = tessera.sqrt(y) * direction
            # the clamp keeps rounding from taking 1 - |w|^2 below zero
            diag = tessera.clamp(1 - tessera.sum(w ** 2, dim=-1), min=tessera.finfo(w.dtype).tiny).sqrt()
            return w + tessera.diag_embed(diag)

    def log_prob(self, value):
        # det(M)^(eta - 1) = prod L_ii^(2 eta - 2), and the Jacobian of L -> L L^T is
        # prod L_ii^(dim - i) (i counted from 1), so the density of L is proportional to
        # prod over i >= 2 of L_ii^(2 eta - 2 + dim - i)
        # (https://mc-stan.org/docs/2_25/functions-reference/cholesky-lkj-correlation-distribution.html)
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = tessera.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = tessera.sum(order * diag.log(), dim=-1)
        # the normalising constant (Lewandowski et al., page 1999), through the multivariate
        # gamma function, whose pi term (dim - 1)(dim - 2)/4 log(pi) falls short of the
        # paper's dim (dim - 1)/4 log(pi) by (dim - 1)/2 log(pi)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        log_normalizer = 0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) - tessera.lgamma(alpha) * dm1
        return unnormalized - log_normalizer
