"""Named tensors against torch 1.13: the API (names, has_names, rename/rename_, refine_names,
align_to/align_as with their '...' forms) and every message it raises; name propagation
through operators (keep, broadcast, reduce, transpose, drop-dim, expand, matmul, cat, out=,
in-place) and torch's refusal of the rest; views and their grad_fns; grads that are always
unnamed; printing and the pickle/save refusals. Each expression runs through torch and
tessera and the outcomes (names, shape, strides, values, or exception class and message)
must agree."""
import subprocess
import sys

import pytest
import torch

import tessera

from named_common import _env, _outcomes, _same, check_like_torch
from opinfo import to_torch

pytestmark = pytest.mark.filterwarnings("ignore:Named tensors and all their associated APIs")


# ---------------------------------------------------------------- the API and its messages

API = [
    "x.names", "u.names", "lib.tensor(1.).names", "x.has_names()", "u.has_names()",
    "u.rename(None, None, None).has_names()",
    "u.rename('A', 'B')", "u.rename('A')", "u.rename('A', 'A', None)", "u.rename('1a', None, None)",
    "u.rename('a b', None, None)", "u.rename('_ok9', None, None)", "x.rename(None)", "x.rename()",
    "x.rename(N='B')", "x.rename(N='A', H='B')", "x.rename(N=None)", "x.rename(Z='B')", "x.rename('A', N='B')",
    "x.rename(N='1')", "x.rename('...', 'Z')", "x.rename('Z', '...')", "x.rename('A', '...', 'B')",
    "x.rename('A', ..., 'B')", "x.rename('A', '...', 'B', 'C', 'D')", "x.rename('...', '...')",
    "x.rename('A', '...', 'A')", "u.rename(3, None, None)", "u.rename(['A', 'B', 'C'])", "u.rename_(3)",
    "u.rename_('P', 'Q', 'R')", "u.rename_('P', 'Q', 'R').names", "x.rename_(None).names", "u.rename_(P='Q')",
    "x.refine_names('N', 'C', 'H')", "u.refine_names('A', None, 'B')", "x.refine_names('N', 'C', 'D')",
    "x.rename('N', None, 'H').refine_names(None, 'C', 'H')", "x.refine_names('...', 'H')",
    "u.refine_names('A', '...')", "u.refine_names('A', '...', 'A')", "u.refine_names('A', 'B', 'C', 'D', '...')",
    "x.refine_names()", "x.refine_names(3)", "x.refine_names(None, None, None)",
    "x.align_to('H', 'N', 'C')", "x.align_to('H', 'X', 'N', 'C')", "x.align_to('C')", "x.align_to('...', 'X')",
    "x.align_to('H', '...')", "x.align_to('...', 'N')", "x.align_to('H', '...', 'N')", "x.align_to('N', 'N', '...')",
    "x.align_to('...', '...')", "x.align_to('N', '...', 'C', 'H')", "x.align_to('N', 'C', 'H', 'N')",
    "u.align_to('N')", "x.rename('N', None, 'H').align_to('N', 'C', 'H')",
    "x.rename('N', None, 'H').align_to('H', '...')", "x.rename('N', None, 'H').align_to('C', '...')",
    "u.align_to('...')", "x.align_to()", "x.align_to(3)", "x.align_as(y.align_to('H', 'C', 'N'))",
    "x.align_as(lib.zeros(2))", "y.align_as(x)", "lib.align_tensors(x)",
    "x.rename('A', 'B', 'C').stride()", "x.align_to('H', 'X', 'N', 'C').stride()",
    "x.align_to('H', 'X', 'N', 'C').storage_offset()",
    "setattr(u, 'names', ['A', 3, None])", "setattr(u, 'names', ['A'])", "setattr(u, 'names', ('A', None, 'A'))",
    "setattr(u, 'names', ('A', None, 'B')) or u.names", "setattr(x, 'names', None) or x.names",
    "x.size(0)", "x.dim()", "x.numel()", "x.shape", "x.stride()", "len(x)", "x.is_contiguous()", "x.tolist()",
    "x[0, 0, 0].item()", "x.requires_grad", "x.dtype", "x.numpy().shape",
    "lib.zeros(2, device='meta').rename('A').names", "x.data.names", "x.requires_grad_().data.names",
    "x.data.resize_(4)", "lib.zeros(2, 3).rename('A', 'B').resize_as_(lib.zeros(2, 3).rename('C', 'D'))",
    "lib.zeros(2, 3).rename('A', 'B').resize_as_(lib.zeros(2, 3).rename('A', 'B'))", "x.clone().resize_(2, 3, 4)",
    "x.clone().resize_(24)", "lib.empty(0).resize_as_(x).names", "x.diagonal()", "x.diagonal(0, 0, 2)",
    "x.as_strided((2,), (1,))", "x.masked_select(x > 0)", "lib.cat([x, lib.empty(0)])", "x.isfinite()",
    "x.rename(N='C', C='N')", "x.rename(N='X', X='Y')", "x.rename(N=1)", "x.rename('A', 1, None)",
    "setattr(u, 'names', 'ABC')", "x.align_to('...', None)", "x.bernoulli_(lib.rand(4).rename('X')).names if False else 0", "lib.zeros(2).rename('A').to('meta').names",
]


