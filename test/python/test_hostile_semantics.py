"""Corner cases found by hostile testing, against torch 1.13: empty tensors with all-zero
strides, float32 var/std of values whose squares overflow float, clamp with a NaN bound,
logspace overflowing an integer dtype, interpolate of an empty batch to a huge size,
convolutions with zero-size kernels or bad strides, and keywords in operator schemas.
Expected values come from torch; where torch 1.13 has a bug that current torch fixed, the
test says so and follows current torch."""
import time

import numpy
import pytest
import torch
import torch.nn.functional

import tessera
import tessera.library
import tessera.nn.functional
from opinfo import assert_raises_like_torch

NAN = float("nan")


def dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def assert_matches(got, want, **tol):
    """Same shape, dtype and values (NaN equal to NaN; inf to inf of its sign)."""
    assert tuple(got.shape) == tuple(want.shape)
    assert dtype_name(got) == dtype_name(want)
    values = torch.tensor(got.reshape(-1).tolist(), dtype=want.dtype).reshape(want.shape)
    torch.testing.assert_close(values, want, equal_nan=True, **tol)


# ---- 1. empty tensors with all-zero strides never overlap themselves

def zero_stride_empty(lib, shape=(5, 0, 2)):
    """numpy gives empty arrays all-zero strides, and from_numpy keeps them."""
    t = lib.from_numpy(numpy.zeros(shape, numpy.float32))
    assert tuple(t.stride()) == (0,) * len(shape)
    return t


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "bool"])
def test_zero_stride_empty_tensor_casts(dtype):
    want = zero_stride_empty(torch).to(getattr(torch, dtype))
    assert_matches(zero_stride_empty(tessera).to(getattr(tessera, dtype)), want)
    assert_matches(zero_stride_empty(tessera).double(), zero_stride_empty(torch).double())


def test_zero_stride_empty_tensor_copy_and_in_place_ops():
    for lib in (torch, tessera):
        dst = zero_stride_empty(lib)
        assert tuple(dst.copy_(lib.ones(5, 0, 2, dtype=lib.float64)).shape) == (5, 0, 2)
        assert tuple(lib.empty(5, 0, 2).copy_(zero_stride_empty(lib)).shape) == (5, 0, 2)
    for op in ("add_(1)", "mul_(2.5)", "clamp_(0, 1)", "zero_()", "fill_(3)", "exp_()"):
        want = eval(f"t.{op}", {"t": zero_stride_empty(torch)})
        assert_matches(eval(f"t.{op}", {"t": zero_stride_empty(tessera)}), want)


def test_zero_stride_empty_tensor_backward():
    grads = {}
    for lib in (torch, tessera):
        x = zero_stride_empty(lib).requires_grad_()
        (x * 2).sum().backward()
        y = zero_stride_empty(lib).requires_grad_()
        y.double().exp().sum().backward()
        m = zero_stride_empty(lib, (0, 4)).requires_grad_()
        w = lib.ones(4, 3, requires_grad=True)
        (m @ w).sum().backward()
        grads[lib] = (x.grad, y.grad, m.grad, w.grad)
    for got, want in zip(grads[tessera], grads[torch]):
        assert_matches(got, want)


def test_zero_stride_empty_out_of_a_batched_product():
    want = torch.bmm(torch.ones(2, 0, 4), torch.ones(2, 4, 3), out=zero_stride_empty(torch, (2, 0, 3)))
    got = tessera.bmm(tessera.ones(2, 0, 4), tessera.ones(2, 4, 3), out=zero_stride_empty(tessera, (2, 0, 3)))
    assert_matches(got, want)


# ---- 2. float32 var / std beyond float's squares (|x| above ~1.8e19)

def big_inputs(lib):
    long = lib.full((1000,), 1e30)
    long[::7] = -1e30
    return [lib.tensor([1e30, 0.0, 0.0]), lib.tensor([3e38, -3e38, 0.0]), long,
            lib.linspace(-3e38, 3e38, 10001), lib.tensor([[1e30, 0.0, 2e25], [0.0, 1e25, -1e25]])]


@pytest.mark.parametrize("which", range(5))
@pytest.mark.parametrize("fn", ["var", "std", "var_mean", "std_mean"])
def test_float32_moments_of_huge_values(which, fn):
    x_t, x = big_inputs(torch)[which], big_inputs(tessera)[which]
    calls = [{}, {"unbiased": False}, {"dim": 0}, {"dim": -1, "unbiased": False, "keepdim": True}]
    for kwargs in calls:
        want, got = getattr(torch, fn)(x_t, **kwargs), getattr(tessera, fn)(x, **kwargs)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert_matches(g, w, rtol=1e-5, atol=0)


