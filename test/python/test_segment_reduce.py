"""segment_reduce against torch 1.13: empty runs, ties in max / min, zeros in products,
initial, lengths and offsets of both index dtypes, runs along inner axes, the gradients
torch gives in those cases, and the errors. (The registry entry in opinfo_reductions.py
sweeps dtypes, Meta and gradcheck on smooth samples.)

Where tessera is stricter than 1.13 (runs outside the axis with unsafe=True, lengths or
offsets whose leading dims are not data's: torch reads past its buffers there), the test
says so and checks the error.
"""
import math

import numpy as np
import pytest
import torch

import tessera

REDUCES = ["sum", "mean", "max", "min", "prod"]


def to_tessera(t):
    if t.dtype in (torch.bfloat16, torch.float16):  # (numpy has no bfloat16)
        return tessera.from_numpy(t.detach().float().numpy().copy()).to(getattr(tessera, str(t.dtype)[6:]))
    return tessera.from_numpy(t.detach().numpy().copy())


def assert_same(ours, ref, rtol=1e-6, atol=1e-6):
    got, want = ours.detach().to(tessera.float64).numpy(), ref.detach().double().numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def both(data, reduce, index_name, index, grad=None, **kw):
    """Forward (and backward with grad) in both libraries; returns the two results."""
    ref = data.clone().requires_grad_(grad is not None)
    ours = to_tessera(data).requires_grad_(grad is not None)
    want = torch.segment_reduce(ref, reduce, **{index_name: index}, **kw)
    got = tessera.segment_reduce(ours, reduce, **{index_name: to_tessera(index)}, **kw)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert_same(got, want)
    if grad is not None:
        want.backward(grad)
        got.backward(to_tessera(grad))
        assert_same(ours.grad, ref.grad)
    return got, want


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("initial", [None, 2.0, -1.0])
def test_empty_runs_ties_and_zeros(reduce, initial):
    data = torch.tensor([1.0, 3.0, 3.0, 0.0, 2.0, 0.0, 0.0, 5.0, 4.0, -1.0])
    lengths = torch.tensor([3, 2, 0, 3, 2])
    both(data, reduce, "lengths", lengths, grad=torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), initial=initial)
    offsets = torch.tensor([0, 3, 5, 5, 8, 10])
    both(data, reduce, "offsets", offsets, grad=torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), initial=initial)


@pytest.mark.parametrize("reduce", REDUCES)
def test_runs_along_inner_axes_and_index_dtypes(reduce):
    g = torch.Generator().manual_seed(0)
    data = torch.randn(2, 3, 7, 4, generator=g, dtype=torch.float64)
    lengths = torch.tensor([[[2, 0, 5], [7, 0, 0], [1, 1, 5]], [[3, 3, 1], [0, 7, 0], [4, 2, 1]]])
    grad = torch.randn(2, 3, 3, 4, generator=g, dtype=torch.float64)
    for dtype in (torch.int64, torch.int32):
        both(data, reduce, "lengths", lengths.to(dtype), grad=grad, axis=2)
        both(data, reduce, "lengths", lengths.to(dtype), grad=grad, axis=-2)
        offsets = torch.cat([torch.zeros(2, 3, 1, dtype=torch.int64), lengths.cumsum(-1)], -1).to(dtype)
        both(data, reduce, "offsets", offsets, grad=grad, axis=2)
    # lengths along the first axis of a matrix (one run per row group), strided data
    both(data[0, :, :, 1].t(), reduce, "lengths", torch.tensor([4, 0, 3]), grad=grad[0, :, :, 0].t())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_reduced_and_single_precision(dtype):
    data = torch.tensor([0.5, 1.5, -2.0, 4.0, 0.25, 3.0], dtype=getattr(torch, dtype))
    for reduce in REDUCES:
        got, want = both(data, reduce, "lengths", torch.tensor([2, 0, 4]))
        assert str(got.dtype) == "tessera." + dtype


def test_nan_wins_max_and_min():
    data = torch.tensor([1.0, math.nan, 3.0, -1.0, 2.0])
    for reduce in REDUCES:
        both(data, reduce, "lengths", torch.tensor([3, 2]))


