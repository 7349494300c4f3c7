"""Reductions beyond the OpInfo samples: the accuracy of large float32 sums (pairwise, so
within torch's error of the exact sum), results that do not depend on the thread count,
and the error cases torch has."""
import pytest
import torch

import tessera
from opinfo import assert_raises_like_torch


def ramp(lib, n):
    """The same float32 values in both libraries: frac(i * golden ratio), computed in float64."""
    i = lib.arange(n, dtype=lib.float64)
    return lib.remainder(i * 0.6180339887498949, 1.0).to(lib.float32)


@pytest.mark.parametrize("n", [1000, 1 << 20, 16 * (1 << 20)])
def test_float32_sum_is_as_accurate_as_torchs(n):
    exact = ramp(torch, n).double().sum().item()
    theirs = ramp(torch, n).sum().item()
    ours = ramp(tessera, n).sum().item()
    assert abs(ours - exact) <= max(abs(theirs - exact), 1e-7 * abs(exact)), (ours, theirs, exact)


def test_sum_along_each_dim_of_a_matrix():
    a_t, a = ramp(torch, 1 << 16).reshape(256, 256), ramp(tessera, 1 << 16).reshape(256, 256)
    for dim in (0, 1):
        want = a_t.double().sum(dim)
        got = torch.tensor(a.sum(dim).tolist(), dtype=torch.float64)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-5)


def test_full_reduction_does_not_depend_on_thread_count():
    x = ramp(tessera, 3_000_000)
    before = tessera.get_num_threads()
    try:
        tessera.set_num_threads(1)
        one = x.sum().item()
        tessera.set_num_threads(2)
        two = x.sum().item()
    finally:
        tessera.set_num_threads(before)
    assert one == two


@pytest.mark.parametrize("expr", [
    "lib.sum(lib.ones(2, 3), (0, 0))",
    "lib.sum(lib.ones(2, 3), 5)",
    "lib.amax(lib.ones(0, 3), 0)",
    "lib.amax(lib.ones(0, 3))",
    "lib.mean(lib.ones(2, dtype=lib.int64))",
    "lib.nansum(lib.ones(2, dtype=lib.complex64))",
    "lib.amax(lib.ones(2, dtype=lib.complex64))",
])
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


@pytest.mark.parametrize("shape,dim", [((1024, 1024), 0), ((1024, 1024), 1), ((64, 1000, 5), (0, 2)), ((64, 1000, 5), 1)])
def test_dim_reductions_split_across_threads_give_the_same_bits(shape, dim):
    n = 1
    for s in shape:
        n *= s
    x = ramp(tessera, n).reshape(*shape)
    want = x.double().sum(dim)
    before = tessera.get_num_threads()
    try:
        tessera.set_num_threads(1)
        one = x.sum(dim).tolist()
        tessera.set_num_threads(2)
        two = x.sum(dim)
    finally:
        tessera.set_num_threads(before)
    assert one == two.tolist()
    torch.testing.assert_close(torch.tensor(two.tolist(), dtype=torch.float64), torch.tensor(want.tolist(), dtype=torch.float64),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("expr", ["lib.trace(lib.ones(3))", "lib.ones(2, 2, 2).trace()", "lib.trace(lib.tensor(1.0))",
                                  "lib.trace(lib.ones(2, 2, dtype=lib.bool))",
                                  "lib.trace(lib.ones(2, 2), out=lib.empty(()))"])
def test_trace_errors_like_torch(expr):
    assert_raises_like_torch(expr)
