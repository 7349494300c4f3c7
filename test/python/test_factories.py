"""Factories and casts against torch 1.13.

Deterministic factories (zeros, ones, full, *_like, scalar_tensor, arange, linspace,
logspace, eye): values, dtype inference, shapes, strides (memory-format rules), meta
results, out= forms and errors. Casts: every dtype pair through .to(dtype) and the
shorthand methods, to()'s aliasing rules, devices. (Random operators: test_random.py.)
"""
import os
import subprocess
import sys
import warnings

import pytest
import torch

import tessera

from opinfo import assert_raises_like_torch
from factory_checks import ALL_DTYPES, check_expr, check_same, name, outcome, run, strided_pair


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


# ================================================================ fill_ with a tensor value

FILL_TENSOR_EXPRS = [
    "lib.zeros(2, 3).fill_(lib.tensor(2))", "lib.zeros(2, 3, dtype=lib.int32).fill_(lib.tensor(2.7))",
    "lib.fill_(lib.zeros(3), lib.tensor(1.5))", "lib.zeros(3, 2).t().fill_(lib.tensor(4, dtype=lib.int64))",
    "lib.zeros(3, dtype=lib.bool).fill_(lib.tensor(0.5))", "lib.zeros(2, dtype=lib.complex64).fill_(lib.tensor(1 + 2j))",
    "lib.zeros(2, 3).fill_(lib.tensor(300.)).to(lib.int16)", "lib.ops.aten.fill_.Tensor(lib.zeros(3), lib.tensor(5.))",
    "lib.zeros(2, 3, device='meta').fill_(lib.tensor(1.))", "lib.zeros(0, 3).fill_(lib.tensor(1.))",
    # errors: a value that is not 0-dim, or does not fit the dtype
    "lib.zeros(2, 3).fill_(lib.tensor([2.]))", "lib.zeros(2).fill_(lib.ones(2, 2))",
    "lib.zeros(2, 3, dtype=lib.int8).fill_(lib.tensor(300))", "lib.zeros(3).fill_(lib.tensor(1 + 2j))",
    "lib.zeros(2, 3, device='meta').fill_(lib.tensor([1.]))",
]


@pytest.mark.parametrize("expr", FILL_TENSOR_EXPRS)
def test_fill_with_a_tensor_value(expr):
    got, want = check_expr(expr)
    if isinstance(want, Exception):
        assert str(got).split("\n")[0] == str(want).split("\n")[0]


def test_fill_tensor_returns_self_and_writes_through_views():
    t = tessera.zeros(3, 4)
    assert t.fill_(tessera.tensor(1.0)) is t
    t.select(1, 2).fill_(tessera.tensor(7))
    assert t.tolist() == [[1.0, 1.0, 7.0, 1.0]] * 3


# ================================================================ out= forms computed by the functional op

def _out(lib, dtype, kind):
    """An out= tensor: empty, or already shaped (2, 3) but transposed (its strides stay)."""
    d = getattr(lib, dtype)
    return lib.empty(0, dtype=d) if kind == "empty" else lib.zeros(3, 2, dtype=d).t()


