"""mean, std, the order operators and indexing of quantized tensors against torch 1.13 beyond
the registry's samples (opinfo_quantized_reduce.py): random shapes, layouts, dims and qparams
through both of mean's and std's paths (the integer fast path and the float fallback in
torch's summation order), tie-heavy data for the order operators, and torch's errors. torch
runs at one thread (its float sums split across threads on large inputs)."""
import numpy as np
import pytest
import torch

import tessera
from opinfo import assert_error_starts_like_torch

torch.set_num_threads(1)

QTYPES = ("quint8", "qint8", "qint32")


def both(fn):
    got = fn(tessera)
    torch.set_num_threads(1)
    return got, fn(torch)


def assert_same_q(got, want, context=""):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], context
    assert (got.q_scale(), got.q_zero_point()) == (want.q_scale(), want.q_zero_point()), context
    assert tuple(got.shape) == tuple(want.shape), context
    assert tuple(got.stride()) == tuple(want.stride()), context
    np.testing.assert_array_equal(np.asarray(got.int_repr().tolist()).reshape(tuple(want.shape)),
                                  want.int_repr().numpy(), err_msg=context)


def random_case(rng):
    qtype = QTYPES[rng.integers(3)]
    ndim = int(rng.integers(1, 5))
    shape = tuple(int(s) for s in rng.integers(1, 12, ndim))
    if rng.random() < 0.15:
        shape = shape[:-1] + (int(rng.integers(30, 700)),)
    scale = float(10 ** rng.uniform(-3, 0.5))
    zp = int(rng.integers(-20, 20)) + (128 if qtype == "quint8" else 0)
    if qtype == "qint32" and rng.random() < 0.3:
        scale, zp = float(10 ** rng.uniform(-7, -4)), int(rng.integers(-2**20, 2**20))
    layout = "channels_last" if ndim == 4 and rng.random() < 0.5 else None
    dims = sorted(set(int(d) for d in rng.integers(-ndim, ndim, int(rng.integers(0, ndim + 1)))),
                  key=lambda d: d % ndim)
    dims = [d for i, d in enumerate(dims) if d % ndim not in [e % ndim for e in dims[:i]]]
    return qtype, shape, scale, zp, layout, dims, bool(rng.integers(2))


def quantized(lib, values, scale, zp, qtype, layout):
    q = lib.quantize_per_tensor(lib.tensor(values), scale, zp, getattr(lib, qtype))
    return q.contiguous(memory_format=getattr(lib, layout)) if layout else q


@pytest.mark.parametrize("seed", range(4))
def test_mean_and_std_match_torch_on_random_cases(seed):
    rng = np.random.default_rng(seed)
    for case in range(120):
        qtype, shape, scale, zp, layout, dims, keepdim = random_case(rng)
        values = (rng.standard_normal(shape) * rng.uniform(0.1, 300) * scale).astype(np.float32)
        correction = [0, 1, 2, None][case % 4]
        context = f"{qtype} {shape} {layout} dims={dims} keepdim={keepdim} scale={scale} zp={zp}"

        def mean(lib):
            return quantized(lib, values, scale, zp, qtype, layout).mean(dims, keepdim=keepdim)

        def std(lib):
            return lib.std(quantized(lib, values, scale, zp, qtype, layout), dims, correction=correction,
                           keepdim=keepdim)

        assert_same_q(*both(mean), context)
        assert_same_q(*both(std), f"{context} correction={correction}")


def test_mean_of_a_conv_output_pools_as_torch():
    """The channels-last result of a quantized conv pooled over H and W (torchvision's
    quantized shufflenet): torch's float fallback in its summation order."""
    def pooled(lib):
        conv = lib.ao.nn.quantized.Conv2d(4, 24, 3)
        conv.set_weight_bias(lib.quantize_per_channel(lib.tensor(w), lib.ones(24) * 0.01, lib.zeros(24, dtype=lib.long),
                                                      0, lib.qint8), None)
        conv.scale, conv.zero_point = 0.02, 64
        y = conv(lib.quantize_per_tensor(lib.tensor(x), 0.05, 10, lib.quint8))
        return y.mean([2, 3])
    rng = np.random.default_rng(5)
    w = rng.uniform(-1, 1, (24, 4, 3, 3)).astype(np.float32)
    x = rng.uniform(-1, 5, (2, 4, 23, 19)).astype(np.float32)
    assert_same_q(*both(pooled))


