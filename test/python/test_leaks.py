"""No leaks from the Python surface: creating and dropping 100k tensors (through
factories, operators, indexing, numpy and DLPack) and 10k autograd graphs leaves the
process's resident memory flat, and tensors and their grad_fn are freed by reference
counting alone (with the cycle collector off): they form no cycle the collector would
have to find, let alone one it cannot."""
import gc
import weakref

import numpy as np

import tessera


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def _tensor_churn(n):
    base = tessera.arange(64.0)
    idx = tessera.tensor([3, 1, 2])
    for i in range(n):
        t = tessera.ones(16) + i
        u = t[idx] * 2
        t[0] = u[1]
        v = tessera.from_numpy(t.numpy())
        w = tessera.from_dlpack(v)
        del t, u, v, w
        _ = base[i % 64]


def _graph_churn(n):
    for i in range(n):
        x = tessera.ones(8, requires_grad=True)
        y = (x * 2).sin()[1:5]
        z = y.sum() + x[tessera.tensor([0, 0])].sum()
        if i % 2:
            z.backward()
        del x, y, z


def _flat_after_warmup(churn, n):
    churn(n // 10)  # warm-up: caches, allocator pools, interned objects
    gc.collect()
    before = _rss_kb()
    churn(n)
    gc.collect()
    return _rss_kb() - before


def test_100k_tensors_leave_rss_flat():
    grown = _flat_after_warmup(_tensor_churn, 100_000)
    assert grown < 8 * 1024, f"RSS grew by {grown} kB over 100k tensors"


def test_10k_graphs_leave_rss_flat():
    grown = _flat_after_warmup(_graph_churn, 10_000)
    assert grown < 8 * 1024, f"RSS grew by {grown} kB over 10k graphs"


class _Double(tessera.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_tensors_and_grad_fns_need_no_cycle_collector():
    gc.collect()
    gc.disable()
    try:
        x = tessera.ones(4, requires_grad=True)
        y = (x * 3).exp()[tessera.tensor([1, 2])]
        z = _Double.apply(y)
        a = np.ones(3)
        s = tessera.from_numpy(a)
        refs = [weakref.ref(o) for o in (x, y, z, s)]
        fn_refs = [weakref.ref(z.grad_fn), weakref.ref(y.grad_fn)]
        del x, y, z, s
        assert all(r() is None for r in refs), "a tensor outlived its last reference"
        assert all(r() is None for r in fn_refs), "a grad_fn outlived its graph"
        # the same after a backward pass that kept nothing
        x = tessera.ones(4, requires_grad=True)
        _Double.apply(x[1:] * 2).sum().backward()
        r = weakref.ref(x)
        del x
        assert r() is None
    finally:
        gc.enable()
    assert gc.collect() == 0 or not gc.garbage
