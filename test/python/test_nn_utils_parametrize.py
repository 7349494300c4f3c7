"""tessera.nn.utils.parametrize and .parametrizations against torch: the same module and
weights in both, the same parametrizations registered; outputs, gradients, state_dict
keys and values, class swapping, caching, removal and the errors compared."""
import copy

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrizations as TPS
import torch.nn.utils.parametrize as TP

import tessera
import tessera.nn.utils.parametrizations as SPS
import tessera.nn.utils.parametrize as SP


from torch_compare import same_error, tt
from torch_compare import close as _close


def close(got, want, atol=1e-5):
    _close(got, want, rtol=1e-4, atol=atol)


def linear_pair(i=4, o=3, bias=True):
    torch.manual_seed(0)
    t = torch.nn.Linear(i, o, bias=bias)
    s = tessera.nn.Linear(i, o, bias=bias)
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    return t, s


def make_parametrizations(lib):
    """The same small parametrizations written against torch and against tessera."""
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Scale(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c = c

        def forward(self, X):
            return X * self.c

        def right_inverse(self, Y):
            return Y / self.c

    class SplitSum(nn.Module):  # right_inverse returns a tuple of two tensors
        def forward(self, A, B):
            return A + 2 * B

        def right_inverse(self, X):
            return X * 0.5, X * 0.25

    class Square(nn.Module):  # no right_inverse
        def forward(self, X):
            return X * X

    class Reshape(nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    class ReturnsList(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    return dict(Symmetric=Symmetric, Scale=Scale, SplitSum=SplitSum, Square=Square, Reshape=Reshape,
                ToDouble=ToDouble, ReturnsList=ReturnsList)


TPZ = make_parametrizations(torch)
SPZ = make_parametrizations(tessera)


def state_close(s_mod, t_mod):
    ts, ss = t_mod.state_dict(), s_mod.state_dict()
    assert list(ss.keys()) == list(ts.keys())
    for k in ts:
        close(ss[k], ts[k])


@pytest.mark.parametrize("chain", [["Symmetric"], ["Scale"], ["Symmetric", "Scale"], ["Scale", "Square"],
                                   ["SplitSum"], ["SplitSum", "Scale"]])
def test_register_forward_backward_state_dict(chain):
    t, s = linear_pair(4, 4)
    for name in chain:
        args = (3.0,) if name == "Scale" else ()
        TP.register_parametrization(t, "weight", TPZ[name](*args))
        SP.register_parametrization(s, "weight", SPZ[name](*args))
    assert type(s).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert SP.type_before_parametrizations(s) is tessera.nn.Linear
    assert SP.is_parametrized(s) and SP.is_parametrized(s, "weight") and not SP.is_parametrized(s, "bias")
    assert not SP.is_parametrized(tessera.nn.Linear(2, 2))
    assert len(s.parametrizations.weight) == len(chain)
    close(s.weight, t.weight)
    state_close(s, t)
    x = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    yt, ys = t(torch.from_numpy(x)), s(tessera.from_numpy(x))
    close(ys, yt)
    yt.square().sum().backward()
    ys.square().sum().backward()
    for (kt, pt), (ks, ps) in zip(t.named_parameters(), s.named_parameters()):
        assert kt == ks
        close(ps.grad, pt.grad)
    # other instances of Linear keep their class
    assert type(tessera.nn.Linear(2, 2)) is tessera.nn.Linear


def test_original_keeps_identity_and_assignment_uses_right_inverse():
    t, s = linear_pair(4, 4)
    w_t, w_s = t.weight, s.weight
    TP.register_parametrization(t, "weight", TPZ["Scale"](2.0))
    SP.register_parametrization(s, "weight", SPZ["Scale"](2.0))
    assert s.parametrizations.weight.original is w_s
    assert isinstance(s.parametrizations.weight.original, tessera.nn.Parameter)
    close(s.parametrizations.weight.original, t.parametrizations.weight.original)
    new = np.arange(16, dtype=np.float32).reshape(4, 4)
    t.weight = torch.from_numpy(new)
    s.weight = tessera.from_numpy(new)
    assert s.parametrizations.weight.original is w_s and t.parametrizations.weight.original is w_t
    close(s.parametrizations.weight.original, t.parametrizations.weight.original)
    close(s.weight, t.weight)


def test_assignment_with_tuple_right_inverse_and_missing_right_inverse():
    t, s = linear_pair(3, 3)
    TP.register_parametrization(t, "weight", TPZ["SplitSum"]())
    SP.register_parametrization(s, "weight", SPZ["SplitSum"]())
    assert not hasattr(s.parametrizations.weight, "original")
    assert isinstance(s.parametrizations.weight.original0, tessera.nn.Parameter)
    new = np.ones((3, 3), np.float32)
    t.weight = torch.from_numpy(new)
    s.weight = tessera.from_numpy(new)
    close(s.parametrizations.weight.original1, t.parametrizations.weight.original1)
    close(s.weight, t.weight)
    t2, s2 = linear_pair(3, 3)
    TP.register_parametrization(t2, "weight", TPZ["Square"]())
    SP.register_parametrization(s2, "weight", SPZ["Square"]())
    same_error(lambda: setattr(t2, "weight", torch.ones(3, 3)), lambda: setattr(s2, "weight", tessera.ones(3, 3)))


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    t, s = linear_pair(4, 4)
    w_s = s.weight
    for lib, m, z in ((TP, t, TPZ), (SP, s, SPZ)):
        lib.register_parametrization(m, "weight", z["Symmetric"]())
        lib.register_parametrization(m, "bias", z["Scale"](2.0))
        lib.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(s).__name__ == "ParametrizedLinear" and list(s.parametrizations.keys()) == ["bias"]
    close(s.weight, t.weight)
    assert s.weight is w_s and isinstance(s.weight, tessera.nn.Parameter)
    TP.remove_parametrizations(t, "bias", leave_parametrized=leave)
    SP.remove_parametrizations(s, "bias", leave_parametrized=leave)
    assert type(s) is tessera.nn.Linear and not hasattr(s, "parametrizations")
    state_close(s, t)
    same_error(lambda: TP.remove_parametrizations(t, "weight"), lambda: SP.remove_parametrizations(s, "weight"))


def test_remove_tuple_parametrization():
    t, s = linear_pair(3, 3)
    TP.register_parametrization(t, "weight", TPZ["SplitSum"]())
    SP.register_parametrization(s, "weight", SPZ["SplitSum"]())
    same_error(lambda: TP.remove_parametrizations(t, "weight", leave_parametrized=False),
               lambda: SP.remove_parametrizations(s, "weight", leave_parametrized=False))
    TP.remove_parametrizations(t, "weight")
    SP.remove_parametrizations(s, "weight")
    assert isinstance(s.weight, tessera.nn.Parameter) and s.weight.requires_grad
    state_close(s, t)


def test_buffer_parametrization_and_load_state_dict():
    t, s = torch.nn.BatchNorm1d(3), tessera.nn.BatchNorm1d(3)
    TP.register_parametrization(t, "running_var", TPZ["Scale"](4.0))
    SP.register_parametrization(s, "running_var", SPZ["Scale"](4.0))
    assert not isinstance(s.parametrizations.running_var.original, tessera.nn.Parameter)
    state_close(s, t)
    sd = {k: tt(v) * 0 + 1.5 for k, v in t.state_dict().items() if v.is_floating_point()}
    sd.update({k: tt(v) for k, v in t.state_dict().items() if not v.is_floating_point()})
    s.load_state_dict(sd)
    t.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in sd.items()})
    close(s.running_var, t.running_var)


def test_cached():
    t, s = linear_pair(3, 3)
    TP.register_parametrization(t, "weight", TPZ["Symmetric"]())
    SP.register_parametrization(s, "weight", SPZ["Symmetric"]())
    assert s.weight is not s.weight
    with SP.cached():
        first = s.weight
        assert s.weight is first
        with SP.cached():
            assert s.weight is first
        assert s.weight is first
    assert s.weight is not first
    with TP.cached():
        assert t.weight is t.weight  # the documented behaviour on the oracle too


def test_registration_errors():
    for name, args in (("Reshape", ()), ("ToDouble", ()), ("ReturnsList", ())):
        t, s = linear_pair(3, 3)
        same_error(lambda: TP.register_parametrization(t, "weight", TPZ[name](*args)),
                   lambda: SP.register_parametrization(s, "weight", SPZ[name](*args)))
        assert type(s) is tessera.nn.Linear
    # stacked: checks against the current parametrized tensor
    for name in ("Reshape", "ToDouble"):
        t, s = linear_pair(3, 3)
        TP.register_parametrization(t, "weight", TPZ["Symmetric"]())
        SP.register_parametrization(s, "weight", SPZ["Symmetric"]())
        same_error(lambda: TP.register_parametrization(t, "weight", TPZ[name]()),
                   lambda: SP.register_parametrization(s, "weight", SPZ[name]()))
    t, s = linear_pair(3, 3)
    same_error(lambda: TP.register_parametrization(t, "nothing", TPZ["Scale"](1.0)),
               lambda: SP.register_parametrization(s, "nothing", SPZ["Scale"](1.0)))


def test_unsafe_allows_shape_change():
    t, s = linear_pair(3, 2)
    TP.register_parametrization(t, "weight", TPZ["Reshape"](), unsafe=True)
    SP.register_parametrization(s, "weight", SPZ["Reshape"](), unsafe=True)
    assert s.parametrizations.weight.unsafe and tuple(s.weight.shape) == tuple(t.weight.shape) == (6,)
    close(s.weight, t.weight)


def test_parametrization_list_errors_and_train_mode():
    t, s = linear_pair()
    same_error(lambda: TP.ParametrizationList([], t.weight), lambda: SP.ParametrizationList([], s.weight))
    s.eval()
    p = SPZ["Scale"](1.0)
    SP.register_parametrization(s, "weight", p)
    assert p.training is False


def test_transfer_parametrizations_and_params():
    t_from, s_from = linear_pair(3, 3)
    TP.register_parametrization(t_from, "weight", TPZ["Symmetric"]())
    SP.register_parametrization(s_from, "weight", SPZ["Symmetric"]())
    t_to, s_to = linear_pair(3, 3)
    TP.transfer_parametrizations_and_params(t_from, t_to)
    SP.transfer_parametrizations_and_params(s_from, s_to)
    assert s_to.parametrizations.weight.original is s_from.parametrizations.weight.original
    state_close(s_to, t_to)
    close(s_to.weight, t_to.weight)
    # a module without the parameter gets it created
    t_new, s_new = torch.nn.Identity(), tessera.nn.Identity()
    TP.transfer_parametrizations_and_params(t_from, t_new, "weight")
    SP.transfer_parametrizations_and_params(s_from, s_new, "weight")
    assert type(s_new).__name__ == type(t_new).__name__ == "ParametrizedIdentity"
    close(s_new.weight, t_new.weight)


def test_deepcopy_and_no_pickle():
    t, s = linear_pair(3, 3)
    SP.register_parametrization(s, "weight", SPZ["Scale"](2.0))
    c = copy.deepcopy(s)
    assert type(c).__name__ == "ParametrizedLinear"
    assert c.parametrizations.weight.original is not s.parametrizations.weight.original
    close(c.weight, s.weight)
    TP.register_parametrization(t, "weight", TPZ["Scale"](2.0))
    import pickle
    same_error(lambda: pickle.dumps(t), lambda: pickle.dumps(s))


# ------------------------------------------------------------------ parametrizations.spectral_norm


def copy_uv(s, t, name="weight"):
    for b in ("_u", "_v"):
        getattr(s.parametrizations[name][0], b).copy_(tt(getattr(t.parametrizations[name][0], b)))


@pytest.mark.parametrize("make,kw", [("linear", {}), ("linear", {"n_power_iterations": 3}),
                                     ("linear", {"dim": 1, "eps": 1e-6}), ("conv", {}), ("convT", {})])
def test_spectral_norm_parametrization_training(make, kw):
    torch.manual_seed(1)
    t = {"linear": lambda: torch.nn.Linear(5, 4), "conv": lambda: torch.nn.Conv2d(2, 3, 3),
         "convT": lambda: torch.nn.ConvTranspose2d(3, 2, 3)}[make]()
    s = {"linear": lambda: tessera.nn.Linear(5, 4), "conv": lambda: tessera.nn.Conv2d(2, 3, 3),
         "convT": lambda: tessera.nn.ConvTranspose2d(3, 2, 3)}[make]()
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    TPS.spectral_norm(t, **kw)
    SPS.spectral_norm(s, **kw)
    assert s.parametrizations.weight[0].dim == t.parametrizations.weight[0].dim
    assert list(s.state_dict().keys()) == list(t.state_dict().keys())
    copy_uv(s, t)
    shape = (2, 5) if make == "linear" else (2, 2 if make == "conv" else 3, 6, 6)
    opt_t = torch.optim.SGD(t.parameters(), lr=0.1)
    opt_s = tessera.optim.SGD(s.parameters(), lr=0.1)
    rng = np.random.RandomState(0)
    for _ in range(3):
        x = rng.randn(*shape).astype(np.float32)
        yt, ys = t(torch.from_numpy(x)), s(tessera.from_numpy(x))
        close(ys, yt, atol=1e-4)
        yt.sum().backward()
        ys.sum().backward()
        close(s.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, atol=1e-4)
        opt_t.step(), opt_s.step(), opt_t.zero_grad(), opt_s.zero_grad()
    state_close(s, t)
    t.eval(), s.eval()
    close(s.weight, t.weight, atol=1e-4)
    close(s.parametrizations.weight[0]._u, t.parametrizations.weight[0]._u)  # eval: no power step


def test_spectral_norm_parametrization_sigma_and_remove():
    t, s = linear_pair(6, 4)
    TPS.spectral_norm(t)
    SPS.spectral_norm(s)
    # the largest singular value of the normalized weight is 1 (torch's documented invariant)
    w = s.weight.detach().numpy()
    assert abs(np.linalg.svd(w, compute_uv=False)[0] - 1.0) < 1e-3
    SP.remove_parametrizations(s, "weight")
    TP.remove_parametrizations(t, "weight")
    assert type(s) is tessera.nn.Linear and list(s.state_dict().keys()) == list(t.state_dict().keys())
    np.testing.assert_allclose(s.weight.detach().numpy(), w, rtol=1e-6)


def test_spectral_norm_parametrization_errors():
    t, s = linear_pair()
    same_error(lambda: TPS.spectral_norm(t, dim=2), lambda: SPS.spectral_norm(s, dim=2))
    same_error(lambda: TPS.spectral_norm(t, n_power_iterations=0), lambda: SPS.spectral_norm(s, n_power_iterations=0))
    same_error(lambda: TPS.spectral_norm(t, "nothing"), lambda: SPS.spectral_norm(s, "nothing"))


def test_spectral_norm_parametrization_1d():
    t, s = linear_pair()
    TPS.spectral_norm(t, "bias")
    SPS.spectral_norm(s, "bias")
    close(s.bias, t.bias)
    assert list(s.state_dict().keys()) == list(t.state_dict().keys())


# ------------------------------------------------------------------ parametrizations.orthogonal


def test_orthogonal_argument_errors_as_torch():
    t, s = linear_pair()
    same_error(lambda: TPS.orthogonal(t, "bias"), lambda: SPS.orthogonal(s, "bias"))
    same_error(lambda: TPS.orthogonal(t, "nothing"), lambda: SPS.orthogonal(s, "nothing"))
    same_error(lambda: TPS.orthogonal(t, orthogonal_map="qr"), lambda: SPS.orthogonal(s, orthogonal_map="qr"))


@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
def test_orthogonal_needs_linalg(orthogonal_map):
    # tessera has no geqrf / householder_product / matrix_exp / linalg.solve yet: a clear
    # NotImplementedError naming them, and the module left as it was.
    s = tessera.nn.Linear(4, 4)
    if all(hasattr(tessera, n) for n in ("geqrf", "matrix_exp")):
        pytest.skip("tessera has the linalg operators now: test orthogonal against torch instead")
    with pytest.raises(NotImplementedError, match="geqrf"):
        SPS.orthogonal(s, orthogonal_map=orthogonal_map)
    assert type(s) is tessera.nn.Linear
