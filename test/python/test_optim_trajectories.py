"""Parameter trajectories of every tessera.optim optimizer against torch.optim 1.13 on the
same small model and loss, for each option that changes the arithmetic, in float32 and
float64. Options 1.13 lacks (NAdam/RAdam maximize and decoupled weight decay) are checked
against an equivalent 1.13 run: the negated loss, or the decay applied by hand."""
import pytest
import torch

import tessera
from optim_common import assert_trajectories_close, data, loss_fn, make_params, trajectory

DTYPES = ["float32", "float64"]


def _decay_by_hand(lr, wd):
    def pre_step(P):
        for p in P:
            p.mul_(1 - lr * wd)
    return pre_step


# (name, tessera kwargs, torch kwargs or None for the same, loss sign for torch, torch pre_step, steps)
CASES = [
    ("SGD", dict(lr=0.1), None, 1.0, None, 6),
    ("SGD", dict(lr=0.1, momentum=0.9), None, 1.0, None, 6),
    ("SGD", dict(lr=0.1, momentum=0.8, dampening=0.3), None, 1.0, None, 6),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True), None, 1.0, None, 6),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.1), None, 1.0, None, 6),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True), None, 1.0, None, 6),
    ("RMSprop", dict(lr=0.01), None, 1.0, None, 6),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True), None, 1.0, None, 6),
    ("RMSprop", dict(lr=0.01, momentum=0.7), None, 1.0, None, 6),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1), None, 1.0, None, 6),
    ("RMSprop", dict(lr=0.01, maximize=True, eps=1e-3), None, 1.0, None, 6),
    ("Adagrad", dict(lr=0.1), None, 1.0, None, 6),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05), None, 1.0, None, 6),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.2), None, 1.0, None, 6),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-4), None, 1.0, None, 6),
    ("Adadelta", dict(), None, 1.0, None, 6),
    ("Adadelta", dict(lr=0.5, rho=0.5, weight_decay=0.1), None, 1.0, None, 6),
    ("Adadelta", dict(maximize=True, eps=1e-4), None, 1.0, None, 6),
    ("Adamax", dict(lr=0.05), None, 1.0, None, 6),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1), None, 1.0, None, 6),
    ("Adamax", dict(lr=0.05, maximize=True), None, 1.0, None, 6),
    ("NAdam", dict(lr=0.05), None, 1.0, None, 6),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01), None, 1.0, None, 6),
    ("NAdam", dict(lr=0.05, maximize=True), dict(lr=0.05), -1.0, None, 6),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), dict(lr=0.05), 1.0,
     _decay_by_hand(0.05, 0.1), 6),
    # eight steps: rho_t passes 5 at step 6 with beta2=0.999, so both branches run.
    ("RAdam", dict(lr=0.05), None, 1.0, None, 8),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1), None, 1.0, None, 8),
    ("RAdam", dict(lr=0.05, maximize=True), dict(lr=0.05), -1.0, None, 8),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), dict(lr=0.05), 1.0,
     _decay_by_hand(0.05, 0.1), 8),
]

# SGD: the fused kernel is the default for contiguous float parameters; foreach=True
# takes the _foreach_* composition.
for _kw in (dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
            dict(lr=0.05, momentum=0.8, dampening=0.3, maximize=True), dict(lr=0.1)):
    CASES.append(("SGD", dict(_kw, foreach=True), dict(_kw, foreach=True), 1.0, None, 6))

# Adam/AdamW: the fused kernel (the default for contiguous float parameters) and foreach=True.
for _name in ("Adam", "AdamW"):
    for _kw in (dict(lr=0.05), dict(lr=0.05, amsgrad=True), dict(lr=0.05, weight_decay=0.1),
                dict(lr=0.05, maximize=True), dict(lr=0.05, amsgrad=True, maximize=True, weight_decay=0.05,
                                                   betas=(0.8, 0.95))):
        CASES.append((_name, _kw, None, 1.0, None, 6))
        CASES.append((_name, dict(_kw, foreach=True), dict(_kw, foreach=True), 1.0, None, 6))


def _case_id(case):
    name, kw = case[0], case[1]
    return name + "-" + ",".join("%s=%s" % (k, v) for k, v in sorted(kw.items()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_trajectory_matches_torch(case, dtype):
    name, kw, torch_kw, sign, pre_step, steps = case
    torch_kw = kw if torch_kw is None else torch_kw
    want, _, _ = trajectory(torch, lambda lib, P: getattr(torch.optim, name)(P, **torch_kw), dtype, steps,
                            sign=sign, pre_step=pre_step)
    got, _, _ = trajectory(tessera, lambda lib, P: getattr(tessera.optim, name)(P, **kw), dtype, steps)
    assert_trajectories_close(got, want, dtype)


def test_adam_fused_and_foreach_paths_agree():
    """The fused kernel and the foreach composition are two routes to one arithmetic."""
    for name in ("Adam", "AdamW"):
        for kw in (dict(lr=0.05, amsgrad=True, weight_decay=0.1), dict(lr=0.05, maximize=True)):
            a, _, _ = trajectory(tessera, lambda lib, P: getattr(tessera.optim, name)(P, **kw), "float64")
            b, _, _ = trajectory(tessera, lambda lib, P: getattr(tessera.optim, name)(P, foreach=True, **kw),
                                 "float64")
            assert_trajectories_close(a, b, "float64")


def test_adam_fused_flag_and_noncontiguous_params():
    """fused=True takes the fused kernel; a non-contiguous parameter falls back to foreach
    and still follows torch."""
    want, _, _ = trajectory(torch, lambda lib, P: torch.optim.Adam(P, lr=0.05), "float64")
    got, _, _ = trajectory(tessera, lambda lib, P: tessera.optim.Adam(P, lr=0.05, fused=True), "float64")
    assert_trajectories_close(got, want, "float64")

    def run(lib):
        base = lib.nn.Parameter(lib.ones(4, 3, dtype=lib.float64) * 0.3)
        W = base.detach().t()  # a non-contiguous leaf
        W.requires_grad_(True)
        opt = lib.optim.Adam([W], lr=0.1)
        target = lib.ones(3, 4, dtype=lib.float64).cumsum(1)
        for _ in range(4):
            opt.zero_grad()
            ((W - target) ** 2).sum().backward()
            opt.step()
        return W.detach().contiguous().numpy()
    import numpy as np
    np.testing.assert_allclose(run(tessera), run(torch), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, kw", [("Adam", dict(lr=0.05, amsgrad=True)), ("AdamW", dict(lr=0.05)),
                                      ("SGD", dict(lr=0.1, momentum=0.9)), ("SGD", dict(lr=0.1))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_param_made_noncontiguous_midway_follows_torch(name, kw, dtype):
    """After two fused steps a parameter's .data becomes a transposed (non-contiguous) copy
    in place; the fused-path check reads each tensor afresh every step, so the group takes
    the foreach route from then on and the run goes on as torch's."""
    def run(lib):
        P = make_params(lib, dtype)
        x, y = data(lib, dtype)
        opt = getattr(lib.optim, name)(P, **kw)
        out = []
        for k in range(6):
            if k == 2:
                P[0].data = P[0].data.t().contiguous().t()
                assert not P[0].is_contiguous()
            opt.zero_grad(set_to_none=True)
            loss_fn(P, x, y).backward()
            opt.step()
            out.append([p.detach().contiguous().numpy().copy() for p in P])
        return out
    assert_trajectories_close(run(tessera), run(torch), dtype)
