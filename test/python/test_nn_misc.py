"""Dropout, embedding, one_hot, pad and pixel (un)shuffle in tessera.nn.functional against
torch.nn.functional: values (dropout by its statistics and structure: the two libraries'
generators differ), grads against torch's, gradcheck, meta shapes, and torch's errors."""
import warnings

import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

F = tessera.nn.functional


def rand(shape, seed, low=-2.0, high=2.0):
    return make_torch(shape, "float64", seed, low, high)


# ---------------------------------------------------------------- dropout

@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics_and_scale(p):
    tessera.manual_seed(1)
    y = to_torch(F.dropout(tessera.ones(200000), p))
    kept = y != 0
    assert abs(kept.double().mean().item() - (1 - p)) < 0.005
    torch.testing.assert_close(y[kept], torch.full((int(kept.sum()),), 1 / (1 - p)))


def test_dropout_is_reproducible_and_its_grad_is_the_mask():
    x = rand((50, 40), 1)
    outs = []
    for _ in range(2):
        tessera.manual_seed(7)
        t = to_tessera(x).requires_grad_()
        y = F.dropout(t, 0.3)
        y.sum().backward()
        outs.append((to_torch(y), to_torch(t.grad)))
    assert outs[0][0].equal(outs[1][0])
    kept = outs[0][0] != 0
    torch.testing.assert_close(outs[0][1], kept.double() / 0.7)
    torch.testing.assert_close(outs[0][0][kept], x[kept] / 0.7)


def test_dropout_identity_cases_like_torch():
    x = to_tessera(rand((3, 4), 1))

    def same(y):  # the input itself, not a copy
        return y.data_ptr() == x.data_ptr() and to_torch(y).equal(to_torch(x))
    assert same(F.dropout(x, 0.5, training=False))
    assert same(F.dropout(x, 0.0))
    assert to_torch(F.dropout(x, 1.0)).abs().sum().item() == 0
    y = x.clone()
    assert F.dropout(y, 0.5, inplace=True) is y
    for fn in (F.alpha_dropout, F.feature_alpha_dropout):
        assert same(fn(x, 0.5))  # training=False by default, as in torch


def test_native_dropout_mask_and_backward():
    tessera.manual_seed(3)
    x = to_tessera(rand((64, 64), 2)).requires_grad_()
    out, mask = tessera.native_dropout(x, 0.25, True)
    assert mask.dtype == tessera.bool and out.grad_fn.name() == "NativeDropoutBackward0"
    m = to_torch(mask)
    torch.testing.assert_close(to_torch(out), to_torch(x.detach()) * m / 0.75)
    out.sum().backward()
    torch.testing.assert_close(to_torch(x.grad), m.double() / 0.75)
    out, mask = tessera.native_dropout(x, 0.25, False)
    assert bool(to_torch(mask).all()) and to_torch(out).equal(to_torch(x.detach()))


@pytest.mark.parametrize("name,shape", [("dropout1d", (4, 6, 50)), ("dropout1d", (6, 50)), ("dropout2d", (4, 6, 7, 8)),
                                        ("dropout3d", (2, 6, 3, 4, 5)), ("dropout3d", (6, 3, 4, 5))])
def test_channel_dropout_drops_whole_channels(name, shape):
    tessera.manual_seed(5)
    y = to_torch(getattr(F, name)(tessera.ones(*shape), 0.5))
    assert tuple(y.shape) == shape
    batched = len(shape) == {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}[name]
    planes = y.reshape(shape[0] * shape[1] if batched else shape[0], -1)
    assert bool(((planes == 0).all(1) | (planes == 2).all(1)).all())
    assert 0 < (planes[:, 0] == 0).sum() < planes.shape[0]


def test_alpha_dropout_keeps_mean_and_variance():
    tessera.manual_seed(2)
    x = tessera.randn(400000)
    y = F.alpha_dropout(x, 0.3, training=True)
    assert abs(y.mean().item()) < 0.01 and abs(y.std().item() - 1) < 0.01
    z = F.feature_alpha_dropout(tessera.randn(2000, 100, 2), 0.3, training=True)
    assert abs(z.mean().item()) < 0.02 and abs(z.std().item() - 1) < 0.02


def test_dropout2d_warns_like_torch():
    for shape in ((2, 3, 4), (2, 3)):
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            TF.dropout2d(torch.ones(shape), 0.5)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            F.dropout2d(tessera.ones(shape), 0.5)
        assert [str(w.message) for w in got] == [str(w.message) for w in want]


# ---------------------------------------------------------------- embedding

