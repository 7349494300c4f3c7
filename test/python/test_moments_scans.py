"""Variance, norms, scans and softmax beyond the OpInfo samples: numerical stability
(large offsets, large logits, infinities and NaNs), accuracy of long float32 scans and
variances against float64, results that do not depend on the thread count, lines across
memory, and torch's errors."""
import math

import pytest
import torch

import tessera
from opinfo import assert_raises_like_torch


def ramp(lib, n, scale=1.0, offset=0.0):
    """The same float32 values in both libraries: offset + scale * frac(i * golden ratio)."""
    i = lib.arange(n, dtype=lib.float64)
    return (lib.remainder(i * 0.6180339887498949, 1.0) * scale + offset).to(lib.float32)


def as_torch(t):
    return torch.tensor(t.tolist(), dtype=getattr(torch, str(t.dtype).split(".")[1]))


def with_threads(n, fn):
    before = tessera.get_num_threads()
    try:
        tessera.set_num_threads(n)
        return fn()
    finally:
        tessera.set_num_threads(before)


# ---- variance

@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_float32_variance_is_as_accurate_as_torchs(offset):
    n = 1 << 22
    exact = ramp(torch, n, offset=offset).double().var().item()
    theirs = ramp(torch, n, offset=offset).var().item()
    ours = ramp(tessera, n, offset=offset).var().item()
    assert abs(ours - exact) <= max(abs(theirs - exact), 1e-6 * exact), (ours, theirs, exact)


def test_variance_does_not_depend_on_thread_count():
    x = ramp(tessera, 3_000_000, offset=3.0)
    assert with_threads(1, lambda: x.var().item()) == with_threads(2, lambda: x.var().item())


