"""scatter_reduce / index_reduce and histogram / histogramdd beyond the registry's samples:
torch's errors for bad arguments, integer means, NaN handling, the out= forms and larger
random cases against torch (values and, for the reductions, gradients)."""
import pytest
import torch

import tessera
from torch_compare import tn as as_torch, tt as as_tessera


def _both(fn):
    """fn(lib) on both libraries: the same exception class and message, or equal results."""
    outcomes = []
    for lib in (torch, tessera):
        try:
            outcomes.append(("ok", fn(lib)))
        except Exception as error:  # noqa: BLE001 (the class is what is compared)
            outcomes.append((type(error).__name__, str(error).split("\n")[0]))
    return outcomes


@pytest.mark.parametrize("call, message", [
    (lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0, 1]), L.ones(2), "foo"), "reduce argument must be either"),
    (lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0, 1]).int(), L.ones(2), "sum"), "Expected dtype int64"),
    (lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0, 1]), L.ones(2).double(), "sum"), "Expected self.dtype"),
    (lambda L: L.zeros(3).scatter_reduce(0, L.tensor([5]), L.ones(1), "amax"), "index 5 is out of bounds"),
    (lambda L: L.zeros(3, dtype=L.bool).scatter_reduce(0, L.tensor([0]), L.ones(1, dtype=L.bool), "mean"),
     "not implemented for 'Bool'"),
    (lambda L: L.zeros(3).index_reduce(0, L.tensor([0]), L.ones(1), "sum"), "Expected reduce to be one of"),
    (lambda L: L.zeros(3).index_reduce(0, L.tensor([0]), L.ones(1).double(), "prod"), "must have the same scalar"),
    (lambda L: L.zeros(3).index_reduce(0, L.tensor([0, 1]), L.ones(3), "prod"), "Number of indices (2)"),
    (lambda L: L.zeros(3).index_reduce(0, L.tensor([[0]]), L.ones(1), "prod"), "Index is supposed to be a vector"),
    (lambda L: L.zeros(3).index_reduce(0, L.tensor([3]), L.ones(1), "prod"), "index out of range in self"),
    (lambda L: L.zeros(3, dtype=L.complex64).index_reduce(0, L.tensor([0]), L.ones(1, dtype=L.complex64), "mean"),
     "not implemented for 'ComplexFloat'"),
])
def test_reduction_errors_match_torch(call, message):
    (torch_kind, torch_message), (tessera_kind, tessera_message) = _both(call)
    assert torch_kind == tessera_kind != "ok"
    assert message in torch_message and message in tessera_message


def test_integer_means_floor_like_torch():
    for lib_call in (lambda L: L.tensor([-5, 7, 2]).scatter_reduce(0, L.tensor([0, 0]), L.tensor([2, 2]), "mean"),
                     lambda L: L.tensor([-5, 7, 2]).index_reduce(0, L.tensor([0, 0, 2]), L.tensor([2, 2, 3]), "mean"),
                     lambda L: L.tensor([5, 7, 2]).scatter_reduce(0, L.tensor([1, 1]), L.tensor([2, 3]), "mean",
                                                                  include_self=False)):
        assert as_torch(lib_call(tessera)).tolist() == lib_call(torch).tolist()


def test_amax_amin_propagate_nan_like_torch():
    nan = float("nan")
    for reduce in ("amax", "amin"):
        for include_self in (True, False):
            def call(L):
                return L.tensor([1.0, nan, 3.0]).scatter_reduce(0, L.tensor([0, 0, 1, 2]), L.tensor([nan, 2.0, 5.0, 1.0]),
                                                                 reduce, include_self=include_self)
            torch.testing.assert_close(as_torch(call(tessera)), call(torch), equal_nan=True)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_random_values_and_grads(reduce, include_self):
    g = torch.Generator().manual_seed(7)
    a = torch.randn(5, 6, 4, generator=g, dtype=torch.float64)
    src = torch.randn(7, 6, 4, generator=g, dtype=torch.float64)
    index = torch.randint(0, 5, (7, 6, 4), generator=g)  # (backward needs index and src of one shape, in torch)
    results = []
    for lib, (x, s, i) in ((torch, (a, src, index)), (tessera, map(as_tessera, (a, src, index)))):
        x, s = x.clone().requires_grad_(), s.clone().requires_grad_()
        out = lib.scatter_reduce(x, 0, i, s, reduce, include_self=include_self)
        (out * out).sum().backward()
        results.append([as_torch(t.detach()) if lib is tessera else t.detach() for t in (out, x.grad, s.grad)])
    for mine, theirs in zip(results[1], results[0]):
        torch.testing.assert_close(mine, theirs)


