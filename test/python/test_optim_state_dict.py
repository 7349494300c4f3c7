"""state_dict / load_state_dict of every tessera.optim optimizer against torch.optim 1.13:
the same structure and state values, a save / continue / reload round trip, and a torch
optimizer's state_dict (tensors converted) loaded into tessera continuing torch's run."""
import copy

import numpy as np
import pytest
import torch

import tessera
from optim_common import (ALL_OPTIMIZERS, assert_close, assert_trajectories_close, make_params, state_value,
                          torch_state_dict_to_tessera, trajectory)

# Options that give each optimizer its full state (momentum buffers, amsgrad maxima, ...).
KW = {"SGD": dict(lr=0.1, momentum=0.9), "Adam": dict(lr=0.05, amsgrad=True), "AdamW": dict(lr=0.05, amsgrad=True),
      "RMSprop": dict(lr=0.01, momentum=0.5, centered=True), "Adagrad": dict(lr=0.1, lr_decay=0.01),
      "Adadelta": dict(), "Adamax": dict(lr=0.05), "NAdam": dict(lr=0.05), "RAdam": dict(lr=0.05)}

# param_groups keys current torch stores beyond 1.13's, and 1.13 keys whose default changed.
CURRENT_EXTRA = {
    "SGD": {"fused"}, "Adam": {"decoupled_weight_decay"}, "AdamW": {"differentiable", "fused"},
    "RMSprop": {"capturable"}, "Adagrad": {"differentiable", "fused"},
    "Adadelta": {"capturable", "differentiable"}, "Adamax": {"capturable", "differentiable"},
    "NAdam": {"decoupled_weight_decay", "capturable", "differentiable", "maximize"},
    "RAdam": {"decoupled_weight_decay", "capturable", "differentiable", "maximize"},
}
CHANGED_DEFAULT = {"Adam": {"fused"}}  # 1.13: False; current torch: None

