"""tessera.optim beyond a single group: per-group options, add_param_group, parameters
without grads, parameters whose step counts differ within a group (the per-step grouping
of the foreach updates), closures, zero_grad, and the errors torch raises."""
import numpy as np
import pytest
import torch

import tessera
from optim_common import (ALL_OPTIMIZERS, assert_trajectories_close, data, loss_fn, make_params, snapshot,
                          trajectory)

LR = {"SGD": 0.1, "Adam": 0.05, "AdamW": 0.05, "RMSprop": 0.01, "Adagrad": 0.1, "Adadelta": 1.0,
      "Adamax": 0.05, "NAdam": 0.05, "RAdam": 0.05}
# A second option per optimizer that a group may override.
OTHER = {"SGD": ("momentum", 0.5), "Adam": ("amsgrad", True), "AdamW": ("weight_decay", 0.2),
         "RMSprop": ("centered", True), "Adagrad": ("lr_decay", 0.1), "Adadelta": ("rho", 0.5),
         "Adamax": ("weight_decay", 0.1), "NAdam": ("momentum_decay", 0.01), "RAdam": ("weight_decay", 0.1)}


def _opt(lib, name):
    return getattr(lib.optim, name)


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_groups_with_their_own_options(name):
    key, value = OTHER[name]

    def make(lib, P):
        return _opt(lib, name)([{"params": [P[0]], "lr": LR[name] * 0.5},
                                {"params": [P[1], P[2]], key: value}], lr=LR[name])
    for dtype in ("float32", "float64"):
        want, topt, _ = trajectory(torch, make, dtype)
        got, opt, _ = trajectory(tessera, make, dtype)
        assert_trajectories_close(got, want, dtype)
        assert opt.param_groups[0]["lr"] == LR[name] * 0.5 and opt.param_groups[1][key] == value


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_add_param_group_midway(name):
    """Three steps, then a new group (its own lr) joins; later steps differ per group. torch
    1.13's Adagrad creates state only in __init__, so its oracle has the parameter from the
    start, without a grad until then (the same arithmetic)."""
    def run(lib, adagrad_oracle=False):
        P = make_params(lib, "float64", extra=1)
        x, y = data(lib, "float64")
        cls = _opt(lib, name)
        if adagrad_oracle:
            opt = cls([{"params": P[:3]}, {"params": [P[3]], "lr": LR[name] * 2}], lr=LR[name])
        else:
            opt = cls(P[:3], lr=LR[name])
        out = []
        for k in range(6):
            if k == 3 and not adagrad_oracle:
                opt.add_param_group({"params": [P[3]], "lr": LR[name] * 2})
            opt.zero_grad(set_to_none=True)
            loss_fn(P, x, y, extra_scale=[1.0 if k >= 3 else 0.0]).backward()
            if k < 3:
                P[3].grad = None
            opt.step()
            out.append(snapshot(P))
        return out, opt
    want, _ = run(torch, adagrad_oracle=(name == "Adagrad"))
    got, opt = run(tessera)
    assert_trajectories_close(got, want, "float64")
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["lr"] == LR[name] * 2


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_params_without_grad_are_skipped(name):
    def run(lib):
        P = make_params(lib, "float64", extra=1)
        x, y = data(lib, "float64")
        opt = _opt(lib, name)(P, lr=LR[name])
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(P, x, y, extra_scale=[0.0]).backward()
            opt.step()
        return P, opt
    (tP, topt), (P, opt) = run(torch), run(tessera)
    assert P[3].grad is None
    np.testing.assert_array_equal(P[3].detach().numpy(), tP[3].detach().numpy())
    # Lazily created state exists only for parameters that had a grad (Adagrad: all, eagerly).
    assert (P[3] in opt.state and len(opt.state[P[3]]) > 0) == (tP[3] in topt.state and len(topt.state[tP[3]]) > 0)


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
@pytest.mark.parametrize("foreach", [None, True])
def test_step_counts_differ_within_a_group(name, foreach):
    """Parameter 3 gets a grad from the fourth step on, so one group holds two step counts:
    the step-dependent scalars (bias corrections, Adagrad's decayed lr, NAdam's mu) must
    follow each parameter's own count."""
    kw = dict(lr=LR[name])
    if name == "Adagrad":
        kw["lr_decay"] = 0.1

    def run(lib):
        P = make_params(lib, "float64", extra=2)
        x, y = data(lib, "float64")
        # The oracle is torch's single-tensor update: 1.13's foreach variants of several
        # optimizers (NAdam, RAdam, Adagrad) use a different arithmetic.
        opt = _opt(lib, name)(P, **(dict(kw, foreach=foreach) if lib is tessera else kw))
        out = []
        for k in range(6):
            opt.zero_grad(set_to_none=True)
            loss_fn(P, x, y, extra_scale=[1.0, 1.0 if k >= 3 else 0.0]).backward()
            if k < 3:
                P[4].grad = None
            opt.step()
            out.append(snapshot(P))
        return out, opt
    want, topt = run(torch)
    got, opt = run(tessera)
    assert_trajectories_close(got, want, "float64")
    steps = {float(s["step"]) for s in opt.state.values() if "step" in s}
    if name not in ("SGD",):
        assert steps == {3.0, 6.0}


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
@pytest.mark.parametrize("foreach", [None, True])
def test_intermittent_grads_keep_each_parameters_step(name, foreach):
    """Parameters 3 and 4 miss steps on and off, so the group holds one step count at first
    and up to three later: the grouping by step, and its all-equal shortcut, must follow
    each parameter's own count throughout."""
    kw = dict(lr=LR[name])
    if name == "Adagrad":
        kw["lr_decay"] = 0.1
    has_grad = {3: (0, 1, 3, 5, 6), 4: (2, 3, 5, 6, 7)}

    def run(lib):
        P = make_params(lib, "float64", extra=2)
        x, y = data(lib, "float64")
        opt = _opt(lib, name)(P, **(dict(kw, foreach=foreach) if lib is tessera else kw))
        out = []
        for k in range(8):
            opt.zero_grad(set_to_none=True)
            loss_fn(P, x, y, extra_scale=[1.0 if k in has_grad[i] else 0.0 for i in (3, 4)]).backward()
            for i in (3, 4):
                if k not in has_grad[i]:
                    P[i].grad = None
            opt.step()
            out.append(snapshot(P))
        return out, opt, P
    want, _, _ = run(torch)
    got, opt, P = run(tessera)
    assert_trajectories_close(got, want, "float64")
    if name != "SGD":
        assert [float(opt.state[p]["step"]) for p in P] == [8.0, 8.0, 8.0, 5.0, 5.0]


