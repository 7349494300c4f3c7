"""tessera.nn layer modules against torch.nn 1.13: each layer is built in both libraries
with the same arguments, torch's weights are loaded into tessera's through state_dict,
and outputs, input grads, parameter grads, repr and state_dict keys must agree."""
import pytest
import torch

import tessera

NN = {"torch": torch.nn, "tessera": tessera.nn}


def to_t(x):
    return tessera.from_numpy(x.detach().numpy().copy())


def to_torch(x):
    return torch.from_numpy(x.detach().numpy().copy())


def norm_text(s):
    return s.replace("torch.", "tessera.")


def twin(name, *args, **kwargs):
    """The torch module (float64, seeded) and the tessera one holding the same weights."""
    torch.manual_seed(0)
    want = getattr(torch.nn, name)(*args, **kwargs).double()
    got = getattr(tessera.nn, name)(*args, **kwargs).double()
    got.load_state_dict({k: to_t(v) for k, v in want.state_dict().items()})
    return want, got


def rand(shape, seed):
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def close(got, want, tol=1e-10):
    assert tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(to_torch(got), want, rtol=tol, atol=tol)


def run_both(want, got, inputs, grad_inputs=(0,), seed=100):
    """Forward on copies of the inputs, backward of a fixed random grad of the (first) output;
    compares outputs, the grads of the float inputs and of every parameter."""
    wi = [x.clone().requires_grad_(i in grad_inputs) for i, x in enumerate(inputs)]
    gi = [to_t(x).requires_grad_(i in grad_inputs) for i, x in enumerate(inputs)]
    wout, gout = want(*wi), got(*gi)
    if isinstance(wout, tuple):
        assert isinstance(gout, tuple) and len(gout) == len(wout)
        for w, g in zip(wout[1:], gout[1:]):
            assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1]
            close(g, w)
        wout, gout = wout[0], gout[0]
    close(gout, wout)
    grad = rand(wout.shape, seed)
    wout.backward(grad)
    gout.backward(to_t(grad))
    for i in grad_inputs:
        close(gi[i].grad, wi[i].grad)
    got_params = dict(got.named_parameters())
    assert list(got_params) == [n for n, _ in want.named_parameters()]
    for name, p in want.named_parameters():
        if p.grad is None:
            assert got_params[name].grad is None, name
        else:
            close(got_params[name].grad, p.grad)


