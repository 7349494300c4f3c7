"""Every operator with a kernel of its own is accounted for, from ops.yaml and
derivatives.yaml (read with the codegen's own loaders), so a new op cannot slip in
without its derivative or without a test:

- each backward Node that derivatives.yaml defines appears in the graph of some case of
  test_autograd.CASES (which are gradchecked and compared with torch's grads);
- each op that records no Node of a formula (none in derivatives.yaml, or its outputs
  marked non-differentiable) is listed in NO_FORMULA with an expression that uses it, and
  torch agrees on that expression: both record no graph (integer or bool results, ops
  torch does not differentiate), both keep the history the tensor had, or both record a
  node that raises "not implemented" at backward.
"""
import pathlib
import sys

import pytest
import torch
import yaml

import tessera
import test_autograd

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

import gen_autograd  # noqa: E402
from model import Op  # noqa: E402

OPS = [Op.from_yaml(e) for e in yaml.safe_load((ROOT / "ops.yaml").read_text())]
DERIVATIVES = gen_autograd.load_derivatives(ROOT / "derivatives.yaml", OPS)


def _x(L):
    return L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=L.float64, requires_grad=True)


def _clone(L):
    return _x(L).mul(1.0)


# op name -> an expression (library -> tensor) that runs it on something requiring grad.
NO_FORMULA = {
    "_unique2": lambda L: L.unique(_x(L), return_inverse=True)[0],
    "unique_dim": lambda L: L.unique(_x(L), dim=0),
    "unique_consecutive": lambda L: L.unique_consecutive(_x(L)),
    "all": lambda L: L.all(_x(L)),
    "any": lambda L: L.any(_x(L)),
    "argmax": lambda L: L.argmax(_x(L)),
    "argmin": lambda L: L.argmin(_x(L)),
    "bincount": lambda L: L.bincount(L.tensor([0, 2, 2]), weights=_x(L).select(0, 0)),
    "histc": lambda L: L.histc(_x(L), 4),
    "multinomial": lambda L: L.multinomial(_x(L).abs(), 2),
    "searchsorted": lambda L: L.searchsorted(_x(L).sort(1).values, _x(L)),
    "isinf": lambda L: L.isinf(_x(L)),
    "isnan": lambda L: L.isnan(_x(L)),
    "signbit": lambda L: L.signbit(_x(L)),
    "eq": lambda L: L.eq(_x(L), 0.5),
    "ne": lambda L: L.ne(_x(L), _x(L)),
    "gt": lambda L: L.gt(_x(L), 0.5),
    "ge": lambda L: L.ge(_x(L), _x(L)),
    "lt": lambda L: L.lt(_x(L), 0.5),
    "le": lambda L: L.le(_x(L), _x(L)),
    "logical_and": lambda L: L.logical_and(_x(L), _x(L)),
    "logical_or": lambda L: L.logical_or(_x(L), _x(L)),
    "logical_xor": lambda L: L.logical_xor(_x(L), _x(L)),
    "logical_not": lambda L: L.logical_not(_x(L)),
    # torch 1.13 does not differentiate floor_divide (tessera's rounding divisions do).
    "floor_divide": lambda L: L.floor_divide(_x(L), 2.0),
    "floor_divide_": lambda L: _clone(L).floor_divide_(_x(L)),
    # Non-differentiable entries (output_differentiability: [False]): no Node recorded;
    # an in-place one leaves the tensor's history as it was.
    "empty_like": lambda L: L.empty_like(_x(L)),
    "logical_and_": lambda L: _clone(L).logical_and_(_x(L)),
    "logical_or_": lambda L: _clone(L).logical_or_(_x(L)),
    "logical_xor_": lambda L: _clone(L).logical_xor_(_x(L)),
    "logical_not_": lambda L: _clone(L).logical_not_(),
    # Integer-only kernels: their inputs can never require grad.
    "bitwise_and": lambda L: L.bitwise_and(L.gt(_x(L), 0), L.lt(_x(L), 1)),
    "bitwise_and_": lambda L: L.gt(_x(L), 0).bitwise_and_(L.lt(_x(L), 1)),
    "bitwise_or": lambda L: L.bitwise_or(L.gt(_x(L), 0), L.lt(_x(L), 1)),
    "bitwise_or_": lambda L: L.gt(_x(L), 0).bitwise_or_(L.lt(_x(L), 1)),
    "bitwise_xor": lambda L: L.bitwise_xor(L.gt(_x(L), 0), L.lt(_x(L), 1)),
    "bitwise_xor_": lambda L: L.gt(_x(L), 0).bitwise_xor_(L.lt(_x(L), 1)),
    "bitwise_not": lambda L: L.bitwise_not(L.gt(_x(L), 0)),
    "bitwise_not_": lambda L: L.gt(_x(L), 0).bitwise_not_(),
    "bitwise_left_shift": lambda L: L.bitwise_left_shift(L.argmax(_x(L), 1), 1),
    "bitwise_left_shift_": lambda L: L.argmax(_x(L), 1).bitwise_left_shift_(1),
    "bitwise_right_shift": lambda L: L.bitwise_right_shift(L.argmax(_x(L), 1), 1),
    "bitwise_right_shift_": lambda L: L.argmax(_x(L), 1).bitwise_right_shift_(1),
    "nonzero": lambda L: L.nonzero(_x(L)),
    "repeat_interleave": lambda L: L.repeat_interleave(L.argmax(_x(L), 1)),
    # view(dtype): a reinterpretation, never differentiable (view(shape) has a formula).
    "view": lambda L: _x(L).view(L.int64),
    # max_norm's in-place renormalisation (F.embedding runs it under no_grad)
    "embedding_renorm_": lambda L: L.embedding_renorm_(_clone(L), L.tensor([0]), 1.0, 2.0),
    # scatter with reduce= (add, multiply): neither library differentiates it.
    "scatter": lambda L: L.scatter(_x(L), 1, L.tensor([[0, 1]]), _x(L), reduce="add"),
    "scatter_": lambda L: _clone(L).scatter_(1, L.tensor([[2]]), 2.0, reduce="multiply"),
}