def test_unsafe_skips_the_length_check_only():
    data = torch.arange(6.0)
    both(data, "sum", "lengths", torch.tensor([2, 2]), unsafe=True)  # the rest of the axis is left out
    both(data, "sum", "offsets", torch.tensor([1, 2, 6]))            # offsets need not start at 0
    # tessera is stricter than 1.13 here: torch reads past data (garbage values), tessera refuses
    with pytest.raises(RuntimeError, match="past data.size"):
        tessera.segment_reduce(to_tessera(data), "sum", lengths=tessera.tensor([4, 4]), unsafe=True)
    with pytest.raises(RuntimeError, match=r"offsets must lie in \[0, data.size\(axis\)\]"):
        tessera.segment_reduce(to_tessera(data), "sum", offsets=tessera.tensor([0, 2, 9]))
    with pytest.raises(RuntimeError, match="Expected the dims of lengths before axis to be data's"):
        tessera.segment_reduce(to_tessera(data.reshape(2, 3)), "sum", lengths=tessera.tensor([[1, 2]]), axis=1)


ERRORS = [
    "lib.segment_reduce(lib.arange(6.0), 'sum', indices=lib.tensor([0, 0, 1]))",
    "lib.segment_reduce(lib.arange(6.0), 'foo', lengths=lib.tensor([6]))",
    "lib.segment_reduce(lib.arange(6.0), 'sum')",
    "lib.segment_reduce(lib.arange(6.0), 'sum', lengths=lib.tensor([2, 2]))",
    "lib.segment_reduce(lib.arange(6.0), 'sum', lengths=lib.tensor([2, -1, 5]))",
    "lib.segment_reduce(lib.arange(6.0), 'sum', lengths=lib.tensor([2, -1, 5]), unsafe=True)",
    "lib.segment_reduce(lib.arange(6.0), 'sum', lengths=lib.tensor([[2, 4]]))",
    "lib.segment_reduce(lib.arange(6.0), 'sum', lengths=lib.tensor(6))",
    "lib.segment_reduce(lib.arange(6.0).reshape(2, 3), 'sum', lengths=lib.tensor([1, 1]), axis=1)",
    "lib.segment_reduce(lib.arange(6.0), 'sum', lengths=lib.tensor([6]), axis=1)",
    "lib.segment_reduce(lib.arange(6.0), 'sum', offsets=lib.tensor([0, 4, 2, 6]))",
    "lib.segment_reduce(lib.empty(0), 'max', lengths=lib.tensor([0, 0]))",
    "lib.segment_reduce(lib.tensor(5.0), 'sum', lengths=lib.tensor([1]))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_as_torch(expr):
    # torch's checks without a message end in a request to report them; the text before it
    # is the same
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch})
    with pytest.raises(Exception) as got:
        eval(expr, {"lib": tessera})
    assert got.type.__name__ == want.type.__name__
    assert str(want.value).split("  (Could this error")[0] == str(got.value)


def test_dtype_errors():
    # (1.13 raises RuntimeError; tessera raises NotImplementedError, a RuntimeError, as current torch does)
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="\"_segment_reduce_cpu\" not implemented for 'Int'"):
            lib.segment_reduce(lib.arange(6, dtype=lib.int32), "sum", lengths=lib.tensor([6]))
        with pytest.raises(RuntimeError, match="\"_segment_reduce_lengths_cpu_kernel1\" not implemented for 'Float'"):
            lib.segment_reduce(lib.arange(6.0), "sum", lengths=lib.tensor([2.0, 4.0]))
        with pytest.raises(RuntimeError, match="\"_segment_reduce_offsets_cpu_kernel1\" not implemented for 'Float'"):
            lib.segment_reduce(lib.arange(6.0), "sum", offsets=lib.tensor([0.0, 6.0]))


def test_meta_shapes_and_no_double_backward():
    data = tessera.empty(2, 7, 3, device="meta")
    out = tessera.segment_reduce(data, "mean", lengths=tessera.empty(2, 4, dtype=tessera.int64, device="meta"), axis=1)
    assert out.shape == (2, 4, 3) and out.device.type == "meta"
    x = tessera.tensor([1.0, 2.0, 3.0], dtype=tessera.float64, requires_grad=True)
    y = tessera.segment_reduce(x, "prod", lengths=tessera.tensor([1, 2]))
    (g,) = tessera.autograd.grad(y.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="_segment_reduce_backward"):
        g.sum().backward()
    assert tessera.autograd.gradcheck(lambda t: tessera.segment_reduce(t, "prod", lengths=tessera.tensor([1, 2])), (x,))