def test_mean_and_std_edge_values():
    cases = [
        # 0-d; empty rows on both paths; qint32 rows whose mean rounds to 2^31 on the fast path
        (lambda lib: lib.quantize_per_tensor(lib.tensor(1.3), 0.1, 2, lib.qint8), [None, []]),
        (lambda lib: lib.quantize_per_tensor(lib.zeros(2, 0, 3), 0.1, 2, lib.qint8), [None, [1, 2], [1], [0]]),
        (lambda lib: lib._make_per_tensor_quantized_tensor(lib.full((2, 5), 2**31 - 1, dtype=lib.int32), 1.0, 0),
         [None, [1], [0]]),
        (lambda lib: lib.quantize_per_tensor(lib.linspace(-3, 3, 64).reshape(4, 16), 0.5, 1, lib.quint8),
         [None, [-1], [0, 1]]),
    ]
    for make, dim_list in cases:
        for dims in dim_list:
            for keepdim in (False, True):
                def mean(lib):
                    q = make(lib)
                    return q.mean() if dims is None else q.mean(dims, keepdim=keepdim)
                assert_same_q(*both(mean), f"mean {dims}")
                for unbiased in (False, True):
                    def std(lib):
                        q = make(lib)
                        return q.std(unbiased) if dims is None else q.std(dims, unbiased, keepdim)
                    assert_same_q(*both(std), f"std {dims} {unbiased}")


@pytest.mark.parametrize("seed", range(2))
def test_order_operators_match_torch_with_ties(seed):
    """Values and qparams as torch's; indices as torch's where torch defines the order of ties
    (stable sort, max / min take the first). topk and the unstable sort leave it to the
    algorithm (torch: libstdc++'s nth_element; tessera: the lower index first, as its dense
    topk): there the indices must pick exactly the values returned."""
    rng = np.random.default_rng(seed)
    for case in range(60):
        qtype = QTYPES[case % 3]
        shape = tuple(int(s) for s in rng.integers(1, 9, int(rng.integers(1, 4))))
        values = rng.integers(-6, 6, shape).astype(np.float32) * 0.5
        dim = int(rng.integers(-len(shape), len(shape)))
        k = int(rng.integers(0, shape[dim] + 1))

        def run(lib):
            q = lib.quantize_per_tensor(lib.tensor(values), 0.5, 3, getattr(lib, qtype))
            return [(lib.topk(q, k, dim, largest=bool(case % 2)), False),
                    (lib.sort(q, dim, descending=bool(case % 2)), False),
                    (lib.sort(q, stable=True, dim=dim, descending=bool(case % 3)), True),
                    (lib.max(q, dim), True), (lib.min(q, dim, keepdim=True), True),
                    ((q.max(), None), True), ((q.min(), None), True), ((q, None), True)]
        got, want = both(run)
        q = got[-1][0][0]
        for ((gv, gi), exact), ((wv, wi), _) in zip(got, want):
            context = f"{qtype} {shape} dim={dim} k={k}"
            assert_same_q(gv, wv, context)
            if wi is None:
                continue
            if exact:
                assert gi.tolist() == wi.tolist(), context
            else:
                ints = q.int_repr()
                picked = tessera.gather(ints, dim, gi) if gi.dim() else ints
                assert picked.tolist() == gv.int_repr().tolist(), context
                chosen = np.sort(np.asarray(gi.tolist(), dtype=np.int64).reshape(tuple(gi.shape)), axis=dim)
                assert (np.diff(chosen, axis=dim) > 0).all(), context  # no element picked twice


