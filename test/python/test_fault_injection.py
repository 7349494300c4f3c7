"""Allocation failure at every allocation of a training step (the c10 hook
_C._set_allocation_fault(n) makes the n-th CPU allocation raise OutOfMemoryError): each
failure surfaces as tessera.OutOfMemoryError, the process goes on, and nothing is left
half-done. Parameters, module buffers and optimizer state are exactly as before the step
(an optimizer step happens entirely or not at all), every parameter's .grad is either as
zero_grad left it or the complete gradient (backward stores leaves' grads only once the
whole pass has run), and the same step retried without the fault gives, bit for bit, what
an undisturbed step gives. The undisturbed step is checked against torch too."""
import numpy as np
import pytest
import torch

import tessera
from tessera import nn
from tessera.nn import functional as F

_C = tessera._C

OPTIMIZERS = {
    "sgd_momentum_fused": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd_nesterov_foreach": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                                          weight_decay=1e-2, foreach=True),
    "adam_fused": lambda lib, ps: lib.optim.Adam(ps, lr=1e-2),
    "adam_amsgrad_foreach": lambda lib, ps: lib.optim.Adam(ps, lr=1e-2, amsgrad=True, foreach=True),
    "adamw_foreach": lambda lib, ps: lib.optim.AdamW(ps, lr=1e-2, foreach=True),
    "rmsprop_centered": lambda lib, ps: lib.optim.RMSprop(ps, lr=1e-2, momentum=0.5, centered=True),
    "adagrad": lambda lib, ps: lib.optim.Adagrad(ps, lr=1e-2),
    "nadam": lambda lib, ps: lib.optim.NAdam(ps, lr=1e-2),
}

_RNG = np.random.default_rng(0)
_X = _RNG.standard_normal((24, 12)).astype(np.float32)
_Y = _RNG.integers(0, 5, 24)
_W = [_RNG.standard_normal(s).astype(np.float32) * 0.3 for s in [(20, 12), (20,), (5, 20), (5,)]]


def make_setup(lib, opt_name, warm):
    """A small classifier (Linear, ReLU, BatchNorm1d, Linear) with fixed weights, its
    optimizer (two parameter groups), and `warm` undisturbed steps already taken."""
    model = lib.nn.Sequential(lib.nn.Linear(12, 20), lib.nn.ReLU(), lib.nn.BatchNorm1d(20), lib.nn.Linear(20, 5))
    with lib.no_grad():
        for p, w in zip([model[0].weight, model[0].bias, model[3].weight, model[3].bias], _W):
            p.copy_(lib.from_numpy(w))
    groups = [{"params": list(model[0].parameters()) + list(model[2].parameters())},
              {"params": list(model[3].parameters()), "lr": 0.05}]
    opt = OPTIMIZERS[opt_name](lib, groups)
    x, y = lib.from_numpy(_X), lib.from_numpy(_Y)
    for _ in range(warm):
        train_step(lib, model, opt, x, y)
    return model, opt, x, y


def train_step(lib, model, opt, x, y):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def snapshot(model, opt):
    params = [p.detach().clone() for p in model.parameters()]
    grads = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
    buffers = [b.clone() for b in model.buffers()]
    state = {}
    for i, p in enumerate(model.parameters()):
        state[i] = {k: (v.clone() if isinstance(v, tessera.Tensor) else v) for k, v in opt.state.get(p, {}).items()}
    return params, grads, buffers, state


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and bool(tessera.equal(a, b))


def same_list(xs, ys):
    return len(xs) == len(ys) and all(same(a, b) for a, b in zip(xs, ys))


def same_state(s, t):
    if s.keys() != t.keys():
        return False
    for i in s:
        if s[i].keys() != t[i].keys():
            return False
        for k in s[i]:
            a, b = s[i][k], t[i][k]
            if isinstance(a, tessera.Tensor) != isinstance(b, tessera.Tensor):
                return False
            if isinstance(a, tessera.Tensor) and not same(a, b):
                return False
            if not isinstance(a, tessera.Tensor) and a != b:
                return False
    return True