# ---- 3. clamp with a NaN bound

@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32", "float64", "bfloat16"])
def test_clamp_with_a_nan_bound(dtype):
    x_t, x = torch.arange(5).to(getattr(torch, dtype)), tessera.arange(5).to(getattr(tessera, dtype))
    # torch 1.13's clamp ignores a lone NaN number bound, a bug current torch fixed
    # (pytorch#172200): there, as in 1.13's clamp_min / clamp_max, every element is NaN.
    assert_matches(tessera.clamp(x, min=NAN), torch.clamp_min(x_t, NAN))
    assert_matches(tessera.clamp(x, max=NAN), torch.clamp_max(x_t, NAN))
    assert_matches(x.clamp(min=NAN), torch.clamp_min(x_t, NAN))
    assert_matches(tessera.clamp(x, min=NAN, max=1), torch.clamp(x_t, min=NAN, max=1))
    assert_matches(tessera.clamp(x, min=0, max=NAN), torch.clamp(x_t, min=0, max=NAN))
    assert_matches(tessera.clamp_min(x, NAN), torch.clamp_min(x_t, NAN))
    assert_matches(tessera.clamp_max(x, NAN), torch.clamp_max(x_t, NAN))


@pytest.mark.parametrize("kwargs", [{"min": NAN}, {"max": NAN}, {"min": NAN, "max": 1}, {"min": 0, "max": NAN}])
def test_clamp_in_place_with_a_nan_bound(kwargs):
    # Integers: the float result cannot be written back.
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            lib.arange(5).clamp_(**kwargs)
    # Floats: every element NaN (torch 1.13's lone-bound clamp_ ignores it; see above).
    want = torch.arange(5.0).clamp_(min=NAN, max=1)
    assert_matches(tessera.arange(5.0).clamp_(**kwargs), want)


# ---- 4. logspace into integer dtypes

@pytest.mark.parametrize("args", [
    "0, 40, 5, dtype=lib.int64", "0, 40, 5, dtype=lib.int32", "0, 10, 5, dtype=lib.int16",
    "0, 10, 5, dtype=lib.int8", "0, 10, 5, dtype=lib.uint8", "0, 3, 4, dtype=lib.int64",
    "0, 40, 5, base=2, dtype=lib.int64", "0, 70, 8, base=2, dtype=lib.int64", "0, 40, 5, base=2, dtype=lib.int32",
    "0, 7, 2, base=2, dtype=lib.int8", "-1, 2, 4, dtype=lib.uint8", "0, 2, 3, base=-2, dtype=lib.uint8",
    "1e10, 0, 2, dtype=lib.int64",
    # one step: torch fills base**start through a checked conversion
    "10, 0, 1, dtype=lib.int64", "2.5, 0, 1, dtype=lib.int32", "-1, 0, 1, dtype=lib.uint8",
    "400, 0, 1, dtype=lib.float32", "0.5, 0, 1, base=-2, dtype=lib.float32", "3, 0, 1, dtype=lib.float16",
])
def test_logspace_into_integers_like_torch(args):
    want = eval(f"lib.logspace({args})", {"lib": torch})
    got = eval(f"lib.logspace({args})", {"lib": tessera})
    assert_matches(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("args", [
    "40, 0, 1, dtype=lib.int64", "10, 0, 1, dtype=lib.int32", "5, 0, 1, dtype=lib.int16",
    "3, 0, 1, dtype=lib.uint8", "2.5, 0, 1, dtype=lib.int8", "7, 0, 1, base=2, dtype=lib.int8",
    "1, 0, 1, base=-2, dtype=lib.uint8", "0.5, 0, 1, base=-2, dtype=lib.int64", "40, 0, 1, dtype=lib.float32",
    "5, 0, 1, dtype=lib.float16", "40, 0, 1, dtype=lib.complex64", "0, 1e30, 2, dtype=lib.int64",
])
def test_logspace_overflow_errors_like_torch(args):
    assert_raises_like_torch(f"lib.logspace({args})")


# ---- 5. interpolate of an empty batch, or to an absurd size

@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("target", [{"size": (100000, 100000)}, {"scale_factor": 1e5}])
def test_interpolate_empty_batch_to_a_huge_size_is_instant(mode, target):
    kwargs = dict(target, mode=mode, **({} if mode == "nearest" else {"align_corners": False}))
    want = torch.nn.functional.interpolate(torch.empty(0, 3, 4, 4), **kwargs)
    start = time.perf_counter()
    got = tessera.nn.functional.interpolate(tessera.empty(0, 3, 4, 4), **kwargs)
    assert time.perf_counter() - start < 0.5
    assert_matches(got, want)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_interpolate_1d_empty_batch_to_a_huge_size(mode):
    want = torch.nn.functional.interpolate(torch.empty(0, 3, 4), size=10**6, mode=mode)
    start = time.perf_counter()
    got = tessera.nn.functional.interpolate(tessera.empty(0, 3, 4), size=10**6, mode=mode)
    assert time.perf_counter() - start < 0.5
    assert_matches(got, want)


def test_interpolate_empty_batch_keeps_the_autograd_graph():
    x = tessera.empty(0, 3, 4, 4, requires_grad=True)
    tessera.nn.functional.interpolate(x, size=(100, 100), mode="bilinear").sum().backward()
    x_t = torch.empty(0, 3, 4, 4, requires_grad=True)
    torch.nn.functional.interpolate(x_t, size=(100, 100), mode="bilinear").sum().backward()
    assert_matches(x.grad, x_t.grad)


@pytest.mark.parametrize("expr", [
    "F.interpolate(lib.empty(2, 0, 4, 4), size=(100000, 100000))",
    "F.interpolate(lib.empty(2, 0, 4, 4), size=(5, 5), mode='bilinear')",
    "F.interpolate(lib.empty(0, 0, 4), size=7)",
    "F.interpolate(lib.empty(2, 3, 0, 4), size=(5, 5))",
    "F.interpolate(lib.empty(0, 3, 4, 4), size=(0, 5), mode='bicubic')",
])
def test_interpolate_empty_errors_like_torch(expr):
    assert_raises_like_torch(expr)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(10**7, 10**7), (2**40, 2**40)])
