"""OpInfo entries for torch's alternative names of elementwise operators (ops.yaml's
"alternative names" section, aten/native/elementwise/Aliases.cpp): each runs the sweeps of
the operator it names, through its own function, method, in-place and out= forms."""
from opinfo import OpInfo, register
from opinfo_elementwise import binary
from opinfo_unary import ABOVE_ONE, OPEN_UNIT, unary

register(
    unary("absolute", inplace="absolute_"),
    unary("arccos", grad_domain=OPEN_UNIT),
    unary("arcsin", grad_domain=OPEN_UNIT),
    unary("arctan"),
    unary("arccosh", grad_domain=ABOVE_ONE),
    unary("arcsinh"),
    unary("arctanh", grad_domain=OPEN_UNIT),
    unary("negative"),
    unary("fix"),
    binary("arctan2"),
    binary("multiply"),
    binary("divide", kwargs=({}, {"rounding_mode": "trunc"}, {"rounding_mode": "floor"}), low=0.5, high=6.0),
    binary("subtract", kwargs=({}, {"alpha": 2})),
    *[binary(c) for c in ("greater", "less", "greater_equal", "less_equal")],
    # (ne_ on complex tensors differs from torch 1.13's: see the ne entry)
    binary("not_equal", inplace=False),
    OpInfo("clip", lambda lib, a, **k: lib.clip(a, **k), arity=1, method="clip", inplace="clip_",
           kwargs=({"min": -1}, {"max": 2.5}, {"min": -1.5, "max": 1}, {"min": 2, "max": -2})),
    OpInfo("clip[tensors]", lambda lib, a, lo, hi, **k: lib.clip(a, lo, hi, **k), arity=3, method="clip",
           inplace="clip_"),
)
