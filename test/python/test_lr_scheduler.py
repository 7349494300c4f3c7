"""tessera.optim.lr_scheduler against torch.optim.lr_scheduler (1.13): the same schedule
driven through a torch and a tessera optimizer must give the same lrs (and momentum /
betas) at every step; state_dict round trips, keys, errors and warnings match torch's.
Where current torch changed 1.13's behaviour the test says so and follows current torch."""
import copy
import math
import pickle
import warnings

import numpy as np
import pytest
import torch

import tessera

TOL = 1e-12


class Lib:
    """One library's side: its tensor module, optim and lr_scheduler."""

    def __init__(self, lib):
        self.lib = lib
        self.optim = lib.optim
        self.sched = lib.optim.lr_scheduler
        self.is_torch = lib is torch

    def params(self, n=2):
        out = []
        for i in range(n):
            data = np.linspace(-1.0, 1.0, 3 + i)
            p = (torch.from_numpy(data) if self.is_torch else tessera.from_numpy(data)).requires_grad_(True)
            p.grad = p.detach() * 0 + 0.5
            out.append(p)
        return out

    def groups(self, lrs=(0.1, 0.05)):
        return [{"params": [p], "lr": lr} for p, lr in zip(self.params(len(lrs)), lrs)]

    def opt(self, kind="sgd", lrs=(0.1, 0.05)):
        if kind == "sgd":
            return self.optim.SGD(self.groups(lrs), lr=0.1, momentum=0.9)
        if kind == "adam":
            return self.optim.Adam(self.groups(lrs), lr=0.1, betas=(0.9, 0.99))
        if kind == "plain":  # an optimizer with neither momentum nor betas
            base = self.optim.Optimizer

            class Plain(base):
                def __init__(self, params):
                    super().__init__(params, dict(lr=0.1))

                def step(self, closure=None):
                    return None
            return Plain(self.groups(lrs))
        raise ValueError(kind)


TORCH, TESSERA = Lib(torch), Lib(tessera)


def snapshot(opt, sched):
    groups = opt.param_groups
    if hasattr(sched, "get_last_lr"):
        last = list(sched.get_last_lr())
    else:  # 1.13's ReduceLROnPlateau had no get_last_lr (and no _last_lr before its first step)
        last = list(getattr(sched, "_last_lr", [g["lr"] for g in groups]))
    return {"last": last, "lr": [g["lr"] for g in groups],
            "momentum": [g.get("momentum") for g in groups],
            "beta1": [g["betas"][0] if "betas" in g else None for g in groups]}


def assert_close(got, want, what):
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        if w is None:
            assert g is None, what
        else:
            assert g == pytest.approx(w, abs=TOL, rel=0), f"{what}: {got} vs {want}"


def assert_same_snapshot(got, want, where):
    for key in want:
        assert_close(got[key], want[key], f"{key} at {where}")


def trace(side, make, steps, kind="sgd", step=lambda sched, i: sched.step()):
    """Snapshots after construction and after each (optimizer.step(); scheduler.step())."""
    opt = side.opt(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1.13 warns where current torch does not (SequentialLR)
        sched = make(side.sched, opt)
        out = [snapshot(opt, sched)]
        for i in range(steps):
            opt.step()
            step(sched, i)
            out.append(snapshot(opt, sched))
    return out


def run_tessera_quietly(make, steps, kind="sgd", step=lambda sched, i: sched.step()):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the ordinary loop must not warn
        return trace(TESSERA, make, steps, kind, step)


def compare(make, steps, kind="sgd", step=lambda sched, i: sched.step()):
    want = trace(TORCH, make, steps, kind, step)
    got = run_tessera_quietly(make, steps, kind, step)
    assert len(got) == len(want) == steps + 1
    for i, (g, w) in enumerate(zip(got, want)):
        assert_same_snapshot(g, w, f"step {i}")


def plateau_step(metrics):
    return lambda sched, i: sched.step(metrics[i])


METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.85, 0.86, 0.86, 0.86, 0.8499, 0.86, 0.87, 0.9, 0.9, 0.9, 0.7,
           0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.6999, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]