def test_interpolate_to_an_absurd_size_fails_fast(mode, size):
    kwargs = {} if mode == "nearest" else {"align_corners": False}
    with pytest.raises(RuntimeError):  # torch: its allocator, or its size overflow check
        torch.nn.functional.interpolate(torch.empty(1, 3, 4, 4), size=size, mode=mode, **kwargs)
    start = time.perf_counter()
    with pytest.raises(RuntimeError):
        tessera.nn.functional.interpolate(tessera.empty(1, 3, 4, 4), size=size, mode=mode, **kwargs)
    assert time.perf_counter() - start < 0.5


# ---- 6. convolutions: zero-size kernels, bad strides, paddings and dilations

E2, X2, W2 = "lib.empty(0, 3, 5, 5)", "lib.ones(1, 3, 5, 5)", "lib.ones(4, 3, 3, 3)"


@pytest.mark.parametrize("expr", [
    # zero-size kernels: with an empty input torch 1.13 fails indexing (an IndexError)
    f"F.conv2d({E2}, lib.empty(4, 3, 0, 0))", f"F.conv2d({E2}, lib.empty(4, 3, 0, 3))",
    f"F.conv2d({E2}, lib.empty(4, 3, 0, 0), lib.ones(4))",
    "F.conv1d(lib.empty(0, 3, 5), lib.empty(4, 3, 0))", "F.conv3d(lib.empty(0, 3, 5, 5, 5), lib.empty(4, 3, 0, 0, 0))",
    f"F.conv_transpose2d({E2}, lib.empty(3, 4, 0, 0))", "F.conv_transpose1d(lib.empty(0, 3, 5), lib.empty(3, 4, 0))",
    f"F.conv2d({X2}, lib.empty(4, 3, 0, 0))", f"F.conv2d({X2}, lib.empty(4, 3, 0, 3))",
    "F.conv1d(lib.ones(1, 3, 5), lib.empty(4, 3, 0))", "F.conv3d(lib.ones(1, 3, 5, 5, 5), lib.empty(4, 3, 0, 0, 0))",
    f"F.conv_transpose2d({X2}, lib.empty(3, 4, 0, 0))", "F.conv_transpose1d(lib.ones(1, 3, 5), lib.empty(3, 4, 0))",
    # strides, paddings, groups: refused with or without elements
    *[f"F.conv2d({x}, {W2}, {kw})" for x in (E2, X2) for kw in
      ("stride=-1", "stride=0", "stride=(1, -1)", "padding=-1", "padding=(0, -2)", "groups=0", "stride=0, padding=1")],
    f"F.conv2d({E2}, {W2}, lib.ones(4), stride=-1)", f"F.conv2d({X2}, {W2}, dilation=0)",
    *[f"F.conv1d(lib.{x}(0 if e else 1, 3, 5), lib.ones(4, 3, 3), {kw})" for x, e in (("empty", 1), ("ones", 0))
      for kw in ("stride=-1", "stride=0", "padding=-1")],
    *[f"F.conv3d(lib.{x}(0 if e else 1, 3, 5, 5, 5), lib.ones(4, 3, 3, 3, 3), {kw})"
      for x, e in (("empty", 1), ("ones", 0)) for kw in ("stride=-1", "stride=0", "padding=-1")],
    *[f"F.conv_transpose2d({x}, lib.ones(3, 4, 3, 3), {kw})" for x in (E2, X2)
      for kw in ("stride=-1", "stride=0", "padding=-1", "output_padding=-1")],
    f"F.conv_transpose2d({X2}, lib.ones(3, 4, 3, 3), output_padding=2)",
])
def test_convolution_errors_like_torch(expr):
    assert_raises_like_torch(expr)


