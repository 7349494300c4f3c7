"""nn.Module behaviours through the layer modules, against torch.nn 1.13: traversal order,
mode switches, dtype conversion, zero_grad / requires_grad_ / apply, forward hooks,
load_state_dict's results and error text; plus the layers' printed forms, initialisation
bounds and constructor errors."""
import copy
import math
import pickle
import re
from collections import OrderedDict

import pytest
import torch

import tessera


def to_t(x):
    return tessera.from_numpy(x.detach().numpy().copy())


def to_torch(x):
    return torch.from_numpy(x.detach().numpy().copy())


def norm_text(s):
    return str(s).replace("torch.", "tessera.")


def sort_sets(text):
    """A printed set's elements in sorted order (set order depends on string hashing)."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)


def net(lib):
    nn = lib.nn
    shared = nn.Linear(4, 4)
    return nn.Sequential(OrderedDict([
        ("conv", nn.Conv1d(2, 4, 3, padding=1)),
        ("bn", nn.BatchNorm1d(4)),
        ("pool", nn.AdaptiveAvgPool1d(1)),
        ("flat", nn.Flatten()),
        ("block", nn.Sequential(shared, nn.Dropout(0.2), shared)),
        ("head", nn.Linear(4, 3)),
    ]))


def twin_net():
    torch.manual_seed(0)
    want = net(torch).double()
    got = net(tessera).double()
    got.load_state_dict({k: to_t(v) for k, v in want.state_dict().items()})
    return want, got


def test_traversal_like_torch():
    want, got = twin_net()
    for method in ("named_modules", "named_parameters", "named_buffers", "named_children"):
        assert [n for n, _ in getattr(got, method)()] == [n for n, _ in getattr(want, method)()], method
    assert [n for n, _ in got.named_modules(remove_duplicate=False)] == \
        [n for n, _ in want.named_modules(remove_duplicate=False)]
    assert [n for n, _ in got.named_parameters(prefix="m", recurse=True)] == \
        [n for n, _ in want.named_parameters(prefix="m", recurse=True)]
    assert len(list(got.parameters())) == len(list(want.parameters())) == 8
    assert sum(p.numel() for p in got.parameters()) == sum(p.numel() for p in want.parameters())
    assert list(got.state_dict()) == list(want.state_dict())
    assert norm_text(repr(got)) == norm_text(repr(want))
    assert got.get_submodule("block.0") is got.block[0]
    assert got.get_parameter("head.bias") is got.head.bias
    assert got.get_buffer("bn.running_var") is got.bn.running_var


def test_forward_backward_train_and_eval():
    want, got = twin_net()
    x = torch.randn(5, 2, 6, dtype=torch.float64)
    want.eval()
    got.eval()
    assert all(not m.training for m in got.modules())
    xw, xg = x.clone().requires_grad_(), to_t(x).requires_grad_()
    yw, yg = want(xw), got(xg)
    torch.testing.assert_close(to_torch(yg), yw.detach(), rtol=1e-10, atol=1e-10)
    yw.sum().backward()
    yg.sum().backward()
    torch.testing.assert_close(to_torch(xg.grad), xw.grad, rtol=1e-10, atol=1e-10)
    for (n, p), gp in zip(want.named_parameters(), got.parameters()):
        torch.testing.assert_close(to_torch(gp.grad), p.grad, rtol=1e-10, atol=1e-10, msg=n)
    got.train()
    assert all(m.training for m in got.modules())
    got.block.eval()
    assert got.training and not got.block[1].training and got.head.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        got.train("yes")


def test_dtype_conversion_keeps_parameter_objects():
    m = net(tessera)
    weight = m.head.weight
    m.head.weight.grad = tessera.ones(3, 4)
    assert m.to(tessera.float64) is m
    assert m.head.weight is weight and weight.dtype == tessera.float64 and weight.grad.dtype == tessera.float64
    assert type(m.head.weight) is tessera.nn.Parameter and m.head.weight.requires_grad
    assert m.bn.running_mean.dtype == tessera.float64 and m.bn.num_batches_tracked.dtype == tessera.int64
    m.float()
    assert all(p.dtype == tessera.float32 for p in m.parameters())
    m.double()
    assert all(p.dtype == tessera.float64 for p in m.parameters())
    with pytest.raises(TypeError) as g:
        m.to(tessera.int32)
    with pytest.raises(TypeError) as w:
        net(torch).to(torch.int32)
    assert norm_text(g.value) == norm_text(w.value)


def test_zero_grad_requires_grad_and_apply():
    m = net(tessera)
    m(tessera.randn(3, 2, 5)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.eq(0).all().item() for p in m.parameters())
    m.zero_grad()   # set_to_none=True is current torch's default (1.13: False)
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    assert not m(tessera.randn(3, 2, 5)).requires_grad
    m.requires_grad_()
    assert all(p.requires_grad for p in m.parameters())

    def visit_order(lib):
        order = []
        net(lib).apply(lambda mod: order.append(type(mod).__name__))
        return order
    assert visit_order(tessera) == visit_order(torch)

    def init_linear(mod):
        if isinstance(mod, tessera.nn.Linear):
            tessera.nn.init.constant_(mod.weight, 0.5)
    m.apply(init_linear)
    assert m.head.weight.eq(0.5).all().item() and m.block[0].weight.eq(0.5).all().item()


def test_forward_hooks_like_torch():
    results = {}
    for lib in (torch, tessera):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            lin.weight.copy_(lib.ones(2, 3, dtype=lib.float64))
            lin.bias.fill_(0.5)
        calls = []
        h1 = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = lin.register_forward_hook(lambda mod, args, out: out + 1)
        h3 = lin.register_forward_hook(lambda mod, args, out: calls.append("second"))
        x = lib.ones(1, 3, dtype=lib.float64)
        first = lin(x).tolist()
        h1.remove()
        second = lin(x).tolist()
        h2.remove()
        h3.remove()
        third = lin(x).tolist()
        results[lib.__name__] = (first, second, third, calls)
    assert results["tessera"] == results["torch"]
    # prepend=True (torch >= 2.0) runs a hook before those already registered
    lin = tessera.nn.Identity()
    calls = []
    lin.register_forward_hook(lambda mod, args, out: calls.append("second"))
    lin.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    lin.register_forward_pre_hook(lambda mod, args: calls.append("pre2"))
    lin.register_forward_pre_hook(lambda mod, args: calls.append("pre1"), prepend=True)
    lin(tessera.ones(1))
    assert calls == ["pre1", "pre2", "first", "second"]


def load_results(lib, state, strict):
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    try:
        return ("ok", repr(m.load_state_dict(state, strict=strict)))
    except RuntimeError as e:
        return ("error", norm_text(e))


@pytest.mark.parametrize("edit", ["none", "missing", "unexpected", "both", "shape", "not_tensor", "nested_extra"])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_results_and_errors(edit, strict):
    src = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).state_dict()
    state = OrderedDict(src)
    if edit in ("missing", "both"):
        del state["0.bias"]
        del state["1.running_var"]
    if edit in ("unexpected", "both"):
        state["0.extra"] = torch.zeros(1)
        state["2.weight"] = torch.zeros(1)
    if edit == "shape":
        state["0.weight"] = torch.zeros(3, 3)
    if edit == "not_tensor":
        state["1.bias"] = [1.0, 2.0]
    if edit == "nested_extra":
        state["1.sub.weight"] = torch.zeros(1)
    want = load_results(torch, state, strict)
    got = load_results(tessera, OrderedDict((k, to_t(v) if isinstance(v, torch.Tensor) else v)
                                            for k, v in state.items()), strict)
    assert got == want


def test_state_dict_options():
    m = tessera.nn.Linear(2, 3)
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and not sd["weight"].requires_grad
    assert sd["weight"].data_ptr() == m.weight.data_ptr()     # a detached alias, not a copy
    assert m.state_dict(keep_vars=True)["weight"] is m.weight
    assert list(m.state_dict(prefix="lin.")) == ["lin.weight", "lin.bias"]
    assert sd._metadata[""] == {"version": 1}
    assert tessera.nn.BatchNorm1d(2).state_dict()._metadata[""] == {"version": 2}


def test_deepcopy_and_pickle():
    m = net(tessera)
    m.eval()
    x = tessera.randn(2, 2, 5)
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert clone.head.weight is not m.head.weight
        assert type(clone.head.weight) is tessera.nn.Parameter
        assert clone(x).eq(m(x)).all().item()
        assert clone.block[0] is clone.block[2]


def test_attribute_assignment_on_layers():
    lin = tessera.nn.Linear(2, 3)
    lin.bias = None
    assert lin.bias is None and list(lin.state_dict()) == ["weight"]
    assert norm_text(repr(lin)) == "Linear(in_features=2, out_features=3, bias=False)"
    lin.weight = tessera.nn.Parameter(tessera.zeros(3, 2))
    assert lin(tessera.ones(1, 2)).eq(0).all().item()
    with pytest.raises(TypeError) as g:
        lin.weight = tessera.zeros(3, 2)
    with pytest.raises(TypeError) as w:
        torch.nn.Linear(2, 3).weight = torch.zeros(3, 2)
    assert norm_text(g.value) == norm_text(w.value)


# ---------------------------------------------------------------- printed forms

REPRS = [
    "nn.Linear(3, 4, bias=False)", "nn.Bilinear(2, 3, 4)", "nn.Identity()",
    "nn.Conv1d(2, 4, 3, stride=2, padding=1, dilation=2, groups=2, padding_mode='reflect')",
    "nn.Conv2d(2, 4, (3, 1), padding='valid')", "nn.Conv3d(1, 1, 1, bias=False)",
    "nn.ConvTranspose1d(2, 4, 3, output_padding=1, stride=2)", "nn.ConvTranspose2d(2, 4, 3, groups=2, dilation=(1, 2))",
    "nn.MaxPool1d(3)", "nn.MaxPool2d((2, 3), stride=1, padding=1, dilation=2, ceil_mode=True, return_indices=True)",
    "nn.AvgPool1d(3, padding=1)", "nn.AvgPool2d(2, ceil_mode=True, divisor_override=3)",
    "nn.AdaptiveAvgPool1d(2)", "nn.AdaptiveAvgPool2d((None, 3))", "nn.AdaptiveMaxPool1d(3)",
    "nn.AdaptiveMaxPool2d(2, return_indices=True)",
    "nn.BatchNorm1d(3)", "nn.BatchNorm2d(3, eps=1e-3, momentum=None, affine=False, track_running_stats=False)",
    "nn.BatchNorm3d(2, momentum=0.2)", "nn.LayerNorm([2, 3], elementwise_affine=False)", "nn.LayerNorm(4, eps=1e-6)",
    "nn.GroupNorm(2, 4, affine=False)", "nn.InstanceNorm1d(3)", "nn.InstanceNorm2d(3, affine=True)",
    "nn.InstanceNorm3d(3, track_running_stats=True)",
    "nn.Dropout()", "nn.Dropout1d(0.1, inplace=True)", "nn.Dropout2d(0.3)", "nn.Dropout3d()", "nn.AlphaDropout(0.2)",
    "nn.FeatureAlphaDropout(0.4)",
    "nn.Embedding(10, 3)", "nn.Embedding(10, 3, padding_idx=-1, max_norm=2.0, norm_type=1.0, scale_grad_by_freq=True)",
    "nn.Embedding(10, 3, sparse=True)",
    "nn.EmbeddingBag(10, 3)", "nn.EmbeddingBag(10, 3, mode='max', padding_idx=2, max_norm=1.5)",
    "nn.Flatten()", "nn.Flatten(0, 2)", "nn.Unflatten(1, (2, 3))", "nn.Unflatten('x', (('a', 2), ('b', 3)))",
    "nn.Upsample(scale_factor=2)", "nn.Upsample(size=(3, 4), mode='bilinear')", "nn.Upsample(scale_factor=(2, 3))",
    "nn.UpsamplingNearest2d(size=4)", "nn.UpsamplingBilinear2d(scale_factor=2)",
    "nn.ZeroPad2d(1)", "nn.ConstantPad1d((1, 2), 3.0)", "nn.ConstantPad3d(1, 0.5)", "nn.ReflectionPad2d((1, 0, 2, 1))",
    "nn.ReplicationPad1d(2)", "nn.ReplicationPad3d(1)", "nn.ReflectionPad1d(1)", "nn.ConstantPad2d(1, 2)",
    "nn.PixelShuffle(3)", "nn.PixelUnshuffle(2)",
]


@pytest.mark.parametrize("expr", REPRS)
def test_repr_like_torch(expr):
    assert norm_text(repr(eval(expr, {"nn": tessera.nn}))) == norm_text(repr(eval(expr, {"nn": torch.nn})))


# ---------------------------------------------------------------- initialisation

@pytest.mark.parametrize("expr,fan_in", [
    ("nn.Linear(1000, 300)", 1000), ("nn.Conv2d(32, 64, 3)", 288), ("nn.Conv1d(48, 96, 5, groups=4)", 60),
    ("nn.ConvTranspose2d(16, 40, 3)", 360), ("nn.Conv3d(8, 16, 3)", 216), ("nn.ConvTranspose1d(8, 100, 4)", 400),
])
def test_fan_in_uniform_bounds(expr, fan_in):
    # kaiming_uniform_(a=sqrt(5)) means U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the weight,
    # and torch draws the bias from the same interval.
    bound = 1 / math.sqrt(fan_in)
    tessera.manual_seed(0)
    got = eval(expr, {"nn": tessera.nn})
    want = eval(expr, {"nn": torch.nn})
    assert tuple(got.weight.shape) == tuple(want.weight.shape)
    w = got.weight.detach().double()
    assert w.abs().max().item() <= bound * (1 + 1e-6)
    assert w.abs().max().item() > 0.97 * bound
    assert abs(w.std().item() - bound / math.sqrt(3)) < 0.05 * bound
    assert abs(w.mean().item()) < 0.05 * bound
    b = got.bias.detach().double()
    assert b.abs().max().item() <= bound * (1 + 1e-6) and b.abs().max().item() > 0.8 * bound
    assert want.weight.abs().max().item() <= bound * (1 + 1e-6)   # the same interval in torch


def test_other_initialisations():
    tessera.manual_seed(0)
    bil = tessera.nn.Bilinear(400, 3, 50)
    bound = 1 / math.sqrt(400)
    assert bil.weight.abs().max().item() <= bound and bil.weight.abs().max().item() > 0.97 * bound
    assert bil.bias.abs().max().item() <= bound
    emb = tessera.nn.Embedding(300, 100, padding_idx=0).weight.detach()
    assert abs(emb[1:].mean().item()) < 0.02 and abs(emb[1:].std().item() - 1) < 0.02
    assert emb[0].eq(0).all().item()
    for layer in (tessera.nn.BatchNorm2d(5), tessera.nn.LayerNorm(5), tessera.nn.GroupNorm(5, 5),
                  tessera.nn.InstanceNorm1d(5, affine=True)):
        assert layer.weight.eq(1).all().item() and layer.bias.eq(0).all().item()
    # the global seed makes initialisation reproducible, reset_parameters redraws
    tessera.manual_seed(5)
    a = tessera.nn.Conv2d(3, 4, 3)
    tessera.manual_seed(5)
    b = tessera.nn.Conv2d(3, 4, 3)
    assert a.weight.eq(b.weight).all().item() and a.bias.eq(b.bias).all().item()
    a.reset_parameters()
    assert not a.weight.eq(b.weight).all().item()
    # zero-sized fan-in: no bias bound to take, as in torch (whose init warns too)
    with pytest.warns(UserWarning, match="zero-element"):
        assert tuple(tessera.nn.Linear(0, 3).bias.shape) == (3,)


def test_factory_kwargs():
    lin = tessera.nn.Linear(2, 3, dtype=tessera.float64, device="cpu")
    assert lin.weight.dtype == tessera.float64 and lin.bias.dtype == tessera.float64
    bn = tessera.nn.BatchNorm1d(3, dtype=tessera.float64)
    assert bn.running_mean.dtype == tessera.float64 and bn.num_batches_tracked.dtype == tessera.int64
    conv = tessera.nn.Conv2d(2, 2, 1, dtype=tessera.float64)
    assert conv.weight.dtype == tessera.float64


# ---------------------------------------------------------------- constructor errors

ERRORS = [
    "nn.Conv2d(3, 4, 3, groups=0)", "nn.Conv2d(3, 4, 3, groups=2)", "nn.Conv2d(4, 3, 3, groups=2)",
    "nn.Conv1d(2, 2, 3, padding='full')", "nn.Conv2d(2, 2, 3, stride=2, padding='same')",
    "nn.Conv2d(2, 2, 3, padding_mode='mirror')", "nn.ConvTranspose2d(2, 2, 3, padding_mode='reflect')",
    "nn.ConvTranspose1d(3, 2, 3, groups=2)",
    "nn.GroupNorm(3, 4)", "nn.Dropout(1.5)", "nn.Dropout2d(-0.1)", "nn.AlphaDropout(2)",
    "nn.Embedding(5, 2, padding_idx=5)", "nn.Embedding(5, 2, padding_idx=-6)", "nn.EmbeddingBag(5, 2, padding_idx=7)",
    "nn.Embedding(5, 2, _weight=lib.zeros(4, 2))",
    "nn.Unflatten(1, 3)", "nn.Unflatten(1, (2, 'a'))", "nn.Unflatten('x', (2, 3))", "nn.Unflatten('x', [('a', 2)])",
    "nn.Unflatten(1.5, (2, 3))",
    "nn.Linear(3, 2)(lib.ones(2, 4))",
    "nn.Conv2d(2, 3, 3)(lib.ones(1, 3, 5, 5))",
    "nn.Sequential(3)", "nn.ModuleList([nn.Linear(1, 1), 'x'])",
    "nn.Module().register_buffer('', lib.ones(1))", "nn.Linear(1, 1).register_parameter('w', lib.ones(1))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    with pytest.raises(BaseException) as w:
        eval(expr, {"nn": torch.nn, "lib": torch})
    with pytest.raises(BaseException) as g:
        eval(expr, {"nn": tessera.nn, "lib": tessera})
    assert type(g.value).__name__ == type(w.value).__name__
    if type(w.value) is not RuntimeError:   # kernel messages differ in wording between libraries
        assert sort_sets(norm_text(g.value)) == sort_sets(norm_text(w.value))