class Scale:
    """A callable object: its attributes go into the state dict (a function's do not)."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x):
        return self.rate ** x


# (id, factory(sched_module, optimizer), steps, optimizer kind, step call)
CASES = [
    ("step", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5), 30, "sgd", None),
    ("step_default_gamma", lambda S, o: S.StepLR(o, 7), 30, "sgd", None),
    ("multistep", lambda S, o: S.MultiStepLR(o, milestones=[5, 10, 10, 25], gamma=0.3), 40, "sgd", None),
    ("multistep_unsorted", lambda S, o: S.MultiStepLR(o, [20, 3]), 30, "sgd", None),
    ("exponential", lambda S, o: S.ExponentialLR(o, gamma=0.9), 40, "sgd", None),
    ("cosine", lambda S, o: S.CosineAnnealingLR(o, T_max=10), 45, "sgd", None),
    ("cosine_eta_min", lambda S, o: S.CosineAnnealingLR(o, T_max=7, eta_min=0.01), 40, "sgd", None),
    ("warm_restarts", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5), 40, "sgd", None),
    ("warm_restarts_mult", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001), 50,
     "sgd", None),
    ("lambda", lambda S, o: S.LambdaLR(o, lambda e: 0.95 ** e), 30, "sgd", None),
    ("lambda_per_group", lambda S, o: S.LambdaLR(o, [lambda e: 1 / (e + 1), Scale(0.9)]), 30, "sgd", None),
    ("multiplicative", lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95), 30, "sgd", None),
    ("multiplicative_per_group", lambda S, o: S.MultiplicativeLR(o, (lambda e: 1.0 - 0.01 * e, Scale(0.99))), 30,
     "sgd", None),
    ("linear", lambda S, o: S.LinearLR(o), 20, "sgd", None),
    ("linear_down", lambda S, o: S.LinearLR(o, start_factor=0.5, end_factor=0.1, total_iters=10), 30, "sgd", None),
    ("linear_to_zero", lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.0, total_iters=20), 30, "sgd",
     None),
    ("constant", lambda S, o: S.ConstantLR(o), 20, "sgd", None),
    ("constant_half", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=8), 20, "sgd", None),
    ("polynomial", lambda S, o: S.PolynomialLR(o), 20, "sgd", None),
    ("polynomial_square", lambda S, o: S.PolynomialLR(o, total_iters=20, power=2.0), 30, "sgd", None),
    ("polynomial_sqrt", lambda S, o: S.PolynomialLR(o, total_iters=15, power=0.5), 30, "sgd", None),
    ("onecycle", lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=50), 49, "sgd", None),
    ("onecycle_epochs_linear", lambda S, o: S.OneCycleLR(o, max_lr=0.5, epochs=5, steps_per_epoch=10,
                                                         anneal_strategy="linear"), 49, "sgd", None),
    ("onecycle_three_phase", lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=40, three_phase=True),
     40, "sgd", None),
    ("onecycle_options", lambda S, o: S.OneCycleLR(o, max_lr=0.8, total_steps=60, pct_start=0.25, div_factor=10.0,
                                                   final_div_factor=100.0, base_momentum=[0.8, 0.7],
                                                   max_momentum=0.99), 59, "sgd", None),
    ("onecycle_no_momentum", lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=30, cycle_momentum=False), 29,
     "sgd", None),
    ("onecycle_betas", lambda S, o: S.OneCycleLR(o, max_lr=0.01, total_steps=40), 39, "adam", None),
    ("onecycle_betas_three_phase", lambda S, o: S.OneCycleLR(o, max_lr=0.01, total_steps=30, three_phase=True,
                                                             anneal_strategy="linear"), 29, "adam", None),
    ("cyclic", lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5), 40, "sgd", None),
    ("cyclic_triangular2", lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=4,
                                                   step_size_down=6, mode="triangular2"), 50, "sgd", None),
    ("cyclic_exp_range", lambda S, o: S.CyclicLR(o, 0.001, 0.1, step_size_up=3, mode="exp_range", gamma=0.9,
                                                 base_momentum=0.7, max_momentum=[0.95, 0.9]), 40, "sgd", None),
    ("cyclic_scale_fn", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x,
                                                scale_mode="iterations", cycle_momentum=False), 30, "sgd", None),
    ("cyclic_scale_obj", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=Scale(0.8)), 30, "sgd",
     None),
    ("plateau", lambda S, o: S.ReduceLROnPlateau(o, patience=2), 30, "sgd", plateau_step(METRICS)),
    ("plateau_abs_cooldown", lambda S, o: S.ReduceLROnPlateau(o, threshold=0.05, threshold_mode="abs",
                                                              patience=1, cooldown=2, factor=0.5), 30, "sgd",
     plateau_step(METRICS)),
    ("plateau_max", lambda S, o: S.ReduceLROnPlateau(o, mode="max", patience=0, min_lr=[0.02, 0.001]), 30, "sgd",
     plateau_step([-m for m in METRICS])),
    ("plateau_max_abs", lambda S, o: S.ReduceLROnPlateau(o, "max", 0.3, 1, 0.01, "abs", min_lr=0.004), 30, "sgd",
     plateau_step([1 - m for m in METRICS])),
    ("plateau_eps", lambda S, o: S.ReduceLROnPlateau(o, patience=0, eps=0.02), 30, "sgd", plateau_step(METRICS)),
    ("sequential", lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.1, total_iters=5),
                                                   S.ExponentialLR(o, gamma=0.9)], milestones=[5]), 30, "sgd", None),
    ("sequential_three", lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.2, total_iters=4),
                                                         S.CosineAnnealingLR(o, T_max=20, eta_min=0.001),
                                                         S.StepLR(o, 3)], milestones=[4, 24]), 40, "sgd", None),
    ("sequential_lambda", lambda S, o: S.SequentialLR(o, [S.LambdaLR(o, lambda e: (e + 1) / 5),
                                                          S.MultiStepLR(o, [3, 6])], [5]), 20, "sgd", None),
    ("chained", lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.1, total_iters=5),
                                                 S.ExponentialLR(o, gamma=0.9)]), 30, "sgd", None),
    ("chained_three", lambda S, o: S.ChainedScheduler([S.StepLR(o, 4, 0.5), S.MultiStepLR(o, [7, 15]),
                                                       S.LinearLR(o, 0.5, total_iters=6)]), 30, "sgd", None),
]


def _case_params():
    return [pytest.param(make, steps, kind, step, id=name) for name, make, steps, kind, step in CASES]


@pytest.mark.parametrize("make,steps,kind,step", _case_params())
def test_schedule_matches_torch(make, steps, kind, step):
    compare(make, steps, kind, step or (lambda sched, i: sched.step()))


@pytest.mark.parametrize("make,steps,kind,step", _case_params())
def test_state_dict_round_trip(make, steps, kind, step):
    """Save mid-run (through pickle), load into a fresh optimizer and scheduler, continue:
    the same lrs as torch's uninterrupted run."""
    step = step or (lambda sched, i: sched.step())
    want = trace(TORCH, make, steps, kind, step)
    cut = steps // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = TESSERA.opt(kind)
        sched = make(TESSERA.sched, opt)
        for i in range(cut):
            opt.step()
            step(sched, i)
        saved_sched = pickle.loads(pickle.dumps(sched.state_dict()))
        saved_opt = opt.state_dict()
        opt2 = TESSERA.opt(kind)
        sched2 = make(TESSERA.sched, opt2)
        opt2.load_state_dict(saved_opt)
        sched2.load_state_dict(saved_sched)
        assert_same_snapshot(snapshot(opt2, sched2), want[cut], "after load")
        for i in range(cut, steps):
            opt2.step()
            step(sched2, i)
            assert_same_snapshot(snapshot(opt2, sched2), want[i + 1], f"step {i + 1} after load")