@pytest.mark.parametrize("expr", API)
def test_api_matches_torch(expr):
    check_like_torch(expr)


def test_views_share_memory_and_names_stay_on_the_view():
    x = tessera.zeros(2, 3)
    r = x.rename("A", "B")
    assert x.names == (None, None) and r.names == ("A", "B")
    assert r._is_view() and r.data_ptr() == x.data_ptr()
    r.add_(1)  # through the view: x sees it, keeps no names
    assert x.sum().item() == 6 and not x.has_names()
    assert x.rename_("P", "Q") is x and x.names == ("P", "Q")


# ---------------------------------------------------------------- propagation through operators

PROPAGATION = [
    # kept: unary, conversions, in-place, dim-keeping views and reductions with keepdim
    "x.abs()", "x.exp()", "lib.sin(x)", "x.neg()", "x.sigmoid()", "x.relu()", "x.clone()", "x.contiguous()",
    "x.float()", "x.double()", "x.to(lib.float64)", "x.bool()", "x.detach()", "x.clamp(0)", "x.clamp(min=0, max=1)",
    "x.pow(2)", "x + 1", "x * 2.5", "2 - x", "x / 3", "x == 0", "x > 0.5", "lib.zeros_like(x)", "lib.ones_like(x)",
    "lib.full_like(x, 7.)", "lib.empty_like(x).shape", "x.softmax(1)", "x.log_softmax(-1)", "x.cumsum(1)",
    "x.cumprod(2)", "x.cummax(0)", "x.logcumsumexp(1)", "x.exp_()", "x.clone().fill_(3.)", "x.clone().zero_()",
    "x.clone().mul_(2)", "x.clone().clamp_(0)", "x.narrow(2, 0, 2)", "x[0:1]", "x.split(1, 1)", "x.chunk(2, 2)",
    "x.tensor_split(2, 2)", "x.masked_fill(mask, 0.)", "x.masked_fill(x > 0, 0.)",
    "h.masked_fill(mask, 0.)", "h.rename(None).masked_fill(mask, 0.)", "h.masked_fill(mask.rename(None), 0.)",
    "h.masked_fill(mask, lib.tensor(1.))", "u.masked_fill(mask, 0.)", "u[0, 0].masked_fill(u > 0, 1.)",
    "x.index_fill(1, lib.tensor([0]), 1.)", "x.sign()", "x.floor()", "x.isnan()", "x.lgamma()", "x.square()",
    "lib.polygamma(1, x.abs() + 1)", "lib.dropout(x, 0., True)", "lib.nn.functional.dropout(x, 0.)",
    "lib.nn.functional.softmax(x, -1)", "lib.nn.functional.relu(x)",
    # broadcast
    "x + y", "y + x", "x * h", "x - u", "u + x", "x + x", "lib.atan2(x, y)", "lib.hypot(x, h)", "lib.maximum(x, y)",
    "x.eq(y)", "x.ne(y)", "x.lt(h)", "lib.logical_and(x > 0, y > 0)", "lib.addcmul(x, y, h)", "lib.pow(x.abs(), h)",
    "lib.pow(2, x)", "x.clamp(y, h)", "x + y.rename('C', 'X')", "x + y.rename('H', 'C')", "x + h.rename('N')",
    "y + x.rename(None).rename('...', 'C', None)", "u.clone().add_(x)", "u[0].clone().add_(y)",
    "x.clone().copy_(y)", "u.clone().copy_(x)", "lib.where(x > 0, x, y)", "x + lib.tensor(1.)",
    # out=
    "lib.add(x, y, out=lib.empty(0))", "lib.add(x, y, out=lib.empty(2, 3, 4).rename('N', 'C', 'H'))",
    "lib.add(x, y, out=lib.empty(2, 3, 4).rename('A', 'B', 'H'))", "lib.exp(x, out=lib.empty(2, 3, 4))",
    "lib.sum(x, 1, out=lib.empty(0))",
    # reductions
    "x.sum()", "x.sum(1)", "x.sum((0, 2))", "x.sum(-1, keepdim=True)", "x.sum([])", "x.sum([], keepdim=True)",
    "x.mean(1)", "x.prod(1)", "x.std(1)", "x.var(2, keepdim=True)", "x.var(dim=None, keepdim=True)",
    "lib.std_mean(x, 1)", "lib.var_mean(x, dim=(0, 1))", "x.logsumexp(2)", "x.max()", "x.min()", "x.max(1)",
    "x.min(2, keepdim=True)", "x.median()", "x.median(1)", "x.nanmedian(0)", "x.kthvalue(1, 1)", "x.mode(1)",
    "(x > 0).all()", "(x > 0).any()", "x.sum(5)", "x.amax(1)", "x.argmax()", "x.nansum()",
    # transpose, drop a dim, expand
    "x.transpose(0, 2)", "x.transpose(-1, 0)", "y.t()", "h.t()", "x.select(1, 0)", "x[0]", "x[:, 1]", "x[..., 0]",
    "x[1, :, 2]", "x.unbind(1)", "x.unbind(0)", "x[:, 0:1].squeeze(1)", "x[:, 0:1].squeeze(0)",
    "x[:, 0:1].squeeze()", "x.expand(5, 2, 3, 4)", "x.expand(2, 3, 4)", "x.transpose(0, 5)",
    # matrix products
    "m.mm(k)", "m.mm(k.rename('B', 'A'))", "m.mm(k.rename(None))", "b3.bmm(b4)", "b3.matmul(b4)", "m.matmul(k)",
    "b3.matmul(k)", "m.matmul(b4)", "m.mv(v)", "m.matmul(v)", "v.matmul(k)", "v.dot(v)", "v.matmul(v)",
    "b3.matmul(b4.rename('X', 'B', 'D'))", "b3.matmul(b4.rename(None, 'B', 'D'))",
    "lib.addmm(k.rename(None)[0], m, k)", "lib.addmm(k[0].rename('D'), m, k)", "lib.addmm(k[0].rename('X'), m, k)",
    "lib.addmv(m[:, 0], m, v)", "m.mm(k.rename('B', 'A')).names",
    "lib.nn.functional.linear(x, lib.ones(5, 4))",
    # cat
    "lib.cat([x, x], 0)", "lib.cat([x, u], 1)", "lib.cat([x, x.rename('A', None, None)], 0)",
    "lib.cat([x[0], u], 0)",
    # refused, with torch's message
    "x.permute(2, 0, 1)", "x.T", "x.view(24)", "x.unsqueeze(0)", "x[None]", "x[x > 0]", "lib.nn.functional.gelu(x)",
    "x.index_select(0, lib.tensor([0]))", "lib._softmax(x, 1, False)",
    # answered without names
    "x.equal(x)", "lib.result_type(x, 1.)", "x.is_floating_point()", "x.is_complex()",
]


