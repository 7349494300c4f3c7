"""Batch and instance norm modules against torch.nn 1.13: running statistics over several
training steps (momentum and momentum=None), eval with running stats, the option
combinations, num_batches_tracked in state_dict and in old checkpoints, and input checks."""
from collections import OrderedDict

import pytest
import torch

import tessera


def to_t(x):
    return tessera.from_numpy(x.detach().numpy().copy())


def to_torch(x):
    return torch.from_numpy(x.detach().numpy().copy())


def norm_text(s):
    return s.replace("torch.", "tessera.")


def close(got, want, tol=1e-10):
    assert tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(to_torch(got), want.detach(), rtol=tol, atol=tol)


def rand(shape, seed):
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)) * 2 + 0.5


def pair(name, *args, **kwargs):
    want = getattr(torch.nn, name)(*args, **kwargs).double()
    got = getattr(tessera.nn, name)(*args, **kwargs).double()
    with torch.no_grad():
        for p in want.parameters():   # non-trivial affine parameters
            p.copy_(torch.rand(p.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(9)) + 0.5)
    got.load_state_dict({k: to_t(v) for k, v in want.state_dict().items()})
    return want, got


def compare_buffers(got, want):
    gb = dict(got.named_buffers())
    assert list(gb) == [n for n, _ in want.named_buffers()]
    for name, b in want.named_buffers():
        assert str(gb[name].dtype).split(".")[1] == str(b.dtype).split(".")[1], name
        close(gb[name], b)


BN_CASES = [
    ("BatchNorm1d", (4, 3), {}),
    ("BatchNorm1d", (4, 3, 5), {"momentum": None}),
    ("BatchNorm1d", (4, 3, 5), {"affine": False, "momentum": 0.3}),
    ("BatchNorm2d", (4, 3, 3, 2), {}),
    ("BatchNorm2d", (4, 3, 3, 2), {"momentum": None, "eps": 1e-3}),
    ("BatchNorm2d", (4, 3, 3, 2), {"track_running_stats": False}),
    ("BatchNorm3d", (2, 3, 2, 2, 2), {}),
    ("InstanceNorm1d", (4, 3, 5), {"track_running_stats": True}),
    ("InstanceNorm2d", (4, 3, 3, 4), {"affine": True, "track_running_stats": True, "momentum": 0.5}),
    ("InstanceNorm2d", (3, 3, 4), {"affine": True, "track_running_stats": True}),
    ("InstanceNorm2d", (4, 3, 3, 4), {"affine": True}),
]


@pytest.mark.parametrize("name,shape,kwargs", BN_CASES)
def test_running_stats_and_eval(name, shape, kwargs):
    want, got = pair(name, 3, **kwargs)
    assert norm_text(repr(got)) == norm_text(repr(want))
    assert list(got.state_dict()) == list(want.state_dict())
    compare_buffers(got, want)
    for step in range(3):
        x = rand(shape, step)
        xw, xg = x.clone().requires_grad_(), to_t(x).requires_grad_()
        yw, yg = want(xw), got(xg)
        close(yg, yw)
        g = rand(shape, 10 + step)
        yw.backward(g)
        yg.backward(to_t(g))
        close(xg.grad, xw.grad)
        for (n, p), gp in zip(want.named_parameters(), got.parameters()):
            close(gp.grad, p.grad)
            p.grad = None
            gp.grad = None
        compare_buffers(got, want)
    want.eval()
    got.eval()
    x = rand(shape, 20)
    close(got(to_t(x)), want(x))
    compare_buffers(got, want)   # eval leaves the buffers alone
    want.train()
    got.train()
    close(got(to_t(x)), want(x))


def test_buffers_and_counts():
    bn = tessera.nn.BatchNorm2d(4)
    assert bn.num_batches_tracked.dtype == tessera.int64 and bn.num_batches_tracked.item() == 0
    assert bn.running_mean.eq(0).all().item() and bn.running_var.eq(1).all().item()
    assert bn.weight.eq(1).all().item() and bn.bias.eq(0).all().item()
    for _ in range(3):
        bn(tessera.randn(2, 4, 3, 3))
    assert bn.num_batches_tracked.item() == 3
    bn.reset_running_stats()
    assert bn.num_batches_tracked.item() == 0 and bn.running_var.eq(1).all().item()
    # to(float64) converts the stats but not the count
    bn.to(tessera.float64)
    assert bn.running_mean.dtype == tessera.float64 and bn.num_batches_tracked.dtype == tessera.int64
    plain = tessera.nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert plain.weight is None and plain.running_mean is None and plain.num_batches_tracked is None
    assert list(plain.state_dict()) == [] and list(plain.parameters()) == []
    inorm = tessera.nn.InstanceNorm1d(3)
    assert not inorm.affine and not inorm.track_running_stats and list(inorm.state_dict()) == []


