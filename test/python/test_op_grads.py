"""Gradients of every registry entry (opinfo.py), against torch 1.13.

Each case (an entry's own float64 samples, then its hand-written GradSamples) runs on fresh
float64 leaves in both libraries. Where torch records a graph, tessera's grads must equal
torch's and pass gradcheck (and gradgradcheck where the entry asks); where torch records no
graph, or one whose backward is "not implemented", tessera must do the same. An entry's
exemptions say where one of these cannot hold and why."""
import pytest
import torch

import tessera

import opinfo
import opinfo_nn
from opinfo import differentiate, grad_cases, leaves

REGISTRY = opinfo.load_all()
CASES = [(info, case) for info in REGISTRY for case in grad_cases(info)]


def _close(got, want, context):
    if want is not None and want.layout != torch.strided:
        # a sparse grad (nn.Embedding(sparse=True), torch.sparse ops): same layout, same values
        assert str(got.layout).split(".")[-1] == str(want.layout).split(".")[-1], f"{context}: layouts differ"
        got, want = got.to_dense(), want.to_dense()
    torch.testing.assert_close(opinfo.to_torch(got), want, rtol=1e-6, atol=1e-9, equal_nan=True,
                               msg=lambda m: f"{context}: {m}")


@pytest.mark.parametrize("info,case", CASES, ids=[f"{i.name}-{c.label}" for i, c in CASES])
def test_grads_like_torch(info, case):
    context = f"{info.name} {case.label}"
    want_status, want = differentiate(torch, case.fn, case.inputs, case.no_grad_inputs)
    got_status, got = differentiate(tessera, case.fn, case.inputs, case.no_grad_inputs)
    if "torch_grad" in info.exempt:
        # torch 1.13 has no derivative here (the reason says whose formula is followed):
        # tessera must differentiate, and gradcheck below is the judge.
        assert got_status == "graph", f"{context}: {got_status} {got!r}"
    elif not case.compare_values:
        # random draws: the two libraries' values differ, what autograd records must not
        assert got_status == want_status, f"{context}: torch {want_status}, tessera {got_status} {got!r}"
        return
    elif want_status == "error":
        assert got_status == "error" and type(got).__name__ == type(want).__name__, \
            f"{context}: torch raised {want!r}, tessera {got_status} {got!r}"
        return
    elif want_status == "backward error" and got_status == "graph":
        pass  # torch 1.13's backward fails here (a broadcast it cannot reduce): gradcheck judges
    else:
        assert got_status == want_status, f"{context}: torch {want_status}, tessera {got_status} {got!r}"
        if want_status != "graph":
            return
        for g, w in zip(got, want):
            _close(g, w, context)
    if "gradcheck" in info.exempt:
        return
    xs = leaves(tessera, case.inputs, case.no_grad_inputs)
    assert tessera.autograd.gradcheck(lambda *a: case.fn(tessera, *a), xs), context
    if case.gradgrad:
        assert tessera.autograd.gradgradcheck(lambda *a: case.fn(tessera, *a), xs), context


def test_every_exemption_names_a_known_check_and_a_reason():
    known = {"grad", "gradcheck", "torch_grad", "forward"}
    for info in REGISTRY:
        for check, reason in info.exempt.items():
            assert check in known, f"{info.name}: unknown exemption {check!r}"
            assert isinstance(reason, str) and len(reason) > 10, f"{info.name}: {check} needs a reason"
        assert set(info.backends) <= set(opinfo.BACKENDS), f"{info.name}: unknown backend in {info.backends}"


@pytest.mark.parametrize("name", sorted(opinfo_nn.TARGET_GRADS))
def test_loss_inputs_take_a_grad_or_refuse_like_torch(name):
    import torch.nn.functional
    import tessera.nn.functional
    expr = opinfo_nn.TARGET_GRADS[name]
    want_status, want = opinfo.outcome(lambda: eval(expr, {"lib": torch, "F": torch.nn.functional}))
    got_status, got = opinfo.outcome(lambda: eval(expr, {"lib": tessera, "F": tessera.nn.functional}))
    assert got_status == want_status, f"{name}: torch {want!r}, tessera {got!r}"
    if want_status == "error":
        assert type(got).__name__ == type(want).__name__ and str(got) == str(want)
    else:
        assert got.requires_grad and want.requires_grad
