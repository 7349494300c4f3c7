"""tessera.special: torch.special's functions. Each is the generated binding of an aten
special_* operator (ops.yaml entries with ``python_module: special``), named as torch
names it: ``tessera.special.ndtri`` is ``aten::special_ndtri``. The functions with their
own kernels are computed in double and rounded to the input's dtype (see
aten/native/special/SpecialFunctions.h); the others are torch's alternative names for
operators that live at the top level (``expit`` is ``sigmoid``, ``gammainc`` is ``igamma``).
"""
from ._C import _special

_NAMES = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
    "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
    "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0",
    "xlog1py", "xlogy", "zeta",
]
for _name in _NAMES:
    globals()[_name] = getattr(_special, "special_" + _name)
del _name

__all__ = list(_NAMES)
