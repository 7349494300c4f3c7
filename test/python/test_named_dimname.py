"""The Dimname overloads against torch 1.13: a dim given by name to reductions, scans,
softmax, indexing, views, flatten/unflatten, cat and size/stride, the names= factories, and
the overloads torch registers but refuses (its "You passed a dimname" message). Each
expression runs through torch and tessera; names, shape, dtype and values, or the exception
and its first line, must agree. Gradients flow through the composites as through the int
overloads (compared with torch's and gradchecked)."""
import pytest
import torch

import tessera

from named_common import check_like_torch

pytestmark = pytest.mark.filterwarnings("ignore:Named tensors and all their associated APIs")

# x: ('N', 'C', 'H') of shape (2, 3, 4); u: the same values unnamed; mask: x > 0, named.
REDUCTIONS = [
    "x.sum('C')", "x.sum(['N', 'H'])", "x.sum(('C',), keepdim=True)", "lib.sum(x, 'H', dtype=lib.float64)",
    "x.sum('Z')", "u.sum('N')", "x.sum([None])", "x.sum(['N', 1])", "x.sum([])", "x.sum(1.5)",
    "x.mean('H')", "x.mean(['C', 'H'], True)", "x.prod('C')", "x.prod('C', True)", "x.logsumexp('H')",
    "x.logsumexp(['C', 'H'])", "x.std('C')", "x.std('C', unbiased=False)", "x.std('C', correction=0)",
    "x.var(['N', 'H'], keepdim=True)", "x.var('C', correction=2)", "lib.std_mean(x, 'C')",
    "lib.var_mean(x, ['C', 'H'])", "lib.var_mean(x, 'C', correction=0)", "lib.std_mean(x, 'H', unbiased=False)",
    "x.max('C')", "x.min('H', keepdim=True)", "x.median('C')", "x.nanmedian('H')", "x.mode('C')",
    "x.kthvalue(2, 'C')", "lib.kthvalue(x, 1, 'H', True)", "x.max('Z')",
    "x.cummax('C')", "x.cummin('H')", "x.cumsum('C')", "x.cumsum('C', dtype=lib.float64)", "x.clone().cumsum_('H')",
    "x.cumprod('N')", "x.clone().cumprod_('C')", "x.logcumsumexp('H')", "x.softmax('C')", "x.log_softmax('H')",
    "lib.softmax(x, 'H', dtype=lib.float64)", "lib.log_softmax(x, 'N')",
    # the in-place scans by name are their out= forms into self: out='s dtype check and autograd refusal
    "x.clone().cumsum_('C', dtype=lib.float64)", "x.clone().cumprod_('H', dtype=lib.float64)",
    "(x * lib.ones(1, requires_grad=True)).cumsum_('C')", "(x * lib.ones(1, requires_grad=True)).cumprod_('N')",
    # '*' is torch's wildcard spelling; bytes are names too
    "x.sum('*')", "x.sum(b'C')", "x.transpose(b'N', 'C')", "x.size(b'C')", "lib.zeros(2, names=('*',)).names",
    "lib.zeros(2, names=(b'A',)).names", "lib.zeros(2).rename('*').names",
    # norm.names_*: the dims looked up, then the int overload, which refuses named inputs
    "lib.norm(u, 2, 'C')", "u.norm(2, ['N', 'H'], True)", "lib.norm(u, 3, 'Z')", "lib.norm(x, 2, 'C')",
    "lib.norm(u, 2, ['C'], dtype=lib.float64)", "lib.norm(u, p=1, dim='H', out=lib.empty(0))",
    "lib.norm(u, 'fro', 'C')", "lib.norm(u, dim=('C',))", "lib.norm(u, 'nuc', ['N', 'C'])", "x.norm()",
    "x.norm(2, 1)", "lib.norm(x, 2, 'C', dtype=lib.float64)", "lib.norm(x, p=2, dtype=lib.float64)",
]

INDEXING = [
    "x.index_fill('C', lib.tensor([0, 2]), -1.0)", "x.index_fill('C', lib.tensor([1]), lib.tensor(5.))",
    "x.clone().index_fill_('H', lib.tensor([0]), 2.)", "lib.index_fill(x, 'C', lib.tensor([0]), 1.)",
    "x.clone().index_fill_('H', lib.tensor([3]), lib.tensor(-2.))",
    # torch registers these and refuses them (current PyTorch too)
    "mask.all('C')", "mask.any('C', True)", "x.argsort('C')", "x.gather('C', lib.zeros(2, 1, 4, dtype=lib.long))",
    "x.index_add('C', lib.tensor([0]), u[:, :1])", "x.index_copy('C', lib.tensor([0]), u[:, :1])",
    "x.clone().index_copy_('C', lib.tensor([0]), u[:, :1])", "x.index_select('C', lib.tensor([0]))",
    "x.scatter('C', lib.zeros(2, 1, 4, dtype=lib.long), 1.0)", "x.scatter('C', lib.zeros(2, 1, 4, dtype=lib.long), u)",
    "x.scatter_add('C', lib.zeros(2, 1, 4, dtype=lib.long), u)", "x.sort('C')", "x.sort('C', True)",
    "x.sort(stable=True, dim='C')", "x.clone().squeeze_('N')",
]