@pytest.mark.parametrize("expr", PROPAGATION)
def test_propagation_matches_torch(expr):
    check_like_torch(expr)


# Refused by both, naming a different operator: torch's kernel calls one (reshape's
# _reshape_alias), tessera's composite another (view).
@pytest.mark.parametrize("expr", ["x.reshape(6, 4)", "x.flatten()", "lib.stack([x, x])", "x.sort()"])
def test_refused_like_torch_naming_the_inner_operator(expr):
    (want_status, want), (got_status, got) = _outcomes(expr)
    assert want_status == got_status == "error"
    suffix = " is not yet supported with named tensors. Please drop names via `tensor = tensor.rename(None)`"
    assert want[0] == got[0] == "RuntimeError" and suffix in want[1] and suffix in got[1], (want, got)


# Composites that torch 1.13 refuses on named tensors (its kernels are not composites) but
# tessera runs on operators that propagate names: the values must be torch's on the
# unnamed tensors, the names what those operators give.
# (norm was one; it now refuses as torch does: test_named_dimname.py)
@pytest.mark.parametrize("expr,names", [("x.allclose(x)", None), ("x.new_zeros(2)", (None,))])
def test_composites_torch_refuses_answer_like_unnamed_torch(expr, names):
    (want_status, want), _ = _outcomes(expr)
    assert want_status == "error" and "is not yet supported with named tensors" in want[1]
    want_value = eval(expr, {**_env(torch), "x": _env(torch)["u"]})
    got = eval(expr, _env(tessera))
    if names is None:
        assert got == want_value
    else:
        assert got.names == names and torch.allclose(to_torch(got.rename(None)), want_value)


