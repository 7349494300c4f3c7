"""HalfCauchy: |X| for X ~ Cauchy(0, scale)."""
import math

import tessera

from .cauchy import Cauchy
from .half_normal import _FoldedAtZero

__all__ = ["HalfCauchy"]


class HalfCauchy(_FoldedAtZero):
    """HalfCauchy(scale)."""
    _unfolded = Cauchy

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return tessera.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # unlike HalfNormal's (as in torch), a number or another dtype becomes a tensor like scale
        return self._folded_log_prob(tessera.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device))