# (layer, constructor args, constructor kwargs, input shape)
CASES = [
    ("Linear", (5, 3), {}, (4, 5)),
    ("Linear", (5, 3), {"bias": False}, (2, 3, 5)),
    ("Linear", (5, 3), {}, (5,)),
    ("Identity", (3, 4), {"unused": 1}, (2, 3)),
    ("Conv1d", (4, 6, 3), {}, (2, 4, 9)),
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2, "padding_mode": "circular"}, (2, 4, 9)),
    ("Conv1d", (4, 6, 4), {"padding": "same", "dilation": 2, "padding_mode": "reflect", "bias": False}, (2, 4, 11)),
    ("Conv1d", (4, 2, 3), {"padding": "valid"}, (4, 8)),
    ("Conv2d", (3, 4, 3), {}, (2, 3, 6, 7)),
    ("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2}, (2, 4, 7, 8)),
    ("Conv2d", (3, 4, 3), {"padding": "same", "padding_mode": "replicate"}, (2, 3, 5, 6)),
    ("Conv2d", (3, 4, 4), {"padding": "same", "padding_mode": "zeros"}, (2, 3, 5, 6)),
    ("Conv2d", (2, 4, 3), {"padding": 1, "padding_mode": "circular", "bias": False}, (2, 2, 5, 5)),
    ("Conv2d", (2, 4, 3), {"padding": (2, 1), "padding_mode": "reflect"}, (2, 5, 5)),
    ("Conv3d", (2, 4, 2), {"padding": 1, "padding_mode": "replicate"}, (1, 2, 4, 4, 3)),
    ("Conv3d", (2, 2, (1, 2, 3)), {"stride": 2, "groups": 2}, (2, 2, 4, 5, 6)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (2, 4, 5)),
    ("ConvTranspose1d", (4, 2, 3), {"bias": False, "dilation": 2}, (4, 5)),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "groups": 2, "dilation": 2}, (2, 4, 5, 5)),
    ("ConvTranspose2d", (3, 2, (2, 3)), {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2)},
     (2, 3, 4, 3)),
    ("MaxPool1d", (3,), {"dilation": 2}, (2, 3, 9)),
    ("MaxPool1d", (2,), {"stride": 1, "padding": 1, "return_indices": True}, (2, 3, 6)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "return_indices": True, "ceil_mode": True}, (2, 3, 7, 7)),
    ("MaxPool2d", ((2, 3),), {"stride": (1, 2)}, (2, 2, 5, 7)),
    ("AvgPool1d", (3,), {"padding": 1, "count_include_pad": False}, (2, 3, 9)),
    ("AvgPool1d", (2,), {"stride": 1, "ceil_mode": True}, (2, 3, 9)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "divisor_override": 4}, (2, 3, 9, 8)),
    ("AvgPool2d", ((2, 3),), {"ceil_mode": True, "count_include_pad": False, "padding": 1}, (2, 3, 7, 8)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 9, 8)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 4)),
    ("AdaptiveMaxPool1d", (4,), {"return_indices": True}, (2, 3, 9)),
    ("AdaptiveMaxPool2d", ((3, 4),), {}, (2, 3, 9, 8)),
    ("AdaptiveMaxPool2d", (2,), {"return_indices": True}, (2, 3, 5, 7)),
    ("LayerNorm", ((5, 5),), {}, (4, 3, 5, 5)),
    ("LayerNorm", (6,), {"eps": 1e-3, "elementwise_affine": False}, (4, 6)),
    ("GroupNorm", (2, 4), {}, (4, 4, 5, 5)),
    ("GroupNorm", (3, 6), {"affine": False, "eps": 1e-4}, (2, 6, 7)),
    ("InstanceNorm1d", (3,), {"affine": True}, (4, 3, 5)),
    ("InstanceNorm2d", (3,), {}, (3, 5, 5)),
    ("InstanceNorm3d", (2,), {"affine": True}, (2, 2, 3, 4, 3)),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear", "align_corners": False}, (1, 2, 3, 3)),
    ("Upsample", (), {"size": (5, 7), "mode": "nearest"}, (1, 2, 3, 3)),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "linear", "align_corners": True}, (1, 2, 4)),
    ("Upsample", (), {"scale_factor": (2, 3), "mode": "bicubic"}, (1, 1, 3, 3)),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, (1, 2, 3, 3)),
    ("UpsamplingBilinear2d", (), {"size": (5, 4)}, (1, 2, 3, 3)),
    ("Flatten", (), {}, (2, 3, 4)),
    ("Flatten", (), {"start_dim": 0, "end_dim": 1}, (2, 3, 4)),
    ("Unflatten", (1, (2, 2)), {}, (3, 4, 5)),
    ("Unflatten", (-1, [5, 1]), {}, (3, 4, 5)),
    ("PixelShuffle", (2,), {}, (1, 8, 3, 3)),
    ("PixelUnshuffle", (2,), {}, (1, 2, 4, 4)),
    ("ConstantPad1d", ((1, 2), 3.5), {}, (2, 3, 4)),
    ("ConstantPad2d", (2, -1.0), {}, (1, 2, 3, 3)),
    ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), 0.5), {}, (1, 2, 3, 3, 2)),
    ("ZeroPad2d", ((1, 2, 0, 1),), {}, (1, 2, 3, 3)),
    ("ReflectionPad1d", (2,), {}, (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 1),), {}, (1, 2, 3, 3)),
    ("ReflectionPad3d", (1,), {}, (1, 2, 3, 3, 2)),
    ("ReplicationPad1d", ((2, 0),), {}, (1, 2, 3)),
    ("ReplicationPad2d", (2,), {}, (2, 3, 3)),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),), {}, (1, 2, 3, 3, 2)),
    ("Dropout", (0.3,), {}, (4, 5)),
    ("Dropout1d", (), {}, (2, 3, 4)),
    ("Dropout2d", (0.2,), {"inplace": True}, (2, 3, 4, 4)),
    ("Dropout3d", (), {}, (2, 3, 2, 2, 2)),
    ("AlphaDropout", (0.1,), {}, (4, 5)),
    ("FeatureAlphaDropout", (0.1,), {}, (2, 3, 4, 4)),
]


def case_id(case):
    name, args, kwargs, _ = case
    return name + "-" + "-".join(map(str, args)) + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_layer_matches_torch(case):
    name, args, kwargs, shape = case
    want, got = twin(name, *args, **kwargs)
    if "Dropout" in name:   # random in training: eval (identity) is what compares
        want.eval()
        got.eval()
    assert norm_text(repr(got)) == norm_text(repr(want))
    assert list(got.state_dict()) == list(want.state_dict())
    for (gn, gp), (wn, wp) in zip(got.named_parameters(), want.named_parameters()):
        assert gn == wn and tuple(gp.shape) == tuple(wp.shape)
        assert type(gp) is tessera.nn.Parameter and gp.requires_grad
    x = rand(shape, 1)
    if kwargs.get("inplace"):
        x = x * 1   # a non-leaf, so the in-place layer may write into it
    run_both(want, got, [x])