# Attributes current torch keeps that 1.13 did not, and the reverse: `verbose` is gone
# (deprecated in 2.2, then removed), `_is_initial` marks the constructor's step, CyclicLR
# drops its weak method and records use_beta1, OneCycleLR names its anneal function instead
# of holding a bound method, ReduceLROnPlateau keeps default_min_lr.
REMOVED = {"verbose", "_scale_fn_ref", "anneal_func"}
ADDED = {"_is_initial", "use_beta1", "_anneal_func_type", "default_min_lr"}


def normalized_keys(state):
    keys = set(state) - REMOVED - ADDED
    nested = [normalized_keys(s) for s in state.get("_schedulers", [])]
    return keys, nested


@pytest.mark.parametrize("make,steps,kind,step", _case_params())
def test_state_dict_keys(make, steps, kind, step):
    step = step or (lambda sched, i: sched.step())
    states = []
    for side in (TORCH, TESSERA):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = side.opt(kind)
            sched = make(side.sched, opt)
            for i in range(3):
                opt.step()
                step(sched, i)
            states.append(sched.state_dict())
    want, got = states
    assert normalized_keys(got) == normalized_keys(want)
    assert "optimizer" not in got
    # the plain values agree too (floats, ints, strings, lists of them)
    for key, value in want.items():
        if key in got and isinstance(value, (int, float, str)) and not isinstance(value, bool):
            assert got[key] == pytest.approx(value, abs=TOL), key