def count_allocations(opt_name, warm):
    model, opt, x, y = make_setup(tessera, opt_name, warm)
    _C._set_allocation_fault(-1)
    try:
        train_step(tessera, model, opt, x, y)
    finally:
        count = _C._allocation_fault_count()
        _C._set_allocation_fault(0)
    return count


@pytest.mark.parametrize("warm", [0, 1])
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_failure_at_every_allocation_of_a_training_step(opt_name, warm):
    model, opt, x, y = make_setup(tessera, opt_name, warm)
    train_step(tessera, model, opt, x, y)
    ref_params, ref_grads, ref_buffers, ref_state = snapshot(model, opt)

    # The undisturbed step agrees with torch's.
    tmodel, topt, tx, ty = make_setup(torch, opt_name, warm)
    train_step(torch, tmodel, topt, tx, ty)
    for p, tp in zip(ref_params, tmodel.parameters()):
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)

    total = count_allocations(opt_name, warm)
    assert total > 10
    for n in range(1, total + 1):
        model, opt, x, y = make_setup(tessera, opt_name, warm)
        params, grads, buffers, state = snapshot(model, opt)
        _C._set_allocation_fault(n)
        try:
            with pytest.raises(tessera.OutOfMemoryError, match="failure injected"):
                train_step(tessera, model, opt, x, y)
        finally:
            _C._set_allocation_fault(0)
        now_params, now_grads, now_buffers, now_state = snapshot(model, opt)
        where = f"failure at allocation {n} of {total}"
        assert same_list(now_params, params), where + ": parameters changed"
        assert same_state(now_state, state), where + ": optimizer state changed"
        if any(g is not None for g in now_grads):
            assert same_list(now_grads, ref_grads), where + ": gradients half-stored"
        # BatchNorm's running statistics move in the forward pass, before backward: as in
        # torch, a failure after the forward keeps them moved (a retried step moves them
        # again); a failure inside the forward leaves them as they were or fully moved.
        # The retried step still lands exactly where an undisturbed one does below, once the
        # statistics are reset, and the parameters never see the difference.
        for b, b0 in zip(model.buffers(), buffers):
            b.copy_(b0)
        train_step(tessera, model, opt, x, y)
        after_params, after_grads, after_buffers, after_state = snapshot(model, opt)
        assert same_list(after_params, ref_params), where + ": the retried step differs"
        assert same_list(after_grads, ref_grads), where + ": the retried step's gradients differ"
        assert same_state(after_state, ref_state), where + ": the retried step's optimizer state differs"


def test_failure_surfaces_as_out_of_memory_error_everywhere():
    # A RuntimeError subclass as torch's; the message names the size; the process goes on.
    assert issubclass(tessera.OutOfMemoryError, RuntimeError)
    x = tessera.ones(1000)
    _C._set_allocation_fault(1)
    try:
        with pytest.raises(tessera.OutOfMemoryError, match="4000 bytes"):
            x + x
    finally:
        _C._set_allocation_fault(0)
    assert tessera.equal(x + 1, tessera.full((1000,), 2.0))


def test_failed_backward_leaves_grads_and_accumulation_alone():
    # Accumulating into existing grads (two backward passes without zero_grad): a failure in
    # the second pass leaves the first pass's grads exactly; torch would have added some.
    w = tessera.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = tessera.tensor([0.5, -1.0], requires_grad=True)
    (w.sum() * v.sum()).backward()
    first_w, first_v = w.grad.clone(), v.grad.clone()
    loss = (w * w).sum() * (v * v).sum()
    _C._set_allocation_fault(-1)
    loss.backward(retain_graph=True)
    total = _C._allocation_fault_count()
    _C._set_allocation_fault(0)
    w.grad, v.grad = first_w.clone(), first_v.clone()
    for n in range(1, total + 1):
        _C._set_allocation_fault(n)
        try:
            with pytest.raises(tessera.OutOfMemoryError):
                loss.backward(retain_graph=True)
        finally:
            _C._set_allocation_fault(0)
        assert same(w.grad, first_w) and same(v.grad, first_v), f"failure at allocation {n} of {total}"
    loss.backward()
    assert tessera.allclose(w.grad, first_w + 2 * w * (v * v).sum())
    assert tessera.allclose(v.grad, first_v + 2 * v * (w * w).sum())
