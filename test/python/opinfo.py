"""An OpInfo-like registry: one entry per operator, from which the differential tests
against torch are generated (test_ops.py): values and dtypes on every supported dtype and
on 0-dim, empty, broadcast and non-contiguous inputs, in-place and out= agreement, meta
shapes, and torch's exception class where neither library supports a dtype.

A new op is one OpInfo(...) line in the registry at the bottom (or a family file that
calls register()).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional

import torch

import tessera

ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
              "complex64", "complex128"]
FLOATING = ["float16", "bfloat16", "float32", "float64"]
REDUCED = ["float16", "bfloat16"]


def torch_dtype(name):
    return getattr(torch, name)


def tessera_dtype(name):
    return getattr(tessera, name)


# ---------------------------------------------------------------- tensors on both sides

def make_torch(shape, dtype, seed, low=-4.0, high=4.0):
    """Deterministic values in [low, high): integers for integral dtypes, bools from signs."""
    g = torch.Generator().manual_seed(seed)
    if dtype == "bool":
        return torch.rand(shape, generator=g) > 0.5
    if dtype in ("uint8",):
        return torch.randint(0, 10, shape, generator=g, dtype=torch.uint8)
    if dtype in ("int8", "int16", "int32", "int64"):
        return torch.randint(int(low) if low < 0 else 0, max(int(high), 1) + 1, shape, generator=g,
                             dtype=torch_dtype(dtype))
    if dtype.startswith("complex"):
        real = torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low
        imag = torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low
        return torch.complex(real, imag).to(torch_dtype(dtype))
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(torch_dtype(dtype))


def to_tessera(t: torch.Tensor):
    """The same values with the same sizes, strides and storage offset (views included)."""
    if t.dim() == 0:
        return tessera.tensor(t.item(), dtype=tessera_dtype(str(t.dtype).split(".")[1]))
    span = 0 if t.numel() == 0 else 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    flat = torch.as_strided(t, (span,), (1,), t.storage_offset())
    base = tessera.tensor(flat.tolist(), dtype=tessera_dtype(str(t.dtype).split(".")[1]))
    return tessera.as_strided(base, tuple(t.shape), tuple(t.stride()), 0)


def to_torch(t):
    dtype = torch_dtype(str(t.dtype).split(".")[1])
    if t.dim() == 0:
        return torch.tensor(t.item(), dtype=dtype)
    return torch.tensor(t.tolist(), dtype=dtype).reshape(tuple(t.shape))


@dataclasses.dataclass
class Layout:
    """How a sample operand is laid out: a shape plus a way to make it non-contiguous."""
    shape: tuple
    kind: str = "contiguous"   # contiguous | transposed | stepped | expanded

    def make(self, dtype, seed, low, high):
        if self.kind == "transposed":
            base = make_torch(tuple(reversed(self.shape)), dtype, seed, low, high)
            return base.permute(*reversed(range(len(self.shape))))
        if self.kind == "stepped":
            big = list(self.shape)
            big[-1] = big[-1] * 2
            return make_torch(tuple(big), dtype, seed, low, high)[..., ::2]
        if self.kind == "expanded":
            small = tuple(1 if i == 0 else s for i, s in enumerate(self.shape))
            return make_torch(small, dtype, seed, low, high).expand(*self.shape)
        return make_torch(self.shape, dtype, seed, low, high)

    def __str__(self):
        return f"{self.kind}{list(self.shape)}"


UNARY_LAYOUTS = [Layout(()), Layout((0,)), Layout((5,)), Layout((3, 4)), Layout((3, 4), "transposed"),
                 Layout((2, 6), "stepped"), Layout((3, 4), "expanded"), Layout((2, 0, 3))]
BINARY_LAYOUTS = [(Layout((3, 4)), Layout((3, 4))), (Layout((3, 4)), Layout((4,))), (Layout((4, 1)), Layout((1, 5))),
                  (Layout(()), Layout((2, 3))), (Layout((2, 3)), Layout(())), (Layout(()), Layout(())),
                  (Layout((0, 3)), Layout((3,))), (Layout((3, 4), "transposed"), Layout((3, 4))),
                  (Layout((2, 6), "stepped"), Layout((2, 6), "transposed")), (Layout((3, 4), "expanded"), Layout((4,)))]


@dataclasses.dataclass
class OpInfo:
    name: str
    # (lib, *tensors, **kwargs) -> result, written once for both libraries
    call: Callable
    arity: int = 1
    dtypes: tuple = tuple(ALL_DTYPES)
    # value range of generated inputs (for domains: log wants positives, ...)
    low: float = -4.0
    high: float = 4.0
    kwargs: tuple = ({},)
    method: Optional[str] = None        # Tensor method with the same semantics
    inplace: Optional[str] = None       # in-place method name (a_.op_(b))
    supports_out: bool = True
    # False for ops whose result is a Python value read from the data (allclose, equal).
    supports_meta: bool = True
    # Half/BFloat16 where torch 1.13 lacks them: compare with torch in float32, rounded.
    reduced_via_float: bool = True
    rtol: Optional[float] = None
    atol: Optional[float] = None
    # The output's shape depends on the input's values (unique, bincount): on meta tensors
    # the op raises NotImplementedError, as torch's data-dependent ops do.
    data_dependent: bool = False

    def layouts(self):
        if self.arity == 1:
            return [(layout,) for layout in UNARY_LAYOUTS]
        if self.arity == 2:
            return BINARY_LAYOUTS
        return [(Layout((3, 4)),) * self.arity, (Layout((3, 1)), Layout((4,)), Layout(())),
                (Layout((3, 4), "transposed"), Layout((3, 4)), Layout((3, 4), "stepped"))]

    def samples(self, dtype):
        for i, layouts in enumerate(self.layouts()):
            for kwargs in self.kwargs:
                tensors = [lay.make(dtype, seed=1000 * i + k, low=self.low, high=self.high)
                           for k, lay in enumerate(layouts)]
                yield f"{'-'.join(map(str, layouts))}{kwargs or ''}", tensors, kwargs


REGISTRY: list[OpInfo] = []


def register(*infos: OpInfo):
    REGISTRY.extend(infos)


def tolerances(info: OpInfo, dtype: str):
    default = {"float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
    rtol, atol = default.get(dtype, (0, 0))
    if dtype in getattr(info, "dtype_tolerances", {}):  # an entry's own (rtol, atol) for one dtype
        return info.dtype_tolerances[dtype]
    return info.rtol if info.rtol is not None else rtol, info.atol if info.atol is not None else atol


def assert_same(got, want, info: OpInfo, dtype: str, context: str):
    """Values, dtype and shape of a tessera result against torch's."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), context
        for g, w in zip(got, want):
            assert_same(g, w, info, dtype, context)
        return
    if not isinstance(want, torch.Tensor):
        assert got == want or (isinstance(want, float) and math.isnan(want) and math.isnan(got)), context
        return
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], f"{context}: dtype {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{context}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
    rtol, atol = tolerances(info, str(want.dtype).split(".")[1])
    torch.testing.assert_close(to_torch(got), want, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"{context}: {m}")


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "error", e