@pytest.mark.parametrize("dim", [0, 1, (0, 1), (0, 2), 2])
def test_var_mean_along_dims_of_a_large_tensor(dim):
    t = ramp(torch, 64 * 300 * 5, scale=10.0).reshape(64, 300, 5)
    a = ramp(tessera, 64 * 300 * 5, scale=10.0).reshape(64, 300, 5)
    want_var, want_mean = torch.var_mean(t.double(), dim=dim, correction=0)
    got_var, got_mean = tessera.var_mean(a, dim=dim, correction=0)
    torch.testing.assert_close(as_torch(got_var).double(), want_var, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(as_torch(got_mean).double(), want_mean, rtol=1e-5, atol=1e-5)


def test_std_mean_of_complex_and_half():
    z = torch.tensor([1 + 2j, 3 - 1j, -2 + 0.5j])
    for lib, x in ((torch, z), (tessera, tessera.tensor([1 + 2j, 3 - 1j, -2 + 0.5j]))):
        s, m = lib.std_mean(x)
        if lib is torch:
            want = (s.item(), m.item())
        else:
            assert str(s.dtype) == "tessera.float32" and str(m.dtype) == "tessera.complex64"
            assert s.item() == pytest.approx(want[0]) and m.item() == pytest.approx(want[1])
    h = tessera.tensor([1.0, 2.0, 4.0], dtype=tessera.float16)
    assert str(tessera.var(h).dtype) == "tessera.float16"
    assert tessera.var(h).item() == pytest.approx(torch.tensor([1.0, 2.0, 4.0]).var().item(), rel=1e-3)


def test_nanmean_skips_nans():
    rows = [[1.0, float("nan"), 3.0], [float("nan")] * 3]
    torch.testing.assert_close(as_torch(tessera.nanmean(tessera.tensor(rows), 1)),
                               torch.nanmean(torch.tensor(rows), 1), equal_nan=True)
    assert tessera.nanmean(tessera.tensor(rows)).item() == pytest.approx(2.0)


def test_aminmax_keepdim_along_a_dim():
    t = ramp(torch, 12).reshape(3, 4)
    a = ramp(tessera, 12).reshape(3, 4)
    for dim in (0, 1, -1):
        lo, hi = tessera.aminmax(a, dim=dim, keepdim=True)
        want = torch.aminmax(t, dim=dim, keepdim=True)
        assert torch.equal(as_torch(lo), want.min) and torch.equal(as_torch(hi), want.max)


@pytest.mark.parametrize("expr", ["lib.aminmax(x, dim=0, out=o)", "lib.cummax(x, 0, out=o)", "lib.cummin(x, 1, out=o)",
                                  "lib.max(x, 0, out=o)", "lib.min(x, 1, True, out=o)"])
def test_two_output_out_forms_from_python(expr):
    t = ramp(torch, 12).reshape(3, 4)
    x = tessera.tensor(t.tolist())
    long_ = "aminmax" not in expr
    o_t = (torch.empty(0), torch.empty(0, dtype=torch.long if long_ else torch.float32))
    o = (tessera.empty(0), tessera.empty(0, dtype=tessera.int64 if long_ else tessera.float32))
    want = eval(expr, {"lib": torch, "x": t, "o": o_t})
    got = eval(expr, {"lib": tessera, "x": x, "o": o})
    assert got[0] is o[0] and got[1] is o[1]  # the out tensors themselves come back
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


def test_two_output_out_forms_through_the_dispatcher():
    a = tessera.tensor([[3.0, 1.0], [2.0, 5.0]])
    lo, hi = tessera.empty(0), tessera.empty(0)
    got = tessera.ops.aten.aminmax.out(a, dim=1, min=lo, max=hi)
    assert [g.tolist() for g in got] == [[1.0, 2.0], [3.0, 5.0]]
    assert lo.tolist() == [1.0, 2.0] and hi.tolist() == [3.0, 5.0]


# ---- norms and logsumexp

def test_vector_norm_orders_against_torch():
    t = ramp(torch, 1000, scale=4.0, offset=-2.0)
    a = ramp(tessera, 1000, scale=4.0, offset=-2.0)
    for ord in (0, 1, 2, 3, 0.5, -0.5, -1, -2, math.inf, -math.inf):
        assert tessera.linalg.vector_norm(a, ord).item() == pytest.approx(torch.linalg.vector_norm(t, ord).item(),
                                                                          rel=1e-5), ord


def test_logsumexp_is_stable():
    rows = [[1000.0, 1000.0], [-1000.0, -1000.0], [float("-inf"), float("-inf")], [float("inf"), 1.0],
            [float("nan"), 1.0]]
    torch.testing.assert_close(as_torch(tessera.logsumexp(tessera.tensor(rows), 1)),
                               torch.logsumexp(torch.tensor(rows), 1), equal_nan=True)
    # Current PyTorch reduces every dim for dim=() (1.13 raised); compare with the flat form.
    x = [[1.0, 2.0], [3.0, 4.0]]
    assert tessera.logsumexp(tessera.tensor(x), ()).item() == pytest.approx(
        torch.logsumexp(torch.tensor(x).flatten(), 0).item())


# ---- scans

def test_float32_cumsum_of_16m_matches_torch():
    n = 16 * (1 << 20)
    t, a = ramp(torch, n), ramp(tessera, n)
    want = torch.cumsum(t, 0)
    got = tessera.cumsum(a, 0)
    # Both accumulate in double: the last elements agree to float32 rounding.
    for i in (0, 1000, n // 2 + 12345, n - 1):
        assert got.narrow(0, i, 1).item() == pytest.approx(want[i].item(), rel=1e-6), i


def test_long_scan_does_not_depend_on_thread_count():
    a = ramp(tessera, 1_000_000)
    one = with_threads(1, lambda: tessera.cumsum(a, 0).narrow(0, 999_999, 1).item())
    two = with_threads(2, lambda: tessera.cumsum(a, 0).narrow(0, 999_999, 1).item())
    assert one == two


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_scans_across_memory(dim):
    t = ramp(torch, 7 * 300 * 5, scale=2.0, offset=-1.0).reshape(7, 300, 5)
    a = ramp(tessera, 7 * 300 * 5, scale=2.0, offset=-1.0).reshape(7, 300, 5)
    for name in ("cumsum", "logcumsumexp"):
        torch.testing.assert_close(as_torch(getattr(tessera, name)(a, dim)), getattr(torch, name)(t, dim),
                                   rtol=1e-5, atol=1e-5)
    v, i = tessera.cummax(a, dim)
    want = torch.cummax(t, dim)
    assert torch.equal(as_torch(v), want.values) and torch.equal(as_torch(i), want.indices)


def test_cummax_cummin_nans_and_ties():
    x = [1.0, float("nan"), 3.0, float("nan"), 2.0, 2.0]
    for name in ("cummax", "cummin"):
        v, i = getattr(tessera, name)(tessera.tensor(x), 0)
        want = getattr(torch, name)(torch.tensor(x), 0)
        torch.testing.assert_close(as_torch(v), want.values, equal_nan=True)
        assert i.tolist() == want.indices.tolist(), name
    ties = [1, 1, 0, 1, 2, 2]
    for name in ("cummax", "cummin"):
        assert getattr(tessera, name)(tessera.tensor(ties), 0)[1].tolist() == \
            getattr(torch, name)(torch.tensor(ties), 0).indices.tolist()


def test_logcumsumexp_special_values():
    x = [float("-inf"), float("inf"), 1.0, float("nan"), 2.0]
    torch.testing.assert_close(as_torch(tessera.logcumsumexp(tessera.tensor(x), 0)),
                               torch.logcumsumexp(torch.tensor(x), 0), equal_nan=True)
    y = [-1000.0, -1000.0, 1000.0, 1000.0]
    torch.testing.assert_close(as_torch(tessera.logcumsumexp(tessera.tensor(y), 0)),
                               torch.logcumsumexp(torch.tensor(y), 0))


# ---- softmax

@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((4, 1000), -1), ((1000, 4), 0), ((3, 37, 5), 1), ((2, 8), -1)])
def test_softmax_large_and_special_logits(log, shape, dim):
    n = math.prod(shape)
    t = ramp(torch, n, scale=2000.0, offset=-1000.0).reshape(shape)
    t[0].view(-1)[:3] = torch.tensor([float("inf"), float("-inf"), float("nan")])
    if shape[0] > 1:
        t[1] = float("-inf")
    a = tessera.tensor(t.tolist())
    name = "log_softmax" if log else "softmax"
    torch.testing.assert_close(as_torch(getattr(tessera, name)(a, dim)), getattr(torch, name)(t, dim),
                               equal_nan=True, rtol=1e-5, atol=1e-6)