# The state each optimizer keeps per parameter, and its 0-dim float32 entries.
STATE_KEYS = {"SGD": {"momentum_buffer"}, "Adam": {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
              "AdamW": {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
              "RMSprop": {"step", "square_avg", "momentum_buffer", "grad_avg"}, "Adagrad": {"step", "sum"},
              "Adadelta": {"step", "square_avg", "acc_delta"}, "Adamax": {"step", "exp_avg", "exp_inf"},
              "NAdam": {"step", "mu_product", "exp_avg", "exp_avg_sq"}, "RAdam": {"step", "exp_avg", "exp_avg_sq"}}
SCALAR_STATE = {"step", "mu_product"}


def _make(name, kw=None):
    kw = KW[name] if kw is None else kw
    return lambda lib, P: getattr(lib.optim, name)(P, **kw)


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_state_dict_matches_torchs(name, dtype):
    _, topt, _ = trajectory(torch, _make(name), dtype, steps=3)
    _, opt, _ = trajectory(tessera, _make(name), dtype, steps=3)
    want, got = topt.state_dict(), opt.state_dict()
    assert set(got) == {"state", "param_groups"}

    assert sorted(got["state"]) == sorted(want["state"]) == [0, 1, 2]
    for i in want["state"]:
        assert set(got["state"][i]) == set(want["state"][i]) == STATE_KEYS[name]
        for key, w in want["state"][i].items():
            g = got["state"][i][key]
            assert isinstance(g, tessera.Tensor)
            if key in SCALAR_STATE:
                # float32 0-dim tensors (torch 1.13's RMSprop/Adadelta kept an int step;
                # current torch keeps a tensor, as tessera does).
                assert g.dim() == 0 and g.dtype == tessera.float32, key
                np.testing.assert_array_equal(state_value(g), state_value(w))
            else:
                assert g.dtype == getattr(tessera, dtype) and tuple(g.shape) == tuple(w.shape)
                assert_close(state_value(g), state_value(w), dtype, key)

    assert len(got["param_groups"]) == len(want["param_groups"]) == 1
    wg, gg = want["param_groups"][0], got["param_groups"][0]
    assert set(wg) <= set(gg), set(wg) - set(gg)
    assert set(gg) - set(wg) <= CURRENT_EXTRA[name], set(gg) - set(wg)
    for key in wg:
        if key not in CHANGED_DEFAULT.get(name, ()):
            assert gg[key] == wg[key], key
    assert gg["params"] == [0, 1, 2]


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_state_dict_indices_across_groups(name):
    def build(lib):
        P = make_params(lib, "float64")
        opt = getattr(lib.optim, name)([{"params": [P[2]]}, {"params": [P[0], P[1]], "lr": 0.01}], **KW[name])
        return P, opt
    (tP, topt), (P, opt) = build(torch), build(tessera)
    trajectory(torch, None, "float64", steps=2, P=tP, opt=topt)
    trajectory(tessera, None, "float64", steps=2, P=P, opt=opt)
    want, got = topt.state_dict(), opt.state_dict()
    assert [g["params"] for g in got["param_groups"]] == [g["params"] for g in want["param_groups"]] == [[0], [1, 2]]
    assert sorted(got["state"]) == sorted(want["state"])
    assert got["param_groups"][1]["lr"] == 0.01
    # P[2] is index 0: its state is P[2]'s.
    for key in STATE_KEYS[name] - SCALAR_STATE:
        if key in want["state"][0]:
            assert_close(state_value(got["state"][0][key]), state_value(want["state"][0][key]), "float64", key)


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_round_trip_continues_identically(name):
    """Save after 3 steps, continue 3; a fresh optimizer loading the saved state (and the
    saved parameters) must reproduce those 3 steps exactly. (float32 parameters: loading
    casts floating state to the parameter's dtype, torch's rule, which for NAdam's float32
    mu_product and float64 parameters changes later rounding, in torch as in tessera.)"""
    P = make_params(tessera, "float32")
    _, opt, _ = trajectory(tessera, _make(name), "float32", steps=3, P=P)
    saved_state = copy.deepcopy(opt.state_dict())
    saved_params = [p.detach().clone() for p in P]
    first, _, _ = trajectory(tessera, None, "float32", steps=3, P=P, opt=opt)

    P2 = [tessera.nn.Parameter(v) for v in saved_params]
    fresh = getattr(tessera.optim, name)(P2, lr=0.5)  # the loaded groups bring their own lr
    fresh.load_state_dict(saved_state)
    assert fresh.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert all(p is q for p, q in zip(fresh.param_groups[0]["params"], P2))
    second, _, _ = trajectory(tessera, None, "float32", steps=3, P=P2, opt=fresh)
    for a_step, b_step in zip(first, second):
        for a, b in zip(a_step, b_step):
            np.testing.assert_array_equal(a, b)
    # Loading copies: the saved dict's tensors were not advanced by the continued run.
    if "step" in saved_state["state"][0]:
        assert float(saved_state["state"][0]["step"]) == 3.0


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_load_torch_state_dict_continues_torchs_run(name, dtype):
    """A torch state_dict (tensors through tessera.from_numpy) loaded into tessera continues
    as torch continues after loading the same dict."""
    tP = make_params(torch, dtype)
    _, topt, _ = trajectory(torch, _make(name), dtype, steps=3, P=tP)
    tsd = copy.deepcopy(topt.state_dict())
    P = [tessera.nn.Parameter(tessera.from_numpy(p.detach().numpy().copy())) for p in tP]
    opt = getattr(tessera.optim, name)(P, **KW[name])
    opt.load_state_dict(torch_state_dict_to_tessera(tsd))
    tP2 = [torch.nn.Parameter(p.detach().clone()) for p in tP]
    topt2 = getattr(torch.optim, name)(tP2, **KW[name])
    topt2.load_state_dict(tsd)
    for s, ts in zip(opt.state.values(), topt2.state.values()):
        if "step" in s:  # 1.13's int steps become float32 0-dim tensors
            assert isinstance(s["step"], tessera.Tensor) and s["step"].dtype == tessera.float32
        if "mu_product" in s:  # cast to the parameter's dtype on load, as torch does
            assert str(s["mu_product"].dtype).split(".")[-1] == str(ts["mu_product"].dtype).split(".")[-1]
    want, _, _ = trajectory(torch, None, dtype, steps=3, P=tP2, opt=topt2)
    got, _, _ = trajectory(tessera, None, dtype, steps=3, P=P, opt=opt)
    assert_trajectories_close(got, want, dtype)
    # Apart from NAdam's recast mu_product, loading changes nothing: the run continues
    # torch's uninterrupted one.
    if name != "NAdam" or dtype == "float32":
        uninterrupted, _, _ = trajectory(torch, None, dtype, steps=3, P=tP, opt=topt)
        assert_trajectories_close(got, uninterrupted, dtype)


def test_load_state_dict_casts_state_to_the_parameter_dtype():
    """Floating state follows its parameter's dtype; 'step' stays float32 (torch's rule)."""
    P = make_params(tessera, "float64")
    _, opt, _ = trajectory(tessera, _make("Adam"), "float64", steps=2, P=P)
    sd = opt.state_dict()
    P32 = [tessera.nn.Parameter(p.detach().to(tessera.float32)) for p in P]
    opt32 = tessera.optim.Adam(P32)
    opt32.load_state_dict(sd)
    s = opt32.state[P32[0]]
    assert s["exp_avg"].dtype == tessera.float32 and s["step"].dtype == tessera.float32


def test_load_state_dict_errors_like_torch():
    def run(lib, groups):
        P = make_params(lib, "float64")
        sd = lib.optim.SGD(P, lr=0.1).state_dict()
        other = lib.optim.SGD(groups(P), lr=0.1)
        other.load_state_dict(sd)
    for groups in (lambda P: [{"params": P[:1]}, {"params": P[1:]}], lambda P: P[:2]):
        with pytest.raises(ValueError) as want:
            run(torch, groups)
        with pytest.raises(ValueError) as got:
            run(tessera, groups)
        assert str(got.value) == str(want.value)


def test_state_dict_of_fresh_and_unstepped_optimizers():
    P = make_params(tessera, "float32")
    assert tessera.optim.Adam(P).state_dict()["state"] == {}
    sd = tessera.optim.Adagrad(P, initial_accumulator_value=0.25).state_dict()  # eager state, like torch
    tsd = torch.optim.Adagrad(make_params(torch, "float32"), initial_accumulator_value=0.25).state_dict()
    assert sorted(sd["state"]) == sorted(tsd["state"]) == [0, 1, 2]
    for i in sd["state"]:
        np.testing.assert_array_equal(state_value(sd["state"][i]["sum"]), state_value(tsd["state"][i]["sum"]))
        assert float(sd["state"][i]["step"]) == 0.0


@pytest.mark.parametrize("name", ["RMSprop", "Adadelta", "NAdam"])
def test_setstate_converts_legacy_python_scalars(name):
    """Older torch pickles keep 'step' (and NAdam's 'mu_product') as Python numbers."""
    P = make_params(tessera, "float64")
    _, opt, _ = trajectory(tessera, _make(name), "float64", steps=2, P=P)
    state = {"defaults": opt.defaults, "state": opt.state, "param_groups": opt.param_groups}
    for s in state["state"].values():
        s["step"] = int(float(s["step"]))
        if "mu_product" in s:
            s["mu_product"] = float(s["mu_product"])
    opt.__setstate__(state)
    for s in opt.state.values():
        assert isinstance(s["step"], tessera.Tensor) and s["step"].dtype == tessera.float32
        assert float(s["step"]) == 2.0
        if name == "NAdam":
            assert isinstance(s["mu_product"], tessera.Tensor) and s["mu_product"].dtype == tessera.float32
