"""Factories, casts and random operators against torch 1.13.

Deterministic factories (zeros, ones, full, *_like, scalar_tensor, arange, linspace,
logspace, eye): values, dtype inference, shapes, strides (memory-format rules), meta
results, out= forms and errors. Casts: every dtype pair through .to(dtype) and the
shorthand methods, to()'s aliasing rules, devices. Random operators: statistically (moments
within a few standard errors, ranges, chi-square goodness of fit), seeding and generator
independence, plus their errors and meta results.
"""
import math
import warnings

import pytest
import torch

import tessera

ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
              "complex64", "complex128"]


def name(dtype):
    return str(dtype).split(".")[-1]


def as_torch(t):
    """A tessera tensor's values as a torch tensor of the same dtype and shape."""
    dtype = getattr(torch, name(t.dtype))
    return torch.tensor(t.tolist(), dtype=dtype).reshape(tuple(t.shape))


def check_same(got, want, rtol=0, atol=0):
    assert name(got.dtype) == name(want.dtype), f"dtype {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)} vs {tuple(want.shape)}"
    if want.device.type == "meta":
        assert got.is_meta
        return
    torch.testing.assert_close(as_torch(got), want, rtol=rtol, atol=atol, equal_nan=True)


def run(expr, lib, **env):
    return eval(expr, {"lib": lib, "math": math, **env})


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "error", e


