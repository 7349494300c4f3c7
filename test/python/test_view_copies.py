"""The *_copy forms of the views beyond what the registry (opinfo_view_copies.py) compares:
each result is a new tensor with torch's strides (clone's preserve_format: t_copy of a
contiguous matrix keeps the transposed strides) that shares no memory with its input (a
write to one never reaches the other), and as_strided_copy keeps as_strided's bounds
check."""
import pytest
import torch

import tessera
from opinfo import to_tessera, to_torch

CASES = [
    ("t_copy", ()), ("transpose_copy", (0, 1)), ("permute_copy", ((1, 0, 2),)), ("select_copy", (2, 1)),
    ("slice_copy", (1, 1, 3, 1)), ("diagonal_copy", (0, 0, 1)), ("expand_copy", ((2, 3, 4, 5),)),
    ("unsqueeze_copy", (1,)), ("squeeze_copy", ()), ("alias_copy", ()), ("detach_copy", ()),
    ("unfold_copy", (2, 2, 1)), ("view_copy", ((-1,),)), ("as_strided_copy", ((3, 2), (1, 3), 1)),
]


@pytest.mark.parametrize("name,args", CASES, ids=[n for n, _ in CASES])
def test_a_copy_has_torchs_strides_and_owns_its_memory(name, args):
    xt = torch.arange(60, dtype=torch.float64).reshape(4, 3, 5).transpose(0, 1)  # (a strided input)
    if name == "t_copy":
        xt = xt[0]
    elif name in ("view_copy", "as_strided_copy"):
        xt = xt.contiguous()
    x = to_tessera(xt)
    got, want = getattr(tessera, name)(x, *args), getattr(torch, name)(xt, *args)
    assert tuple(got.stride()) == tuple(want.stride())
    assert torch.equal(to_torch(got), want)
    before = to_torch(x).clone()
    got.fill_(-1.0)
    assert torch.equal(to_torch(x), before)  # the input is untouched


def test_slice_copy_takes_its_default_step():
    # torch 1.13's binding misreads an omitted step (one row of [:, 1:3]); the slice is the
    # reference
    x = torch.arange(60.0).reshape(3, 4, 5)
    assert torch.equal(to_torch(tessera.slice_copy(to_tessera(x), 1, 1, 3)), x[:, 1:3])
    assert torch.equal(to_torch(tessera.slice_copy(to_tessera(x), dim=2, end=2)), x[:, :, :2])


def test_list_copies_own_their_memory():
    x = to_tessera(torch.arange(12.0).reshape(3, 4))
    for pieces in (tessera.split_copy(x, 2, 1), tessera.split_with_sizes_copy(x, [1, 2], 0),
                   tessera.unbind_copy(x, 1)):
        for p in pieces:
            p.fill_(0.0)
    assert torch.equal(to_torch(x), torch.arange(12.0).reshape(3, 4))


def test_as_strided_copy_checks_the_storage_bounds():
    x = tessera.arange(6.0)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        tessera.as_strided_copy(x, (4,), (2,), 0)


def test_out_forms_write_into_out():
    x = to_tessera(torch.arange(6.0).reshape(2, 3))
    out = tessera.empty(0)
    assert tessera.t_copy(x, out=out) is out and tuple(out.shape) == (3, 2)
    assert torch.equal(to_torch(out), torch.arange(6.0).reshape(2, 3).t())
    with pytest.raises(TypeError):
        tessera.split_copy(x, 1, out=[tessera.empty(0)])