@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                {"max_norm": 1.0}, {"max_norm": 1.5, "norm_type": 1.0}])
def test_embedding_values_and_grads(kw):
    w = rand((10, 4), 1)
    idx = torch.tensor([[1, 2, 2, 9], [0, 9, 1, 1]])
    tw, sw = w.clone().requires_grad_(), to_tessera(w).requires_grad_()
    want = TF.embedding(idx, tw, **kw)
    got = F.embedding(to_tessera(idx), sw, **kw)
    torch.testing.assert_close(to_torch(got), want)
    torch.testing.assert_close(to_torch(sw.detach()), tw.detach())  # max_norm renormalises the weight in place
    upstream = rand(tuple(want.shape), 2)
    (want * upstream).sum().backward()
    (got * to_tessera(upstream)).sum().backward()
    torch.testing.assert_close(to_torch(sw.grad), tw.grad)


def test_embedding_gradcheck_and_int32_indices():
    w = to_tessera(rand((6, 3), 1)).requires_grad_()
    idx = tessera.tensor([[0, 5, 5], [2, 0, 1]], dtype=tessera.int32)
    assert tessera.autograd.gradcheck(lambda t: F.embedding(idx, t), (w,))
    assert tessera.autograd.gradgradcheck(lambda t: F.embedding(idx, t, scale_grad_by_freq=True), (w,))


# ---------------------------------------------------------------- one_hot, pad, pixel shuffle

def test_one_hot_like_torch():
    for t, n in ((torch.tensor([0, 3, 1]), -1), (torch.tensor([[0, 2], [1, 1]]), 5), (torch.tensor(2), 3)):
        assert to_torch(F.one_hot(to_tessera(t), n)).tolist() == TF.one_hot(t, n).tolist()
    assert tuple(F.one_hot(tessera.zeros(0, dtype=tessera.int64), 4).shape) == (0, 4)


PADS = [((1, 2), "constant", (2, 3, 4, 5)), ((1, 2, 0, 3), "constant", (2, 3, 4, 5)), ((-1, 2, 1, -2), "constant", (2, 3, 4, 5)),
        ((1, 1, 1, 1, 1, 1), "constant", (2, 3, 4, 5)), ((1, 2), "reflect", (2, 3, 5)), ((1, 2, 0, 3), "reflect", (2, 3, 4, 5)),
        ((2, 1), "replicate", (3, 5)), ((2, 1, 1, 3), "replicate", (2, 3, 4, 5)), ((1, 1, 2, 0, 1, 1), "replicate", (1, 2, 3, 4, 5)),
        ((1, 2, 2, 1), "circular", (2, 3, 4, 5)), ((3, 2), "circular", (2, 3, 5)), ((-1, 2), "circular", (2, 3, 5))]


@pytest.mark.parametrize("pad,mode,shape", PADS, ids=[f"{m}-{p}" for p, m, _ in PADS])
def test_pad_like_torch(pad, mode, shape):
    x = rand(shape, 1)
    tx, sx = x.clone().requires_grad_(), to_tessera(x).requires_grad_()
    want = TF.pad(tx, pad, mode=mode, **({"value": 2.5} if mode == "constant" else {}))
    got = F.pad(sx, pad, mode=mode, **({"value": 2.5} if mode == "constant" else {}))
    torch.testing.assert_close(to_torch(got), want)
    upstream = rand(tuple(want.shape), 2)
    (want * upstream).sum().backward()
    (got * to_tessera(upstream)).sum().backward()
    torch.testing.assert_close(to_torch(sx.grad), tx.grad)
    meta = F.pad(tessera.empty(shape, device="meta"), pad, mode=mode)
    assert meta.is_meta and tuple(meta.shape) == tuple(want.shape)


@pytest.mark.parametrize("shape,r", [((2, 8, 3, 3), 2), ((18, 2, 2), 3), ((2, 1, 4, 2, 2), 2)])
def test_pixel_shuffle_round_trip_like_torch(shape, r):
    x = rand(shape, 1)
    tx, sx = x.clone().requires_grad_(), to_tessera(x).requires_grad_()
    want, got = TF.pixel_shuffle(tx, r), F.pixel_shuffle(sx, r)
    torch.testing.assert_close(to_torch(got), want)
    torch.testing.assert_close(to_torch(F.pixel_unshuffle(got, r)), x)
    (want * want).sum().backward()
    (got * got).sum().backward()
    torch.testing.assert_close(to_torch(sx.grad), tx.grad)


