"""tessera.nn.utils' hook-based weight_norm / spectral_norm, conv/linear + batch-norm
fusion, stateless.functional_call, skip_init and convert_conv2d_weight_memory_format
against torch: same modules and weights, outputs and gradients over training steps,
parameter shapes, state_dict keys, values and metadata, and errors compared."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils as TU
from torch.nn.utils import stateless as TS

import tessera
import tessera.nn.utils as U
from tessera.nn.utils import stateless as SS


from torch_compare import same_error, tt
from torch_compare import close as _close


def close(got, want, atol=1e-5):
    _close(got, want, rtol=1e-4, atol=atol)


MODULES = {
    "linear": (lambda lib: lib.nn.Linear(5, 4), (3, 5)),
    "conv1d": (lambda lib: lib.nn.Conv1d(2, 3, 3), (2, 2, 7)),
    "conv2d": (lambda lib: lib.nn.Conv2d(2, 3, (3, 2)), (2, 2, 6, 5)),
    "convT2d": (lambda lib: lib.nn.ConvTranspose2d(3, 2, 3), (2, 3, 4, 4)),
}


def pair(kind):
    make, shape = MODULES[kind]
    torch.manual_seed(0)
    t, s = make(torch), make(tessera)
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    return t, s, shape


def train_and_compare(t, s, shape, steps=3, grads=()):
    opt_t = torch.optim.SGD(t.parameters(), lr=0.05)
    opt_s = tessera.optim.SGD(s.parameters(), lr=0.05)
    rng = np.random.RandomState(1)
    for _ in range(steps):
        x = rng.randn(*shape).astype(np.float32)
        yt, ys = t(torch.from_numpy(x)), s(tessera.from_numpy(x))
        close(ys, yt, atol=1e-4)
        (yt ** 2).sum().backward()
        (ys ** 2).sum().backward()
        for name in grads:
            close(getattr(s, name).grad, getattr(t, name).grad, atol=1e-3)
        opt_t.step(), opt_s.step(), opt_t.zero_grad(), opt_s.zero_grad()


def state_close(s_mod, t_mod, atol=1e-5):
    ts, ss = t_mod.state_dict(), s_mod.state_dict()
    assert list(ss.keys()) == list(ts.keys())
    for k in ts:
        close(ss[k], ts[k], atol)
    return ts, ss


# ------------------------------------------------------------------ weight_norm


@pytest.mark.parametrize("kind", list(MODULES))
@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
def test_weight_norm(kind, dim):
    t, s, shape = pair(kind)
    TU.weight_norm(t, dim=dim)
    U.weight_norm(s, dim=dim)
    assert tuple(s.weight_g.shape) == tuple(t.weight_g.shape)
    assert isinstance(s.weight_g, tessera.nn.Parameter) and isinstance(s.weight_v, tessera.nn.Parameter)
    assert "weight" not in s._parameters
    close(s.weight_g, t.weight_g)
    close(s.weight, t.weight)
    state_close(s, t)
    train_and_compare(t, s, shape, grads=("weight_g", "weight_v", "bias"))
    state_close(s, t, atol=1e-4)
    TU.remove_weight_norm(t)
    U.remove_weight_norm(s)
    assert isinstance(s.weight, tessera.nn.Parameter)
    state_close(s, t, atol=1e-4)


def test_weight_norm_other_name_and_errors():
    t, s, _ = pair("linear")
    TU.weight_norm(t, "bias")
    U.weight_norm(s, "bias")
    state_close(s, t)
    same_error(lambda: TU.weight_norm(t, "bias"), lambda: U.weight_norm(s, "bias"))
    t2, s2, _ = pair("linear")
    same_error(lambda: TU.remove_weight_norm(t2), lambda: U.remove_weight_norm(s2))


# ------------------------------------------------------------------ spectral_norm (hooks)


def copy_uv(s, t):
    s.weight_u.copy_(tt(t.weight_u))
    s.weight_v.copy_(tt(t.weight_v))


@pytest.mark.parametrize("kind", list(MODULES))
@pytest.mark.parametrize("kw", [{}, {"n_power_iterations": 3}, {"dim": 1, "eps": 1e-6}])
def test_spectral_norm_hooks(kind, kw):
    t, s, shape = pair(kind)
    TU.spectral_norm(t, **kw)
    U.spectral_norm(s, **kw)
    copy_uv(s, t)
    ts, ss = state_close(s, t)
    assert ss._metadata == ts._metadata
    train_and_compare(t, s, shape, grads=("weight_orig", "bias"))
    state_close(s, t, atol=1e-4)
    t.eval(), s.eval()
    x = np.random.RandomState(2).randn(*shape).astype(np.float32)
    close(s(tessera.from_numpy(x)), t(torch.from_numpy(x)), atol=1e-4)
    TU.remove_spectral_norm(t)
    U.remove_spectral_norm(s)
    assert isinstance(s.weight, tessera.nn.Parameter) and not s._state_dict_hooks
    state_close(s, t, atol=1e-4)
    s.load_state_dict(s.state_dict())  # (torch 1.13 fails here: it leaves its load hook behind)


def test_spectral_norm_hooks_load_state_dict():
    t, s, shape = pair("linear")
    TU.spectral_norm(t)
    U.spectral_norm(s)
    t(torch.randn(2, 5))
    sd = t.state_dict()
    s.load_state_dict({k: tt(v) for k, v in sd.items()})  # no metadata: the keys decide
    s.eval(), t.eval()
    x = np.random.RandomState(3).randn(*shape).astype(np.float32)
    close(s(tessera.from_numpy(x)), t(torch.from_numpy(x)), atol=1e-4)
    s2 = U.spectral_norm(tessera.nn.Linear(5, 4))
    with_metadata = s.state_dict()
    s2.load_state_dict(with_metadata)
    close(s2.weight_v, t.weight_v)
    # a state_dict missing weight_orig and weight_u: the same missing keys as torch reports
    partial = {k: v for k, v in sd.items() if k in ("bias", "weight_v")}
    same_error(lambda: t.load_state_dict(partial), lambda: s.load_state_dict({k: tt(v) for k, v in partial.items()}))


def test_spectral_norm_hooks_errors():
    t, s, _ = pair("linear")
    same_error(lambda: TU.spectral_norm(t, n_power_iterations=0), lambda: U.spectral_norm(s, n_power_iterations=0))
    TU.spectral_norm(t)
    U.spectral_norm(s)
    same_error(lambda: TU.spectral_norm(t), lambda: U.spectral_norm(s))
    same_error(lambda: TU.remove_spectral_norm(t, "bias"), lambda: U.remove_spectral_norm(s, "bias"))
    t2, s2 = torch.nn.Linear(2, 2, bias=False), tessera.nn.Linear(2, 2, bias=False)
    same_error(lambda: TU.spectral_norm(t2, "bias"), lambda: U.spectral_norm(s2, "bias"))


def test_spectral_norm_hooks_sigma_is_one():
    # Power iteration converges at the rate (s2/s1)^k; a random weight can have s2 ~ s1 and need far more than 30
    # steps, so the weight is built with known singular values (gap 2x) and the draws are seeded.
    tessera.manual_seed(0)
    rng = np.random.default_rng(0)
    left, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    right, _ = np.linalg.qr(rng.standard_normal((7, 7)))
    weight = left @ np.diag([3.0, 1.5, 1.0, 0.5, 0.2]) @ right[:5]
    lin = tessera.nn.Linear(7, 5)
    with tessera.no_grad():
        lin.weight.copy_(tessera.tensor(weight, dtype=tessera.float32))
    s = U.spectral_norm(lin, n_power_iterations=30)
    s(tessera.randn(1, 7))
    assert abs(np.linalg.svd(s.weight.detach().numpy(), compute_uv=False)[0] - 1.0) < 1e-3


# ------------------------------------------------------------------ fusion


@pytest.mark.parametrize("kind,transpose", [("conv1d", False), ("conv2d", False), ("convT2d", True)])
@pytest.mark.parametrize("affine,bias", [(True, True), (False, False)])
def test_fuse_conv_bn_eval(kind, transpose, affine, bias):
    make, shape = MODULES[kind]
    torch.manual_seed(0)
    nd = len(shape) - 2
    tconv = make(torch)
    channels = tconv.weight.shape[1] if transpose else tconv.weight.shape[0]
    kw = {"bias": bias}
    tconv = type(tconv)(tconv.in_channels, tconv.out_channels, tconv.kernel_size, **kw)
    sconv = getattr(tessera.nn, type(tconv).__name__)(tconv.in_channels, tconv.out_channels, tconv.kernel_size, **kw)
    sconv.load_state_dict({k: tt(v) for k, v in tconv.state_dict().items()})
    bn_name = f"BatchNorm{nd}d"
    tbn = getattr(torch.nn, bn_name)(channels, affine=affine)
    with torch.no_grad():
        tbn.running_mean.uniform_(-1, 1)
        tbn.running_var.uniform_(0.5, 2)
        if affine:
            tbn.weight.uniform_(0.5, 1.5)
            tbn.bias.uniform_(-1, 1)
    sbn = getattr(tessera.nn, bn_name)(channels, affine=affine)
    sbn.load_state_dict({k: tt(v) for k, v in tbn.state_dict().items()})
    for m in (tconv, sconv, tbn, sbn):
        m.eval()
    tf = TU.fuse_conv_bn_eval(tconv, tbn, transpose=transpose)
    sf = U.fuse_conv_bn_eval(sconv, sbn, transpose=transpose)
    assert sf is not sconv and isinstance(sf.weight, tessera.nn.Parameter)
    close(sf.weight, tf.weight)
    close(sf.bias, tf.bias)
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    close(sf(tessera.from_numpy(x)), tbn(tconv(torch.from_numpy(x))), atol=1e-4)
    sconv.train()
    same_error(lambda: TU.fuse_conv_bn_eval(tconv.train(), tbn), lambda: U.fuse_conv_bn_eval(sconv, sbn))


def test_fuse_linear_bn_eval():
    from torch.nn.utils import fusion as TF
    from tessera.nn.utils import fusion as SF
    t, s, shape = pair("linear")
    tbn, sbn = torch.nn.BatchNorm1d(4), tessera.nn.BatchNorm1d(4)
    with torch.no_grad():
        for v in tbn.state_dict().values():
            if v.is_floating_point():
                v.uniform_(0.5, 1.5)
    sbn.load_state_dict({k: tt(v) for k, v in tbn.state_dict().items()})
    for m in (t, s, tbn, sbn):
        m.eval()
    tf, sf = TF.fuse_linear_bn_eval(t, tbn), SF.fuse_linear_bn_eval(s, sbn)
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    close(sf(tessera.from_numpy(x)), tf(torch.from_numpy(x)))
    wt, bt = TF.fuse_linear_bn_weights(t.weight, None, tbn.running_mean, tbn.running_var, 1e-3, tbn.weight, tbn.bias)
    ws, bs = SF.fuse_linear_bn_weights(s.weight, None, sbn.running_mean, sbn.running_var, 1e-3, sbn.weight, sbn.bias)
    close(ws, wt), close(bs, bt)


# ------------------------------------------------------------------ stateless.functional_call


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def test_functional_call_params_and_buffers():
    torch.manual_seed(0)
    t, s = mlp(torch), mlp(tessera)
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    rng = np.random.RandomState(0)
    new_t = {k: torch.from_numpy(rng.randn(*v.shape).astype(np.float32)).requires_grad_()
             for k, v in t.named_parameters()}
    new_t["1.running_var"] = torch.rand(4) + 0.5
    new_s = {k: tt(v).requires_grad_(v.requires_grad) for k, v in new_t.items()}
    x = rng.randn(5, 3).astype(np.float32)
    t.eval(), s.eval()
    yt = TS.functional_call(t, new_t, (torch.from_numpy(x),))
    ys = SS.functional_call(s, new_s, tessera.from_numpy(x))
    close(ys, yt)
    yt.sum().backward()
    ys.sum().backward()
    for k in new_t:
        if new_t[k].requires_grad:
            close(new_s[k].grad, new_t[k].grad)
    assert all(p.grad is None for p in s.parameters())
    assert all(type(m).__name__ == type(m).__name__.replace("StatelessReplacer", "") for m in s.modules())
    close(s(tessera.from_numpy(x)), t(torch.from_numpy(x)))  # the module's own tensors again


def test_functional_call_kwargs_and_tied_weights():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
    t[1].weight = t[0].weight
    s = tessera.nn.Sequential(tessera.nn.Linear(3, 3), tessera.nn.Linear(3, 3))
    s[1].weight = s[0].weight
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    w = np.eye(3, dtype=np.float32) * 2
    x = np.random.RandomState(1).randn(2, 3).astype(np.float32)
    # 1.13: only the given path is replaced; the tied twin keeps the module's tensor
    yt = TS.functional_call(t, {"0.weight": torch.from_numpy(w)}, (torch.from_numpy(x),))
    ys = SS.functional_call(s, {"0.weight": tessera.from_numpy(w)}, (tessera.from_numpy(x),))
    close(ys, yt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ys = SS.functional_call(s, {"0.weight": tessera.from_numpy(w), "1.weight": tessera.from_numpy(w * 3)},
                                (tessera.from_numpy(x),))
    assert any("tied weights" in str(c.message) for c in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt = TS.functional_call(t, {"0.weight": torch.from_numpy(w), "1.weight": torch.from_numpy(w * 3)},
                                (torch.from_numpy(x),))
    close(ys, yt)

    class Affine(tessera.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = tessera.nn.Parameter(tessera.ones(2))

        def forward(self, x, shift=0.0):
            return x * self.a + shift

    out = SS.functional_call(Affine(), {"a": tessera.full((2,), 3.0)}, (tessera.ones(2),), {"shift": 1.0})
    np.testing.assert_allclose(out.numpy(), torch.ones(2).mul(3.0).add(1.0).numpy())


# ------------------------------------------------------------------ skip_init, memory format


def test_skip_init():
    m = U.skip_init(tessera.nn.Linear, 5, 3, bias=False)
    assert type(m) is tessera.nn.Linear and m.weight.device.type == "cpu"
    assert tuple(m.weight.shape) == tuple(TU.skip_init(torch.nn.Linear, 5, 3).weight.shape)
    assert isinstance(m.weight, tessera.nn.Parameter) and m.bias is None
    m = U.skip_init(tessera.nn.Conv2d, in_channels=2, out_channels=4, kernel_size=3, device="cpu")
    assert tuple(m.weight.shape) == (4, 2, 3, 3)

    class NoDevice(tessera.nn.Module):
        def __init__(self, n):
            super().__init__()

    class TNoDevice(torch.nn.Module):
        def __init__(self, n):
            super().__init__()

    same_error(lambda: TU.skip_init(TNoDevice, 3), lambda: U.skip_init(NoDevice, 3))
    with pytest.raises(RuntimeError, match="Expected a Module"):
        U.skip_init(dict)


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_convert_conv2d_weight_memory_format(fmt):
    torch.manual_seed(0)

    def build(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)),
                                 lib.nn.Conv1d(2, 2, 1))

    t, s = build(torch), build(tessera)
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    t = t.to(memory_format=torch.channels_last) if fmt == "contiguous_format" else t
    s = s.to(memory_format=tessera.channels_last) if fmt == "contiguous_format" else s
    params = list(s.parameters())
    rt = TU.convert_conv2d_weight_memory_format(t, getattr(torch, fmt))
    rs = U.convert_conv2d_weight_memory_format(s, getattr(tessera, fmt))
    assert rs is s and all(a is b for a, b in zip(params, s.parameters()))
    for (kt, pt), (ks, ps) in zip(rt.named_parameters(), rs.named_parameters()):
        assert kt == ks and tuple(ps.stride()) == tuple(pt.stride())
        close(ps, pt)