def test_bilinear():
    for kwargs in ({}, {"bias": False}):
        want, got = twin("Bilinear", 4, 3, 5, **kwargs)
        assert norm_text(repr(got)) == norm_text(repr(want))
        run_both(want, got, [rand((2, 6, 4), 1), rand((2, 6, 3), 2)], grad_inputs=(0, 1))
    want, got = twin("Bilinear", 4, 3, 5)
    for a, b in [((2, 4), (3, 3)), ((2, 4), (2, 3, 1)), ((2, 5), (2, 3)), ((2, 4), (2, 5))]:
        with pytest.raises(RuntimeError) as w:
            want(rand(a, 1), rand(b, 2))
        with pytest.raises(RuntimeError) as g:
            got(to_t(rand(a, 1)), to_t(rand(b, 2)))
        assert str(g.value) == str(w.value)


def test_conv_transpose_output_size():
    want, got = twin("ConvTranspose2d", 3, 2, 3, stride=2, padding=1)
    x = rand((2, 3, 4, 5), 1)
    for size in ([8, 10], [2, 2, 7, 9], (7, 10)):
        close(got(to_t(x), output_size=size), want(x, output_size=size))
    want1, got1 = twin("ConvTranspose1d", 3, 2, 3, stride=3)
    x1 = rand((3, 4), 2)
    close(got1(to_t(x1), output_size=[13]), want1(x1, output_size=[13]))
    for bad in ([11, 10], [8]):
        with pytest.raises(ValueError) as w:
            want(x, output_size=bad)
        with pytest.raises(ValueError) as g:
            got(to_t(x), output_size=bad)
        assert norm_text(str(g.value)) == norm_text(str(w.value))


def test_embedding():
    idx = torch.tensor([[0, 2, 4], [4, 3, 1]])
    for kwargs in ({}, {"padding_idx": 1}, {"padding_idx": -2, "scale_grad_by_freq": True},
                   {"max_norm": 1.0, "norm_type": 1.5}):
        want, got = twin("Embedding", 6, 3, **kwargs)
        assert norm_text(repr(got)) == norm_text(repr(want))
        assert got.padding_idx == want.padding_idx
        wout, gout = want(idx), got(to_t(idx))
        close(gout, wout)
        g = rand(wout.shape, 3)
        wout.backward(g)
        gout.backward(to_t(g))
        close(got.weight.grad, want.weight.grad)
        close(got.weight, want.weight.detach())   # max_norm renormalises rows in place
    # a fresh padding row is zero and stays out of the grad
    emb = tessera.nn.Embedding(5, 2, padding_idx=3)
    assert emb.weight[3].abs().sum().item() == 0


def test_embedding_from_pretrained():
    w = rand((4, 3), 1)
    for freeze in (True, False):
        want = torch.nn.Embedding.from_pretrained(w, freeze=freeze, padding_idx=2)
        wt = to_t(w)
        got = tessera.nn.Embedding.from_pretrained(wt, freeze=freeze, padding_idx=2)
        assert got.weight.requires_grad == want.weight.requires_grad == (not freeze)
        assert norm_text(repr(got)) == norm_text(repr(want))
        close(got(to_t(torch.tensor([2, 0, 3]))), want(torch.tensor([2, 0, 3])))
    bag_w = torch.nn.EmbeddingBag.from_pretrained(w, mode="sum", freeze=False)
    bag_g = tessera.nn.EmbeddingBag.from_pretrained(to_t(w), mode="sum", freeze=False)
    assert bag_g.weight.requires_grad and norm_text(repr(bag_g)) == norm_text(repr(bag_w))
    with pytest.raises(AssertionError, match="2-dimensional"):
        tessera.nn.Embedding.from_pretrained(to_t(rand((4,), 1)))


@pytest.mark.parametrize("kwargs", [{}, {"mode": "sum"}, {"mode": "max"}, {"mode": "sum", "padding_idx": 2},
                                    {"mode": "mean", "include_last_offset": True}, {"max_norm": 1.0}])
def test_embedding_bag(kwargs):
    want, got = twin("EmbeddingBag", 7, 3, **kwargs)
    assert norm_text(repr(got)) == norm_text(repr(want))
    flat = torch.tensor([1, 2, 4, 5, 4, 3, 2, 6])
    offsets = torch.tensor([0, 2, 5, 8] if kwargs.get("include_last_offset") else [0, 2, 5])
    # (torch 1.13 divides the one bag of a 2-D input with include_last_offset by the
    # whole input's length; tessera by the bag's, so that form is left out there)
    forms = [[flat, offsets]] + ([] if kwargs.get("include_last_offset") else [[flat.reshape(2, 4)]])
    for args in forms:
        wout = want(*args)
        gout = got(*[to_t(a) for a in args])
        close(gout, wout)
        g = rand(wout.shape, 4)
        want.weight.grad = None
        got.weight.grad = None
        wout.backward(g)
        gout.backward(to_t(g))
        close(got.weight.grad, want.weight.grad)
        close(got.weight, want.weight.detach())