def test_lambda_state_dict_keeps_only_callable_objects():
    opt = TESSERA.opt()
    fn_obj = Scale(0.9)
    sched = TESSERA.sched.LambdaLR(opt, [lambda e: 1.0, fn_obj])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [None, {"rate": 0.9}]
    want = TORCH.sched.LambdaLR(TORCH.opt(), [lambda e: 1.0, Scale(0.9)]).state_dict()["lr_lambdas"]
    assert state["lr_lambdas"] == want
    fresh = Scale(0.5)
    sched2 = TESSERA.sched.LambdaLR(TESSERA.opt(), [lambda e: 1.0, fresh])
    sched2.load_state_dict(state)
    assert fresh.rate == 0.9
    assert "lr_lambdas" in state  # load_state_dict leaves the caller's dict whole


def test_cyclic_state_dict_holds_no_functions():
    # current torch: no weak method; a function scale_fn is saved as None, an object as its dict
    opt = TESSERA.opt()
    s = TESSERA.sched.CyclicLR(opt, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 1.0)
    assert s.state_dict()["_scale_fn_custom"] is None and "_scale_fn_ref" not in s.state_dict()
    s = TESSERA.sched.CyclicLR(TESSERA.opt(), 0.01, 0.1, step_size_up=3, scale_fn=Scale(0.7))
    assert s.state_dict()["_scale_fn_custom"] == {"rate": 0.7}
    pickle.dumps(TESSERA.sched.OneCycleLR(TESSERA.opt(), 0.1, total_steps=10).state_dict())


@pytest.mark.parametrize("T_0,T_mult,eta_min", [(5, 1, 0.0), (3, 2, 0.001), (2, 3, 0.01)])
def test_warm_restarts_fractional_epochs(T_0, T_mult, eta_min):
    iters = 7
    compare(lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=T_0, T_mult=T_mult, eta_min=eta_min), 8 * iters,
            step=lambda sched, i: sched.step(i // iters + (i % iters) / iters))


def test_warm_restarts_interleaved():
    def step(sched, i):
        if i == 20:
            sched.step(26)
        elif i == 25:
            sched.step(3.5)
        else:
            sched.step()
    compare(lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2), 35, step=step)


