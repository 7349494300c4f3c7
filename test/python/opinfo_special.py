"""OpInfo entries for torch.special (aten/native/special/): the functions with kernels of
their own, then torch.special's alternative names of top-level operators. Each entry is
named special.<name> (the aten::special_<name> operator); i0, igamma, igammac and
mvlgamma are top-level as in torch. Wider value ranges, edges and errors are in
test_special.py."""
from opinfo import OpInfo, register
from opinfo_unary import POSITIVE


def special(name, arity=1, **kw):
    return OpInfo(f"special.{name}", lambda lib, *xs, _n=name, **k: getattr(lib.special, _n)(*xs, **k), arity=arity,
                  **kw)


# Values agree to double rounding; float inputs are computed in double here and in float
# by torch, so float32 compares at float32's precision.
CLOSE = dict(dtype_tolerances={"float32": (2e-5, 1e-6)})

register(
    special("entr", low=-1.0, high=4.0, grad_domain=POSITIVE, gradgrad=True),
    special("ndtri", low=0.0, high=1.0, grad_domain=(0.05, 0.95), **CLOSE),
    special("log_ndtr", low=-20.0, high=6.0, **CLOSE),
    special("ndtr", **CLOSE),
    special("erfcx", low=-3.0, high=30.0, gradgrad=True, **CLOSE),
    special("i0e", gradgrad=True, **CLOSE),
    special("i1", gradgrad=True, **CLOSE),
    special("i1e", gradgrad=True, **CLOSE),
    OpInfo("i0", lambda lib, a, **k: lib.i0(a, **k), method="i0", inplace="i0_", gradgrad=True, **CLOSE),
    special("xlog1py", arity=2, low=0.0, high=4.0),
    special("zeta", arity=2, low=1.1, high=4.0, **CLOSE),
    OpInfo("igamma", lambda lib, a, b, **k: lib.igamma(a, b, **k), arity=2, method="igamma", inplace="igamma_",
           low=0.1, high=4.0, **CLOSE),
    OpInfo("igammac", lambda lib, a, b, **k: lib.igammac(a, b, **k), arity=2, method="igammac", inplace="igammac_",
           low=0.1, high=4.0, **CLOSE),
    OpInfo("mvlgamma", lambda lib, a, **k: lib.mvlgamma(a, **k), method="mvlgamma", inplace="mvlgamma_",
           kwargs=({"p": 1}, {"p": 3}), low=1.5, high=5.0, **CLOSE),
)

# torch 1.13's J, Y and Ai are good to only 4e-7 for negative arguments (and Ai to 3e-6
# near -2.1); test_special.py compares ours with scipy's at 1e-11.
LOOSE = dict(dtype_tolerances={"float32": (2e-5, 1e-6), "float64": (1e-5, 1e-5)})
OSCILLATING = {"bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"}

# Not differentiable in torch (their results never require grad): the gradient cases check
# that no graph is recorded, in both libraries.
register(*[special(n, low=lo, high=hi, **(LOOSE if n in OSCILLATING else CLOSE)) for n, lo, hi in [
    ("bessel_j0", -30.0, 30.0), ("bessel_j1", -30.0, 30.0), ("bessel_y0", 0.0, 30.0), ("bessel_y1", 0.0, 30.0),
    ("modified_bessel_i0", -10.0, 10.0), ("modified_bessel_i1", -10.0, 10.0), ("modified_bessel_k0", 0.0, 10.0),
    ("modified_bessel_k1", 0.0, 10.0), ("scaled_modified_bessel_k0", 0.0, 40.0),
    ("scaled_modified_bessel_k1", 0.0, 40.0), ("airy_ai", -10.0, 5.0), ("spherical_bessel_j0", -10.0, 10.0),
]])
register(*[special(n, arity=2, low=lo, high=hi, **CLOSE) for n, lo, hi in [
    ("chebyshev_polynomial_t", -1.5, 9.0), ("chebyshev_polynomial_u", -1.5, 9.0),
    ("chebyshev_polynomial_v", -1.5, 9.0), ("chebyshev_polynomial_w", -1.5, 9.0),
    ("shifted_chebyshev_polynomial_t", -0.5, 9.0), ("shifted_chebyshev_polynomial_u", -0.5, 9.0),
    ("shifted_chebyshev_polynomial_v", -0.5, 9.0), ("shifted_chebyshev_polynomial_w", -0.5, 9.0),
    ("hermite_polynomial_h", -2.0, 7.0), ("hermite_polynomial_he", -2.0, 7.0),
    ("laguerre_polynomial_l", -2.0, 7.0), ("legendre_polynomial_p", -1.5, 7.0),
]])

# torch.special's names for top-level operators: the same sweeps through the alias.
register(
    *[special(n, **kw) for n, kw in [
        ("expm1", {}), ("exp2", {}), ("psi", dict(grad_domain=(0.5, 4.0), rtol=1e-5, atol=1e-5)),
        ("digamma", dict(grad_domain=(0.5, 4.0), rtol=1e-5, atol=1e-5)), ("gammaln", dict(grad_domain=POSITIVE)),
        ("erf", {}), ("erfc", {}), ("erfinv", dict(low=-0.99, high=0.99)), ("expit", {}), ("sinc", {}),
        ("log1p", dict(grad_domain=POSITIVE)), ("i0", CLOSE),
        ("logit", dict(low=0.02, high=0.98, kwargs=({}, {"eps": 0.1}))), ("round", dict(kwargs=({}, {"decimals": 2}))),
    ]],
    OpInfo("special.polygamma", lambda lib, a, **k: lib.special.polygamma(2, a, **k), low=0.5, high=4.0,
           rtol=1e-5, atol=1e-5),
    special("multigammaln", kwargs=({"p": 2},), low=1.5, high=5.0, **CLOSE),
    special("gammainc", arity=2, low=0.1, high=4.0, **CLOSE),
    special("gammaincc", arity=2, low=0.1, high=4.0, **CLOSE),
    special("xlogy", arity=2, low=0.0, high=4.0),
    OpInfo("special.logsumexp", lambda lib, a, **k: lib.special.logsumexp(a, **k), kwargs=({"dim": 0},
           {"dim": -1, "keepdim": True}), supports_out=True),
    OpInfo("special.softmax", lambda lib, a, **k: lib.special.softmax(a, **k), kwargs=({"dim": -1},),
           supports_out=False),
    OpInfo("special.log_softmax", lambda lib, a, **k: lib.special.log_softmax(a, **k), kwargs=({"dim": 0},),
           supports_out=False),
)
