"""Python numbers and mixed dtypes at the ternary and Scalar-overload operators, against
torch 1.13: which overload a call reaches (and so its result dtype), which functions take a
number where a Tensor is expected, and type promotion across every pair of dtypes."""
import itertools

import pytest
import torch

import tessera
from opinfo import ALL_DTYPES, assert_same, make_torch, to_tessera, OpInfo


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "error", e


def same_outcome(expr, *tensors):
    """expr(lib, *tensors) through both libraries: equal results, or the same exception class."""
    want_status, want = outcome(lambda: expr(torch, *tensors))
    got_status, got = outcome(lambda: expr(tessera, *[to_tessera(t) for t in tensors]))
    if want_status == "ok" and isinstance(want, torch.Tensor) and want.dtype == torch.complex32:
        # Half lifted to complex: complex32 in both, compared in complex64 at half precision.
        assert got_status == "ok", repr(got)
        assert got.dtype == tessera.complex32, got.dtype
        assert_same(got.cfloat(), want.to(torch.complex64), OpInfo("expr", expr, rtol=1e-3, atol=1e-3), "complex64", "")
        return
    if want_status == "error" and got_status == "ok" and "not implemented for" in str(want):
        return  # a dtype torch 1.13 lacks a kernel for (Half, Bool): "at least torch's dtypes"
    assert got_status == want_status, f"tessera {got!r} vs torch {want!r}"
    if want_status == "error":
        assert type(got).__name__ == type(want).__name__, f"{got!r} vs {want!r}"
    else:
        info = OpInfo("expr", expr)
        assert_same(got, want, info, str(want.dtype).split(".")[1] if isinstance(want, torch.Tensor) else "", "")


PAIRS = list(itertools.product(ALL_DTYPES, ALL_DTYPES))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_where_promotes_like_torch(a, b):
    cond = make_torch((3, 4), "bool", 1)
    same_outcome(lambda lib, c, x, y: lib.where(c, x, y), cond, make_torch((3, 4), a, 2), make_torch((4,), b, 3))
    same_outcome(lambda lib, c, x, y: lib.where(c, x, y), cond, make_torch((), a, 2), make_torch((3, 4), b, 3))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_clamp_and_addcmul_promote_like_torch(a, b):
    x, y = make_torch((3, 4), a, 4), make_torch((3, 4), b, 5)
    same_outcome(lambda lib, t, lo: lib.clamp(t, min=lo), x, y)
    same_outcome(lambda lib, t, lo, hi: lib.clamp(t, lo, hi), x, y, make_torch((), a, 6))
    same_outcome(lambda lib, t, u: lib.addcmul(t, u, u), x, y)
    same_outcome(lambda lib, t, u: lib.addcdiv(t, u, u + 10), x, y)
    same_outcome(lambda lib, t, u: lib.lerp(t, u, 0.5), x, y)


def clamp_min_like_current_torch(number):
    """lib.clamp(t, min=number), where torch 1.13 ignores a lone NaN bound, a bug current torch
    fixed (pytorch#172200): its clamp_min, which propagates the NaN, is torch's answer then."""
    def expr(lib, t):
        if lib is torch and number != number:
            return torch.clamp_min(t, number)
        return lib.clamp(t, min=number)
    return expr


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("number", [2, -1, 2.5, True, 1j, 300, float("nan")])
def test_numbers_at_scalar_overloads(dtype, number):
    x = make_torch((2, 3), dtype, 7)
    for expr in (lambda lib, t: lib.add(t, number), lambda lib, t: lib.mul(number, t),
                 lambda lib, t: lib.eq(t, number), lambda lib, t: lib.pow(t, number),
                 clamp_min_like_current_torch(number), lambda lib, t: lib.where(t.to(lib.bool), number, t),
                 lambda lib, t: lib.where(t.to(lib.bool), t, number), lambda lib, t: lib.remainder(number, t)):
        same_outcome(expr, x)


def test_which_functions_take_numbers_for_tensors():
    x = torch.tensor([1.0, 2.0])
    for name in ("maximum", "atan2", "hypot", "logical_and", "fmax", "isclose"):
        same_outcome(lambda lib, t, _n=name: getattr(lib, _n)(t, 2), x)   # TypeError in both
    same_outcome(lambda lib, t: lib.fmod(7, t), x)                        # no Scalar-first fmod
    same_outcome(lambda lib, t: lib.lerp(t, 2), x)
    for name in ("add", "sub", "mul", "div", "true_divide", "floor_divide"):
        same_outcome(lambda lib, t, _n=name: getattr(lib, _n)(3, t), x)   # self may be a number
    # the ops.yaml `python_numbers:` entries, their in-place and method forms included
    for name in ("add_", "sub_", "mul_", "div_", "true_divide_", "floor_divide_", "copy_"):
        same_outcome(lambda lib, t, _n=name: getattr(t.clone(), _n)(3), x)
    same_outcome(lambda lib, t: t.clone().clamp_(3), x)                   # a Scalar overload
    same_outcome(lambda lib, t: t.clone().maximum(3), x)                  # TypeError in both


def test_a_method_returning_self_returns_the_same_object():
    for lib in (torch, tessera):
        x = lib.ones(2)
        assert x.contiguous() is x and x.to(lib.float32) is x and x.type_as(x) is x and x.float() is x
        assert x.double() is not x and x.view(2) is not x and x.t().contiguous() is not x


def test_overloads_picked_like_torch():
    i = torch.tensor([2, 3])
    same_outcome(lambda lib, t: lib.pow(t, -1), i)                 # Tensor_Scalar refuses
    same_outcome(lambda lib, t: lib.pow(t, lib.tensor(-1)), i)     # Tensor_Tensor gives 0
    same_outcome(lambda lib, t: lib.pow(-1, t), i)
    same_outcome(lambda lib, t: lib.eq(t, lib.tensor(2)), i)       # a 0-dim tensor takes the Tensor overload
    same_outcome(lambda lib, t: lib.clamp(t, min=lib.tensor(2.5)), i)
    same_outcome(lambda lib, t: lib.clamp(t, 2.5), i)
    same_outcome(lambda lib, t: lib.clamp(t), i)
    same_outcome(lambda lib, t: lib.clamp(t.to(lib.int8), -1000, 1000), i)
    same_outcome(lambda lib, t: lib.where(t.to(lib.bool), t.to(lib.int8), 300), i)


def test_where_out_dtype_follows_current_pytorch():
    c = tessera.tensor([True, False])
    a = tessera.tensor([1.0, 2.0])
    out = tessera.empty(2, dtype=tessera.float64)
    with pytest.raises(RuntimeError, match="Expected out type to be Float but got Double"):
        tessera.where(c, a, a, out=out)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_ne_inplace_on_complex_writes_one_or_zero(dtype):
    # torch 1.13 leaves stray imaginary parts here (fixed in current PyTorch): compare with
    # torch's out-of-place ne cast to the dtype.
    x = make_torch((3, 4), dtype, 8)
    want = x.ne(x[0, 0]).to(x.dtype)
    mine = to_tessera(x)
    got = mine.ne_(complex(x[0, 0].item()))
    assert got is mine
    torch.testing.assert_close(torch.tensor(mine.tolist(), dtype=want.dtype), want)



def test_where_method():
    x, y = make_torch((3, 4), "float32", 9), make_torch((4,), "float32", 10)
    cond = make_torch((3, 4), "bool", 11)
    same_outcome(lambda lib, a, b, c: a.where(c, b), x, y, cond)