@pytest.mark.parametrize("name,make", [
    ("step", lambda S, o: S.StepLR(o, 3, 0.5)),
    ("multistep", lambda S, o: S.MultiStepLR(o, [2, 5, 5, 9], 0.5)),
    ("exponential", lambda S, o: S.ExponentialLR(o, 0.8)),
    ("cosine", lambda S, o: S.CosineAnnealingLR(o, 6, 0.01)),
    ("linear", lambda S, o: S.LinearLR(o, 0.25, 0.75, 6)),
    ("constant", lambda S, o: S.ConstantLR(o, 0.5, 4)),
    ("polynomial", lambda S, o: S.PolynomialLR(o, 8, 1.5)),
    ("lambda", lambda S, o: S.LambdaLR(o, lambda e: 1 / (1 + e))),
])
def test_step_with_epoch_uses_closed_form(name, make):
    epochs = [0, 5, 2, 9, 13, 13, 4, 1, 20]
    want = trace(TORCH, make, len(epochs), step=lambda sched, i: sched.step(epochs[i]))
    opt = TESSERA.opt()
    sched = make(TESSERA.sched, opt)
    for i, epoch in enumerate(epochs):
        opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            sched.step(epoch)
        assert_same_snapshot(snapshot(opt, sched), want[i + 1], f"epoch {epoch}")


@pytest.mark.parametrize("name,kw", [("CosineAnnealingLR", dict(T_max=10)), ("ExponentialLR", dict(gamma=0.9)),
                                     ("StepLR", dict(step_size=3)), ("MultiStepLR", dict(milestones=[6, 9])),
                                     ("LinearLR", dict(total_iters=8)), ("PolynomialLR", dict(total_iters=9))])
def test_resume_with_last_epoch(name, kw):
    """Built with last_epoch=4 (initial_lr already in the groups, lr as a checkpoint left
    it). Current torch's constructor step leaves a chainable scheduler's lr alone (1.13
    recomputed it for CosineAnnealingLR, ExponentialLR, PolynomialLR, LinearLR); from
    there on, each step must match torch's from the same lr."""
    preset = [0.07, 0.03]
    traces = []
    for side in (TORCH, TESSERA):
        opt = side.opt()
        for g, lr in zip(opt.param_groups, preset):
            g["initial_lr"], g["lr"] = g["lr"], lr
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = getattr(side.sched, name)(opt, last_epoch=4, **kw)
        if side.is_torch:
            for g, lr in zip(opt.param_groups, preset):
                g["lr"] = lr
        else:
            assert [g["lr"] for g in opt.param_groups] == preset
        out = []
        for _ in range(15):
            opt.step()
            sched.step()
            out.append(snapshot(opt, sched))
        traces.append(out)
    for i, (w, g) in enumerate(zip(*traces)):
        assert_same_snapshot(g, w, f"step {i + 1} after resuming")


