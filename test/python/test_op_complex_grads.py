"""Complex gradients of every registry entry (opinfo.py) with complex samples, against
torch 1.13: torch's convention (the conjugate Wirtinger derivative, dL/dx + i dL/dy).

Each entry's complex128 samples run on fresh leaves in both libraries. Where torch
differentiates, tessera's grads must equal torch's and pass the complex gradcheck, or
tessera must refuse with its NotImplementedError for an op whose formulas are not yet
marked complex (PENDING lists those, and fails when one starts to work, so it stays
true). Never a wrong gradient. Where torch refuses, tessera refuses too or gradcheck
judges its grads."""
import pytest
import torch

import tessera

import opinfo
from opinfo import differentiate, grad_cases, leaves

REGISTRY = opinfo.load_all()
CASES = [(info, case) for info in REGISTRY for case in grad_cases(info, "complex128")]

# Entries whose ops torch 1.13 differentiates on complex tensors and tessera does not yet
# (their derivatives.yaml formulas are not marked `complex: true`: no conjugates written).
PENDING = {
    "silu": "silu's fused backward kernel (silu_backward) computes in real arithmetic only",
}


def _refused_as_pending(status, err):
    return status == "error" and isinstance(err, NotImplementedError) and "not implemented for complex" in str(err)


@pytest.mark.parametrize("info,case", CASES, ids=[f"{i.name}-{c.label}" for i, c in CASES])
def test_complex_grads_like_torch(info, case):
    context = f"{info.name} {case.label}"
    want_status, want = differentiate(torch, case.fn, case.inputs, case.no_grad_inputs)
    got_status, got = differentiate(tessera, case.fn, case.inputs, case.no_grad_inputs)
    name = info.name
    if _refused_as_pending(got_status, got):
        if want_status != "graph":
            return  # both refuse
        assert name in PENDING, f"{context}: tessera refuses complex grads ({got}); torch differentiates"
        return
    if name in PENDING and got_status == "graph":
        pytest.fail(f"{context}: differentiates complex tensors now: remove it from PENDING")
    if "torch_grad" in info.exempt:
        # torch 1.13 has no (or a wrong) derivative here: gradcheck below is the judge
        assert got_status == "graph", f"{context}: {got_status} {got!r}"
    elif not case.compare_values:
        assert got_status == want_status, f"{context}: torch {want_status}, tessera {got_status} {got!r}"
        return
    elif want_status == "graph":
        assert got_status == "graph", f"{context}: torch differentiates, tessera {got_status} {got!r}"
        for g, w in zip(got, want):
            torch.testing.assert_close(opinfo.to_torch(g), w, rtol=1e-6, atol=1e-9, equal_nan=True,
                                       msg=lambda m: f"{context}: {m}")
    elif got_status != "graph":
        return  # both refuse
    if "gradcheck" in info.exempt:
        return
    xs = leaves(tessera, case.inputs, case.no_grad_inputs)
    assert tessera.autograd.gradcheck(lambda *a: case.fn(tessera, *a), xs), context


def test_pending_names_registry_entries():
    names = {info.name for info in REGISTRY}
    assert set(PENDING) <= names, sorted(set(PENDING) - names)
    for reason in PENDING.values():
        assert isinstance(reason, str) and len(reason) > 10