def torch_reference(info, dtype, tensors, kwargs):
    """torch's result, or for Half/BFloat16 that torch 1.13 lacks, torch's float32 result
    rounded to the dtype (current PyTorch computes these ops in float for reduced types)."""
    status, want = outcome(lambda: info.call(torch, *tensors, **kwargs))
    if status == "error" and dtype in REDUCED and info.reduced_via_float:
        status, want32 = outcome(lambda: info.call(torch, *[t.float() for t in tensors], **kwargs))
        if status == "ok":
            target = torch_dtype(dtype)

            def rounded(w):
                return w.to(target) if w.is_floating_point() else w
            if isinstance(want32, tuple):  # (values, indices), ...
                return "ok", tuple(rounded(w) for w in want32)
            return "ok", rounded(want32)
    return status, want


def same_outcome(want_status, want, got_status, got, context, same, strict=False):
    """torch's outcome (want) against tessera's (got), each ("ok", value) or ("error", exc).
    Where torch refused, tessera refuses with the same exception class, or (unless strict)
    accepts: tessera supports at least torch 1.13's dtypes and follows current torch where
    1.13 refuses. Where torch gave a result, tessera gives one and same(got, want) holds.
    Returns whether there was a result to compare."""
    if want_status == "error":
        if strict:
            assert got_status == "error", f"{context}: torch raised {want!r}, tessera gave a result"
        if got_status == "error":
            assert type(got).__name__ == type(want).__name__, f"{context}: {got!r} vs {want!r}"
        return False
    assert got_status == "ok", f"{context}: tessera raised {got!r}, torch gave a result"
    same(got, want)
    return True


def assert_raises_like_torch(expr: str, first_line_only: bool = False):
    """Evaluates expr with `lib` bound to torch, then to tessera (and `F` to each library's
    nn.functional): both must raise, with the same exception class and message (its first
    line only, if asked; a size printed in it names the library's Size class)."""
    import pytest
    import torch.nn.functional
    import tessera.nn.functional
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch, "F": torch.nn.functional})
    with pytest.raises(Exception) as got:
        eval(expr, {"lib": tessera, "F": tessera.nn.functional})
    assert got.type.__name__ == want.type.__name__
    g, w = str(got.value), str(want.value).replace("torch.Size", "tessera.Size")
    if first_line_only:
        g, w = g.split("\n")[0], w.split("\n")[0]
    assert g == w