def test_warns_scheduler_step_before_optimizer_step():
    records = {}
    for side in (TORCH, TESSERA):
        opt = side.opt()
        sched = side.sched.StepLR(opt, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step()
        records[side.is_torch] = [(w.category, str(w.message)) for w in caught]
    assert records[False] == records[True]
    assert records[False] and "Detected call of `lr_scheduler.step()` before `optimizer.step()`" in records[False][0][1]


def test_no_warning_in_the_right_order_and_override_warning():
    opt = TESSERA.opt()
    sched = TESSERA.sched.ExponentialLR(opt, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
        sched.step()
    # a step() replaced after the scheduler wrapped it
    for side in (TORCH, TESSERA):
        opt = side.opt()
        sched = side.sched.ExponentialLR(opt, 0.5)
        opt.step = lambda closure=None: None
        with pytest.warns(UserWarning, match="Seems like `optimizer.step\\(\\)` has been overridden"):
            sched.step()


def test_wrapped_optimizer_step_still_steps():
    opt = TESSERA.opt()
    before = opt.param_groups[0]["params"][0].detach().clone()
    TESSERA.sched.StepLR(opt, 2)
    TESSERA.sched.StepLR(opt, 3)  # a second scheduler must not wrap twice
    assert getattr(opt.step, "_wrapped_by_lr_sched", False)
    assert not hasattr(opt.step.__wrapped__, "_wrapped_by_lr_sched")
    opt.step()
    assert opt._opt_called
    after = opt.param_groups[0]["params"][0]
    assert not tessera.equal(before, after)


def test_get_lr_outside_step_warns():
    for side in (TORCH, TESSERA):
        sched = side.sched.StepLR(side.opt(), 2)
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()


def test_initial_lr_and_base_lrs():
    for make in (lambda S, o: S.StepLR(o, 2), lambda S, o: S.OneCycleLR(o, 1.0, total_steps=10),
                 lambda S, o: S.CyclicLR(o, [0.01, 0.02], 0.1)):
        got_opt, want_opt = TESSERA.opt(), TORCH.opt()
        got, want = make(TESSERA.sched, got_opt), make(TORCH.sched, want_opt)
        assert_close(got.base_lrs, want.base_lrs, "base_lrs")
        assert_close([g["initial_lr"] for g in got_opt.param_groups],
                     [g["initial_lr"] for g in want_opt.param_groups], "initial_lr")


def test_onecycle_step_past_total_steps():
    for side in (TORCH, TESSERA):
        opt = side.opt()
        sched = side.sched.OneCycleLR(opt, 1.0, total_steps=5)
        for _ in range(5):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step"):
            opt.step()
            sched.step()


def test_cyclic_betas_follow_momentum_schedule():
    # current torch cycles Adam's beta1 (1.13 refused an optimizer without 'momentum'):
    # beta1 must follow the momentum sequence torch gives SGD.
    make = lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4, base_momentum=0.8, max_momentum=0.95)  # noqa: E731
    want = trace(TORCH, make, 20, "sgd")
    got = run_tessera_quietly(make, 20, "adam")
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g["beta1"], w["momentum"], f"beta1 at {i}")
        assert_close(g["lr"], w["lr"], f"lr at {i}")


def test_plateau_metric_tensor_and_get_last_lr_before_step():
    opt = TESSERA.opt()
    sched = TESSERA.sched.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    # current torch sets _last_lr in the constructor (1.13 only after the first step)
    assert sched.get_last_lr() == [0.1, 0.05]
    sched.step(tessera.tensor(1.0))
    sched.step(tessera.tensor(2.0))
    assert sched.get_last_lr() == pytest.approx([0.05, 0.025], abs=TOL)


def test_plateau_new_param_group():
    # current torch: a scalar min_lr extends to new groups; a per-group list refuses them
    opt = TESSERA.opt()
    sched = TESSERA.sched.ReduceLROnPlateau(opt, patience=0, factor=0.5, min_lr=0.03)
    opt.add_param_group({"params": TESSERA.params(1), "lr": 0.2})
    sched.step(1.0)
    sched.step(2.0)
    assert sched.get_last_lr() == pytest.approx([0.05, 0.03, 0.1], abs=TOL)
    opt = TESSERA.opt()
    sched = TESSERA.sched.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0])
    opt.add_param_group({"params": TESSERA.params(1), "lr": 0.2})
    sched.step(1.0)
    with pytest.raises(RuntimeError, match="number of param groups"):
        sched.step(2.0)


# ---------------------------------------------------------------- errors

def raises_like_torch(build, same_message=True):
    caught = []
    for side in (TORCH, TESSERA):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                build(side)
        caught.append(info)
    want, got = caught
    assert got.type is not None and got.type.__name__ == want.type.__name__, (got.value, want.value)
    if same_message:
        assert str(got.value) == str(want.value)