FUNCTIONAL_OUT_EXPRS = [
    # (expression over x (2, 3) float64, transposed in memory, and o; values compared?)
    ("lib.ops.aten.zeros_like.out(x, out=o)", True),
    ("lib.ops.aten.ones_like.out(x, out=o)", True),
    ("lib.ops.aten.ones_like.out(x, memory_format=lib.contiguous_format, out=o)", True),
    ("lib.ops.aten.full_like.out(x, 2.5, out=o)", True),
    ("lib.ops.aten.full_like.out(x, -3, out=o)", True),
    ("lib.ops.aten.clone.out(x, out=o)", True),
    ("lib.ops.aten.clone.out(x, memory_format=lib.contiguous_format, out=o)", True),
    ("lib.ops.aten.empty_like.out(x, out=o)", False),
    ("lib.ops.aten.empty_strided.out((2, 3), (1, 2), out=o)", False),
    ("lib.ops.aten.bernoulli.float_out(x, 1.0, out=o)", True),
    ("lib.ops.aten.bernoulli.float_out(x, 0.0, out=o)", True),
    ("lib.ops.aten.bernoulli.Tensor_out(x, lib.ones(3), out=o)", True),
    ("lib.ops.aten.randint_like.out(x, 1, out=o)", True),
    ("lib.ops.aten.randint_like.low_dtype_out(x, 4, 5, out=o)", True),
    ("lib.ops.aten.rand_like.out(x, out=o)", False),
    ("lib.ops.aten.randn_like.out(x, out=o)", False),
]


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
@pytest.mark.parametrize("kind", ["empty", "shaped"])
@pytest.mark.parametrize("expr,compare_values", FUNCTIONAL_OUT_EXPRS, ids=[e for e, _ in FUNCTIONAL_OUT_EXPRS])
def test_out_forms_of_functional_ops(expr, compare_values, kind, dtype):
    """out= of torch's generated out= ops: the functional result, out resized when empty
    (contiguous) or kept as it is when already the right shape, and the values cast into
    out's dtype."""
    mine_x, theirs_x = strided_pair((2, 3), (1, 2), "float64")
    mine_x.fill_(1)
    theirs_x.fill_(1)
    o_m, o_t = _out(tessera, dtype, kind), _out(torch, dtype, kind)
    status, want = outcome(lambda: run(expr, torch, x=theirs_x, o=o_t))
    got_status, got = outcome(lambda: run(expr, tessera, x=mine_x, o=o_m))
    if status == "error":  # rand_like.out into an integer out: the functional draws in out's dtype
        assert got_status == "error" and type(got).__name__ == type(want).__name__, f"{got!r} vs {want!r}"
        assert str(got).split("\n")[0] == str(want).split("\n")[0]
        return
    assert got_status == "ok", f"{expr}: tessera raised {got!r}"
    assert want is o_t and got is o_m
    assert name(got.dtype) == name(want.dtype) and tuple(got.shape) == tuple(want.shape)
    assert got.stride() == want.stride(), f"{expr}: {got.stride()} vs torch {want.stride()}"
    if compare_values:
        check_same(got, want)