def load_both(want, got, state, strict=True):
    """load_state_dict of the same checkpoint on both; their results or errors must agree."""
    try:
        wres = want.load_state_dict(state, strict=strict)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as g:
            got.load_state_dict(to_t_state(state), strict=strict)
        assert norm_text(str(g.value)) == norm_text(str(e))
        return None
    gres = got.load_state_dict(to_t_state(state), strict=strict)
    assert gres.missing_keys == wres.missing_keys and gres.unexpected_keys == wres.unexpected_keys
    assert repr(gres) == repr(wres)
    return gres


def to_t_state(state):
    out = OrderedDict((k, to_t(v)) for k, v in state.items())
    if hasattr(state, "_metadata"):
        out._metadata = state._metadata
    return out


def test_old_checkpoint_without_num_batches_tracked():
    src = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3))
    state = src.state_dict()
    del state["1.num_batches_tracked"]
    # metadata of a version-1 BatchNorm (or none at all): the count is filled in
    for version in (1, None):
        old = OrderedDict(state)
        old._metadata = OrderedDict((k, dict(v)) for k, v in state._metadata.items())
        if version is None:
            del old._metadata["1"]["version"]
        else:
            old._metadata["1"]["version"] = version
        want = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3))
        got = tessera.nn.Sequential(tessera.nn.Conv2d(2, 3, 1), tessera.nn.BatchNorm2d(3))
        load_both(want, got, old)
        assert got[1].num_batches_tracked.item() == want[1].num_batches_tracked.item() == 0
        close(got[1].running_mean, want[1].running_mean)
    # a plain dict has no metadata either
    want = torch.nn.BatchNorm2d(3)
    got = tessera.nn.BatchNorm2d(3)
    load_both(want, got, {k[2:]: v for k, v in state.items() if k.startswith("1.")})
    # a current-version checkpoint that lacks it is missing a key, as in torch
    want = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3))
    got = tessera.nn.Sequential(tessera.nn.Conv2d(2, 3, 1), tessera.nn.BatchNorm2d(3))
    assert load_both(want, got, state) is None
    res = load_both(want, got, state, strict=False)
    assert res.missing_keys == ["1.num_batches_tracked"]


def test_instance_norm_old_running_stats_error():
    want, got = torch.nn.InstanceNorm1d(3), tessera.nn.InstanceNorm1d(3)
    state = {"running_mean": torch.zeros(3), "running_var": torch.ones(3)}
    assert load_both(want, got, state) is None     # error text compared inside


def check_error(torch_call, tessera_call, exc):
    with pytest.raises(exc) as w:
        torch_call()
    with pytest.raises(exc) as g:
        tessera_call()
    assert type(g.value) is type(w.value)
    assert norm_text(str(g.value)) == norm_text(str(w.value))


@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm1d", (3,)),
                                        ("BatchNorm2d", (2, 3, 4)), ("BatchNorm3d", (2, 3, 4, 4)),
                                        ("InstanceNorm1d", (2, 3, 4, 5)), ("InstanceNorm2d", (3, 4)),
                                        ("InstanceNorm3d", (2, 3, 4))])
def test_input_dim_errors(name, shape):
    check_error(lambda: getattr(torch.nn, name)(3)(torch.zeros(shape)),
                lambda: getattr(tessera.nn, name)(3)(tessera.zeros(shape)), ValueError)


def test_batch_of_one_value_per_channel_errors():
    check_error(lambda: torch.nn.BatchNorm1d(3)(torch.zeros(1, 3)),
                lambda: tessera.nn.BatchNorm1d(3)(tessera.zeros(1, 3)), ValueError)
    # eval needs no batch statistics
    assert tuple(tessera.nn.BatchNorm1d(3).eval()(tessera.zeros(1, 3)).shape) == (1, 3)


def test_instance_norm_channel_check_of_current_torch():
    # affine instance norm rejects a channel count that does not match (current torch)
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 4."):
        tessera.nn.InstanceNorm1d(3, affine=True)(tessera.randn(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        tessera.nn.InstanceNorm1d(3)(tessera.randn(2, 4, 5))


def test_layer_norm_without_bias_of_current_torch():
    ln = tessera.nn.LayerNorm(4, bias=False)
    assert ln.bias is None and list(ln.state_dict()) == ["weight"]
    x = rand((2, 4), 1)
    close(ln.double()(to_t(x)), torch.nn.functional.layer_norm(x, (4,)))


def test_group_norm_errors():
    check_error(lambda: torch.nn.GroupNorm(4, 6), lambda: tessera.nn.GroupNorm(4, 6), ValueError)