def test_every_rule_is_for_an_operator_torch_names():
    """The fallback's table only holds operators torch 1.13 registers a Named kernel for
    (torch propagates their names), each a tessera operator."""
    ops = tessera._C._named_rule_operators()
    assert len(ops) > 300
    missing = [op for op in ops if "\nNamed:" not in torch._C._dispatch_dump(f"aten::{op}")]
    assert not missing, missing
    for op in ops:
        name, _, overload = op.partition(".")
        assert (overload or "default") in getattr(tessera.ops.aten, name).overloads(), op


# ---------------------------------------------------------------- autograd

@pytest.mark.parametrize("expr,grad_fn", [
    ("a.rename('A', 'B')", "AliasBackward0"), ("a.refine_names('A', 'B')", "AliasBackward0"),
    ("a.rename('A', 'B').rename(None)", "AliasBackward0"), ("a.rename('A', 'B').align_to('B', 'A')",
                                                            "AsStridedBackward0"),
    ("a.rename('A', 'B').align_as(a.rename('A', 'B'))", "AsStridedBackward0"),
])
def test_named_views_record_torchs_grad_fns(expr, grad_fn):
    for lib in (torch, tessera):
        a = lib.ones(2, 3, requires_grad=True)
        out = eval(expr, {"a": a})
        assert type(out.grad_fn).__name__ == grad_fn if lib is torch else out.grad_fn.name() == grad_fn


@pytest.mark.parametrize("case", ["sum", "mul", "exp", "named_gradient", "create_graph", "autograd_grad",
                                  "align", "matmul"])
def test_grads_are_unnamed_and_equal_torchs(case):
    results = []
    for lib in (torch, tessera):
        a = lib.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
        w = lib.tensor([[.5, -1., 2.], [1., 3., -2.]]).rename("N", "C")
        n = a.rename("N", "C")
        grads = None
        if case == "sum":
            (n * 2).sum().backward()
        elif case == "mul":
            (n * w).sum().backward()
        elif case == "exp":
            n.exp().sum().backward()
        elif case == "named_gradient":
            (n * 3).backward(lib.ones(2, 3).rename("N", "C"))
        elif case == "create_graph":
            (g,) = lib.autograd.grad((n * n).sum(), a, create_graph=True)
            assert not g.has_names()
            g.sum().backward()
        elif case == "autograd_grad":
            grads = lib.autograd.grad((n * w).sum(), a)
        elif case == "align":
            n.align_to("C", "X", "N").sum().backward()
        elif case == "matmul":
            n.mm(lib.ones(3, 2).rename("C", "D")).sum().backward()
        got = grads[0] if grads is not None else a.grad
        assert got.names == (None, None), f"{lib.__name__}: {got.names}"
        results.append(got.tolist())
    assert torch.allclose(torch.tensor(results[0]), torch.tensor(results[1]))


# ---------------------------------------------------------------- printing and serialization

@pytest.mark.parametrize("expr", [
    "repr(x)", "repr(x.rename('A', None, None))", "repr(lib.tensor(2.).rename())", "repr(x.requires_grad_())",
    "repr(lib.zeros(2, 0).rename('A', 'B'))",
    "pickle.dumps(x)", "lib.save(x, io.BytesIO())", "lib.save({'w': [x]}, io.BytesIO())",
    "pickle.dumps(x.rename(None)) is not None",
])
def test_printing_and_serialization_match_torch(expr):
    (want_status, want), (got_status, got) = _outcomes(expr)
    assert got_status == want_status, f"{expr}: torch {want_status} {want}, tessera {got_status} {got}"
    if want_status == "error":
        assert got == want
    elif isinstance(want, tuple) and want[0] == "value" and isinstance(want[1], str):
        assert got[1] == want[1].replace("torch.", "tessera.")
    else:
        _same(want, got, expr)


def test_a_named_seed_grad_warns_as_torch():
    for lib in (torch, tessera):
        a = lib.ones(2, 3, requires_grad=True)
        with pytest.warns(UserWarning, match=r"Autograd was passed a named grad tensor with dims \['N', 'C'\]"):
            (a * 2).backward(lib.ones(2, 3).rename("N", "C"))
        assert a.grad.names == (None, None)


