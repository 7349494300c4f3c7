"""tessera.gradient (numpy's finite differences) against torch.gradient 1.13 on every
spacing form, both edge orders, integer input and the errors; its gradients through
autograd by gradcheck."""
import pytest
import torch

import tessera
from torch_compare import outcome, tn, tt

T = torch.tensor([[1.0, 2.0, 4.0, 8.0], [10.0, 20.0, 40.0, 80.0], [3.0, -1.0, 0.5, 2.0]], dtype=torch.float64)
COORDS = torch.tensor([0.0, 1.0, 1.5, 3.5], dtype=torch.float64)
ROWS = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64)


def _convert(value, lib):
    if isinstance(value, torch.Tensor):
        return value if lib is torch else tt(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_convert(v, lib) for v in value)
    if isinstance(value, dict):
        return {k: _convert(v, lib) for k, v in value.items()}
    return value


@pytest.mark.parametrize("kwargs", [
    {}, {"spacing": 2.0}, {"spacing": 3}, {"spacing": [2.0, 0.5]}, {"dim": 1, "edge_order": 2},
    {"dim": [1], "spacing": [2.0]}, {"dim": -1, "spacing": [COORDS]}, {"dim": 1, "spacing": [COORDS], "edge_order": 2},
    {"spacing": (ROWS, COORDS)}, {"spacing": (ROWS, COORDS), "edge_order": 2}, {"dim": (1, 0)},
])
def test_gradient_matches_torch(kwargs):
    want = torch.gradient(T, **kwargs)
    got = tessera.gradient(tt(T), **_convert(kwargs, tessera))
    assert len(got) == len(want)
    for mine, theirs in zip(got, want):
        torch.testing.assert_close(tn(mine), theirs)


def test_gradient_integer_input_and_scalars():
    ints = [1, 4, 9, 16]
    for kwargs in ({}, {"spacing": 2}):
        torch.testing.assert_close(tn(tessera.gradient(tessera.tensor(ints), **kwargs)[0]),
                                   torch.gradient(torch.tensor(ints), **kwargs)[0])
    assert tessera.gradient(tessera.tensor(ints))[0].dtype == tessera.float32
    assert tessera.gradient(tessera.tensor(3.0)) == () == torch.gradient(torch.tensor(3.0))


@pytest.mark.parametrize("kwargs", [
    {"edge_order": 3}, {"dim": 0, "edge_order": 2, "_rows": 2}, {"spacing": [1.0, 2.0, 3.0]}, {"dim": (0, 0)},
    {"dim": 1, "spacing": [torch.tensor(2.0)]}, {"dim": 2},
])
def test_gradient_errors_match_torch(kwargs):
    rows = kwargs.pop("_rows", 3)
    want = outcome(lambda: torch.gradient(T[:rows], **kwargs))
    got = outcome(lambda: tessera.gradient(tt(T[:rows]), **_convert(kwargs, tessera)))
    assert want[0] == got[0] != "ok"
    assert got[1] == want[1]


def test_gradient_refuses_coordinates_of_the_wrong_length():
    """torch 1.13 silently treats three coordinates for four samples as unit spacing."""
    with pytest.raises(RuntimeError, match="to have 4 elements"):
        tessera.gradient(tt(T), spacing=[tessera.tensor([0.0, 1.0, 2.0])], dim=1)


def test_gradient_is_differentiable():
    x = tt(T).requires_grad_()
    coords = tt(COORDS).requires_grad_()
    assert tessera.autograd.gradcheck(lambda a, c: tessera.gradient(a, spacing=[c], dim=1, edge_order=2)[0], (x, coords))
    assert tessera.autograd.gradcheck(lambda a: sum(g.sum() for g in tessera.gradient(a * a, spacing=0.5)), (x,))