ERRORS = [
    ("not_an_optimizer", lambda s: s.sched.StepLR(object(), 3), True),
    ("resume_without_initial_lr", lambda s: s.sched.StepLR(s.opt(), 3, last_epoch=5), True),
    ("constant_factor_high", lambda s: s.sched.ConstantLR(s.opt(), factor=1.5), True),
    ("constant_factor_negative", lambda s: s.sched.ConstantLR(s.opt(), factor=-0.1), True),
    ("linear_start_high", lambda s: s.sched.LinearLR(s.opt(), start_factor=1.5), False),
    ("linear_end_negative", lambda s: s.sched.LinearLR(s.opt(), end_factor=-0.5), True),
    ("lambda_count", lambda s: s.sched.LambdaLR(s.opt(), [lambda e: 1.0]), True),
    ("multiplicative_count", lambda s: s.sched.MultiplicativeLR(s.opt(), [lambda e: 1.0] * 3), True),
    ("warm_T0_zero", lambda s: s.sched.CosineAnnealingWarmRestarts(s.opt(), 0), True),
    ("warm_T0_float", lambda s: s.sched.CosineAnnealingWarmRestarts(s.opt(), 2.5), True),
    ("warm_Tmult_zero", lambda s: s.sched.CosineAnnealingWarmRestarts(s.opt(), 2, T_mult=0), True),
    ("warm_Tmult_float", lambda s: s.sched.CosineAnnealingWarmRestarts(s.opt(), 2, T_mult=1.5), True),
    ("warm_negative_epoch", lambda s: s.sched.CosineAnnealingWarmRestarts(s.opt(), 2).step(-1), True),
    ("onecycle_no_steps", lambda s: s.sched.OneCycleLR(s.opt(), 0.1), True),
    ("onecycle_zero_steps", lambda s: s.sched.OneCycleLR(s.opt(), 0.1, total_steps=0), True),
    ("onecycle_float_steps", lambda s: s.sched.OneCycleLR(s.opt(), 0.1, total_steps=10.0), True),
    ("onecycle_zero_epochs", lambda s: s.sched.OneCycleLR(s.opt(), 0.1, epochs=0, steps_per_epoch=3), True),
    ("onecycle_bad_spe", lambda s: s.sched.OneCycleLR(s.opt(), 0.1, epochs=2, steps_per_epoch=-3), True),
    ("onecycle_pct_high", lambda s: s.sched.OneCycleLR(s.opt(), 0.1, total_steps=10, pct_start=1.5), True),
    ("onecycle_pct_int", lambda s: s.sched.OneCycleLR(s.opt(), 0.1, total_steps=10, pct_start=1), True),
    ("onecycle_anneal", lambda s: s.sched.OneCycleLR(s.opt(), 0.1, total_steps=10, anneal_strategy="exp"), False),
    ("onecycle_max_lr_count", lambda s: s.sched.OneCycleLR(s.opt(), [0.1, 0.2, 0.3], total_steps=10), False),
    ("onecycle_no_momentum", lambda s: s.sched.OneCycleLR(s.opt("plain"), 0.1, total_steps=10), False),
    ("cyclic_mode", lambda s: s.sched.CyclicLR(s.opt(), 0.01, 0.1, mode="sine"), True),
    ("cyclic_no_momentum", lambda s: s.sched.CyclicLR(s.opt("plain"), 0.01, 0.1), False),
    ("cyclic_base_count", lambda s: s.sched.CyclicLR(s.opt(), [0.01], 0.1), False),
    ("plateau_factor", lambda s: s.sched.ReduceLROnPlateau(s.opt(), factor=1.0), True),
    ("plateau_mode", lambda s: s.sched.ReduceLROnPlateau(s.opt(), mode="avg"), True),
    ("plateau_threshold_mode", lambda s: s.sched.ReduceLROnPlateau(s.opt(), threshold_mode="pct"), True),
    ("plateau_min_lr_count", lambda s: s.sched.ReduceLROnPlateau(s.opt(), min_lr=[0.1]), True),
    ("plateau_not_optimizer", lambda s: s.sched.ReduceLROnPlateau(object()), True),
    ("plateau_no_metric", lambda s: s.sched.ReduceLROnPlateau(s.opt()).step(), False),
    ("sequential_milestones", lambda s: (lambda o: s.sched.SequentialLR(o, [s.sched.StepLR(o, 2),
                                                                            s.sched.StepLR(o, 3)], [2, 4]))(s.opt()),
     True),
    ("sequential_other_optimizer", lambda s: (lambda o: s.sched.SequentialLR(o, [s.sched.StepLR(s.opt(), 2)], []))(
        s.opt()), False),
    ("chained_other_optimizer", lambda s: s.sched.ChainedScheduler([s.sched.StepLR(s.opt(), 2),
                                                                    s.sched.StepLR(s.opt(), 2)]), False),
]


