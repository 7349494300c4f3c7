"""OpInfo entries for the unary elementwise operators."""
from opinfo import OpInfo, register


# The zero-preserving ones also run on sparse inputs (aten/native/sparse: the op on the values).
SPARSE = {"neg", "abs", "sqrt", "sin", "tan", "tanh", "sinh", "asin", "asinh", "atan", "atanh", "relu", "sgn",
          "sign", "expm1", "log1p", "erf", "trunc", "floor", "ceil", "frac", "square", "deg2rad", "rad2deg", "isnan",
          "isinf", "signbit"}


def unary(name, **kw):
    if name in SPARSE:
        kw.setdefault("backends", ("CPU", "SparseCPU", "SparseCsrCPU"))
    kw.setdefault("method", name)
    kw.setdefault("inplace", name + "_")
    return OpInfo(name, lambda lib, a, _n=name, **k: getattr(lib, _n)(a, **k), **kw)


# Gradient domains: where the forward sweep's [-4, 4) leaves the function's domain (the
# forward checks NaN there), its gradients are sampled inside it.
POSITIVE, OPEN_UNIT, ABOVE_ONE = (0.1, 4.0), (-0.9, 0.9), (1.1, 4.0)
GRAD_DOMAINS = {"log": POSITIVE, "log2": POSITIVE, "log10": POSITIVE, "log1p": POSITIVE, "sqrt": POSITIVE,
                "rsqrt": POSITIVE, "asin": OPEN_UNIT, "acos": OPEN_UNIT, "atanh": OPEN_UNIT, "acosh": ABOVE_ONE,
                "lgamma": POSITIVE}

# gradgradcheck where the second derivative is a formula of its own
TWICE = {"exp", "log", "sin", "cos", "tan", "sqrt", "sigmoid", "tanh"}

register(*[unary(n, grad_domain=GRAD_DOMAINS.get(n), gradgrad=n in TWICE) for n in [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "lgamma",
    "neg", "sign", "sgn", "floor", "ceil", "trunc", "frac", "relu", "bitwise_not", "square",
]])
# logical_not_ records no Node: in place the tensor keeps its history (as torch's does)
register(unary("logical_not", exempt={"gradcheck": "logical_not_ records no Node: in place the tensor keeps its "
                                                   "earlier history, as torch's does, whose grads are compared"}))
register(
    unary("abs"),
    unary("erfinv", low=-0.99, high=0.99),
    unary("digamma", rtol=1e-5, atol=1e-5, gradgrad=True, grad_domain=(0.5, 4.0)),
    unary("round", kwargs=({}, {"decimals": 2}, {"decimals": -1})),
    unary("logit", low=0.02, high=0.98, kwargs=({}, {"eps": 0.1})),
    unary("nan_to_num", kwargs=({}, {"nan": 1.5, "posinf": 2.0, "neginf": -2.0})),
    unary("isnan", inplace=None),
    unary("isinf", inplace=None),
    unary("signbit", inplace=None),
    unary("isfinite", inplace=None, supports_out=False),
)
register(
    unary("deg2rad"),
    unary("rad2deg"),
    unary("sinc", gradgrad=True),
    unary("isposinf", inplace=None),
    unary("isneginf", inplace=None),
    unary("isreal", inplace=None, supports_out=False),
    # frexp's out= takes two tensors (mantissa=, exponent=): test_elementwise_extra.py covers it
    OpInfo("frexp", lambda lib, a: lib.frexp(a), method="frexp", supports_out=False),
)
