"""What the OpInfo tests of the view and shape operators cannot see: strides, storage
offsets and storage sharing equal torch's (reshape and contiguous copy exactly when torch
copies), writes through a view reach the base, torch's error classes and messages, and
the T / mT / H / mH properties, the in-place views (t_, transpose_, squeeze_, unsqueeze_,
as_strided_) and narrow with a tensor start."""
import importlib
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import tessera

import opinfo
from opinfo import to_tessera

importlib.import_module("opinfo_views")
from opinfo_views import ViewInfo  # noqa: E402

VIEW_INFOS = [i for i in opinfo.REGISTRY if isinstance(i, ViewInfo)]


def storage_base(t):
    """The address of element 0 of t's storage (data_ptr less the storage offset)."""
    return t.data_ptr() - t.storage_offset() * t.element_size()


def exact_copy(t):
    """t's whole storage copied into tessera, viewed with t's sizes, strides and storage
    offset (to_tessera keeps only the span t covers, from offset 0)."""
    dtype = getattr(tessera, str(t.dtype).split(".")[1])
    base = tessera.tensor(t.storage().tolist(), dtype=dtype)
    return tessera.as_strided(base, tuple(t.shape), t.stride(), t.storage_offset())


def flat(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


@pytest.mark.parametrize("info", VIEW_INFOS, ids=lambda i: i.name)
def test_geometry_and_sharing_match_torch(info):
    """Every sample: the same sizes, strides and storage offset as torch, and the result
    shares the input's storage exactly when torch's does."""
    checked = 0
    for label, tensors, kwargs in info.samples("float32"):
        try:
            want = info.call(torch, *tensors, **kwargs)
        except Exception:  # noqa: BLE001 - error cases are test_ops's business
            continue
        ours = [to_tessera(t) for t in tensors]
        got = info.call(tessera, *ours, **kwargs)
        context = f"{info.name} {label}"
        wants, gots = flat(want), flat(got)
        assert len(gots) == len(wants), context
        for g, w in zip(gots, wants):
            assert tuple(g.shape) == tuple(w.shape), context
            assert g.stride() == w.stride(), f"{context}: stride {g.stride()} vs torch {w.stride()}"
            if g.numel() == 0 or tensors[0].numel() == 0:
                continue  # empty tensors have no data pointer to compare
            w_shares = storage_base(w) == storage_base(tensors[0])
            g_shares = storage_base(g) == storage_base(ours[0])
            assert g_shares == w_shares, f"{context}: shares storage {g_shares}, torch {w_shares}"
            if w_shares:
                assert g.storage_offset() == w.storage_offset(), context
            checked += 1
    assert checked > 0, f"{info.name}: no sample produced a result"


def _pair(shape=(3, 4), dtype=torch.float64):
    base = torch.arange(float(torch.tensor(shape).prod().item()), dtype=dtype).reshape(shape)
    return base, to_tessera(base)


WRITES = [
    ("view", lambda lib, x: x.view(4, 3)),
    ("view_as", lambda lib, x: x.view_as(x.reshape(12))),
    ("reshape", lambda lib, x: lib.reshape(x, (2, 6))),
    ("permute", lambda lib, x: x.permute(1, 0)),
    ("transpose", lambda lib, x: x.transpose(0, 1)),
    ("t", lambda lib, x: x.t()),
    ("expand", lambda lib, x: x.unsqueeze(0).expand(2, 3, 4).select(0, 1)),
    ("squeeze", lambda lib, x: x.unsqueeze(1).squeeze()),
    ("squeeze.dim", lambda lib, x: x.unsqueeze(0).squeeze(0)),
    ("unsqueeze", lambda lib, x: x.unsqueeze(-1)),
    ("select", lambda lib, x: x.select(1, 2)),
    ("slice", lambda lib, x: lib.ops.aten.slice(x, 1, 1, None, 2)),
    ("narrow", lambda lib, x: x.narrow(0, 1, 2)),
    ("unfold", lambda lib, x: x.unfold(1, 2, 2)),
    ("diagonal", lambda lib, x: x.diagonal(1)),
    ("flatten", lambda lib, x: x.flatten()),
    ("unflatten", lambda lib, x: x.unflatten(1, (2, 2))),
    ("split", lambda lib, x: x.split(2, 1)[1]),
    ("split_with_sizes", lambda lib, x: x.split_with_sizes([1, 2])[1]),
    ("chunk", lambda lib, x: x.chunk(2)[1]),
    ("unbind", lambda lib, x: x.unbind(1)[3]),
    ("movedim", lambda lib, x: x.movedim(0, 1)),
    ("contiguous", lambda lib, x: x.contiguous()),
]


@pytest.mark.parametrize("name,make", WRITES, ids=[w[0] for w in WRITES])
def test_writes_through_a_view_reach_the_base(name, make):
    want, mine = _pair()
    make(torch, want).fill_(-1)
    v = make(tessera, mine)
    v.fill_(-1)
    assert mine.tolist() == want.tolist()
    assert any(x == -1 for row in mine.tolist() for x in row), name


def test_copies_do_not_write_through():
    want, mine = _pair()
    clone = mine.clone()
    clone.fill_(5)
    assert mine.tolist() == want.tolist()
    # reshape of a transposed tensor to 1-D must copy (as torch's does)
    r = mine.t().reshape(-1)
    assert storage_base(r) != storage_base(mine)
    r.fill_(0)
    assert mine.tolist() == want.tolist()
    # contiguous() of a non-contiguous tensor copies; of a contiguous one returns it
    c = mine.t().contiguous()
    assert c.is_contiguous() and c.stride() == (3, 1)
    assert storage_base(c) != storage_base(mine)
    assert mine.contiguous().data_ptr() == mine.data_ptr()


def test_reshape_copies_exactly_when_torch_does():
    layouts = [((3, 4), None), ((4, 3), "t"), ((2, 6), "step"), ((3, 1), "expand"), ((2, 3, 4), "perm")]
    targets = [(-1,), (12,), (4, 3), (2, 2, 3), (3, 2, 2), (1, 12), (6, 2)]
    for shape, kind in layouts:
        base = torch.arange(float(torch.tensor(shape).prod().item())).reshape(shape)
        if kind == "t":
            src = base.t()
        elif kind == "step":
            src = base[:, ::2]
        elif kind == "expand":
            src = base.expand(3, 4)
        elif kind == "perm":
            src = base.permute(1, 0, 2)
        else:
            src = base
        mine = to_tessera(src)
        for target in targets:
            try:
                want = src.reshape(target)
            except RuntimeError:
                with pytest.raises(RuntimeError):
                    mine.reshape(target)
                continue
            got = mine.reshape(target)
            context = f"{kind} {shape} -> {target}"
            assert got.stride() == want.stride(), context
            assert (storage_base(got) == storage_base(mine)) == (storage_base(want) == storage_base(src)), context
            assert got.tolist() == want.tolist(), context


def test_views_alias_and_copies_keep_torchs_strides():
    # clone keeps the memory order of dense inputs (their very strides) and of non-dense ones
    for make in [lambda t: t.t(), lambda t: t.t()[::2], lambda t: t[:, ::2], lambda t: t[:1].expand(4, 6),
                 lambda t: t.reshape(2, 3, 4).permute(2, 0, 1), lambda t: t.reshape(2, 3, 2, 2).permute(0, 2, 3, 1)]:
        src = make(torch.arange(24.0).reshape(4, 6))
        mine = to_tessera(src)
        assert mine.clone().stride() == src.clone().stride(), src.stride()
        assert mine.contiguous().stride() == src.contiguous().stride()
    x = torch.arange(120.0).reshape(2, 3, 4, 5)
    assert to_tessera(x).contiguous(memory_format=tessera.channels_last).stride() == \
        x.contiguous(memory_format=torch.channels_last).stride()
    assert to_tessera(x).clone(memory_format=tessera.channels_last).stride() == \
        x.clone(memory_format=torch.channels_last).stride()


def test_results_of_list_ops_are_tuples():
    _, mine = _pair()
    for r in [mine.split(2), tessera.split(mine, [1, 2]), mine.chunk(2), mine.unbind(), tessera.unbind(mine, 1),
              mine.split_with_sizes([3])]:
        assert type(r) is tuple
        assert all(isinstance(t, tessera.Tensor) for t in r)


PROPERTY_SHAPES = [(), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0, 3)]


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
@pytest.mark.parametrize("prop", ["T", "mT", "H", "mH"])
@pytest.mark.parametrize("shape", PROPERTY_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_transpose_properties_match_torch(prop, shape, dtype):
    """x.T / x.mT / x.H / x.mH: the same view (sizes, strides, offset, shared storage) and
    values as torch's, or torch's exception class and message."""
    numel = torch.Size(shape).numel()
    base = torch.arange(float(numel)).reshape(shape).to(getattr(torch, dtype))
    mine = to_tessera(base)
    try:
        want = getattr(base, prop)
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        with pytest.raises(type(e)) as got:
            getattr(mine, prop)
        assert str(got.value) == str(e)
        return
    got = getattr(mine, prop)
    assert isinstance(got, tessera.Tensor)
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    assert got.storage_offset() == want.storage_offset()
    assert got.tolist() == want.tolist()
    if numel:
        assert storage_base(got) == storage_base(mine)  # a view, never a copy


def test_transpose_properties_on_views_and_meta():
    base = torch.arange(60.0).reshape(3, 4, 5)[1:, ::2].transpose(0, 2)
    mine = exact_copy(base)
    for prop in ("mT", "mH"):
        got, want = getattr(mine, prop), getattr(base, prop)
        assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()
        assert got.tolist() == want.tolist()
    m = tessera.empty(2, 3, 4, device="meta")
    assert m.mT.is_meta and tuple(m.mT.shape) == (2, 4, 3) and m.mT.stride() == (12, 1, 4)
    assert tuple(tessera.empty(2, 3, device="meta").H.shape) == (3, 2)
    # writes through a property's view reach the base
    t = tessera.zeros(2, 3)
    t.T.select(0, 1).fill_(7)
    assert t.tolist() == [[0, 7, 0], [0, 7, 0]]


def test_conjugate_transposes_of_complex_tensors_are_conj_views():
    """H / mH of a complex tensor are lazily conjugated views of it, as torch's (mT and T are
    plain transposes); a 0-dim tensor's mT, and a real one's H / mH, are the tensor itself."""
    base = torch.tensor([[1 + 2j, 3 - 1j, 0.5j], [2, -1j, 4 + 4j]])
    mine = to_tessera(base)
    for prop in ("T", "mT", "H", "mH"):
        got, want = getattr(mine, prop), getattr(base, prop)
        assert got.is_conj() is want.is_conj(), prop
        assert got.stride() == want.stride() and got.tolist() == want.tolist(), prop
        assert storage_base(got) == storage_base(mine), prop  # a view, never a copy
    for make in (lambda lib: lib.tensor(2.5), lambda lib: lib.tensor(1 + 2j)):
        t, u = make(tessera), make(torch)
        for prop in ("mT", "H", "mH"):
            assert (getattr(t, prop) is t) is (getattr(u, prop) is u), prop
            assert getattr(t, prop).is_conj() is getattr(u, prop).is_conj(), prop
            assert getattr(t, prop).item() == getattr(u, prop).item(), prop
    with pytest.raises(RuntimeError, match="Got 1-D tensor"):  # the shape check comes first, as in torch
        tessera.zeros(3, dtype=tessera.complex64).mH


def test_T_warns_once_for_other_ranks():
    """torch warns (once per process) that x.T on other than 2 (or 0) dims is deprecated;
    a fresh interpreter shows the first such warning and no second."""
    code = textwrap.dedent("""
        import warnings, tessera
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            tessera.zeros(2, 3).T, tessera.zeros(()).T
            assert not w, w
            tessera.zeros(2, 3, 4).T
            tessera.zeros(5).T
        assert len(w) == 1 and w[0].category is UserWarning, w
        print(w[0].message)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    mine = out.stdout.strip()
    assert mine.startswith("The use of `x.T` on tensors of dimension other than 2")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.zeros(2, 3, 4).T
    if w:  # torch warns once per process too: only if nothing here triggered it before
        assert str(w[0].message).startswith(mine)


# ---------------------------------------------------------------- in-place views

INPLACE_VIEWS = [
    # (label, expression on x) - run on torch and tessera alike
    ("t_", "x.t_()"),
    ("transpose_", "x.transpose_(0, -1)"),
    ("transpose_-same", "x.transpose_(1, 1)"),
    ("transpose_-neg", "x.transpose_(-2, -1)"),
    ("squeeze_", "x.squeeze_()"),
    ("squeeze_.dim", "x.squeeze_(1)"),
    ("squeeze_.dim-neg", "x.squeeze_(-1)"),
    ("squeeze_.dim-kept", "x.squeeze_(0)"),
    ("unsqueeze_", "x.unsqueeze_(0)"),
    ("unsqueeze_-end", "x.unsqueeze_(-1)"),
    ("unsqueeze_-mid", "x.unsqueeze_(1)"),
    ("as_strided_", "x.as_strided_((2, 2), (1, 2))"),
    ("as_strided_-offset", "x.as_strided_((3,), (2,), 1)"),
    ("as_strided_-function", "lib.as_strided_(x, (2,), (3,), storage_offset=2)"),
    ("as_strided_-empty", "x.as_strided_((0, 4), (1, 1), 100)"),
    ("as_strided_-negative-stride", "x.as_strided_((2,), (-1,))"),
    ("as_strided_-rank-mismatch", "x.as_strided_((2, 2), (1,))"),
]

INPLACE_LAYOUTS = [
    ("contiguous", lambda: torch.arange(12.0).reshape(3, 1, 4)),
    ("transposed", lambda: torch.arange(12.0).reshape(4, 1, 3).transpose(0, 2)),
    ("offset", lambda: torch.arange(30.0).reshape(5, 6)[1:, 2:].unsqueeze(1)),
    ("matrix", lambda: torch.arange(6.0).reshape(2, 3)),
    ("vector", lambda: torch.arange(4.0)),
    ("scalar", lambda: torch.tensor(3.0)),
]


@pytest.mark.parametrize("layout,make", INPLACE_LAYOUTS, ids=[lay for lay, _ in INPLACE_LAYOUTS])
@pytest.mark.parametrize("label,expr", INPLACE_VIEWS, ids=[lab for lab, _ in INPLACE_VIEWS])
def test_inplace_views_match_torch(label, expr, layout, make):
    """An in-place view op returns self with torch's new sizes, strides and offset over the
    same storage (or raises torch's exception and leaves self alone), and the values read
    through it agree."""
    theirs = make()
    mine = exact_copy(theirs)
    mine_base = storage_base(mine)
    try:
        want = eval(expr, {"lib": torch, "x": theirs})
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        with pytest.raises(Exception) as got:
            eval(expr, {"lib": tessera, "x": mine})
        assert type(got.value).__name__ == type(e).__name__ and str(got.value) == str(e)
        assert tuple(mine.shape) == tuple(theirs.shape) and mine.stride() == theirs.stride()  # unchanged
        return
    got = eval(expr, {"lib": tessera, "x": mine})
    assert got is mine and want is theirs
    assert tuple(mine.shape) == tuple(theirs.shape), label
    assert mine.stride() == theirs.stride(), f"{label}: {mine.stride()} vs torch {theirs.stride()}"
    assert mine.storage_offset() == theirs.storage_offset()
    if mine.numel():  # an empty tensor has no data pointer to compare
        assert storage_base(mine) == mine_base  # same storage, no copy
    assert mine.tolist() == theirs.tolist()


def test_inplace_views_keep_sharing_storage_with_other_views():
    for lib in (torch, tessera):
        base = lib.zeros(2, 3)
        alias = base.view(6)
        base.t_()
        base.select(0, 2).fill_(1)  # column 2 of the original matrix
        assert alias.tolist() == [0, 0, 1, 0, 0, 1]
        base.unsqueeze_(0).squeeze_(0).transpose_(0, 1)
        assert tuple(base.shape) == (2, 3) and base.tolist() == [[0, 0, 1], [0, 0, 1]]
        base.as_strided_((2,), (3,), 2).fill_(5)
        assert alias.tolist() == [0, 0, 5, 0, 0, 5]


def test_inplace_views_on_meta_tensors():
    m = tessera.empty(3, 4, device="meta")
    assert m.t_() is m and m.is_meta and tuple(m.shape) == (4, 3) and m.stride() == (1, 4)
    m.unsqueeze_(1).squeeze_(1).transpose_(0, 1).squeeze_()
    assert tuple(m.shape) == (3, 4) and m.stride() == (4, 1)
    m.as_strided_((2, 2), (1, 2), 3)
    assert m.stride() == (1, 2) and m.storage_offset() == 3
    for expr in ["x.as_strided_((2, 2), (1, 2), 100)", "x.transpose_(0, 2)", "x.unsqueeze_(5)", "x.squeeze_(-3)"]:
        with pytest.raises(Exception) as want:
            eval(expr, {"x": torch.empty(3, 4, device="meta")})
        with pytest.raises(Exception) as got:
            eval(expr, {"x": tessera.empty(3, 4, device="meta")})
        assert type(got.value).__name__ == type(want.value).__name__, expr
        assert str(got.value) == str(want.value)


def test_inplace_views_are_methods_as_in_torch():
    for name in ("transpose_", "t_", "squeeze_", "unsqueeze_"):
        assert not hasattr(torch, name) and not hasattr(tessera, name), name
        assert hasattr(tessera.Tensor, name)
    assert hasattr(tessera, "as_strided_") and hasattr(tessera.Tensor, "as_strided_")


# ---------------------------------------------------------------- narrow with a tensor start

NARROW_TENSOR = [
    "x.narrow(0, lib.tensor(1), 2)", "x.narrow(1, lib.tensor(-2), 2)", "lib.narrow(x, 0, lib.tensor(3), 1)",
    "x.narrow(0, lib.tensor(1, dtype=lib.int8), 2)", "x.narrow(0, lib.tensor([1]), 1)",
    "x.narrow(0, lib.tensor(1.0), 1)", "x.narrow(0, lib.tensor(True), 1)", "x.narrow(0, lib.tensor(5), 1)",
    "x.narrow(0, lib.tensor(3), 2)", "lib.ops.aten.narrow.Tensor(x, 1, lib.tensor(1), 1)",
    # a 0-dim integral tensor passes for an int anywhere; a 1-element 1-D one does not
    "x.select(0, lib.tensor(1))", "x.select(0, lib.tensor([1]))", "x.transpose(lib.tensor(0), 1)",
]


@pytest.mark.parametrize("expr", NARROW_TENSOR)
def test_narrow_with_tensor_start_and_tensors_as_ints(expr):
    theirs = torch.arange(20.0).reshape(4, 5)
    mine = to_tessera(theirs)
    try:
        want = eval(expr, {"lib": torch, "x": theirs})
    except Exception as e:  # noqa: BLE001
        with pytest.raises(Exception) as got:
            eval(expr, {"lib": tessera, "x": mine})
        assert type(got.value).__name__ == type(e).__name__, f"{got.value!r} vs {e!r}"
        if not isinstance(e, TypeError):  # the parser's overload listings differ in wording
            assert str(got.value) == str(e)
        return
    got = eval(expr, {"lib": tessera, "x": mine})
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    assert got.storage_offset() == want.storage_offset() and got.tolist() == want.tolist()
    assert storage_base(got) == storage_base(mine)


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
def test_T_and_mT():
    base = torch.arange(24.0).reshape(2, 3, 4)
    mine = to_tessera(base)
    for t, m in [(base, mine), (base[0], mine.select(0, 0)), (base[0, 0], mine.select(0, 0).select(0, 0))]:
        got, want = m.T, t.permute(*reversed(range(t.dim())))
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        assert got.tolist() == want.tolist()
    assert mine.mT.stride() == base.mT.stride() and mine.mT.tolist() == base.mT.tolist()
    assert mine.select(0, 0).mT.stride() == base[0].mT.stride()
    scalar = mine.select(0, 0).select(0, 0).select(0, 0)
    assert scalar.mT.shape == base[0, 0, 0].mT.shape == ()
    with pytest.raises(RuntimeError) as want:
        base[0, 0].mT
    with pytest.raises(RuntimeError) as got:
        mine.select(0, 0).select(0, 0).mT
    assert str(got.value) == str(want.value)


ERRORS = [
    "x.permute(0)", "x.permute(0, 0)", "x.permute(0, 2)", "x.permute(0, 1, 2)", "y.permute(0, 0, 5)",
    "y.permute(5, 0, 0)", "x.transpose(0, 2)", "x.transpose(-3, 0)", "s.transpose(0, 1)", "y.t()",
    "x.expand(2)", "x.expand(3, 5)", "x.expand(-1, 3, 4)", "x.expand(3, -2)", "m.expand(2)", "c.expand(2)",
    "b.expand(2)", "l.expand(2)",
    "x.squeeze(2)", "s.squeeze(1)", "x.unsqueeze(3)", "x.unsqueeze(-4)", "s.unsqueeze(1)",
    "x.select(0, 3)", "x.select(0, -4)", "x.select(2, 0)", "s.select(0, 0)", "x.select(-2, 5)", "x.select(-1, -7)",
    "lib.ops.aten.slice(x, 0, 0, 1, 0)", "lib.ops.aten.slice(x, 0, 0, 1, -1)", "lib.ops.aten.slice(x, 2)",
    "lib.ops.aten.slice(s, 0)",
    "x.narrow(0, 2, 2)", "x.narrow(0, -4, 1)", "x.narrow(0, 4, 0)", "x.narrow(0, 0, -1)", "x.narrow(2, 0, 1)",
    "s.narrow(0, 0, 1)",
    "x.unfold(0, 4, 1)", "x.unfold(0, 2, 0)", "x.unfold(0, -1, 1)", "x.unfold(2, 1, 1)", "s.unfold(0, 2, 1)",
    "s.unfold(1, 1, 1)",
    "x.diagonal(0, 0, 0)", "x.diagonal(0, -1, 1)", "x.diagonal(0, 0, 2)", "s.diagonal()",
    "x.flatten(1, 0)", "x.flatten(0, 2)", "s.flatten(0, 1)",
    "x.unflatten(1, (3, 2))", "x.unflatten(1, (-1, -1))", "x.unflatten(1, ())", "x.unflatten(2, (1,))",
    "x.unflatten(1, (-1, 0))", "x.unflatten(1, (2, -2))", "x.unflatten(-1, (3, 2))", "e.unflatten(1, (-1, 0))",
    "x.split(0)", "x.split(-1)", "x.split_with_sizes([1, 1])", "x.split_with_sizes([1, 1], -2)",
    "x.split_with_sizes([4, -1])", "x.split(1, 2)", "s.split(1)",
    "x.chunk(0)", "x.chunk(-1)", "x.chunk(2, 2)", "s.chunk(1)",
    "x.unbind(2)", "s.unbind(0)",
    "x.movedim(0, 2)", "x.movedim((0, 1), (1,))", "x.movedim((0, 0), (0, 1))", "x.movedim((0, 1), (1, 1))",
    "x.movedim((0, 0), (5, 1))",
    "x.view(5)", "x.reshape(5)", "x.reshape(-1, -1)", "x.reshape(0, -1)", "e.reshape(-1, 0)", "x.reshape(2, -2)",
    "x.t().view(12)", "x.view_as(z)", "x.expand_as(z)",
    "x.t().contiguous(memory_format=lib.preserve_format)", "x.contiguous(memory_format=lib.channels_last)",
    "x.clone(memory_format=lib.channels_last)",
]


def _operands(lib):
    mk = torch if lib is torch else None

    def conv(t):
        return t if mk else to_tessera(t)
    return dict(lib=lib, x=conv(torch.zeros(3, 4)), y=conv(torch.zeros(2, 3, 4)), s=conv(torch.tensor(1.0)),
                z=conv(torch.zeros(5)), e=conv(torch.zeros(2, 0)), c=conv(torch.zeros(3, 4, dtype=torch.complex64)),
                b=conv(torch.zeros(3, 4, dtype=torch.bfloat16)), l=conv(torch.zeros(3, 4, dtype=torch.int64)),
                m=torch.zeros(3, 4, device="meta") if mk else tessera.empty(3, 4, device="meta"))


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr):
    with pytest.raises(Exception) as want:
        eval(expr, {}, _operands(torch))
    with pytest.raises(Exception) as got:
        eval(expr, {}, _operands(tessera))
    assert type(got.value).__name__ == type(want.value).__name__, f"{got.value!r} vs {want.value!r}"
    assert str(got.value) == str(want.value)


def test_meta_views_keep_geometry():
    m = tessera.empty_strided((3, 4), (1, 3), device="meta")
    assert m.t().stride() == (3, 1) and m.t().is_meta
    assert m.reshape(12).is_meta and m.reshape(12).stride() == (1,)
    assert m.unfold(1, 2, 1).stride() == (1, 3, 3)
    assert [t.shape for t in m.split(3, 1)] == [(3, 3), (3, 1)]
    assert m.clone().stride() == (1, 3) and m.clone().is_meta