@pytest.mark.parametrize("build,same_message", [pytest.param(b, m, id=n) for n, b, m in ERRORS])
def test_errors_like_torch(build, same_message):
    raises_like_torch(build, same_message)


def test_errors_added_by_current_torch():
    S = TESSERA.sched
    # 1.13 accepted start_factor=0 (and then divided by zero); current torch refuses it
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        S.LinearLR(TESSERA.opt(), start_factor=0.0)
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        S.MultiplicativeLR(TESSERA.opt(), 0.9)
    with pytest.raises(ValueError, match="Expected float or int eta_min"):
        S.CosineAnnealingWarmRestarts(TESSERA.opt(), 3, eta_min="0")
    with pytest.raises(ValueError, match="at least one scheduler"):
        S.SequentialLR(TESSERA.opt(), [], [])
    with pytest.raises(ValueError, match="at least one scheduler"):
        S.ChainedScheduler([])
    opt = TESSERA.opt()
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        S.ChainedScheduler([S.StepLR(opt, 2), S.ReduceLROnPlateau(opt)])
    with pytest.raises(TypeError, match="should have `optimizer`"):
        S.SequentialLR(opt, [object()], [])
    # epochs given without steps_per_epoch: a ValueError (1.13 failed comparing None)
    with pytest.raises(ValueError, match="You must define either total_steps"):
        S.OneCycleLR(TESSERA.opt(), 0.1, epochs=3)
    # verbose was removed from the constructors
    with pytest.raises(TypeError):
        S.StepLR(TESSERA.opt(), 2, verbose=True)


def test_module_layout():
    S = TESSERA.sched
    assert set(torch.optim.lr_scheduler.__all__) | {"LRScheduler"} == set(S.__all__)
    assert issubclass(S._LRScheduler, S.LRScheduler) and S._LRScheduler.__name__ == "_LRScheduler"
    assert issubclass(S.ReduceLROnPlateau, S.LRScheduler)  # current torch; 1.13's stood alone
    assert "lr_scheduler" in tessera.optim.__all__ and tessera.optim.lr_scheduler is S
    assert S.StepLR.__module__ == "tessera.optim.lr_scheduler"
    assert S.EPOCH_DEPRECATION_WARNING == torch.optim.lr_scheduler.EPOCH_DEPRECATION_WARNING
    assert math.isinf(S.ReduceLROnPlateau(TESSERA.opt()).best)
    assert copy.deepcopy(S.StepLR(TESSERA.opt(), 2).state_dict())["step_size"] == 2


def test_multistep_state_survives_a_safe_save_and_load(tmp_path):
    # MultiStepLR keeps its milestones in a collections.Counter: tessera.load's default
    # (weights_only) unpickler accepts that type, so a training checkpoint resumes
    p = tessera.nn.Parameter(tessera.zeros(2))
    opt = tessera.optim.SGD([p], lr=1.0)
    sched = tessera.optim.lr_scheduler.MultiStepLR(opt, [2, 4, 4], gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    tessera.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, tmp_path / "ckpt.pt")
    loaded = tessera.load(tmp_path / "ckpt.pt")
    assert loaded["scheduler"]["milestones"] == sched.state_dict()["milestones"]
    opt2 = tessera.optim.SGD([p], lr=1.0)
    resumed = tessera.optim.lr_scheduler.MultiStepLR(opt2, [1], gamma=0.5)
    resumed.load_state_dict(loaded["scheduler"])
    opt2.load_state_dict(loaded["optimizer"])
    reference = torch.optim.lr_scheduler.MultiStepLR(torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=1.0),
                                                     [2, 4, 4], gamma=0.5)
    for _ in range(3):
        reference.optimizer.step()
        reference.step()
    for _ in range(3):
        opt2.step()
        resumed.step()
        reference.optimizer.step()
        reference.step()
        assert resumed.get_last_lr() == reference.get_last_lr()
