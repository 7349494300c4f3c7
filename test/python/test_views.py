"""What the OpInfo tests of the view and shape operators cannot see: strides, storage
offsets and storage sharing equal torch's (reshape and contiguous copy exactly when torch
copies), writes through a view reach the base, torch's error classes and messages, and
the T / mT properties."""
import importlib

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


class _Props:
    """x.T / x.mT, or the functions behind them while the C Tensor type lacks the slots."""

    def __init__(self, t):
        self.t = t

    @property
    def T(self):
        return self.t.T if hasattr(self.t, "T") else _tensor_properties.T(self.t)

    @property
    def mT(self):
        return self.t.mT if hasattr(self.t, "mT") else _tensor_properties.mT(self.t)


_tensor_properties = importlib.import_module("tessera._tensor_properties")


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
def test_T_and_mT():
    base = torch.arange(24.0).reshape(2, 3, 4)
    mine = to_tessera(base)
    P = _Props
    for t, m in [(base, mine), (base[0], mine.select(0, 0)), (base[0, 0], mine.select(0, 0).select(0, 0))]:
        got, want = P(m).T, t.permute(*reversed(range(t.dim())))
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        assert got.tolist() == want.tolist()
    assert P(mine).mT.stride() == base.mT.stride() and P(mine).mT.tolist() == base.mT.tolist()
    assert P(mine.select(0, 0)).mT.stride() == base[0].mT.stride()
    scalar = mine.select(0, 0).select(0, 0).select(0, 0)
    assert P(scalar).mT.shape == base[0, 0, 0].mT.shape == ()
    with pytest.raises(RuntimeError) as want:
        base[0, 0].mT
    with pytest.raises(RuntimeError) as got:
        P(mine.select(0, 0).select(0, 0)).mT
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
