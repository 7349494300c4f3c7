"""VonMises: the circular analogue of the normal distribution, on angles, with mean
direction `loc` and concentration `concentration`. Sampling uses Best & Fisher's (1979)
rejection method."""
import math

import tessera

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Polynomial approximations of the modified Bessel functions I0 and I1 (Abramowitz &
# Stegun 9.8.1-9.8.4): in (x/3.75)^2 below 3.75, in 3.75/x (times e^x / sqrt(x)) above.
_SMALL = {0: [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
          1: [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]}
_LARGE = {0: [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
              -0.01647633, 0.00392377],
          1: [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
              0.01787654, -0.00420059]}


def _horner(y, coefs):
    result = coefs[-1]
    for c in reversed(coefs[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0, order 0 or 1."""
    assert order in (0, 1)
    small = _horner((x / 3.75) ** 2, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _horner(3.75 / x, _LARGE[order]).log()
    return tessera.where(x < 3.75, small.log(), large)


def _rejection_sample(loc, concentration, proposal_r, x):
    done = tessera.zeros(x.shape, dtype=tessera.bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = tessera.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = tessera.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = tessera.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    # shift by loc and wrap into [-pi, pi)
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration); log_prob is 2*pi-periodic in its argument."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        # the wrapped-Cauchy envelope's parameter r for Best & Fisher's sampler
        tau = 1 + (1 + 4 * self.concentration ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * self.concentration)
        self._proposal_r = (1 + rho ** 2) / (2 * rho)
        super().__init__(self.loc.shape, tessera.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * tessera.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    def sample(self, sample_shape=tessera.Size()):
        """Draws angles in [-pi, pi) (no reparameterized gradient)."""
        with tessera.no_grad():
            shape = self._extended_shape(sample_shape)
            x = tessera.empty(shape, dtype=self.loc.dtype, device=self.loc.device)
            return _rejection_sample(self.loc, self.concentration, self._proposal_r, x)

    def expand(self, batch_shape):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                              validate_args=validate_args)

    @property
    def mean(self):
        """The circular mean, loc."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(k) / I0(k)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