def _ops_without_node():
    """Ops with an Autograd kernel that records no Node of a formula: no derivatives.yaml
    entry, or one whose outputs are all non-differentiable."""
    names = set()
    for op in OPS:
        s = op.schema
        if not gen_autograd.needs_autograd_kernel(op) or s.is_out:
            continue
        if not gen_autograd.has_differentiable_output(gen_autograd.derivative_for(op, DERIVATIVES)):
            names.add(s.name)
        elif gen_autograd.derivative_for(op, DERIVATIVES) is None:
            names.add(s.name)
    return names


def _nodes_with_formulas():
    return {d.node for d in DERIVATIVES.values() if gen_autograd.has_differentiable_output(d)}


def _graph_names(t):
    seen, names, stack = set(), set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node._id() in seen:
            continue
        seen.add(node._id())
        names.add(node.name())
        stack.extend(fn for fn, _ in node.next_functions)
    return names


# Formulas whose graph always holds a complex tensor. tessera's autograd refuses complex
# tensors (NotImplementedError) until every formula has its Wirtinger conjugates, so no
# gradchecked case can reach these yet; the test below checks the refusal, and fails the
# day complex autograd lands (then they join test_autograd.CASES).
COMPLEX_ONLY = {
    "ViewAsComplexBackward0": lambda: tessera.view_as_complex(tessera.zeros(3, 2, requires_grad=True)),
    "ViewAsRealBackward0": lambda: tessera.view_as_real(tessera.zeros(3, dtype=tessera.complex64).requires_grad_()),
}


@pytest.mark.parametrize("node", sorted(COMPLEX_ONLY))
def test_complex_only_formulas_are_refused(node):
    with pytest.raises(NotImplementedError, match="autograd for complex tensors"):
        COMPLEX_ONLY[node]()


def test_every_node_is_exercised_by_a_gradchecked_case():
    exercised = set(COMPLEX_ONLY)
    for _, fn, inputs in test_autograd.CASES:
        ins = [tessera.tensor(d, dtype=tessera.float64, requires_grad=True) for d in inputs]
        exercised |= _graph_names(fn(tessera, *ins))
    missing = sorted(_nodes_with_formulas() - exercised)
    assert missing == [], f"derivatives.yaml Nodes no case of test_autograd.CASES reaches: {missing}"


def test_every_op_without_formula_is_listed():
    unlisted = sorted(_ops_without_node() - set(NO_FORMULA))
    assert unlisted == [], f"ops with a kernel but no derivatives.yaml formula and no NO_FORMULA entry: {unlisted}"
    stale = sorted(set(NO_FORMULA) - _ops_without_node())
    assert stale == [], f"NO_FORMULA lists ops that now have a formula (or no kernel): {stale}"


def _behaviour(L, fn):
    """What autograd makes of fn's result: no graph, the Node it ends in, or a Node that
    raises "not implemented" at backward (NotImplemented, torch's Unique2Backward0, ...)."""
    out = fn(L)
    out = out[0] if isinstance(out, tuple) else out
    if not out.requires_grad:
        return "no graph"
    try:
        out.sum().backward()
    except (RuntimeError, NotImplementedError) as e:
        if "not implemented" in str(e):
            return "not implemented"
        raise
    return out.grad_fn.name()


@pytest.mark.parametrize("name", sorted(NO_FORMULA))
def test_op_without_formula_behaves_like_torch(name):
    fn = NO_FORMULA[name]
    assert _behaviour(tessera, fn) == _behaviour(torch, fn)