def test_index_reduce_gradcheck_and_out():
    x = tessera.randn(4, 3, dtype=tessera.float64, requires_grad=True)
    s = tessera.randn(5, 3, dtype=tessera.float64, requires_grad=True)
    index = tessera.tensor([0, 3, 0, 1, 3])
    for reduce in ("prod", "mean", "amax", "amin"):
        assert tessera.autograd.gradcheck(lambda a, b: a.index_reduce(0, index, b, reduce, include_self=False), (x, s))
    out = tessera.empty(0)
    result = tessera.index_reduce(tessera.ones(2, 2), 1, tessera.tensor([1]), tessera.full((2, 1), 3.0), "prod",
                                  out=out)
    assert result is out and out.tolist() == [[1.0, 3.0], [1.0, 3.0]]


# ---------------------------------------------------------------- histogram, histogramdd

@pytest.mark.parametrize("call, message", [
    (lambda L: L.histogram(L.tensor([1, 2]), bins=3), "not implemented for 'Long'"),
    (lambda L: L.histogram(L.tensor([1.0, 2.0]), bins=3, range=(2.0, 1.0)), "min should not exceed max"),
    (lambda L: L.histogram(L.tensor([1.0, 2.0]), bins=3, weight=L.ones(3)), "same shape as the input"),
    (lambda L: L.histogram(L.tensor([1.0, 2.0]), bins=2, weight=L.ones(2).double()), "should have the same dtype"),
    (lambda L: L.histogram(L.tensor([float("inf"), 1.0]), bins=2), "is not finite"),
    (lambda L: L.histogram(L.ones(3), bins=L.tensor([[1.0, 0.0]])), "bins tensor should have one dimension"),
    (lambda L: L.histogram(L.ones(3), bins=L.tensor([1.0])), "bins must be > 0"),
    (lambda L: L.histogram(L.ones(3), bins=L.tensor([1.0, 2.0]).double()), "input tensor and bins tensors"),
    (lambda L: L.histogramdd(L.tensor([1.0, 1.0]), bins=[2]), "at least 2 dimensions"),
    (lambda L: L.histogramdd(L.ones(3, 2), bins=[2, 0]), "bins must be > 0"),
    (lambda L: L.histogramdd(L.ones(3, 2), bins=[2, 2], range=[0.0, 1.0]), "range should have 4 elements"),
    (lambda L: L.histogramdd(L.ones(3, 2), bins=[L.tensor([0.0, 1.0])]), "expected 2 sequences of bin edges"),
])
def test_histogram_errors_match_torch(call, message):
    (torch_kind, torch_message), (tessera_kind, tessera_message) = _both(call)
    assert torch_kind == tessera_kind != "ok"
    assert message in torch_message and message in tessera_message


def test_histogram_degenerate_ranges_and_out():
    for values, kw in (([1.0, 1.0], {"bins": 2}), ([], {"bins": 2}), ([0.0, 1.0, 2.0, 3.0, 3.0], {"bins": 3}),
                       ([0.5, 1.5], {"bins": 2, "range": (1.0, 1.0)})):
        hist, edges = tessera.histogram(tessera.tensor(values), **kw)
        want_hist, want_edges = torch.histogram(torch.tensor(values), **kw)
        torch.testing.assert_close(as_torch(hist), want_hist)
        torch.testing.assert_close(as_torch(edges), want_edges)
    hist, edges = tessera.empty(0), tessera.empty(0)
    result = tessera.histogram(tessera.tensor([0.0, 1.0, 1.0]), 2, out=(hist, edges))
    assert result.hist is hist and result.bin_edges is edges and hist.tolist() == [1.0, 2.0]


def test_histogram_skips_nan_like_numpy():
    """torch 1.13 counts a NaN into a bin when a range is given (an out-of-range check that
    NaN passes); numpy and current torch leave it out, and so does tessera."""
    import numpy as np
    values = [float("nan"), 1.0, 2.0]
    hist, _ = tessera.histogram(tessera.tensor(values), bins=2, range=(0.0, 3.0))
    assert hist.tolist() == np.histogram(values, bins=2, range=(0.0, 3.0))[0].tolist() == [1, 1]


def test_histogramdd_random_against_torch():
    g = torch.Generator().manual_seed(3)
    points = torch.randn(200, 3, generator=g, dtype=torch.float64)
    weight = torch.rand(200, generator=g, dtype=torch.float64)
    for kw in ({"bins": [3, 4, 5]}, {"bins": 6, "weight": weight, "density": True},
               {"bins": [2, 2, 2], "range": [-1.0, 1.0, 0.0, 2.0, -3.0, 0.0]}):
        want = torch.histogramdd(points, **kw)
        got = tessera.histogramdd(as_tessera(points), **{k: as_tessera(v) if isinstance(v, torch.Tensor) else v
                                                           for k, v in kw.items()})
        torch.testing.assert_close(as_torch(got.hist), want.hist)
        assert len(got.bin_edges) == len(want.bin_edges) == 3
        for mine, theirs in zip(got.bin_edges, want.bin_edges):
            torch.testing.assert_close(as_torch(mine), theirs)
    assert type(got).__name__ == "histogramdd" and got.hist is got[0]