@pytest.mark.parametrize("expr", [
    "F.conv1d(lib.ones(1, 3, 5), lib.ones(4, 3, 3), dilation=0)",  # torch prints the 2-D [1, 0]
    "F.conv3d(lib.ones(1, 3, 5, 5, 5), lib.ones(4, 3, 3, 3, 3), dilation=0)",
    f"F.conv_transpose2d({X2}, lib.ones(3, 4, 3, 3), dilation=0)",
    f"F.conv2d({X2}, {W2}, dilation=-1)",
])
def test_convolution_dilation_errors_of_torchs_class(expr):
    for lib, F in ((torch, torch.nn.functional), (tessera, tessera.nn.functional)):
        with pytest.raises(RuntimeError, match="dilation should be greater than zero"):
            eval(expr, {"lib": lib, "F": F})


@pytest.mark.parametrize("expr", [
    f"F.conv2d({E2}, {W2}, dilation=0)", "F.conv1d(lib.empty(0, 3, 5), lib.ones(4, 3, 3), dilation=0)",
    f"F.conv_transpose2d({E2}, lib.ones(3, 4, 3, 3), dilation=0)",
    f"F.conv_transpose2d({E2}, lib.ones(3, 4, 3, 3), output_padding=2)",
])
def test_convolution_of_an_empty_batch_like_torch(expr):
    # Checks that torch makes only where there is work to do: an empty batch passes them.
    want = eval(expr, {"lib": torch, "F": torch.nn.functional})
    assert_matches(eval(expr, {"lib": tessera, "F": tessera.nn.functional}), want)


def test_negative_dilation_of_an_empty_batch_is_refused():
    # torch 1.13 lets it through to an output size of its formula; current torch's
    # check_shape_forward refuses a negative dilation whatever the input.
    with pytest.raises(RuntimeError, match="dilation should be greater than zero"):
        tessera.nn.functional.conv2d(tessera.empty(0, 3, 5, 5), tessera.ones(4, 3, 3, 3), dilation=-1)


# ---- 7. keywords in operator schemas

@pytest.mark.parametrize("schema", [
    "foo(in x) -> Tensor", "foo(Tensor in) -> Tensor", "foo(Tensor x) -> in", "foo(True x) -> Tensor",
    "foo(Tensor(in) x) -> Tensor", "foo.is(Tensor x) -> Tensor",
])
def test_schema_keywords_are_refused_like_torch(schema):
    with pytest.raises(RuntimeError, match="expected ident but found"):
        torch._C.parse_schema(schema)
    lib = tessera.library.Library("tessera_test_hostile", "DEF")
    try:
        with pytest.raises(RuntimeError, match="schema parse error"):
            lib.define(schema)
    finally:
        lib._destroy()


def test_schema_words_torch_does_not_reserve_still_parse():
    for schema in ("foo(blah x) -> blah", "bar(Tensor from, int lambda) -> Tensor", "baz(None x) -> None"):
        torch._C.parse_schema(schema)
        lib = tessera.library.Library("tessera_test_hostile_ok", "DEF")
        try:
            lib.define(schema)
        finally:
            lib._destroy()