def check_expr(expr, rtol=0, atol=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status, want = outcome(lambda: run(expr, torch))
    got_status, got = outcome(lambda: run(expr, tessera))
    if status == "error":
        assert got_status == "error", f"{expr}: torch raised {want!r}, tessera returned {got!r}"
        assert type(got).__name__ == type(want).__name__, f"{expr}: {got!r} vs {want!r}"
        return got, want
    assert got_status == "ok", f"{expr}: tessera raised {got!r}"
    check_same(got, want, rtol, atol)
    return got, want


def strided_pair(shape, strides, dtype="float32"):
    """The same strided layout (values 0, 1, ...) in both libraries."""
    span = 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0
    base_t = torch.arange(max(span, 1), dtype=getattr(torch, dtype))
    base_m = tessera.arange(max(span, 1), dtype=getattr(tessera, dtype))
    return tessera.as_strided(base_m, shape, strides), torch.as_strided(base_t, shape, strides)


# ================================================================ deterministic factories

FACTORY_EXPRS = [
    # zeros / ones / full: sizes as varargs, tuples, lists, empty and 0-size shapes
    "lib.zeros(2, 3)", "lib.zeros((2, 3), dtype=lib.int32)", "lib.zeros([])", "lib.zeros(0, 4)", "lib.zeros(4, dtype=lib.bool)",
    "lib.zeros(2, dtype=lib.complex128)", "lib.ones(3)", "lib.ones(2, 2, dtype=lib.complex64)", "lib.ones(3, dtype=lib.bool)",
    "lib.ones((2, 1, 3), dtype=lib.float16)", "lib.ones(2, dtype=lib.bfloat16)", "lib.ones(size=(2, 2))",
    "lib.full((2, 3), 7)", "lib.full((2,), True)", "lib.full((2,), 1.5)", "lib.full((2,), 2 + 1j)",
    "lib.full((2,), 1.5, dtype=lib.int32)", "lib.full((2, 2), -3, dtype=lib.float64)", "lib.full([], 4)",
    "lib.full((3,), 255, dtype=lib.uint8)", "lib.full(size=(2,), fill_value=3.0)",
    # scalar_tensor: always the default float unless told
    "lib.scalar_tensor(1)", "lib.scalar_tensor(True)", "lib.scalar_tensor(2.5)", "lib.scalar_tensor(2.5, dtype=lib.int64)",
    "lib.scalar_tensor(3, dtype=lib.float64)", "lib.scalar_tensor(-7, dtype=lib.int8)",
    # arange: integral arguments give int64, any float the default float
    "lib.arange(5)", "lib.arange(5.)", "lib.arange(True)", "lib.arange(0)", "lib.arange(1, 4)", "lib.arange(1, 4, 0.5)",
    "lib.arange(10, 0, -3)", "lib.arange(-5, 5, 2)", "lib.arange(0, 1, 0.1)", "lib.arange(0, 5, dtype=lib.float16)",
    "lib.arange(0, 5, dtype=lib.bfloat16)", "lib.arange(0.5, 5, dtype=lib.int64)", "lib.arange(0, 5, 1.5, dtype=lib.int32)",
    "lib.arange(0, 5, 1.5, dtype=lib.int64)", "lib.arange(1.5, -2.5, -0.25, dtype=lib.float64)", "lib.arange(3, dtype=lib.uint8)",
    "lib.arange(-3.5, 3)", "lib.arange(start=2, end=7)", "lib.arange(end=4)", "lib.arange(0, 10, step=3)",
    "lib.arange(0, 100, 7, dtype=lib.int8)", "lib.arange(1e3, 1e3 + 5)",
    # eye
    "lib.eye(3)", "lib.eye(2, 3)", "lib.eye(4, 2)", "lib.eye(0)", "lib.eye(3, dtype=lib.bool)", "lib.eye(2, 0)",
    "lib.eye(3, 3, dtype=lib.int64)", "lib.eye(n=2, m=4)",
    # linspace / logspace: integer outputs are exact
    "lib.linspace(0, 10, 5, dtype=lib.int64)", "lib.linspace(-2.7, 3.9, 4, dtype=lib.int32)",
    "lib.linspace(10, 0, 7, dtype=lib.uint8)", "lib.linspace(0, 10, 1)", "lib.linspace(0, 10, 0)", "lib.linspace(3, 3, 4)",
    "lib.linspace(0, 1, 1, dtype=lib.int64)", "lib.logspace(0, 3, 4, base=2, dtype=lib.int64)",
    "lib.logspace(0., 2., 5, dtype=lib.int32)", "lib.logspace(1, 2, 1, dtype=lib.int64)", "lib.logspace(0, 3, 0)",
    "lib.logspace(2, 0, 3, 2)",
]


@pytest.mark.parametrize("expr", FACTORY_EXPRS)
def test_factory_values_and_dtypes(expr):
    check_expr(expr)


FLOAT_RANGE_EXPRS = [
    "lib.linspace(0, 10, 5)", "lib.linspace(-1, 1, 11)", "lib.linspace(0, 1, 7, dtype=lib.float64)",
    "lib.linspace(2, -3, 100)", "lib.linspace(0, 1j, 3)", "lib.linspace(1 + 2j, -1, 5, dtype=lib.complex128)",
    "lib.linspace(0, 1, 5, dtype=lib.float16)", "lib.linspace(True, False, 3)", "lib.linspace(0, 1, 9, dtype=lib.bfloat16)",
    "lib.logspace(0, 3, 4)", "lib.logspace(-2, 2, 9, dtype=lib.float64)", "lib.logspace(0, 1, 5, dtype=lib.bfloat16)",
    "lib.logspace(0, 1j, 3)", "lib.logspace(0, 1, 3, dtype=lib.complex64)", "lib.logspace(0, 2, 5, base=3.5)",
    "lib.arange(0, 1, 1 / 3)", "lib.arange(-10, 10, 0.7, dtype=lib.float64)",
]


@pytest.mark.parametrize("expr", FLOAT_RANGE_EXPRS)
def test_range_factories_float(expr):
    got, want = check_expr(expr, rtol=1e-5, atol=1e-6) if "16" not in expr else check_expr(expr, rtol=1e-2, atol=1e-2)


ERROR_EXPRS = [
    # (expression, compare the message too: torch's parser has a single signature / the
    # message is the kernel's)
    ("lib.arange(0, 1, 0)", True), ("lib.arange(0, 10, -1)", True), ("lib.arange(0, float('inf'))", True),
    ("lib.arange(0, float('nan'))", True), ("lib.arange(0, 1e20)", True), ("lib.arange(0, 2.5, 0.5, dtype=lib.int64)", True),
    ("lib.arange(3, dtype=lib.bool)", True), ("lib.arange(3, dtype=lib.complex64)", True), ("lib.arange(1j)", True),
    ("lib.linspace(0, 10, -1)", True), ("lib.linspace(0, 1j, 3, dtype=lib.float32)", True),
    ("lib.linspace(0, 1, 3, dtype=lib.bool)", True), ("lib.logspace(0, 3, -4)", True), ("lib.logspace(0, 1, 3, dtype=lib.bool)", True),
    ("lib.eye(-1)", True), ("lib.eye(2, -1)", True), ("lib.zeros((2, -1))", True), ("lib.ones(-1)", True),
    ("lib.full((2,), 300, dtype=lib.int8)", True), ("lib.scalar_tensor(1j)", True), ("lib.full((2,), 1j, dtype=lib.float32)", True),
    ("lib.zeros(2, 'a')", False), ("lib.full((2,))", False), ("lib.eye(2.5)", False), ("lib.arange('a')", False),
]


@pytest.mark.parametrize("expr,compare_message", ERROR_EXPRS, ids=[e for e, _ in ERROR_EXPRS])
def test_factory_errors(expr, compare_message):
    got, want = check_expr(expr)
    assert isinstance(want, Exception), f"{expr}: torch returned"
    if compare_message:
        assert str(got).split("\n")[0] == str(want).split("\n")[0]


META_EXPRS = [
    "lib.zeros(2, 3, device='meta')", "lib.ones(4, dtype=lib.int32, device='meta')", "lib.full((2,), 1.0, device='meta')",
    "lib.arange(5, device='meta')", "lib.arange(0, 1, 0.25, device='meta')", "lib.linspace(0, 1, 5, device='meta')",
    "lib.logspace(0, 1, 5, device='meta')", "lib.eye(3, 4, device='meta')", "lib.scalar_tensor(2, device='meta')",
    "lib.empty_like(lib.zeros(2, 3), device='meta')", "lib.zeros_like(lib.zeros(2, 3, device='meta'))",
    "lib.full_like(lib.zeros(2, device='meta'), 3)", "lib.rand(2, 3, device='meta')", "lib.randn(4, device='meta', dtype=lib.float64)",
    "lib.randint(10, (2,), device='meta')", "lib.randint(2, 10, (3, 1), device='meta', dtype=lib.int8)",
    "lib.randperm(4, device='meta')", "lib.rand_like(lib.zeros(3, device='meta'))", "lib.randn_like(lib.zeros(3, device='meta'))",
    "lib.randint_like(lib.zeros(3, device='meta'), 5)", "lib.zeros(2, device='meta').normal_()",
    "lib.zeros(2, device='meta').uniform_(1, 2)", "lib.zeros(2, device='meta').random_(0, 4)",
    "lib.zeros(2, 3).to('meta')", "lib.zeros(2, 3).to(device='meta', dtype=lib.float64)", "lib.zeros(2, 3, device='meta').to(lib.int32)",
    "lib.bernoulli(lib.zeros(2, 3, device='meta'))",
]


@pytest.mark.parametrize("expr", META_EXPRS)
def test_meta_results(expr):
    got, want = check_expr(expr)
    assert got.is_meta and want.is_meta


def test_meta_full_infers_dtype_as_current_pytorch():
    # torch 1.13's meta path skips full's inference (float32); current PyTorch, and
    # tessera, infer as on the CPU
    for value, dtype in [(1, "int64"), (True, "bool"), (1.5, "float32"), (1j, "complex64")]:
        t = tessera.full((2,), value, device="meta")
        assert t.is_meta and name(t.dtype) == dtype == name(torch.full((2,), value).dtype)


def test_meta_errors_match_real_ones():
    for expr in ["lib.arange(0, 1, 0, device='meta')", "lib.rand(2, device='meta', dtype=lib.int64)",
                 "lib.zeros(2, device='meta').normal_(0, -1)", "lib.randint(5, 3, (2,), device='meta')",
                 "lib.zeros(2, device='meta').to('cpu')"]:
        got, want = check_expr(expr)
        assert isinstance(got, Exception) and isinstance(want, Exception), expr


# ================================================================ layouts of the *_like factories

LAYOUTS = [
    ((2, 3), (3, 1)),            # contiguous
    ((3, 2), (1, 3)),            # transposed: dense, kept
    ((2, 3), (6, 2)),            # stepped: not dense -> dense in the same order
    ((2, 3, 4, 5), (60, 1, 15, 3)),   # channels last
    ((2, 2, 5, 3), (60, 10, 1, 20)),  # permuted and stepped
    ((4, 2, 3), (0, 3, 1)),      # expanded
    ((3, 4), (1, 0)),            # expanded on the inner dim
    ((2, 1, 1, 3), (3, 1, 1, 1)),
    ((2, 4, 5, 1), (20, 5, 1, 20)),
    ((0, 3), (3, 1)), ((), ()),
]

LIKE_EXPRS = ["lib.empty_like(x)", "lib.zeros_like(x)", "lib.ones_like(x)", "lib.full_like(x, 2)", "lib.rand_like(x)",
              "lib.randn_like(x)", "lib.randint_like(x, 3)", "lib.randint_like(x, 1, 4)",
              "lib.zeros_like(x, memory_format=lib.contiguous_format)", "lib.empty_like(x, dtype=lib.int32)",
              "lib.ones_like(x, dtype=lib.float64)", "x.to(lib.float64)", "x.double()", "x.to(lib.int16, copy=True)"]


@pytest.mark.parametrize("shape,strides", LAYOUTS, ids=[f"{s}@{st}" for s, st in LAYOUTS])
@pytest.mark.parametrize("expr", LIKE_EXPRS)
def test_like_factories_keep_torchs_layout(expr, shape, strides):
    mine, theirs = strided_pair(shape, strides)
    got = run(expr, tessera, x=mine)
    want = run(expr, torch, x=theirs)
    assert name(got.dtype) == name(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.stride() == want.stride(), f"{expr}: strides {got.stride()} vs torch {want.stride()}"
    if "empty" not in expr and "rand" not in expr:
        check_same(got, want)


def test_like_factories_values_and_options():
    mine, theirs = strided_pair((2, 3), (3, 1), "int32")
    for expr in ["lib.full_like(x, 7)", "lib.full_like(x, 2.5)", "lib.full_like(x, 2.5, dtype=lib.float32)",
                 "lib.zeros_like(x, dtype=lib.bool)", "lib.ones_like(x, dtype=lib.complex64)",
                 "lib.empty_like(x, memory_format=lib.channels_last)", "lib.full_like(x, 300, dtype=lib.int8)"]:
        got_status, got = outcome(lambda: run(expr, tessera, x=mine))
        status, want = outcome(lambda: run(expr, torch, x=theirs))
        assert got_status == status, expr
        if status == "ok":
            assert name(got.dtype) == name(want.dtype) and got.stride() == want.stride(), expr
            if "empty" not in expr:
                check_same(got, want)
        else:
            assert type(got).__name__ == type(want).__name__, expr


def test_channels_last_memory_format():
    for lib in (tessera, torch):
        t = lib.empty_like(lib.zeros(2, 3, 4, 5), memory_format=lib.channels_last)
        assert t.stride() == (60, 1, 15, 3)
        assert t.is_contiguous(memory_format=lib.channels_last)


# ================================================================ out= forms

OUT_EXPRS = [
    ("lib.zeros(2, 3, out=o)", "float32"), ("lib.ones(4, out=o)", "int64"), ("lib.full((2, 2), 3, out=o)", "float64"),
    ("lib.arange(5, out=o)", "float32"), ("lib.arange(5, out=o)", "int32"), ("lib.arange(1, 4, 0.5, out=o)", "float64"),
    ("lib.linspace(0, 1, 5, out=o)", "float64"), ("lib.logspace(0, 2, 3, out=o)", "float32"), ("lib.eye(3, out=o)", "float32"),
    ("lib.eye(2, 4, out=o)", "int64"), ("lib.zeros(2, out=o)", "float32"),
]


@pytest.mark.parametrize("expr,dtype", OUT_EXPRS)
@pytest.mark.parametrize("out_size", [0, 5])
def test_out_forms(expr, dtype, out_size):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o_t = torch.zeros(out_size, dtype=getattr(torch, dtype))
        want = run(expr, torch, o=o_t)
    o_m = tessera.zeros(out_size, dtype=getattr(tessera, dtype))
    got = run(expr, tessera, o=o_m)
    assert got is o_m
    check_same(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("expr", ["lib.rand(3, 4, out=o)", "lib.randn(5, out=o)", "lib.randint(10, (4,), out=o)",
                                  "lib.randint(3, 10, (2, 2), out=o)", "lib.randperm(6, out=o)",
                                  "lib.rand(3, generator=g, out=o)", "lib.randperm(4, generator=g, out=o)"])
def test_random_out_forms(expr):
    o_t = torch.zeros(0, dtype=torch.float64)
    want = run(expr, torch, o=o_t, g=torch.Generator())
    o_m = tessera.zeros(0, dtype=tessera.float64)
    got = run(expr, tessera, o=o_m, g=tessera.Generator())
    assert got is o_m and tuple(got.shape) == tuple(want.shape) and name(got.dtype) == "float64"


# ================================================================ in-place zero_

def test_zero_():
    for lib in (tessera, torch):
        t = lib.ones(2, 3)
        assert t.zero_() is t
        assert t.tolist() == [[0.0] * 3] * 2
        assert lib.zero_(lib.ones(2)).tolist() == [0.0, 0.0]
    mine, theirs = strided_pair((2, 3), (6, 2))
    mine.zero_()
    theirs.zero_()
    check_same(mine, theirs)


# ================================================================ casts

VALUES = {  # values every dtype represents (no float -> unsigned UB), per source kind
    "bool": [True, False, True],
    "int": [0, 1, 7, 100, 3],
    "float": [0.0, 0.5, 2.75, 99.9, 1.0],
    "complex": [0.5 + 1j, 2.75 - 3j, 0j, 99.25 + 0.5j],
}


def source(dtype):
    kind = "bool" if dtype == "bool" else "complex" if dtype.startswith("complex") else \
        "float" if dtype.startswith(("float", "bfloat")) else "int"
    values = VALUES[kind]
    return tessera.tensor(values, dtype=getattr(tessera, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_to_every_dtype_pair(src, dst):
    mine, theirs = source(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns on complex -> real
        want = theirs.to(getattr(torch, dst))
    got = mine.to(getattr(tessera, dst))
    check_same(got, want)


SHORTHANDS = ["float", "double", "half", "bfloat16", "int", "long", "short", "char", "byte", "bool", "cfloat", "cdouble"]


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("method", SHORTHANDS)
def test_shorthand_casts(src, method):
    mine, theirs = source(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(theirs, method)()
    check_same(getattr(mine, method)(), want)


def test_float_to_int_truncates_toward_zero():
    values = [-3.7, -1.2, -0.5, 0.0, 0.5, 2.9, 100.25, -100.75]
    for dst in ["int8", "int16", "int32", "int64"]:
        for src in ["float32", "float64", "float16", "bfloat16"]:
            want = torch.tensor(values, dtype=getattr(torch, src)).to(getattr(torch, dst))
            got = tessera.tensor(values, dtype=getattr(tessera, src)).to(getattr(tessera, dst))
            check_same(got, want)


def test_to_returns_self_unless_something_changes():
    t = tessera.tensor([1.0, 2.0])
    for same in [t.to(tessera.float32), t.to("cpu"), t.to(device="cpu"), t.to(t), t.to(dtype=tessera.float32),
                 t.to("cpu", tessera.float32), t.to(memory_format=tessera.preserve_format), t.float()]:
        assert same.data_ptr() == t.data_ptr()
    for copy in [t.to(tessera.float32, copy=True), t.to(tessera.float64), t.to(copy=True),
                 t.to("cpu", tessera.float32, False, True)]:
        assert copy.data_ptr() != t.data_ptr()
        assert copy.tolist() == t.tolist()


def test_to_other_and_devices():
    a = tessera.tensor([1, 2, 3])
    b = tessera.zeros(1, dtype=tessera.float64)
    r = a.to(b)
    assert name(r.dtype) == "float64" and r.tolist() == [1.0, 2.0, 3.0]
    m = a.to("meta")
    assert m.is_meta and name(m.dtype) == "int64" and tuple(m.shape) == (3,)
    m2 = a.to(tessera.device("meta"), tessera.float16)
    assert m2.is_meta and name(m2.dtype) == "float16"
    assert a.to(m).is_meta
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        m.to("cpu")
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        tessera.rand(2, 2).to(tessera.float64, memory_format=tessera.channels_last)


def test_to_channels_last():
    for lib in (tessera, torch):
        t = lib.zeros(2, 3, 4, 5)
        r = t.to(memory_format=lib.channels_last)
        assert r.stride() == (60, 1, 15, 3)
        assert r.to(memory_format=lib.channels_last).data_ptr() == r.data_ptr()


# ================================================================ random: seeding and generators

def test_same_seed_same_numbers_different_seed_different():
    tessera.manual_seed(1234)
    a = tessera.rand(100).tolist()
    b = tessera.randn(10).tolist()
    tessera.manual_seed(1234)
    assert tessera.rand(100).tolist() == a
    assert tessera.randn(10).tolist() == b
    tessera.manual_seed(1235)
    assert tessera.rand(100).tolist() != a
    # consecutive calls continue the stream
    tessera.manual_seed(1234)
    tessera.rand(100)
    assert tessera.randn(10).tolist() == b


@pytest.mark.parametrize("expr", [
    "lib.rand(50, generator=g)", "lib.randn(50, generator=g)", "lib.randint(0, 100, (50,), generator=g)",
    "lib.randint(100, (50,), generator=g)", "lib.randperm(50, generator=g)",
    "lib.multinomial(lib.ones(10), 5, generator=g)", "lib.multinomial(lib.ones(10), 20, True, generator=g)",
    "lib.bernoulli(lib.full((50,), 0.5), generator=g)", "lib.bernoulli(lib.ones(50), 0.5, generator=g)",
    "lib.zeros(50).normal_(generator=g)", "lib.zeros(50).uniform_(generator=g)", "lib.zeros(50).random_(generator=g)",
    "lib.zeros(50).random_(10, generator=g)", "lib.zeros(50).bernoulli_(0.5, generator=g)",
])
def test_generator_objects_are_deterministic_and_independent(expr):
    g1 = tessera.Generator().manual_seed(7)
    g2 = tessera.Generator().manual_seed(7)
    tessera.manual_seed(99)
    x = tessera.rand(5).tolist()
    a = run(expr, tessera, g=g1).tolist()
    tessera.manual_seed(99)
    b = run(expr, tessera, g=g2).tolist()   # the default generator's draws do not disturb g2
    y = tessera.rand(5).tolist()            # and g2's draws do not advance the default one
    assert a == b
    assert x == y
    assert run(expr, tessera, g=g1).tolist() != a or "bernoulli" in expr  # the stream moves on


def test_generator_api():
    g = tessera.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert g.device == tessera.device("cpu")
    assert tessera.Generator(device="cpu").initial_seed() == 67280421310721
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert g.manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    with pytest.raises(RuntimeError):
        g.manual_seed(2**64)
    with pytest.raises(TypeError):
        g.manual_seed(1.5)
    with pytest.raises(RuntimeError, match="Device type META is not supported for torch.Generator"):
        tessera.Generator(device="meta")
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s
    state = g.get_state()
    assert name(state.dtype) == "uint8"
    first = tessera.rand(8, generator=g).tolist()
    g.set_state(state)
    assert tessera.rand(8, generator=g).tolist() == first
    with pytest.raises(RuntimeError):
        g.set_state(tessera.zeros(3, dtype=tessera.uint8))


def test_default_generator_functions():
    assert tessera.manual_seed(5) is tessera.default_generator
    assert tessera.initial_seed() == 5
    assert tessera.manual_seed(7.9).initial_seed() == 7  # int(seed), as torch.manual_seed
    s = tessera.seed()
    assert tessera.initial_seed() == s
    state = tessera.get_rng_state()
    a = tessera.rand(4).tolist()
    tessera.set_rng_state(state)
    assert tessera.rand(4).tolist() == a
    tessera.default_generator.manual_seed(11)
    b = tessera.rand(3).tolist()
    tessera.manual_seed(11)
    assert tessera.rand(3).tolist() == b


def test_generator_rejected_where_not_a_generator():
    with pytest.raises(TypeError):
        tessera.rand(3, generator=5)


# ================================================================ random: distributions

N = 200_000


def moments(t):
    x = as_torch(t).double().flatten()
    return x.mean().item(), x.var().item(), x.min().item(), x.max().item()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_rand_uniform_moments_and_range(dtype):
    tessera.manual_seed(0)
    t = tessera.rand(N, dtype=getattr(tessera, dtype))
    assert name(t.dtype) == dtype and tuple(t.shape) == (N,)
    mean, var, lo, hi = moments(t)
    assert 0 <= lo and hi < 1
    se = math.sqrt(1 / 12 / N)
    assert abs(mean - 0.5) < 6 * se + (2e-3 if "16" in dtype else 0)
    assert abs(var - 1 / 12) < 0.003


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_randn_moments(dtype):
    tessera.manual_seed(1)
    t = tessera.randn(N, dtype=getattr(tessera, dtype))
    mean, var, _, _ = moments(t)
    assert abs(mean) < 6 / math.sqrt(N) + (5e-3 if "16" in dtype else 0)
    assert abs(var - 1) < 6 * math.sqrt(2 / N) + (1e-2 if "16" in dtype else 0)
    x = as_torch(t).double()
    # a normal, not just any unit-variance law: the fourth moment is 3
    assert abs((x ** 4).mean().item() - 3) < 0.1
    assert abs((x.abs() < 1).double().mean().item() - 0.6826894921) < 0.005


def test_randn_complex():
    tessera.manual_seed(2)
    t = as_torch(tessera.randn(N, dtype=tessera.complex128))
    assert abs(t.real.var().item() - 0.5) < 0.01 and abs(t.imag.var().item() - 0.5) < 0.01
    assert abs((t.real * t.imag).mean().item()) < 0.01
    u = as_torch(tessera.rand(N, dtype=tessera.complex64))
    assert 0 <= u.real.min().item() and u.real.max().item() < 1 and 0 <= u.imag.min().item() and u.imag.max().item() < 1


@pytest.mark.parametrize("mean,std,dtype", [(3.0, 2.0, "float64"), (-1.0, 0.5, "float32"), (0.0, 0.0, "float32")])
def test_normal_(mean, std, dtype):
    tessera.manual_seed(3)
    t = tessera.zeros(N, dtype=getattr(tessera, dtype))
    assert t.normal_(mean, std) is t
    m, v, _, _ = moments(t)
    assert abs(m - mean) < 6 * std / math.sqrt(N) + 1e-6
    assert abs(v - std * std) < 6 * std * std * math.sqrt(2 / N) + 1e-6


@pytest.mark.parametrize("lo,hi,dtype", [(-2.0, 5.0, "float64"), (10.0, 10.5, "float32"), (-1.0, 1.0, "float16"),
                                         (0.0, 0.0, "float32"), (0.0, 1.0, "bfloat16")])
def test_uniform_(lo, hi, dtype):
    tessera.manual_seed(4)
    t = tessera.zeros(N, dtype=getattr(tessera, dtype))
    assert t.uniform_(lo, hi) is t
    m, v, mn, mx = moments(t)
    assert lo <= mn and (mx < hi or lo == hi)
    assert abs(m - (lo + hi) / 2) < 6 * (hi - lo) / math.sqrt(12 * N) + (hi - lo) * (4e-3 if "16" in dtype else 0) + 1e-9


def test_random_fills_non_contiguous_targets():
    tessera.manual_seed(5)
    base = tessera.zeros(4, 6)
    view = tessera.as_strided(base, (4, 3), (6, 2))
    view.uniform_(1, 2)
    values = as_torch(base)
    assert (values[:, ::2] >= 1).all() and (values[:, 1::2] == 0).all()
    t = tessera.as_strided(tessera.zeros(6, 4), (4, 6), (1, 4))  # transposed: dense, filled in place
    t.normal_()
    assert (as_torch(t) != 0).all()


def chi_square(counts, expected):
    return sum((c - e) ** 2 / e for c, e in zip(counts, expected))


# chi-square critical values at p = 1e-5, by degrees of freedom
CHI2_CRIT = {1: 19.5, 3: 25.9, 4: 28.5, 6: 32.9, 9: 37.3, 19: 51.9}


@pytest.mark.parametrize("low,high,dtype", [(0, 10, "int64"), (-5, 5, "int8"), (0, 20, "float32"), (3, 7, "int32"),
                                            (0, 2, "bool"), (250, 255, "uint8"), (-1000, -990, "int16")])
def test_randint_range_and_chi_square(low, high, dtype):
    tessera.manual_seed(6)
    t = tessera.randint(low, high, (N,), dtype=getattr(tessera, dtype))
    assert name(t.dtype) == dtype
    x = as_torch(t).long() if dtype != "bool" else as_torch(t).long()
    assert x.min().item() >= low and x.max().item() < high
    k = high - low
    counts = torch.bincount(x - low, minlength=k).tolist()
    assert chi_square(counts, [N / k] * k) < CHI2_CRIT[k - 1]


def test_randint_default_dtype_and_forms():
    assert name(tessera.randint(10, (3,)).dtype) == "int64"
    assert name(tessera.randint(3, 10, (2, 2)).dtype) == "int64"
    assert tuple(tessera.randint(5, size=(2, 3)).shape) == (2, 3)
    assert tuple(tessera.randint(low=1, high=5, size=(4,)).shape) == (4,)
    t = tessera.randint(2**40, 2**40 + 3, (1000,))
    assert set(as_torch(t).tolist()) <= {2**40, 2**40 + 1, 2**40 + 2}


def test_randint_like():
    x = tessera.zeros(3, 4, dtype=tessera.int16)
    t = tessera.randint_like(x, 5)
    assert name(t.dtype) == "int16" and tuple(t.shape) == (3, 4)
    v = as_torch(tessera.randint_like(x, -3, 3, dtype=tessera.float64))
    assert v.min().item() >= -3 and v.max().item() < 3 and (v == v.round()).all()


@pytest.mark.parametrize("dtype,hi", [("int8", 127), ("uint8", 255), ("bool", 1), ("float16", 2048), ("int16", 32767)])
def test_random_no_bounds(dtype, hi):
    tessera.manual_seed(7)
    x = as_torch(tessera.zeros(50_000, dtype=getattr(tessera, dtype)).random_()).double()
    assert x.min().item() >= 0 and x.max().item() <= hi
    assert abs(x.mean().item() - hi / 2) < 0.03 * hi + 0.01


def test_random_to_and_from():
    tessera.manual_seed(8)
    x = as_torch(tessera.zeros(10_000).random_(7))
    assert x.min().item() == 0 and x.max().item() == 6
    y = as_torch(tessera.zeros(10_000, dtype=tessera.int64).random_(-3, 2))
    assert y.min().item() == -3 and y.max().item() == 1
    z = as_torch(tessera.zeros(10_000, dtype=tessera.int8).random_(100, None))
    assert z.min().item() >= 100 and z.max().item() <= 127


@pytest.mark.parametrize("n,dtype", [(0, "int64"), (1, "int64"), (10, "int32"), (1000, "int64"), (50, "float32"),
                                     (100, "int8"), (2049, "float16")])
def test_randperm_is_a_permutation(n, dtype):
    tessera.manual_seed(9)
    t = tessera.randperm(n, dtype=getattr(tessera, dtype))
    assert name(t.dtype) == dtype and tuple(t.shape) == (n,)
    assert sorted(int(v) for v in t.tolist()) == list(range(n))


def test_randperm_is_uniform():
    # the position of element 0 over many permutations of 5 is uniform
    tessera.manual_seed(10)
    counts = [0] * 5
    for _ in range(2000):
        counts[tessera.randperm(5).tolist().index(0)] += 1
    assert chi_square(counts, [400] * 5) < CHI2_CRIT[4]
    tessera.manual_seed(10)
    a = tessera.randperm(100).tolist()
    tessera.manual_seed(11)
    assert tessera.randperm(100).tolist() != a


def test_bernoulli():
    tessera.manual_seed(11)
    p = tessera.full((N,), 0.3, dtype=tessera.float64)
    b = tessera.bernoulli(p)
    assert name(b.dtype) == "float64"
    x = as_torch(b)
    assert set(x.unique().tolist()) <= {0.0, 1.0}
    assert abs(x.mean().item() - 0.3) < 6 * math.sqrt(0.21 / N)
    assert as_torch(tessera.bernoulli(tessera.tensor([0.0, 1.0, 0.0, 1.0]))).tolist() == [0.0, 1.0, 0.0, 1.0]
    y = as_torch(p.bernoulli(0.8))
    assert abs(y.mean().item() - 0.8) < 6 * math.sqrt(0.16 / N)
    z = tessera.zeros(N, dtype=tessera.int32)
    assert z.bernoulli_(0.25) is z
    assert abs(as_torch(z).double().mean().item() - 0.25) < 6 * math.sqrt(0.1875 / N)
    assert name(tessera.bernoulli(tessera.ones(3, dtype=tessera.int64), 0.5).dtype) == "int64"
    # p per element
    probs = tessera.tensor([[0.1, 0.9]] * 20000)
    draws = as_torch(tessera.bernoulli(probs)).mean(0).tolist()
    assert abs(draws[0] - 0.1) < 0.015 and abs(draws[1] - 0.9) < 0.015


def test_multinomial_with_replacement_chi_square():
    tessera.manual_seed(12)
    probs = [0.1, 0.2, 0.0, 0.3, 0.4]
    s = tessera.multinomial(tessera.tensor(probs), N, True)
    assert name(s.dtype) == "int64" and tuple(s.shape) == (N,)
    counts = torch.bincount(as_torch(s), minlength=5).tolist()
    assert counts[2] == 0
    nonzero = [(c, p * N) for c, p in zip(counts, probs) if p > 0]
    assert chi_square([c for c, _ in nonzero], [e for _, e in nonzero]) < CHI2_CRIT[3]
    # unnormalised weights and rows
    s2 = tessera.multinomial(tessera.tensor([[1.0, 3.0], [3.0, 1.0]], dtype=tessera.float64), 20000, replacement=True)
    means = as_torch(s2).double().mean(1).tolist()
    assert abs(means[0] - 0.75) < 0.02 and abs(means[1] - 0.25) < 0.02


def test_multinomial_without_replacement():
    tessera.manual_seed(13)
    probs = [0.1, 0.2, 0.3, 0.4]
    rows = 40_000
    s = as_torch(tessera.multinomial(tessera.tensor([probs] * rows), 4))
    assert tuple(s.shape) == (rows, 4)
    assert (s.sort(1).values == torch.arange(4)).all()  # every row a permutation
    counts = torch.bincount(s[:, 0], minlength=4).tolist()  # the first draw follows probs
    assert chi_square(counts, [p * rows for p in probs]) < CHI2_CRIT[3]
    # the second draw follows the conditional law: P(second = j) = sum_i p_i p_j / (1 - p_i)
    second = [sum(pi * pj / (1 - pi) for i, pi in enumerate(probs) if i != j) for j, pj in enumerate(probs)]
    counts2 = torch.bincount(s[:, 1], minlength=4).tolist()
    assert chi_square(counts2, [p * rows for p in second]) < CHI2_CRIT[3]
    z = tessera.multinomial(tessera.tensor([1.0, 0.0, 0.0]), 2).tolist()
    assert z[0] == 0 and sorted(z) != [0, 0]


RANDOM_ERRORS = [
    "lib.rand(3, dtype=lib.int64)", "lib.rand(2, dtype=lib.bool)", "lib.randn(3, dtype=lib.int64)",
    "lib.randint(5, 3, (2,))", "lib.randint(-1, (2,))", "lib.randint(0, (2,))",
    "lib.randint(300, (2,), dtype=lib.uint8)", "lib.randint(-5, 5, (2,), dtype=lib.uint8)",
    "lib.randperm(-1)", "lib.randperm(300, dtype=lib.uint8)", "lib.randperm(3000, dtype=lib.float16)",
    "lib.randperm(3, dtype=lib.bool)",
    "lib.zeros(3).normal_(0, -1)", "lib.zeros(3).uniform_(2, 1)", "lib.zeros(3, dtype=lib.int32).uniform_()",
    "lib.zeros(3, dtype=lib.int32).normal_()", "lib.zeros(3).random_(5, 5)", "lib.zeros(3, dtype=lib.int8).random_(0, 300)",
    "lib.zeros(3, dtype=lib.int8).random_(-300, 0)",
    "lib.bernoulli(lib.tensor([0.5, 2.0]))", "lib.bernoulli(lib.tensor([1, 0]))", "lib.bernoulli(lib.ones(3), 1.5)",
    "lib.zeros(3).bernoulli_(1.5)", "lib.zeros(3).bernoulli_(-0.1)",
    "lib.multinomial(lib.tensor([1., 2.]), 3)", "lib.multinomial(lib.tensor([0., 0.]), 1, True)",
    "lib.multinomial(lib.tensor([1., -1.]), 1)", "lib.multinomial(lib.ones(2, 2, 2), 1)", "lib.multinomial(lib.ones(2), 0)",
    "lib.multinomial(lib.tensor([1, 2]), 1)", "lib.multinomial(lib.tensor([1., float('nan')]), 1)",
    "lib.multinomial(lib.tensor([1., float('inf')]), 1)", "lib.multinomial(lib.ones(0), 1)",
]


@pytest.mark.parametrize("expr", RANDOM_ERRORS)
def test_random_errors(expr):
    got, want = check_expr(expr)
    assert isinstance(want, Exception), f"{expr}: torch raised nothing"
    # torch appends "(Could this error message be improved? ...)" to some of its checks
    assert str(want).split("\n")[0].startswith(str(got).split("\n")[0])