def test_advanced_indexing_requantizes_as_torch():
    """x[idx] goes through the dequantized floats in torch: qint32 past 2^24 loses bits."""
    def run(lib):
        q = lib._make_per_tensor_quantized_tensor(lib.tensor([16777217, 5, -16777219, 2**31 - 1], dtype=lib.int32),
                                                  1.0, 0)
        return q[lib.tensor([0, 2, 3, 1])]
    assert_same_q(*both(run))


def test_fills_quantize_the_value_as_torch():
    def run(lib):
        q = lib.quantize_per_tensor(lib.zeros(3, 4), 0.1, 5, lib.qint8)
        per_channel = lib.quantize_per_channel(lib.zeros(3, 4), lib.tensor([0.1, 0.2, 0.3]), lib.tensor([0, 1, 2]),
                                               0, lib.quint8)
        mask = lib.tensor([True, False, True, False])
        return [q.clone().fill_(0.25), q.clone().fill_(-1e9), q.clone().fill_(float("nan")),
                q.clone().masked_fill_(mask, 0.35), q.clone().masked_fill_(mask, lib.tensor(0.45)),
                per_channel.fill_(0.55)]
    got, want = both(run)
    for g, w in zip(got[:-1], want[:-1]):
        assert_same_q(g, w)
    np.testing.assert_array_equal(np.asarray(got[-1].int_repr().tolist()), want[-1].int_repr().numpy())


ERRORS = [
    ("per-channel mean", lambda lib: lib.quantize_per_channel(lib.ones(2, 3), lib.ones(2), lib.zeros(2, dtype=lib.long),
                                                              0, lib.qint8).mean(), RuntimeError),
    ("repeated dims", lambda lib: lib.quantize_per_tensor(lib.ones(2, 3), 0.1, 0, lib.qint8).mean([0, 0]),
     RuntimeError),
    ("dim out of range", lambda lib: lib.quantize_per_tensor(lib.ones(2, 3), 0.1, 0, lib.qint8).mean(2), IndexError),
    ("float dtype", lambda lib: lib.quantize_per_tensor(lib.ones(2, 3), 0.1, 0, lib.qint8).mean(dtype=lib.float),
     RuntimeError),
    ("quantized dtype off the fast path", lambda lib: lib.quantize_per_tensor(lib.ones(2, 3), 0.1, 0, lib.qint8)
     .mean(0, dtype=lib.qint8), RuntimeError),
    ("per-channel std", lambda lib: lib.quantize_per_channel(lib.ones(2, 3), lib.ones(2), lib.zeros(2, dtype=lib.long),
                                                             0, lib.qint8).std(), RuntimeError),
    ("per-channel topk", lambda lib: lib.topk(lib.quantize_per_channel(lib.ones(2, 3), lib.ones(2),
                                                                       lib.zeros(2, dtype=lib.long), 0, lib.qint8), 1),
     RuntimeError),
    ("per-channel max", lambda lib: lib.quantize_per_channel(lib.ones(2, 3), lib.ones(2), lib.zeros(2, dtype=lib.long),
                                                             0, lib.qint8).max(), RuntimeError),
    ("empty max", lambda lib: lib.quantize_per_tensor(lib.ones(0), 0.1, 0, lib.qint8).max(), IndexError),
    ("per-channel flip", lambda lib: lib.quantize_per_channel(lib.ones(2, 3), lib.ones(2),
                                                              lib.zeros(2, dtype=lib.long), 0, lib.qint8).flip(0),
     RuntimeError),
    ("per-channel index_select", lambda lib: lib.quantize_per_channel(
        lib.ones(2, 3), lib.ones(2), lib.zeros(2, dtype=lib.long), 0, lib.qint8).index_select(1, lib.tensor([0])),
     RuntimeError),
    ("per-channel unfold", lambda lib: lib.quantize_per_channel(lib.ones(2, 3), lib.ones(2),
                                                                lib.zeros(2, dtype=lib.long), 0, lib.qint8)
     .unfold(1, 2, 1), RuntimeError),
    ("fill_ of a strided view", lambda lib: lib.quantize_per_tensor(lib.ones(4, 6), 0.1, 0, lib.qint8)[:, ::2]
     .fill_(0.5), RuntimeError),
    ("fill_ with a complex value", lambda lib: lib.quantize_per_tensor(lib.ones(2), 0.1, 0, lib.qint8).fill_(1j),
     RuntimeError),
    ("float dtype and a repeated dim", lambda lib: lib.quantize_per_tensor(lib.ones(2, 3), 0.1, 0, lib.qint8)
     .mean([0, 0], dtype=lib.float), RuntimeError),
    ("per-channel sort along a bad dim", lambda lib: lib.sort(lib.quantize_per_channel(
        lib.ones(2, 3), lib.ones(2), lib.zeros(2, dtype=lib.long), 0, lib.qint8), 5), IndexError),
    ("per-channel flip of a repeated dim", lambda lib: lib.quantize_per_channel(
        lib.ones(2, 1), lib.ones(2), lib.zeros(2, dtype=lib.long), 0, lib.qint8).flip([1, 1]), RuntimeError),
    ("per-channel masked_fill_ with a 1-d value", lambda lib: lib.quantize_per_channel(
        lib.ones(2, 3), lib.ones(2), lib.zeros(2, dtype=lib.long), 0, lib.qint8).masked_fill_(
        lib.tensor([True, False, True]), lib.ones(2)), RuntimeError),
    ("masked_fill_ past float", lambda lib: lib.quantize_per_tensor(lib.ones(2), 0.1, 0, lib.qint8)
     .masked_fill_(lib.tensor([True, False]), 1e39), RuntimeError),
    ("per-channel masked_fill_", lambda lib: lib.quantize_per_channel(
        lib.ones(2, 3), lib.ones(2), lib.zeros(2, dtype=lib.long), 0, lib.qint8).masked_fill_(
        lib.tensor([True, False, True]), 0.5), RuntimeError),
]