VIEWS = [
    "x.select('C', 1)", "x.select('H', -1)", "x.squeeze('N')", "lib.zeros(1, 3).rename('A', 'B').squeeze('A')",
    "x.unbind('C')", "x.transpose('N', 'H')", "x.transpose('N', 'Z')", "x.transpose('Y', 'Z')",
    "u.transpose('N', 'C')", "x.transpose('N', 'N')",
    "x.diagonal(outdim='D', dim1='C', dim2='H')", "x.diagonal(outdim='D', dim1='N', dim2='H', offset=1)",
    "x.diagonal(outdim='N', dim1='C', dim2='H')", "x.diagonal(outdim='D', dim1='C', dim2='C')",
    "lib.diagonal(x, outdim='D', dim1='C', dim2='H')", "u.diagonal(outdim='D', dim1='N', dim2='C')",
    "x.flatten(['C', 'H'], 'X')", "x.flatten(['N', 'C'], 'X')", "x.flatten(['N', 'H'], 'X')", "x.flatten([], 'X')",
    "x.flatten(['H', 'C'], 'X')", "x.flatten(['N', 'N'], 'X')", "x.flatten('C', 'H', 'X')", "x.flatten('H', 'C', 'X')",
    "x.flatten(0, 1, 'X')", "x.flatten(0, 1, 'H')", "u.flatten(0, 1, 'X')", "lib.flatten(x, ['N', 'C', 'H'], 'Z')",
    "x.unflatten('C', (('A', 3),))", "x.unflatten('C', (('A', -1), ('B', 3)))", "x.unflatten('C', (('A', 2), ('B', 2)))",
    "x.unflatten(1, (3,))", "x.unflatten('C', [])", "x.unflatten('C', (('A', -1), ('B', -1)))",
    "x.unflatten('H', collections.OrderedDict([('A', 2), ('B', 2)]))", "u.unflatten(1, (('A', 3),))",
    "lib.zeros(2, 3).rename('N', None).unflatten('N', (('C', 2), ('C', 1)))", "u.unflatten(1, (1, 3))",
    "u.unflatten(1, (2, 2))",
    "lib.cat([x, x], 'C')", "lib.cat([x, u], 'C')", "lib.cat([], 'N')", "lib.cat([u, u], 'N')",
    "lib.concat([x, x], 'H')", "lib.concatenate([x, x], 'H')",
    "x.size('C')", "x.stride('H')", "x.size('Z')", "u.size('N')", "x.size(None)", "u.size(dim=None)",
    "x.stride(None)", "x.size(dim='H')",
]

OUT = [
    "lib.sum(x, 'C', out=lib.empty(0))", "lib.max(x, 'C', out=(lib.empty(0), lib.empty(0, dtype=lib.long)))",
    "lib.cumsum(x, 'C', out=lib.empty(0))", "lib.logsumexp(x, 'C', out=lib.empty(0))",
    "lib.std(x, 'C', out=lib.empty(0))", "lib.kthvalue(x, 1, 'C', out=(lib.empty(0), lib.empty(0, dtype=lib.long)))",
    "lib.cat([x, x], 'C', out=lib.empty(0))", "lib.prod(x, 'N', out=lib.empty(0))", "lib.mean(x, 'H', out=lib.empty(0))",
    "lib.median(x, 'C', out=(lib.empty(0), lib.empty(0, dtype=lib.long)))",
]

FACTORIES = [
    "lib.zeros(2, 3, names=('A', 'B'))", "lib.ones((2, 3), names=['A', None])", "lib.empty(2, 3, names=('A', 'B')).names",
    "lib.full((2, 3), 1, names=('A', 'B'))", "lib.full((2,), True, names=('A',))",
    "lib.full((2,), 1.5, names=('A',), dtype=lib.float64)", "lib.rand(2, 3, names=('A', 'B')).names",
    "lib.randn(2, 3, names=('A', 'B'), generator=lib.Generator()).names",
    "lib.rand(2, names=('A',), generator=lib.Generator().manual_seed(1)).shape", "lib.zeros(2, 3, names=('A',))",
    "lib.zeros(2, 3, names=('A', 'A'))", "lib.zeros(2, 3, names=None).names", "lib.zeros(2, 3, names=('A', 3))",
    "lib.zeros(2, names=('A',), dtype=lib.float64)", "lib.randn(2, 3, names=('A', 'B'), requires_grad=True).requires_grad",
    "lib.empty((2, 3), names=('A', 'B'), memory_format=lib.contiguous_format).names",
    "lib.zeros(2, 3, names=('A', '1b'))", "lib.ones(0, names=('A',))", "lib.zeros((), names=())",
    # tensor(data, names=): the parser's tuple-or-list of str / None, then the factories' checks
    "lib.tensor([[1.0, 2.0]], names=('N', 'C'))", "lib.tensor([1, 2], names=['A']).dtype",
    "lib.tensor([[1.0, 2.0]], names=None).names", "lib.tensor(3.0, names=()).names",
    "lib.tensor([[1.0, 2.0]], names=('N',))", "lib.tensor([[1.0]], names=('A', 'A'))", "lib.tensor([1.0], names=(1,))",
    "lib.tensor([1.0], names='A')", "lib.tensor([1.0], names=('A',), requires_grad=True).requires_grad",
]