@pytest.mark.parametrize("shape,groups", [((2, 6, 3, 3), 3), ((1, 4, 5), 2), ((2, 4, 1, 2, 2), 4), ((0, 4, 2), 2)])
def test_channel_shuffle_like_torch(shape, groups):
    x = rand(shape, 3)
    tx, sx = x.clone().requires_grad_(), to_tessera(x).requires_grad_()
    want, got = TF.channel_shuffle(tx, groups), F.channel_shuffle(sx, groups)
    torch.testing.assert_close(to_torch(got), want)
    module = tessera.nn.ChannelShuffle(groups)
    assert repr(module) == repr(torch.nn.ChannelShuffle(groups))
    torch.testing.assert_close(to_torch(module(sx)), want)
    # torch 1.13 has no derivative for it; current torch's is the inverse shuffle
    (got * got).sum().backward()
    torch.testing.assert_close(to_torch(sx.grad), TF.channel_shuffle(2 * want.detach(), shape[1] // groups))
    meta = tessera.channel_shuffle(tessera.empty(shape, device="meta"), groups)
    assert meta.is_meta and tuple(meta.shape) == shape


ERRORS = [
    "F.embedding(lib.tensor([1.0]), lib.ones(3, 2))",
    "F.embedding(lib.tensor([1]), lib.ones(3))",
    "F.embedding(lib.tensor([[1, 2]]), lib.ones(3, 2), padding_idx=5)",
    "F.one_hot(lib.tensor([1.0]))",
    "F.one_hot(lib.tensor([-1]))",
    "F.one_hot(lib.tensor([3]), 2)",
    "F.one_hot(lib.tensor([], dtype=lib.int64))",
    "F.pad(lib.ones(1, 2, 3), (3, 3), mode='reflect')",
    "F.pad(lib.ones(1, 2, 3), (1, 1, 1), mode='reflect')",
    "F.pad(lib.ones(1, 2, 3), (4, 1), mode='circular')",
    "F.pad(lib.ones(1, 2, 3), (1,), mode='constant')",
    "F.pad(lib.ones(1, 2, 3), (1, 1), mode='foo')",
    "F.pad(lib.ones(1, 2, 3), (1, 1, 1, 1, 1, 1, 1, 1), value=2)",
    "F.pad(lib.ones(2, 3, 4, 5), (1, 1), mode='reflect')",
    "F.pixel_shuffle(lib.ones(2, 3), 2)",
    "F.pixel_shuffle(lib.ones(1, 5, 2, 2), 2)",
    "F.pixel_shuffle(lib.ones(1, 4, 2, 2), 0)",
    "F.pixel_unshuffle(lib.ones(1, 1, 3, 4), 2)",
    "F.channel_shuffle(lib.ones(2, 4), 2)",
    "F.channel_shuffle(lib.ones(1, 4, 2), 0)",
    "F.channel_shuffle(lib.ones(1, 3, 2), 2)",
    "F.dropout(lib.ones(3), 1.5)",
    "F.dropout1d(lib.ones(3), 0.5)",
    "lib.feature_dropout(lib.ones(3), 0.5, True)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


# ---------------------------------------------------------------- edge cases torch decides

EDGE_CASES = [
    "F.nll_loss(lib.zeros(3, 3), lib.tensor([0, 1, 2]), weight=lib.ones(3, dtype=lib.float64))",
    "F.layer_norm(lib.zeros(2, 4), [4], weight=lib.ones(4, dtype=lib.float64))",
    "F.layer_norm(lib.zeros(2, 4), [4], bias=lib.ones(4, dtype=lib.float16))",
    "F.softshrink(lib.ones(3), -1.)",
    "F.hardtanh(lib.tensor([200, 3], dtype=lib.uint8), -1, 5)",
    "F.hardtanh(lib.tensor([0., 1., 2., 3.]), 2., 1.)",
    "F.softplus(lib.full((16,), -20.))",
    "F.softplus(lib.full((16,), 100.), threshold=1000)",
    "F.logsigmoid(lib.full((17,), 12.))",
    "F.mish(lib.full((16,), -18.))",
    "F.mish(lib.full((16,), 100.))",
    "F.avg_pool2d(lib.ones(1, 1, 4, 4), 2, None)",
    "F.avg_pool1d(lib.ones(1, 1, 4), 2, None)",
    "F.binary_cross_entropy(lib.tensor([0.5, float('nan')]), lib.tensor([1., 0.]))",
    "F.pad(lib.arange(8.).reshape(1, 2, 4), (-1, 1), mode='reflect')",
    "F.pad(lib.arange(8.).reshape(1, 2, 4), (-1, 1), mode='replicate')",
    "F.dropout(lib.full((2, 3), float('nan')), 1.0)",
    "F.batch_norm(lib.ones(4, 3).bfloat16(), lib.zeros(3), lib.ones(3), weight=lib.ones(3), bias=lib.zeros(3))",
    "(lambda rv: (F.batch_norm(lib.arange(12.).reshape(4, 3), None, rv, training=True), rv)[1])(lib.ones(3))",
    "(lambda rv: (F.instance_norm(lib.arange(24.).reshape(2, 3, 4), None, rv), rv)[1])(lib.ones(3))",
]


@pytest.mark.parametrize("expr", EDGE_CASES)
def test_edge_cases_like_torch(expr):
    def run(lib, F_):
        try:
            return "ok", eval(expr, {"lib": lib, "F": F_})
        except Exception as e:  # noqa: BLE001 - the class and message are compared
            return "error", e
    (ws, want), (gs, got) = run(torch, TF), run(tessera, F)
    assert gs == ws, f"torch: {want!r}, tessera: {got!r}"
    if ws == "error":
        assert type(got).__name__ == type(want).__name__ and str(got) == str(want)
    else:
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        torch.testing.assert_close(to_torch(got), want, equal_nan=True)


def test_circular_padding_to_an_empty_source_is_refused():
    # torch fills such a dim from uninitialised memory; tessera says why it cannot
    with pytest.raises(RuntimeError, match="empty dimension"):
        F.pad(tessera.arange(6.).reshape(1, 1, 2, 3), (0, 0, -2, 1), mode="circular")


def test_negative_pads_that_leave_nothing_are_refused():
    # torch: "input (W: 1) is too small. Calculated output W: 0" (its reflect message has a stray "2")
    for mode in ("reflect", "replicate"):
        for pad in ([-1, 0], [-2, 0], [-1, -1]):
            with pytest.raises(RuntimeError, match=r"input \(W: 1\) is too small. Calculated output W: -?\d"):
                F.pad(tessera.randn(2, 3, 1), pad, mode=mode)
            with pytest.raises(RuntimeError):
                TF.pad(torch.randn(2, 3, 1), pad, mode=mode)
        # a crop that leaves something is a crop
        assert tuple(F.pad(tessera.randn(2, 3, 4), [-1, 2], mode=mode).shape) == (2, 3, 5)


def test_backward_kernels_check_their_arguments():
    x = tessera.randn(2, 3, 8, 8)
    with pytest.raises(RuntimeError, match="grad_output"):
        tessera.ops.aten.max_pool2d_with_indices_backward(tessera.ones(1, 1, 1, 1), x, [2, 2], [2, 2], [0, 0], [1, 1],
                                                          False, tessera.zeros(1, 1, 1, 1, dtype=tessera.int64))
    with pytest.raises(RuntimeError, match="grad_output"):
        tessera.ops.aten.adaptive_max_pool2d_backward(tessera.ones(1, 1, 1, 1), x,
                                                      tessera.zeros(1, 1, 1, 1, dtype=tessera.int64))
    out, mean, rstd = tessera.native_layer_norm(x, [8], None, None, 1e-5)
    with pytest.raises(RuntimeError, match="grad_out"):
        tessera.ops.aten.native_layer_norm_backward(tessera.ones(1, 8), x, [8], mean, rstd, None, None,
                                                    [True, False, False])


def test_zero_distance_grads_are_finite_like_torch():
    grads = {}
    for lib in (torch, tessera):
        a = lib.tensor([[1., 2., 3.], [4., 5., 6.], [1., 2., 3.]], dtype=lib.float64, requires_grad=True)
        lib.cdist(a, a).sum().backward()
        z = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
        (TF if lib is torch else F).cosine_similarity(z, lib.ones(2, 3, dtype=lib.float64)).sum().backward()
        grads[lib] = (a.grad.reshape(-1).tolist(), z.grad.reshape(-1).tolist())
    assert grads[tessera][0] == pytest.approx(grads[torch][0])
    assert grads[tessera][1] == pytest.approx(grads[torch][1])


def test_meta_one_hot_needs_num_classes():
    # the class count would come from the values, which a meta tensor does not have
    with pytest.raises(RuntimeError, match="needs num_classes"):
        tessera.nn.functional.one_hot(tessera.empty(3, dtype=tessera.int64, device="meta"))
    out = tessera.nn.functional.one_hot(tessera.empty(3, dtype=tessera.int64, device="meta"), 4)
    assert out.is_meta and tuple(out.shape) == (3, 4)
