"""OpInfo entries for the ternary elementwise operators (where, clamp, clamp_min/max, lerp,
addcmul, addcdiv) and for the Scalar overloads of the binary ones (add.Scalar, eq.Scalar,
pow.Tensor_Scalar, remainder.Scalar_Tensor, ...), whose Python numbers ride in kwargs."""
from opinfo import OpInfo, register


def where(lib, c, a, b, **kw):
    return lib.where(c.to(lib.bool), a, b, **kw)


def clamp3(lib, a, lo, hi, **kw):
    return lib.clamp(a, lo, hi, **kw)


def function(name, arity, **kw):
    """lib.name(*tensors, **kwargs) for every tensor operand."""
    return OpInfo(name, lambda lib, *t, _n=name, **k: getattr(lib, _n)(*t, **k), arity=arity, **kw)


def with_number(name, param, values, method=True, inplace=True, extra=({},), **kw):
    """name(tensor, <param>=number): the Scalar overload (or, for add/sub/mul/div, the Tensor
    overload with the number as a wrapped tensor, as torch's parser does)."""
    return OpInfo(f"{name}[{param}=number]", lambda lib, a, _n=name, **k: getattr(lib, _n)(a, **k), arity=1,
                  kwargs=tuple({param: v} | e for v in values for e in extra),
                  method=name if method else None, inplace=(name + "_") if inplace else None, **kw)


def number_first(name, number, **kw):
    """name(number, tensor): the Scalar_Tensor / Scalar overloads."""
    return OpInfo(f"{name}[number, tensor]", lambda lib, a, _n=name, _x=number, **k: getattr(lib, _n)(_x, a, **k),
                  arity=1, **kw)


NUMBERS = (2, -3, 2.5, True)

register(
    OpInfo("where", where, arity=3),
    OpInfo("where[tensor, number]", lambda lib, c, a, **k: lib.where(c.to(lib.bool), a, 2.5), arity=2, supports_out=False),
    OpInfo("where[number, tensor]", lambda lib, c, b, **k: lib.where(c.to(lib.bool), -1, b), arity=2, supports_out=False),
    OpInfo("where[number, number]", lambda lib, c, **k: lib.where(c.to(lib.bool), 1.0, 0.0), arity=1, supports_out=False),
    OpInfo("clamp", lambda lib, a, **k: lib.clamp(a, **k), arity=1, method="clamp", inplace="clamp_",
           kwargs=({"min": -1}, {"max": 2.5}, {"min": -1.5, "max": 1}, {"min": 2, "max": -2})),
    OpInfo("clamp[tensors]", clamp3, arity=3, method="clamp", inplace="clamp_"),
    OpInfo("clamp_min", lambda lib, a, **k: lib.clamp_min(a, **k), arity=1, method="clamp_min",
           inplace="clamp_min_", kwargs=({"min": 1}, {"min": -0.5})),
    OpInfo("clamp_max", lambda lib, a, **k: lib.clamp_max(a, **k), arity=1, method="clamp_max",
           inplace="clamp_max_", kwargs=({"max": 1}, {"max": -0.5})),
    function("clamp_min", 2, method="clamp_min", inplace="clamp_min_"),
    function("clamp_max", 2, method="clamp_max", inplace="clamp_max_"),
    OpInfo("lerp", lambda lib, a, b, **k: lib.lerp(a, b, **k), arity=2, method="lerp", inplace="lerp_",
           kwargs=({"weight": 0.25}, {"weight": 0.75}, {"weight": -1.5})),
    function("lerp", 3, method="lerp", inplace="lerp_", low=-1.0, high=2.0),
    function("addcmul", 3, method="addcmul", inplace="addcmul_", kwargs=({}, {"value": 2}, {"value": 0.5})),
    function("addcdiv", 3, method="addcdiv", inplace="addcdiv_", kwargs=({}, {"value": -2}), low=0.5, high=4.0),
    # Scalar overloads of binary operators.
    with_number("add", "other", NUMBERS, extra=({}, {"alpha": 2})),
    with_number("sub", "other", (2, -3, 2.5)),
    with_number("mul", "other", NUMBERS),
    with_number("div", "other", (2, -3, 2.5), extra=({}, {"rounding_mode": "floor"}, {"rounding_mode": "trunc"})),
    with_number("true_divide", "other", (2, 2.5)),
    with_number("floor_divide", "other", (2, -2.5)),
    with_number("remainder", "other", (3, -2.5)),
    with_number("fmod", "other", (3, -2.5)),
    with_number("pow", "exponent", (2, 3, 0.5, -1, -2.0)),
    with_number("copysign", "other", (-1, 2.5)),
    with_number("xlogy", "other", (2, 0.5)),
    *[with_number(c, "other", (1, 0.5, True)) for c in ("eq", "lt", "le", "gt", "ge")],
    # ne_ on complex: torch 1.13 leaves stray imaginary parts (test_scalar_overloads.py checks ours).
    with_number("ne", "other", (1, 0.5, True), inplace=False),
    *[with_number(b, "other", (5, -2, True)) for b in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    with_number("bitwise_left_shift", "other", (1, 3)),
    with_number("bitwise_right_shift", "other", (1, 3)),
    number_first("add", 2),
    number_first("sub", 1.5),
    number_first("mul", 3),
    number_first("remainder", 7, low=0.5, high=6.0,
                 exempt={"torch_grad": "torch 1.13's remainder(number, tensor) records a Node that is not "
                                       "implemented; tessera wraps the number and uses remainder.Tensor's formula"}),
    number_first("pow", 2, low=0.0, high=3.0),
    number_first("pow", 0.5, low=0.0, high=3.0),
    number_first("xlogy", 2, low=0.0, high=4.0),
    number_first("bitwise_and", 6),
    number_first("bitwise_left_shift", 1, low=0.0, high=5.0),
    number_first("bitwise_right_shift", -64, low=0.0, high=5.0),
)
