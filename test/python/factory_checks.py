"""Helpers the factory and random tests share: the same expression through torch and
tessera, compared by value, dtype, shape and strides, or by the exception raised."""
import math
import warnings

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
