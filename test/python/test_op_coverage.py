"""Every operator is accounted for by the registry (opinfo.py), from ops.yaml and
derivatives.yaml read with the codegen's own loaders, so a new op cannot slip in without
its tests:

- each ops.yaml operator has an entry named for it (its in-place and out= forms ride on
  the entry), or an entry lists it in `covers` (a backward op its gradients run, a kernel a
  composite reaches), or EXEMPT says why it has none;
- each backward Node that derivatives.yaml defines is reached by the gradient cases of
  some entry (test_op_grads.py gradchecks them and compares them with torch's);
- each op whose outputs record no Node has an entry, whose gradient cases check that torch
  agrees (no graph, or a Node that is not implemented).
"""
import pathlib
import sys

import pytest
import yaml

import tessera

import opinfo

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import gen_autograd  # noqa: E402
from model import Op  # noqa: E402

OPS = [Op.from_yaml(e) for e in yaml.safe_load((ROOT / "ops.yaml").read_text())]
DERIVATIVES = gen_autograd.load_derivatives(ROOT / "derivatives.yaml", OPS)
REGISTRY = opinfo.load_all()

# Operators with no registry entry, and why.
EXEMPT = {
}


def _covered():
    names = {}
    for info in REGISTRY:
        for name in (opinfo.base_name(info.name),) + tuple(info.covers):
            names.setdefault(name, info.name)
    return names


def _op_names():
    return {op.schema.name for op in OPS}


def test_every_operator_has_an_entry_or_an_exemption():
    covered = _covered()
    missing = sorted(n for n in _op_names() if n not in covered and n.rstrip("_") not in covered and n not in EXEMPT)
    assert missing == [], f"ops.yaml operators with no registry entry, no `covers` and no exemption: {missing}"


def test_exemptions_and_covers_name_real_operators():
    names = _op_names()
    assert sorted(set(EXEMPT) - names) == []
    assert sorted(set(EXEMPT) & set(_covered())) == [], "exempt operators that now have an entry"
    for info in REGISTRY:
        assert set(info.covers) <= names, f"{info.name} covers unknown operators {set(info.covers) - names}"


def _nodes_with_formulas():
    return {d.node for d in DERIVATIVES.values() if gen_autograd.has_differentiable_output(d)}


def _reached_nodes():
    reached = set()
    for info in REGISTRY:
        for case in opinfo.grad_cases(info):
            xs = opinfo.leaves(tessera, case.inputs, case.no_grad_inputs)
            try:
                out = case.fn(tessera, *xs)
            except Exception:  # noqa: BLE001 - a refused sample reaches no Node
                continue
            reached |= opinfo.graph_names(out)
            if case.gradgrad:
                # the backward's own Nodes, built with create_graph
                outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                        if isinstance(o, tessera.Tensor) and o.requires_grad]
                wrt = [x for x in xs if x.requires_grad]
                if outs:
                    grads = tessera.autograd.grad(outs, wrt, [o * o for o in outs], create_graph=True,
                                                  allow_unused=True)
                    reached |= opinfo.graph_names([g for g in grads if g is not None])
    return reached


def test_every_node_is_reached_by_a_gradient_case():
    missing = sorted(_nodes_with_formulas() - _reached_nodes())
    assert missing == [], f"derivatives.yaml Nodes no registry gradient case reaches: {missing}"


def _ops_without_node():
    """Ops with an Autograd kernel that records no Node of a formula: no derivatives.yaml
    entry, or one whose outputs are all non-differentiable."""
    names = set()
    for op in OPS:
        s = op.schema
        if not gen_autograd.needs_autograd_kernel(op) or s.is_out:
            continue
        derivative = gen_autograd.derivative_for(op, DERIVATIVES)
        if derivative is None or not gen_autograd.has_differentiable_output(derivative):
            names.add(s.name)
    return names


def test_every_op_without_formula_has_an_entry():
    covered = _covered()
    unlisted = sorted(n for n in _ops_without_node() if n not in covered and n.rstrip("_") not in covered)
    assert unlisted == [], f"ops that record no Node and have no registry entry: {unlisted}"