@pytest.mark.parametrize("expr", ["lib.ops.aten.scalar_tensor.out(3.5, out=o)", "lib.ops.aten.scalar_tensor.out(True, out=o)",
                                  "lib.ops.aten.scalar_tensor.out(-2, out=o)"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_scalar_tensor_out(expr, dtype):
    o_m, o_t = tessera.empty(0, dtype=getattr(tessera, dtype)), torch.empty(0, dtype=getattr(torch, dtype))
    got, want = run(expr, tessera, o=o_m), run(expr, torch, o=o_t)
    assert got is o_m and want is o_t
    check_same(got, want)


def test_functional_out_forms_on_meta_and_their_errors():
    m = tessera.empty(2, 3, device="meta")
    for expr in ["lib.ops.aten.zeros_like.out(x, out=o)", "lib.ops.aten.clone.out(x.t(), out=o)",
                 "lib.ops.aten.rand_like.out(x, out=o)", "lib.ops.aten.randint_like.low_dtype_out(x, 0, 3, out=o)",
                 "lib.ops.aten.bernoulli.Tensor_out(x, x, out=o)", "lib.ops.aten.full_like.out(x, 1, out=o)"]:
        o = tessera.empty(0, device="meta", dtype=tessera.float64)
        got = run(expr, tessera, x=m, o=o)
        want = run(expr, torch, x=torch.empty(2, 3, device="meta"), o=torch.empty(0, device="meta", dtype=torch.float64))
        assert got is o and got.is_meta and tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        assert name(got.dtype) == "float64"
    # the functional op's own errors come through
    for expr in ["lib.ops.aten.bernoulli.float_out(x, 1.5, out=o)", "lib.ops.aten.randint_like.out(x, -1, out=o)",
                 "lib.ops.aten.bernoulli.Tensor_out(x, lib.ones(4), out=o)",
                 "lib.ops.aten.clone.out(x, memory_format=lib.channels_last, out=o)"]:
        _, want = outcome(lambda: run(expr, torch, x=torch.zeros(2, 3), o=torch.empty(0)))
        _, got = outcome(lambda: run(expr, tessera, x=tessera.zeros(2, 3), o=tessera.empty(0)))
        assert isinstance(want, Exception) and isinstance(got, Exception), expr
        assert type(got).__name__ == type(want).__name__, expr
        assert str(want).split("\n")[0].startswith(str(got).split("\n")[0]), expr


def test_functional_out_needs_an_empty_or_right_shaped_out():
    # torch 1.13 resizes a non-empty out= of the wrong shape with a deprecation warning;
    # tessera, as for every out= op, asks for an empty (or right-shaped) one
    o = tessera.zeros(5)
    with pytest.raises(RuntimeError, match=r"zeros_like\(\): the out= tensor has shape \[5\]"):
        tessera.ops.aten.zeros_like.out(tessera.zeros(2, 3), out=o)
    assert tuple(o.shape) == (5,)


@pytest.mark.parametrize("expr", ["lib.zeros_like(x, out=o)", "lib.ones_like(x, out=o)", "lib.empty_like(x, out=o)",
                                  "lib.full_like(x, 1, out=o)", "lib.rand_like(x, out=o)", "lib.randn_like(x, out=o)",
                                  "lib.randint_like(x, 3, out=o)", "lib.clone(x, out=o)", "lib.scalar_tensor(1, out=o)",
                                  "lib.empty_strided((2,), (1,), out=o)", "lib.bernoulli(x, 0.5, out=o)",
                                  "x.clone(out=o)"])
def test_python_api_has_no_out_where_torchs_has_none(expr):
    with pytest.raises(TypeError):
        run(expr, torch, x=torch.zeros(2), o=torch.empty(0))
    with pytest.raises(TypeError):
        run(expr, tessera, x=tessera.zeros(2), o=tessera.empty(0))


# ================================================================ empty(..., out=)

@pytest.mark.parametrize("expr", ["lib.empty(2, 3, out=o)", "lib.empty((2, 3), out=o)", "lib.empty([], out=o)",
                                  "lib.empty(0, 4, out=o)", "lib.ops.aten.empty.out([2, 3], out=o)"])
@pytest.mark.parametrize("kind", ["empty", "shaped"])
def test_empty_out(expr, kind):
    o_m, o_t = _out(tessera, "int32", kind), _out(torch, "int32", kind)
    got, want = run(expr, tessera, o=o_m), run(expr, torch, o=o_t)
    assert got is o_m and want is o_t
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride() and name(got.dtype) == "int32"


def test_empty_out_errors_and_meta():
    for expr in ["lib.empty(2, out=o, memory_format=lib.contiguous_format)", "lib.empty(2, -1, out=o)"]:
        got, want = check_expr(expr.replace("o,", "lib.empty(0),").replace("out=o", "out=lib.empty(0)"))
        assert isinstance(want, Exception) and isinstance(got, Exception), expr
        if not isinstance(want, TypeError):
            assert str(got).split("\n")[0] == str(want).split("\n")[0]
    o = tessera.empty(0, device="meta")
    assert tessera.empty(4, 5, out=o) is o and o.is_meta and tuple(o.shape) == (4, 5)


# ================================================================ the package as imported

def test_package_import_installs_the_cast_methods():
    """`import tessera` alone gives t.float(), t.half(), ..., and to()'s positional device."""
    code = ("import tessera\n"
            "t = tessera.ones(2)\n"
            "print(t.half().dtype, t.double().dtype, t.long().dtype, t.bool().dtype, t.cfloat().dtype,\n"
            "      t.to('meta').is_meta, t.to('cpu', tessera.int8).dtype)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["tessera.float16", "tessera.float64", "tessera.int64", "tessera.bool",
                                  "tessera.complex64", "True", "tessera.int8"]


def test_enum_defaults_written_as_numbers_reach_kernels_as_enums():
    # torch prints `MemoryFormat memory_format=0` and `ScalarType? dtype=4`: the parser
    # hands the kernel the enum, through generated bindings and tessera.ops alike
    t = tessera.zeros(3, 4).t()
    for c in (t.contiguous(), tessera.ops.aten.contiguous(t), tessera.ops.aten.contiguous.default(t)):
        assert c.is_contiguous() and c.stride() == (3, 1)
    for r in (tessera.randint(5, (3,)), tessera.ops.aten.randint(5, (3,)), tessera.ops.aten.randperm(4)):
        assert name(r.dtype) == "int64"


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


# ---- requires_grad=: the parser adds it to factories (TensorOptions, no tensor input, or
# *_like / new_*), as torch's Python signatures do

@pytest.mark.parametrize("expr", [
    "lib.zeros(2, 3, requires_grad=True)", "lib.ones(2, requires_grad=True)", "lib.full((2,), 1.5, requires_grad=True)",
    "lib.empty(2, requires_grad=True)", "lib.rand(2, requires_grad=True)", "lib.randn(2, requires_grad=True)",
    "lib.arange(3.0, requires_grad=True)", "lib.linspace(0, 1, 3, requires_grad=True)", "lib.eye(2, requires_grad=True)",
    "lib.zeros_like(lib.ones(2), requires_grad=True)", "lib.full_like(lib.ones(2), 2.0, requires_grad=True)",
    "lib.ones(2).new_zeros(3, requires_grad=True)", "lib.ones(2).new_full((2,), 3.0, requires_grad=True)",
    "lib.scalar_tensor(2.0, requires_grad=True)", "lib.zeros(2, requires_grad=False)", "lib.zeros(2)",
])
def test_factories_take_requires_grad(expr):
    want = eval(expr, {"lib": torch})
    got = eval(expr, {"lib": tessera})
    assert got.requires_grad == want.requires_grad and got.is_leaf
    assert tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize("expr", [
    "lib.zeros(2, dtype=lib.int64, requires_grad=True)", "lib.arange(3, requires_grad=True)",
    "lib.ones(2).to(lib.float64, requires_grad=True)", "lib.ones(2).add(1, requires_grad=True)",
    "lib.zeros(2, requires_grad=1.5)",
])
def test_requires_grad_errors_like_torch(expr):
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch})
    with pytest.raises(Exception) as got:
        eval(expr, {"lib": tessera})
    assert type(got.value) is type(want.value)
    if isinstance(want.value, RuntimeError):
        assert str(got.value) == str(want.value)


OUT_WITH_OPTIONS = [
    "lib.zeros(2, 3, out=lib.empty(0), dtype=lib.float64)",
    "lib.ones(2, out=lib.empty(0, dtype=lib.int64), dtype=lib.int32)",
    "lib.arange(3, out=lib.empty(0), dtype=lib.int16)",
]


@pytest.mark.parametrize("expr", OUT_WITH_OPTIONS)
def test_factory_out_refuses_options_that_disagree_with_out(expr):
    assert_raises_like_torch(expr)


def test_factory_out_takes_options_that_agree_and_requires_grad():
    for lib in (torch, tessera):
        out = lib.empty(0, dtype=lib.float64)
        got = lib.zeros(2, 3, out=out, dtype=lib.float64, device="cpu", requires_grad=True)
        assert got is out and tuple(out.shape) == (2, 3) and out.requires_grad
        r = lib.arange(1, 7, 2, out=lib.empty(0, dtype=lib.int64), dtype=lib.int64)
        assert r.tolist() == [1, 3, 5]
