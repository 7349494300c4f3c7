"""Lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*,
LazyInstanceNorm*) and their placeholders (UninitializedParameter/UninitializedBuffer)
against torch.nn 1.13: the shapes inferred at the first forward, the class the module
becomes, the materialised parameters' shapes and dtypes, outputs and gradients once
torch's materialised weights are copied in, and state_dict/load_state_dict before and
after initialisation."""
import copy
import math
import pickle

import pytest
import torch

import tessera

pytestmark = [pytest.mark.filterwarnings("ignore:Lazy modules"),
              # an affine-free LazyInstanceNorm never infers num_features (as in torch); tessera's
              # InstanceNorm then warns about the channel count, as newer torch does
              pytest.mark.filterwarnings("ignore:input's size at dim")]


from torch_compare import close_to_torch as close, rand, tn as to_torch, tt as to_t  # noqa: E402


def norm_text(s):
    return s.replace("torch.", "tessera.")


# (class name, constructor args, constructor kwargs, input shape)
CASES = [
    ("LazyLinear", (4,), {}, (3, 5)),
    ("LazyLinear", (3,), {"bias": False}, (2, 4, 6)),
    ("LazyConv1d", (4, 3), {"stride": 2, "padding": 1}, (2, 6, 9)),
    ("LazyConv1d", (4, 3), {"groups": 2, "dilation": 2}, (6, 11)),          # unbatched input
    ("LazyConv2d", (6, (2, 3)), {"groups": 3, "padding": (1, 0)}, (2, 3, 5, 6)),
    ("LazyConv2d", (2, 3), {"padding": "same", "bias": False, "padding_mode": "reflect"}, (1, 3, 6, 5)),
    ("LazyConv3d", (2, 2), {"stride": (1, 2, 1)}, (1, 2, 4, 5, 3)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2, "dilation": 2}, (1, 4, 4, 3)),
    ("LazyConvTranspose3d", (2, 2), {"stride": 2, "bias": False}, (1, 3, 2, 3, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"momentum": None}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"affine": False}, (3, 2, 4, 4)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 3, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False}, (2, 3, 4, 5)),
    ("LazyInstanceNorm3d", (), {"eps": 1e-3}, (2, 2, 3, 3, 3)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def dry_run_pair(name, args, kwargs, shape, seed=0):
    """torch's and tessera's lazy module after one float64 forward on the same input."""
    torch.manual_seed(seed)
    want = getattr(torch.nn, name)(*args, **kwargs).double()
    got = getattr(tessera.nn, name)(*args, **kwargs).double()
    x = rand(shape, seed)
    want(x)
    got(to_t(x))
    return want, got


@pytest.mark.parametrize("name,args,kwargs,shape", CASES, ids=IDS)
def test_uninitialised_module_matches_torch(name, args, kwargs, shape):
    want = getattr(torch.nn, name)(*args, **kwargs)
    got = getattr(tessera.nn, name)(*args, **kwargs)
    assert type(got).__name__ == type(want).__name__ == name
    assert norm_text(repr(got)) == norm_text(repr(want))
    assert got.has_uninitialized_params() == want.has_uninitialized_params()
    want_sd, got_sd = want.state_dict(), got.state_dict()
    assert list(got_sd) == list(want_sd)
    for key in want_sd:
        assert type(got_sd[key]).__name__ == type(want_sd[key]).__name__, key
        assert tessera.nn.parameter.is_lazy(got_sd[key]) == torch.nn.parameter.is_lazy(want_sd[key]), key


@pytest.mark.parametrize("name,args,kwargs,shape", CASES, ids=IDS)
def test_first_forward_infers_shapes_and_becomes_plain_class(name, args, kwargs, shape):
    want, got = dry_run_pair(name, args, kwargs, shape)
    assert type(got).__name__ == type(want).__name__
    assert type(want).__name__ == name[len("Lazy"):]
    assert type(got) is getattr(tessera.nn, name[len("Lazy"):])
    assert norm_text(repr(got)) == norm_text(repr(want))
    assert not any(tessera.nn.parameter.is_lazy(t) for t in list(got.parameters()) + list(got.buffers()))
    assert not hasattr(got, "_initialize_hook") and not hasattr(got, "_load_hook")
    for attr in ("in_features", "in_channels", "num_features"):
        if hasattr(want, attr):
            assert getattr(got, attr) == getattr(want, attr)
    want_named = dict(want.named_parameters())
    got_named = dict(got.named_parameters())
    assert list(got_named) == list(want_named)
    for key, p in want_named.items():
        assert type(got_named[key]) is tessera.nn.Parameter
        assert tuple(got_named[key].shape) == tuple(p.shape)
        assert str(got_named[key].dtype) == str(p.dtype).replace("torch", "tessera")
    want_bufs, got_bufs = dict(want.named_buffers()), dict(got.named_buffers())
    assert list(got_bufs) == list(want_bufs)
    for key, b in want_bufs.items():
        assert type(got_bufs[key]) is tessera.Tensor, key
        assert tuple(got_bufs[key].shape) == tuple(b.shape)
        assert str(got_bufs[key].dtype) == str(b.dtype).replace("torch", "tessera")
    # num_batches_tracked counts the dry run in both
    if "num_batches_tracked" in want_bufs:
        assert int(got.num_batches_tracked) == int(want.num_batches_tracked)


@pytest.mark.parametrize("name,args,kwargs,shape", CASES, ids=IDS)
def test_outputs_and_grads_with_torchs_weights(name, args, kwargs, shape):
    want, got = dry_run_pair(name, args, kwargs, shape)
    got.load_state_dict({k: to_t(v) for k, v in want.state_dict().items()})
    x = rand(shape, 1).requires_grad_(True)
    xt = to_t(x).requires_grad_(True)
    out_w, out_g = want(x), got(xt)
    close(out_g, out_w)
    up = rand(out_w.shape, 2)
    out_w.backward(up)
    out_g.backward(to_t(up))
    close(xt.grad, x.grad)
    for (key, p), (_, q) in zip(want.named_parameters(), got.named_parameters()):
        close(q.grad, p.grad)
    for (key, b), (_, c) in zip(want.named_buffers(), got.named_buffers()):
        close(c, b)


@pytest.mark.parametrize("name,args,kwargs,shape", [c for c in CASES if c[0].startswith(("LazyLinear", "LazyConv"))],
                         ids=[i for c, i in zip(CASES, IDS) if c[0].startswith(("LazyLinear", "LazyConv"))])
def test_initialisation_bounds_follow_torchs_rule(name, args, kwargs, shape):
    want, got = dry_run_pair(name, args, kwargs, shape)
    # torch's rule: weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = weight.size(1) * kernel
    w = want.weight
    bound = 1 / math.sqrt(w.shape[1] * math.prod(w.shape[2:]))
    values = to_torch(got.weight)
    assert values.abs().max().item() <= bound
    assert values.std().item() > bound / 10  # actually initialised, not the empty memory's zeros
    if want.bias is not None:
        assert to_torch(got.bias).abs().max().item() <= bound


def test_dtype_and_device_conversion_before_first_forward():
    for ns in (torch.nn, tessera.nn):
        lin = ns.LazyLinear(3).double()
        assert str(lin.weight.dtype).endswith("float64")
        assert type(lin.weight).__name__ == "UninitializedParameter"
        bn = ns.LazyBatchNorm1d().to(dtype=(torch if ns is torch.nn else tessera).float64)
        assert type(bn.running_mean).__name__ == "UninitializedBuffer"
        assert str(bn.running_mean.dtype).endswith("float64")
        assert str(bn.num_batches_tracked.dtype).endswith("int64")
    built = tessera.nn.LazyConv2d(2, 1, dtype=tessera.float64)
    built(tessera.ones(1, 3, 2, 2, dtype=tessera.float64))
    assert built.weight.dtype == tessera.float64 and tuple(built.weight.shape) == (2, 3, 1, 1)


def test_uninitialised_parameter_refuses_use_as_torch():
    want, got = torch.nn.LazyLinear(2), tessera.nn.LazyLinear(2)
    for action in (lambda w: w.shape, lambda w: w + 1, lambda w: 2 * w, lambda w: w.dim(), lambda w: w.sum(),
                   lambda w: w.requires_grad_(False), lambda w: w.numel(), lambda w: w[0], lambda w: -w):
        with pytest.raises(Exception) as torch_err:
            action(want.weight)
        with pytest.raises(Exception) as tessera_err:
            action(got.weight)
        assert tessera_err.type is torch_err.type
    # what still answers, as in torch
    assert tuple(got.weight.size()) == tuple(want.weight.size()) == (0,)
    assert got.weight.requires_grad and want.weight.requires_grad
    assert got.weight.is_floating_point() and want.weight.is_floating_point()
    assert repr(got.weight) == repr(want.weight) == "<UninitializedParameter>"
    with pytest.raises(ValueError, match="uninitialized parameter"):
        got.weight.add(1)
    with pytest.raises(RuntimeError, match="shape of an uninitialized"):
        got.weight.shape


def test_placeholders_by_hand():
    for nn in (torch.nn, tessera.nn):
        p = nn.UninitializedParameter()
        b = nn.UninitializedBuffer()
        assert p.requires_grad and not b.requires_grad
        assert nn.parameter.is_lazy(p) and nn.parameter.is_lazy(b)
        assert isinstance(p, nn.Parameter) and not isinstance(b, nn.Parameter)
        assert not nn.parameter.is_lazy(nn.Parameter(torch.ones(1) if nn is torch.nn else tessera.ones(1)))
        p.materialize((2, 3))
        b.materialize((4,))
        assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.requires_grad
        assert tuple(b.shape) == (4,) and not nn.parameter.is_lazy(b)
        d = nn.UninitializedParameter(requires_grad=False, dtype=torch.float64 if nn is torch.nn else
                                      tessera.float64)
        assert str(copy.deepcopy(d).dtype).endswith("float64") and not copy.deepcopy(d).requires_grad
        again = pickle.loads(pickle.dumps(d))
        assert type(again).__name__ == "UninitializedParameter" and not again.requires_grad
        m = nn.UninitializedParameter()
        m.materialize((3,), dtype=torch.float64 if nn is torch.nn else tessera.float64)
        assert str(m.dtype).endswith("float64")


def test_state_dict_of_initialised_lazy_loads_into_uninitialised():
    torch.manual_seed(3)
    source = torch.nn.LazyLinear(3)
    source(rand((2, 4), 0).float())
    state = source.state_dict()
    for ns, convert in ((torch.nn, lambda v: v), (tessera.nn, to_t)):
        target = ns.LazyLinear(3)
        target.load_state_dict({k: convert(v) for k, v in state.items()})
        # materialised to the loaded shapes, still the lazy class until a forward
        assert type(target).__name__ == "LazyLinear"
        assert not target.has_uninitialized_params()
        assert tuple(target.weight.shape) == (3, 4) and type(target.weight) is ns.Parameter
        x = rand((5, 4), 1).float()
        out = target(x if ns is torch.nn else to_t(x))
        assert type(target).__name__ == "Linear"
        # the loaded values survive the first forward (no re-initialisation)
        close(target.weight if ns is tessera.nn else to_t(target.weight), state["weight"], tol=0)
        close(out if ns is tessera.nn else to_t(out), source(x), tol=1e-6)
        # torch leaves in_features at 0 here (nothing was inferred); so does tessera
        assert target.in_features == 0


def test_lazy_batchnorm_loads_running_stats_and_keeps_them():
    torch.manual_seed(4)
    source = torch.nn.LazyBatchNorm2d().double()
    source(rand((3, 2, 4, 4), 0))
    target = tessera.nn.LazyBatchNorm2d().double()
    target.load_state_dict({k: to_t(v) for k, v in source.state_dict().items()})
    assert type(target.running_mean) is tessera.Tensor
    target.eval()
    source.eval()
    x = rand((2, 2, 4, 4), 1)
    close(target(to_t(x)), source(x))
    assert type(target) is tessera.nn.BatchNorm2d


def test_uninitialised_state_dict_round_trips():
    for ns in (torch.nn, tessera.nn):
        a, b = ns.LazyConv1d(2, 3), ns.LazyConv1d(2, 3)
        result = b.load_state_dict(a.state_dict())
        assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
        assert b.has_uninitialized_params()
        sd = a.state_dict(keep_vars=True)
        assert sd["weight"] is a.weight


def test_loading_uninitialised_into_initialised_fails_as_torch():
    for ns in (torch.nn, tessera.nn):
        lazy = ns.LazyLinear(3)
        plain = ns.Linear(4, 3)
        with pytest.raises(RuntimeError, match="shape of an uninitialized"):
            plain.load_state_dict(lazy.state_dict())


def test_loading_inconsistent_shapes_fails_at_forward():
    for ns, convert in ((torch.nn, lambda v: v), (tessera.nn, to_t)):
        lazy = ns.LazyLinear(3)
        # each placeholder takes its entry's shape, so the load itself succeeds ...
        lazy.load_state_dict({"weight": convert(torch.ones(3, 4)), "bias": convert(torch.ones(2))})
        assert tuple(lazy.bias.shape) == (2,)
        # ... and the mismatch shows at the forward
        with pytest.raises(RuntimeError):
            lazy(convert(torch.ones(1, 4)))


def test_errors_on_first_forward_match_torch():
    cases = [("LazyConv2d", (4, 3), {}, (2, 3)),                     # neither 3-D nor 4-D input
             ("LazyConv1d", (4, 1), {"groups": 2}, (2, 3, 5)),        # 3 channels, 2 groups
             ("LazyConvTranspose2d", (4, 1), {"groups": 2}, (1, 3, 2, 2)),
             ("LazyBatchNorm2d", (), {}, (2, 3, 4))]                 # 3-D input to a 2-D norm
    for name, args, kwargs, shape in cases:
        x = rand(shape, 0)
        with pytest.raises(Exception) as torch_err:
            getattr(torch.nn, name)(*args, **kwargs).double()(x)
        with pytest.raises(Exception) as tessera_err:
            getattr(tessera.nn, name)(*args, **kwargs).double()(to_t(x))
        assert tessera_err.type is torch_err.type, name


def test_mixin_location_hooks_and_warning():
    from tessera.nn.modules.lazy import LazyModuleMixin
    assert not hasattr(tessera.nn, "LazyModuleMixin") and not hasattr(torch.nn, "LazyModuleMixin")
    lin = tessera.nn.LazyLinear(2)
    assert isinstance(lin, LazyModuleMixin) and lin.cls_to_become is tessera.nn.Linear
    assert tessera.nn.LazyConvTranspose3d.cls_to_become is tessera.nn.ConvTranspose3d
    assert tessera.nn.LazyInstanceNorm2d.cls_to_become is tessera.nn.InstanceNorm2d
    with pytest.warns(UserWarning, match="Lazy modules"):
        tessera.nn.LazyBatchNorm1d()

    class Incomplete(LazyModuleMixin, tessera.nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented for Incomplete"):
        Incomplete()(tessera.ones(1))
    with pytest.raises(RuntimeError, match="DataParallel"):
        tessera.nn.LazyLinear(2)._replicate_for_data_parallel()


def test_lazy_inside_a_network_trains_like_torch():
    torch.manual_seed(5)
    want = torch.nn.Sequential(torch.nn.LazyLinear(6), torch.nn.ReLU(), torch.nn.LazyLinear(2)).double()
    got = tessera.nn.Sequential(tessera.nn.LazyLinear(6), tessera.nn.ReLU(), tessera.nn.LazyLinear(2)).double()
    x = rand((4, 3), 0)
    want(x)
    got(to_t(x))
    assert norm_text(repr(got)) == norm_text(repr(want))
    got.load_state_dict({k: to_t(v) for k, v in want.state_dict().items()})
    opt_w = torch.optim.SGD(want.parameters(), lr=0.1)
    opt_g = tessera.optim.SGD(got.parameters(), lr=0.1)
    for step in range(3):
        xs = rand((4, 3), 10 + step)
        opt_w.zero_grad()
        opt_g.zero_grad()
        want(xs).pow(2).sum().backward()
        got(to_t(xs)).pow(2).sum().backward()
        opt_w.step()
        opt_g.step()
    for (k, p), (_, q) in zip(want.named_parameters(), got.named_parameters()):
        close(q, p)


def test_copies_of_uninitialised_modules_initialise_on_their_own():
    for ns, lib in ((torch.nn, torch), (tessera.nn, tessera)):
        original = ns.LazyLinear(3)
        deep = copy.deepcopy(original)
        pickled = pickle.loads(pickle.dumps(original))
        deep(lib.ones(2, 4))
        pickled(lib.ones(2, 6))
        # the copies' first forwards leave the original lazy, with its own hook
        assert type(original).__name__ == "LazyLinear" and len(original._forward_pre_hooks) == 1
        original(lib.ones(2, 5))
        shapes = [tuple(m.weight.shape) for m in (deep, pickled, original)]
        assert shapes == [(3, 4), (3, 6), (3, 5)]
        assert [type(m).__name__ for m in (deep, pickled, original)] == ["Linear"] * 3