@pytest.mark.parametrize("expr", REDUCTIONS + INDEXING + VIEWS + OUT + FACTORIES)
def test_dimname_overloads_match_torch(expr):
    check_like_torch(expr)


def test_flatten_departs_from_torch_113_where_it_corrupts():
    """Two cases where torch 1.13's named flatten is wrong: with nothing to flatten it
    returns its input renamed in place, and end_dim=-1 is not wrapped. Tessera leaves the
    input alone and wraps the dim, as the int overload does."""
    x = tessera.zeros(2, 3, 4).rename("N", "C", "H")
    y = x.flatten(1, 1, "X")
    assert y.names == ("N", "X", "H") and x.names == ("N", "C", "H")
    assert y.data_ptr() == x.data_ptr()
    assert x.flatten(["C"], "X").names == ("N", "X", "H") and x.names == ("N", "C", "H")
    assert x.flatten(0, -1, "Z").names == ("Z",)
    assert tessera.tensor(1.).flatten(0, 0, "Z").names == ("Z",)


def test_boxed_calls_carry_names():
    """The dispatcher's boxed path (tessera.ops, fallbacks) boxes a name as a string."""
    x = tessera.arange(6.).reshape(2, 3).rename("N", "C")
    got = tessera.ops.aten.sum.dim_DimnameList(x, ["C"])
    assert got.names == ("N",) and got.tolist() == [3., 12.]
    got = tessera.ops.aten.transpose.Dimname(x, "N", "C")
    assert got.names == ("C", "N")
    z = tessera.ops.aten.zeros.names([2, 3], names=["A", None])
    assert z.names == ("A", None)
    with pytest.raises(RuntimeError, match="Name 'Q' not found"):
        tessera.ops.aten.softmax.Dimname(x, "Q")


# Each case: (expression of a, an unnamed float64 (2, 3, 4) leaf, named inside).
GRAD_CASES = [
    "a.rename('N', 'C', 'H').sum('C')", "a.rename('N', 'C', 'H').softmax('H')",
    "a.rename('N', 'C', 'H').log_softmax('C')", "a.rename('N', 'C', 'H').transpose('N', 'H')",
    "a.rename('N', 'C', 'H').flatten(['C', 'H'], 'X')", "a.rename('N', 'C', 'H').unflatten('H', (('P', 2), ('Q', 2)))",
    "a.rename('N', 'C', 'H').cumsum('C')", "a.rename('N', 'C', 'H').diagonal(outdim='D', dim1='C', dim2='H')",
    "a.rename('N', 'C', 'H').select('H', 2)", "a.rename('N', 'C', 'H').std('C')",
    "a.rename('N', 'C', 'H').logsumexp(['N', 'H'])", "a.rename('N', 'C', 'H').max('C').values",
    "a.rename('N', 'C', 'H').index_fill('C', lib.tensor([1]), 0.5)", "a.rename('N', 'C', 'H').prod('H')",
]


@pytest.mark.parametrize("expr", GRAD_CASES)
def test_gradients_through_dimname_overloads(expr):
    base = torch.randn(2, 3, 4, dtype=torch.float64)
    grads = []
    for lib in (torch, tessera):
        a = lib.tensor(base.tolist(), dtype=lib.float64, requires_grad=True)
        out = eval(expr, {"a": a, "lib": lib})
        weights = lib.tensor(torch.linspace(-1, 1, out.numel()).reshape(out.shape).tolist(), dtype=lib.float64)
        (out.rename(None) * weights).sum().backward()
        assert a.grad.names == (None, None, None)
        grads.append(torch.tensor(a.grad.tolist()))
    assert torch.allclose(grads[0], grads[1], atol=1e-10)

    def fn(a):
        return eval(expr, {"a": a, "lib": tessera}).rename(None)
    a = tessera.tensor(base.tolist(), dtype=tessera.float64, requires_grad=True)
    assert tessera.autograd.gradcheck(fn, (a,))