def test_embedding_bag_per_sample_weights():
    want, got = twin("EmbeddingBag", 7, 3, mode="sum")
    flat, offsets = torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 2, 3])
    psw = rand((6,), 2)
    pw, pg = psw.clone().requires_grad_(), to_t(psw).requires_grad_()
    wout, gout = want(flat, offsets, per_sample_weights=pw), got(to_t(flat), to_t(offsets), per_sample_weights=pg)
    close(gout, wout)
    g = rand(wout.shape, 5)
    wout.backward(g)
    gout.backward(to_t(g))
    close(pg.grad, pw.grad)
    close(got.weight.grad, want.weight.grad)


def test_conv_unbatched_and_float32():
    torch.manual_seed(0)
    want = torch.nn.Conv2d(2, 3, 3, padding=1)
    got = tessera.nn.Conv2d(2, 3, 3, padding=1)
    got.load_state_dict({k: to_t(v) for k, v in want.state_dict().items()})
    assert got.weight.dtype == tessera.float32
    x = rand((2, 5, 5), 1).float()
    close(got(to_t(x)), want(x).detach(), tol=1e-5)


def test_dropout_respects_training():
    tessera.manual_seed(3)
    for name, p, shape in (("Dropout", 0.3, (20, 30)), ("Dropout1d", 0.5, (20, 30, 2)),
                           ("Dropout2d", 0.4, (20, 30, 2, 2)), ("Dropout3d", 0.4, (20, 30, 1, 2, 2)),
                           ("AlphaDropout", 0.2, (20, 30)), ("FeatureAlphaDropout", 0.2, (20, 30, 2, 2))):
        x = tessera.ones(*shape)
        layer = getattr(tessera.nn, name)(p)
        layer.eval()
        assert layer(x).eq(x).all().item(), name
        layer.train()
        assert not layer(x).eq(x).all().item(), name
    x = tessera.ones(200, 50)
    # element-wise dropout: kept values scaled by 1/(1-p), fraction dropped near p
    y = tessera.nn.Dropout(0.3)(x)
    kept = y.ne(0)
    assert abs(1 - kept.double().mean().item() - 0.3) < 0.02
    assert (y[kept] - 1 / 0.7).abs().max().item() < 1e-6
    # channel dropout zeroes whole channels of [N, C, L]
    y = tessera.nn.Dropout1d(0.5)(tessera.ones(8, 16, 10))
    per_channel = y.ne(0).sum(-1)
    assert per_channel.eq(0).logical_or(per_channel.eq(10)).all().item()
    # p=0 keeps everything, p=1 drops everything
    assert tessera.nn.Dropout(0.0)(x).eq(x).all().item()
    assert tessera.nn.Dropout(1.0)(x).eq(0).all().item()
    # inplace writes into its input
    z = tessera.ones(10, 10) * 1
    out = tessera.nn.Dropout(0.5, inplace=True)(z)
    assert out.data_ptr() == z.data_ptr()


def test_padding_additions_of_current_torch():
    # ZeroPad1d/3d and CircularPad*d arrived after 1.13: compared with F.pad in torch.
    x = rand((2, 3, 4, 5), 1)
    close(tessera.nn.ZeroPad1d((1, 2))(to_t(x)), torch.nn.functional.pad(x, (1, 2)))
    close(tessera.nn.ZeroPad3d(1)(to_t(x)), torch.nn.functional.pad(x, (1,) * 6))
    close(tessera.nn.CircularPad2d((1, 2, 2, 0))(to_t(x)), torch.nn.functional.pad(x, (1, 2, 2, 0), mode="circular"))
    close(tessera.nn.CircularPad1d(2)(to_t(x[0])), torch.nn.functional.pad(x[0], (2, 2), mode="circular"))
    assert repr(tessera.nn.ZeroPad1d(2)) == "ZeroPad1d((2, 2))"
    assert repr(tessera.nn.CircularPad3d(1)) == "CircularPad3d((1, 1, 1, 1, 1, 1))"
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        tessera.nn.CircularPad2d(1)(to_t(x[0, 0]))
    assert isinstance(tessera.nn.ZeroPad2d(1), tessera.nn.ConstantPad2d)