@pytest.mark.parametrize("name,fn,exc", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, exc):
    assert_error_starts_like_torch(fn, exc)


def test_sub_byte_inputs_are_refused():
    q = tessera.quantize_per_tensor(tessera.rand(4, 6), 0.1, 0, tessera.quint4x2)
    for fn in (lambda: q.mean(), lambda: q.std(), lambda: q.max(), lambda: tessera.sort(q), lambda: q.flip(0),
               lambda: tessera.topk(q, 2), lambda: q.index_select(0, tessera.tensor([1])), lambda: q.fill_(0.5)):
        with pytest.raises(RuntimeError, match="QUInt4x2"):
            fn()


def test_mean_out_is_refused_with_a_reason():
    q = tessera.quantize_per_tensor(tessera.rand(4, 6), 0.1, 0, tessera.quint8)
    with pytest.raises(NotImplementedError, match="ignores out="):
        tessera.mean(q, 0, out=tessera.quantize_per_tensor(tessera.rand(6), 0.1, 0, tessera.quint8))


def test_topk_of_a_0_dim_tensor_is_the_dense_one():
    """torch 1.13's quantized topk of a 0-d tensor crashes (k=1) or returns uninitialised
    memory (k=0); tessera gives what torch's dense topk gives."""
    q = tessera.quantize_per_tensor(tessera.tensor(0.7), 0.1, 3, tessera.qint8)
    want = torch.topk(torch.tensor(q.int_repr().item()), 1)
    values, indices = tessera.topk(q, 1)
    assert (values.int_repr().item(), indices.item()) == (want.values.item(), want.indices.item())
    assert (values.q_scale(), values.q_zero_point()) == (0.1, 3)
    assert tessera.topk(q, 0)[0].shape == torch.topk(torch.tensor(1), 0)[0].shape
