"""OpInfo entries for the unary elementwise operators."""
from opinfo import OpInfo, register


def unary(name, **kw):
    kw.setdefault("method", name)
    kw.setdefault("inplace", name + "_")
    return OpInfo(name, lambda lib, a, _n=name, **k: getattr(lib, _n)(a, **k), **kw)


register(*[unary(n) for n in [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "lgamma",
    "neg", "sign", "sgn", "floor", "ceil", "trunc", "frac", "relu", "bitwise_not", "square", "logical_not",
]])
register(
    unary("abs"),
    unary("erfinv", low=-0.99, high=0.99),
    unary("digamma", rtol=1e-5, atol=1e-5),
    unary("round", kwargs=({}, {"decimals": 2}, {"decimals": -1})),
    unary("logit", low=0.02, high=0.98, kwargs=({}, {"eps": 0.1})),
    unary("nan_to_num", kwargs=({}, {"nan": 1.5, "posinf": 2.0, "neginf": -2.0})),
    unary("isnan", inplace=None),
    unary("isinf", inplace=None),
    unary("signbit", inplace=None),
    unary("isfinite", inplace=None, supports_out=False),
)