def test_softmax_of_reduced_types_is_computed_in_float():
    # Current PyTorch computes Half/BFloat16 softmax in float on CPU (1.13 had no kernel).
    t = ramp(torch, 64, scale=8.0).reshape(4, 16)
    want = torch.softmax(t, 1)
    for dt in ("float16", "bfloat16"):
        got = tessera.softmax(tessera.tensor(t.tolist()).to(getattr(tessera, dt)), 1)
        assert str(got.dtype) == f"tessera.{dt}"
        torch.testing.assert_close(as_torch(got.float()), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("expr", [
    "lib.var(lib.ones(2, dtype=lib.int64))",
    "lib.std(lib.ones(2, 3), dim=5)",
    "lib.var(lib.ones(2, 3), dim=(1, 1))",
    "lib.nanmean(lib.ones(2, dtype=lib.int64))",
    "lib.linalg.vector_norm(lib.ones(2, dtype=lib.int64))",
    "lib.linalg.vector_norm(lib.ones(0), float('inf'))",
    "lib.linalg.vector_norm(lib.ones(2), dtype=lib.int64)",
    "lib.linalg.vector_norm(lib.ones(2, dtype=lib.float64), dtype=lib.float32)",
    "lib.linalg.vector_norm(lib.ones(2, dtype=lib.complex64), dtype=lib.float32)",
    "lib.linalg.vector_norm(lib.ones(2), dtype=lib.complex64)",
    "lib.norm(lib.ones(2, dtype=lib.int64))",
    "lib.logsumexp(lib.ones(2, dtype=lib.complex64), 0)",
    "lib.aminmax(lib.ones(0))",
    "lib.aminmax(lib.ones(0, 2), dim=0)",
    "lib.aminmax(lib.ones(2, dtype=lib.complex64))",
    "lib.cumsum(lib.ones(2), 1)",
    "lib.cumsum(lib.ones(2, dtype=lib.bool), 0, dtype=lib.bool)",
    "lib.cummax(lib.ones(2, dtype=lib.complex64), 0)",
    "lib.logcumsumexp(lib.ones(2, dtype=lib.int64), 0)",
    "lib.softmax(lib.ones(2, dtype=lib.int64), 0)",
    "lib.log_softmax(lib.ones(2, dtype=lib.complex64), 0)",
    "lib._softmax(lib.ones(2), 0, True)",
    "lib.softmax(lib.ones(()), 1)",
])
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)