def test_by_step_groups_unstackable_steps():
    """Steps of mixed shapes (a torch state_dict from a fused or capturable run keeps
    shape-(1,) steps) or mixed dtypes group by value, as do all-equal steps."""
    from tessera.optim.optimizer import _by_step
    for steps in ([tessera.tensor(2.0), tessera.tensor([3.0]), tessera.tensor(2.0)],
                  [tessera.tensor(2.0), tessera.tensor(3, dtype=tessera.int64), tessera.tensor(2.0)],
                  [tessera.tensor([2.0]), tessera.tensor([3.0]), tessera.tensor([2.0])]):
        got = {step: lists for step, lists in _by_step(steps, ["a", "b", "c"], [0, 1, 2])}
        assert got == {2.0: [["a", "c"], [0, 2]], 3.0: [["b"], [1]]}
    got = list(_by_step([tessera.tensor(4.0)] * 3, ["a", "b", "c"]))
    assert got == [(4.0, [["a", "b", "c"]])]


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_step_with_closure_returns_the_loss(name):
    def run(lib):
        P = make_params(lib, "float64")
        x, y = data(lib, "float64")
        opt = _opt(lib, name)(P, lr=LR[name])
        calls, losses = [], []

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = loss_fn(P, x, y)
            loss.backward()
            return loss
        for _ in range(4):
            with lib.no_grad():  # the closure still runs with grad enabled
                losses.append(float(opt.step(closure)))
        return losses, len(calls), snapshot(P)
    (tl, tcalls, tP), (l, calls, P) = run(torch), run(tessera)
    assert calls == tcalls == 4
    np.testing.assert_allclose(l, tl, rtol=1e-12)
    assert_trajectories_close([P], [tP], "float64")
    # Without a closure, step returns None.
    P = make_params(tessera, "float64")
    assert _opt(tessera, name)(P, lr=LR[name]).step() is None


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    P = make_params(tessera, "float64")
    x, y = data(tessera, "float64")
    opt = tessera.optim.Adam(P)
    loss_fn(P, x, y).backward()
    grads = [p.grad for p in P]
    opt.zero_grad(set_to_none=set_to_none)
    for p, g in zip(P, grads):
        if set_to_none:
            assert p.grad is None
        else:
            # The same storage, zeroed in place (tessera's .grad is a fresh Python wrapper on
            # each access, so identity is checked through the data pointer).
            assert p.grad.data_ptr() == g.data_ptr() and not p.grad.requires_grad
            assert np.all(g.numpy() == 0)
    # zero_grad's default is current torch's: set_to_none=True.
    loss_fn(P, x, y).backward()
    opt.zero_grad()
    assert all(p.grad is None for p in P)


# ---------------------------------------------------------------- errors