def test_a_named_seed_reaches_the_roots_hooks_and_retained_grad_only():
    seen = {}

    def record(key):
        def hook(g):
            seen.setdefault(key, g.names)  # (returns None: the grad is not replaced)
        return hook
    for lib in (torch, tessera):
        y = lib.randn(2, 3, requires_grad=True)
        w = y * 2
        w.retain_grad()
        w.register_hook(record((lib.__name__, "w")))
        z = w * 3
        z.retain_grad()
        z.register_hook(record((lib.__name__, "z")))
        with pytest.warns(UserWarning, match="named grad tensor"):
            z.backward(lib.ones(2, 3, names=("N", "C")))
        seen[(lib.__name__, "grads")] = (z.grad.names, w.grad.names, y.grad.names)
        # a leaf root's hook and grad are unnamed
        y.register_hook(record((lib.__name__, "y")))
        with pytest.warns(UserWarning, match="named grad tensor"):
            y.backward(lib.ones(2, 3, names=("N", "C")))
    for key in ("w", "z", "grads", "y"):
        assert seen[("tessera", key)] == seen[("torch", key)], key
    assert seen[("tessera", "z")] == ("N", "C")


# torch warns once per process when a call has set names (None included: rename(None) and
# `x.names = None` warn), never for names=None and never for a call that failed its checks.
# The warning is attributed to the frame that called into C (the caller's own line for the
# factories and the setter; the library's Python file for rename/refine_names).
FIRST_NAMING = {
    "zeros": "lib.zeros(2, 3, names=('a', 'b'))", "empty": "lib.empty(2, names=('a',))",
    "ones": "lib.ones(2, names=('a',))", "rand": "lib.rand(2, names=('a',))",
    "randn_generator": "lib.randn(2, generator=lib.Generator(), names=('a',))",
    "full": "lib.full((2,), 1., names=('a',))", "names_none": "lib.zeros(2, names=None)",
    "names_all_none": "lib.zeros(2, names=(None,))", "tensor": "lib.tensor([1.], names=('a',))",
    "setter": "x = lib.zeros(2); x.names = ('a',)", "setter_none": "x = lib.zeros(2); x.names = None",
    "rename": "lib.zeros(2).rename('a')", "rename_none": "lib.zeros(2).rename(None)",
    "rename_": "lib.zeros(2).rename_('a')", "refine": "lib.zeros(2).refine_names('a')",
    "twice": "lib.zeros(2, names=('a',)); lib.zeros(2).rename('b')",
    "failed_first": "try:\n    lib.zeros(2, names=('a', 'b'))\nexcept RuntimeError:\n    pass\nlib.zeros(2, names=('a',))",
    "bad_count": "lib.zeros(2, names=('a', 'b'))", "duplicate": "lib.zeros(2, 2, names=('a', 'a'))",
    "rename_bad": "lib.zeros(2).rename('a', 'b')", "setter_bad": "x = lib.zeros(2); x.names = ('a', 'b')",
    "refine_bad": "lib.zeros(2).refine_names('a', 'b')",
}


def _first_naming_warnings(lib, statement):
    code = ("import warnings\n"
            f"import {lib} as lib\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    try:\n"
            + "".join(f"        {line}\n" for line in statement.split("\n")) +
            "    except RuntimeError:\n"
            "        pass\n"
            "print([(x.category.__name__, str(x.message)[:95], x.filename == '<string>') for x in w])\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout


def test_first_naming_warning_as_an_error():
    # with warnings as errors the first naming raises the UserWarning (the call fails) and
    # the warning is spent, as torch's TORCH_WARN_ONCE
    code = ("import warnings\n"
            "import {lib} as lib\n"
            "warnings.simplefilter('error')\n"
            "outcomes = []\n"
            "for make in (lambda: lib.zeros(2, names=('a',)), lambda: lib.zeros(2).rename('b'),\n"
            "             lambda: lib.tensor([1.], names=('c',))):\n"
            "    try:\n"
            "        outcomes.append(make().names)\n"
            "    except UserWarning as w:\n"
            "        outcomes.append(str(w)[:40])\n"
            "print(outcomes)\n")
    outs = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True, text=True, timeout=120,
                           check=True).stdout for lib in ("torch", "tessera")]
    assert outs[0] == outs[1]
    assert "Named tensors" in outs[1] and "('b',)" in outs[1]


@pytest.mark.parametrize("case", sorted(FIRST_NAMING))
def test_first_naming_warns_once_per_process(case):
    statement = FIRST_NAMING[case]
    assert _first_naming_warnings("tessera", statement) == _first_naming_warnings("torch", statement)