def _both(fn):
    """fn(lib) on torch then tessera: the same exception class and message."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(tessera)
    assert type(got.value) is type(want.value), (got.value, want.value)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_structural_errors_like_torch(name):
    _both(lambda lib: _opt(lib, name)([], lr=0.1))
    _both(lambda lib: _opt(lib, name)([lib.ones(2, requires_grad=True) * 2], lr=0.1))

    def duplicate(lib):
        p = lib.nn.Parameter(lib.ones(2))
        _opt(lib, name)([{"params": [p]}, {"params": [p]}], lr=0.1)
    _both(duplicate)

    def later_duplicate(lib):
        p = lib.nn.Parameter(lib.ones(2))
        _opt(lib, name)([p], lr=0.1).add_param_group({"params": [p]})
    _both(later_duplicate)

    def set_of_params(lib):
        _opt(lib, name)([{"params": {lib.nn.Parameter(lib.ones(2))}}], lr=0.1)
    _both(set_of_params)


INVALID = {
    "SGD": [dict(lr=-1), dict(lr=0.1, momentum=-0.5), dict(lr=0.1, weight_decay=-1),
            dict(lr=0.1, nesterov=True), dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)],
    "Adam": [dict(lr=-1), dict(eps=-1e-8), dict(betas=(1.0, 0.9)), dict(betas=(0.9, -0.1)),
             dict(weight_decay=-1)],
    "AdamW": [dict(lr=-0.5), dict(eps=-1), dict(betas=(-0.1, 0.9)), dict(betas=(0.9, 1.0)),
              dict(weight_decay=-0.1)],
    "RMSprop": [dict(lr=-1), dict(eps=-1), dict(momentum=-1), dict(weight_decay=-1), dict(alpha=-0.1)],
    "Adagrad": [dict(lr=-1), dict(lr_decay=-1), dict(weight_decay=-1), dict(initial_accumulator_value=-1),
                dict(eps=-1)],
    "Adadelta": [dict(lr=-1), dict(rho=1.5), dict(rho=-0.1), dict(eps=-1), dict(weight_decay=-1)],
    "Adamax": [dict(lr=-1), dict(eps=-1), dict(betas=(1.0, 0.9)), dict(betas=(0.9, 1.0)), dict(weight_decay=-1)],
    "NAdam": [dict(lr=-1), dict(eps=-1), dict(betas=(1.0, 0.9)), dict(betas=(0.9, 1.0)), dict(weight_decay=-1),
              dict(momentum_decay=-1)],
    "RAdam": [dict(lr=-1), dict(eps=-1), dict(betas=(1.0, 0.9)), dict(betas=(0.9, 1.0)), dict(weight_decay=-1)],
}


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_invalid_arguments_like_torch(name):
    for kw in INVALID[name]:
        _both(lambda lib: _opt(lib, name)([lib.nn.Parameter(lib.ones(2))], **kw))
    with pytest.raises(ValueError, match=r"^Invalid learning rate: -1$"):
        _opt(tessera, name)([tessera.nn.Parameter(tessera.ones(2))], lr=-1)


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_unsupported_flags(name):
    p = tessera.nn.Parameter(tessera.ones(2))
    with pytest.raises(NotImplementedError, match="differentiable"):
        _opt(tessera, name)([p], differentiable=True)
    if name not in ("SGD", "Adagrad"):  # the two have no capturable argument
        with pytest.raises(NotImplementedError, match="capturable"):
            _opt(tessera, name)([p], capturable=True)


def test_sgd_default_lr_is_current_torchs():
    # torch 1.13 required lr; current torch defaults it to 1e-3 (pytorch#114467).
    opt = tessera.optim.SGD([tessera.nn.Parameter(tessera.ones(2))])
    assert opt.defaults["lr"] == 1e-3 and opt.param_groups[0]["lr"] == 1e-3
    with pytest.raises(TypeError):
        tessera.optim.SGD(tessera.nn.Parameter(tessera.ones(2)))  # a bare tensor, not an iterable


def test_adagrad_rejects_fused():
    with pytest.raises(NotImplementedError, match="fused"):
        tessera.optim.Adagrad([tessera.nn.Parameter(tessera.ones(2))], fused=True)


def test_defaults_and_signatures_follow_current_torch():
    import inspect
    expected = {
        "RMSprop": ["params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered", "capturable",
                    "foreach", "maximize", "differentiable"],
        "Adagrad": ["params", "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "foreach",
                    "maximize", "differentiable", "fused"],
        "Adadelta": ["params", "lr", "rho", "eps", "weight_decay", "foreach", "capturable", "maximize",
                     "differentiable"],
        "Adamax": ["params", "lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable",
                   "capturable"],
        "NAdam": ["params", "lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay",
                  "foreach", "maximize", "capturable", "differentiable"],
        "RAdam": ["params", "lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "foreach", "maximize",
                  "capturable", "differentiable"],
    }
    for name, params in expected.items():
        sig = inspect.signature(getattr(tessera.optim, name).__init__)
        assert list(sig.parameters)[1:] == params, name
        # Defaults shared with 1.13 are 1.13's.
        tsig = inspect.signature(getattr(torch.optim, name).__init__)
        for arg, p in tsig.parameters.items():
            if arg in sig.parameters and p.default is not inspect.Parameter.empty:
                assert sig.parameters[arg].default == p.default, (name, arg)
