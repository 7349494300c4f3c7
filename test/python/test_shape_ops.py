"""Shape and order ops beyond the OpInfo samples (opinfo_shape_ops.py), against torch 1.13:
indices that torch leaves open checked by what they point at, named-tuple returns and
out=(values, indices), stable sorts with ties, NaN and signed zeros on the radix and
comparison paths, cat's promotion and legacy empty inputs, and errors with torch's
exception classes and messages."""
import math

import pytest
import torch

import tessera
from opinfo import ALL_DTYPES, make_torch, to_tessera, to_torch

NO_COMPLEX = [d for d in ALL_DTYPES if not d.startswith("complex")]
ORDERED = [d for d in NO_COMPLEX if d != "bool"]


def layouts(dtype, seed=0):
    """Contiguous, transposed and stepped 2-D inputs, with ties (small integer ranges)."""
    base = make_torch((6, 40), dtype, seed, low=-3, high=3)
    return {"contiguous": base, "transposed": make_torch((40, 6), dtype, seed + 1, -3, 3).t(),
            "stepped": make_torch((6, 80), dtype, seed + 2, -3, 3)[:, ::2]}


def expect_same_error(fn):
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(tessera)
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    assert str(got.value) == str(want.value)


# ---------------------------------------------------------------- indices torch leaves open

def check_indices_point_at_values(x, values, indices, dim, keepdim=True):
    idx = to_torch(indices)
    vals = to_torch(values)
    if not keepdim:
        idx, vals = idx.unsqueeze(dim), vals.unsqueeze(dim)
    picked = torch.gather(x, dim, idx)
    torch.testing.assert_close(picked, vals, equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", NO_COMPLEX)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort_indices_are_a_permutation_onto_the_values(dtype, layout, dim):
    x = layouts(dtype)[layout]
    for descending in (False, True):
        got = tessera.sort(to_tessera(x), dim=dim, descending=descending)
        want = torch.sort(x, dim=dim, descending=descending)
        torch.testing.assert_close(to_torch(got.values), want.values, equal_nan=True, rtol=0, atol=0)
        check_indices_point_at_values(x, got.values, got.indices, dim)
        assert (to_torch(got.indices).sort(dim).values == torch.arange(x.shape[dim]).reshape(
            [-1 if d == dim % 2 else 1 for d in range(2)])).all()


@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_selection_indices_point_at_their_values(dtype, layout):
    x = layouts(dtype)[layout]
    xt = to_tessera(x)
    want_x = x.float() if dtype == "float16" else x  # torch 1.13 selects no Half
    for dim in (0, 1):
        for k, largest in ((1, True), (5, True), (4, False)):
            got = tessera.topk(xt, k, dim=dim, largest=largest)
            want = torch.topk(want_x, k, dim=dim, largest=largest)
            torch.testing.assert_close(to_torch(got.values), want.values.to(x.dtype), equal_nan=True, rtol=0, atol=0)
            check_indices_point_at_values(x, got.values, got.indices, dim)
        for name, args in (("kthvalue", (3,)), ("median", ()), ("nanmedian", ())):
            got = getattr(tessera, name)(xt, *args, dim)
            want = getattr(torch, name)(want_x, *args, dim)
            torch.testing.assert_close(to_torch(got.values), want.values.to(x.dtype), equal_nan=True, rtol=0, atol=0)
            check_indices_point_at_values(x, got.values, got.indices, dim, keepdim=False)


# ---------------------------------------------------------------- named tuples and out=

@pytest.mark.parametrize("name,args", [("sort", ()), ("topk", (2,)), ("kthvalue", (2,)), ("median", (0,)),
                                       ("nanmedian", (0,)), ("max", (0,)), ("min", (0,))])
def test_named_tuple_returns(name, args):
    x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    want = getattr(torch, name)(x, *args)
    got = getattr(tessera, name)(to_tessera(x), *args)
    assert type(got).__name__ == type(want).__name__
    assert isinstance(got, tuple) and len(got) == 2
    torch.testing.assert_close(to_torch(got.values), want.values)
    torch.testing.assert_close(to_torch(got[1]), want[1])
    method = getattr(to_tessera(x), name)(*args)
    assert type(method).__name__ == type(want).__name__
    assert repr(got).startswith("tessera.return_types." + name + "(")


# name, positional args, kwargs, the dim the indices run along, whether it is kept
PAIR_CASES = [("sort", (), {"dim": 0}, 0, True), ("sort", (), {"stable": True}, -1, True),
              ("topk", (2,), {}, -1, True), ("kthvalue", (2, 1), {}, 1, False), ("median", (1,), {}, 1, False),
              ("nanmedian", (0, True), {}, 0, True)]


@pytest.mark.parametrize("name,args,kwargs,dim,keepdim", PAIR_CASES)
def test_out_takes_a_pair(name, args, kwargs, dim, keepdim):
    x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0], [7.0, 7.0, 7.0]])
    want = getattr(torch, name)(x, *args, **kwargs)
    want_out = getattr(torch, name)(x, *args, out=(torch.empty(0), torch.empty(0).long()), **kwargs)
    values, indices = tessera.empty(0), tessera.empty(0, dtype=tessera.int64)
    got = getattr(tessera, name)(to_tessera(x), *args, out=(values, indices), **kwargs)
    assert got[0] is values and got[1] is indices
    assert type(got).__name__ == type(want_out).__name__
    torch.testing.assert_close(to_torch(values), want.values)
    check_indices_point_at_values(x, values, indices, dim, keepdim)


def test_out_pair_must_be_two_tensors():
    with pytest.raises(TypeError):
        tessera.sort(tessera.ones(3), out=(tessera.empty(0),))


@pytest.mark.parametrize("name,call", [
    ("cat", lambda lib, o: lib.cat([lib.ones(2, 3), lib.zeros(1, 3)], out=o)),
    ("stack", lambda lib, o: lib.stack([lib.ones(2), lib.zeros(2)], 1, out=o)),
    ("hstack", lambda lib, o: lib.hstack([lib.ones(2), lib.zeros(3)], out=o)),
    ("vstack", lambda lib, o: lib.vstack([lib.ones(2), lib.zeros(2)], out=o)),
    ("dstack", lambda lib, o: lib.dstack([lib.ones(2), lib.zeros(2)], out=o)),
    ("column_stack", lambda lib, o: lib.column_stack([lib.ones(2), lib.zeros(2, 2)], out=o)),
    ("tril", lambda lib, o: lib.tril(lib.ones(3, 3), out=o)),
    ("msort", lambda lib, o: lib.msort(lib.arange(6.0).reshape(3, 2).flip([0]), out=o)),
    ("histc", lambda lib, o: lib.histc(lib.arange(6.0), bins=3, out=o)),
    ("searchsorted", lambda lib, o: lib.searchsorted(lib.arange(6.0), lib.ones(2), out=o)),
])
def test_single_out(name, call):
    # the joins cast into out's dtype; the others want out in the result's dtype
    dtype = "int64" if name == "searchsorted" else "float64" if "stack" in name or name == "cat" else "float32"
    want_out = torch.empty(0, dtype=getattr(torch, dtype))
    want = call(torch, want_out)
    out = tessera.empty(0, dtype=getattr(tessera, dtype))
    got = call(tessera, out)
    assert got is out
    torch.testing.assert_close(to_torch(out), want)


# ---------------------------------------------------------------- sort: stability, NaN, radix path

SPECIAL = [math.nan, -0.0, 0.0, math.inf, -math.inf, 1.0, -1.0, 2.5, math.nan, 0.0, -0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [11, 300, 5000])  # comparison sort below 256 elements, radix above (float/double)
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_nan_and_signed_zeros(dtype, n, descending):
    g = torch.Generator().manual_seed(n)
    pick = torch.randint(0, len(SPECIAL), (n,), generator=g)
    x = torch.tensor(SPECIAL, dtype=torch.float64)[pick].to(getattr(torch, dtype))
    want = torch.sort(x, stable=True, descending=descending)
    got = tessera.sort(to_tessera(x), stable=True, descending=descending)
    assert to_torch(got.indices).tolist() == want.indices.tolist()
    # -0.0 and 0.0 keep their own sign bits in the values (NaN's sign is lost on the way in)
    numbers = ~want.values.isnan()
    assert torch.equal(torch.signbit(to_torch(got.values))[numbers], torch.signbit(want.values)[numbers])


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool"])
@pytest.mark.parametrize("n", [50, 3000])
def test_stable_sort_integer_ties(dtype, n):
    x = make_torch((n,), dtype, seed=n, low=-3, high=3)
    if dtype in ("int32", "int64"):
        x[::7] = torch.iinfo(x.dtype).min
        x[::11] = torch.iinfo(x.dtype).max
    for descending in (False, True):
        want = torch.sort(x, stable=True, descending=descending)
        got = tessera.sort(to_tessera(x), stable=True, descending=descending)
        assert to_torch(got.indices).tolist() == want.indices.tolist()
        assert to_torch(got.values).tolist() == want.values.tolist()


def test_large_sort_matches_torch():
    x = torch.rand(1 << 20, generator=torch.Generator().manual_seed(3)) * 100 - 50
    x[::1001] = math.nan
    want = torch.sort(x, stable=True)
    got = tessera.sort(to_tessera(x), stable=True)
    assert torch.equal(to_torch(got.indices), want.indices)
    big = x.reshape(1024, 1024)
    got2 = tessera.sort(to_tessera(big), dim=0, stable=True, descending=True)
    assert torch.equal(to_torch(got2.indices), torch.sort(big, dim=0, stable=True, descending=True).indices)


def test_topk_nan_counts_as_largest():
    x = torch.tensor([1.0, math.nan, 3.0, -math.inf, math.nan, 2.0] * 50)
    for largest in (True, False):
        want = torch.topk(x, 4, largest=largest)
        got = tessera.topk(to_tessera(x), 4, largest=largest)
        torch.testing.assert_close(to_torch(got.values), want.values, equal_nan=True)
        check_indices_point_at_values(x, got.values, got.indices, 0)


def test_median_and_kthvalue_with_nan():
    x = torch.tensor([[1.0, math.nan, 0.0, 5.0], [2.0, 1.0, 3.0, 4.0], [math.nan] * 4])
    for name in ("median", "nanmedian"):
        want, got = getattr(torch, name)(x, 1), getattr(tessera, name)(to_tessera(x), 1)
        torch.testing.assert_close(to_torch(got.values), want.values, equal_nan=True)
        # the first NaN, or the one median; an all-NaN row's index is any NaN's (torch's
        # comes from its selection algorithm)
        assert to_torch(got.indices)[:2].tolist() == want.indices[:2].tolist()
        check_indices_point_at_values(x, got.values, got.indices, 1, keepdim=False)
        torch.testing.assert_close(to_torch(getattr(tessera, name)(to_tessera(x))), getattr(torch, name)(x),
                                   equal_nan=True)
    want, got = torch.kthvalue(x, 4, 1), tessera.kthvalue(to_tessera(x), 4, 1)
    torch.testing.assert_close(to_torch(got.values), want.values, equal_nan=True)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_nothing_is_nan(name):
    assert math.isnan(getattr(tessera, name)(tessera.ones(0)).item())
    assert math.isnan(getattr(torch, name)(torch.ones(0)).item())


# ---------------------------------------------------------------- cat

def test_cat_promotes_and_skips_legacy_empty_inputs():
    parts = [torch.ones(2, 3, dtype=torch.int32), torch.empty(0, dtype=torch.float64),
             torch.full((2, 1), 2, dtype=torch.int8)]
    want = torch.cat(parts, 1)
    got = tessera.cat([to_tessera(p) for p in parts], 1)
    assert str(got.dtype) == "tessera.float64" and str(want.dtype) == "torch.float64"
    assert to_torch(got).tolist() == want.tolist()
    only_empty = [torch.empty(0), torch.empty(0, dtype=torch.int64)]
    assert tuple(tessera.cat([to_tessera(p) for p in only_empty]).shape) == tuple(torch.cat(only_empty).shape)


def test_cat_mixed_layouts_and_large_blocks():
    a = make_torch((3, 200_000), "float32", 1)
    b = make_torch((200_000, 3), "float32", 2).t()
    c = make_torch((3, 5), "float64", 3)
    for dim in (0, 1):
        parts = [a, a] if dim == 0 else [a, b, c]
        want = torch.cat(parts, dim)
        got = tessera.cat([to_tessera(p) for p in parts], dim)
        assert torch.equal(to_torch(got), want)
    big = [make_torch((1 << 18,), "float32", s) for s in range(8)]
    assert torch.equal(to_torch(tessera.cat([to_tessera(p) for p in big])), torch.cat(big))


def test_cat_keeps_channels_last():
    x = torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last)
    want = torch.cat([x, x], 1)
    got = tessera.cat([to_tessera(x), to_tessera(x)], 1)
    assert tuple(got.stride()) == tuple(want.stride())


def test_cat_out_casts_into_out():
    out = tessera.empty(0, dtype=tessera.float64)
    tessera.cat([tessera.ones(2, dtype=tessera.int32), tessera.zeros(1, dtype=tessera.int32)], out=out)
    assert out.tolist() == [1.0, 1.0, 0.0]


# ---------------------------------------------------------------- unique, searchsorted, counting

@pytest.mark.parametrize("dtype", ["int64", "float32", "bool", "uint8", "bfloat16"])
def test_unique_unsorted_is_consistent(dtype):
    x = make_torch((50,), dtype, 5, low=-3, high=3)
    out, inverse, counts = tessera.unique(to_tessera(x), sorted=False, return_inverse=True, return_counts=True)
    want = torch.unique(x)
    assert sorted(to_torch(out).tolist()) == want.tolist()
    assert torch.equal(to_torch(out)[to_torch(inverse)], x)
    assert to_torch(counts).sum().item() == x.numel()


def test_unique_half_matches_float_reference():
    x = make_torch((40,), "float16", 6, low=-3, high=3)
    got = tessera.unique(to_tessera(x), return_counts=True)
    want = torch.unique(x.float(), return_counts=True)
    assert to_torch(got[0]).float().tolist() == want[0].tolist() and to_torch(got[1]).tolist() == want[1].tolist()


def test_unique_nan_entries_are_distinct():
    x = tessera.tensor([1.0, math.nan, 0.0, math.nan, 1.0, -0.0])
    out, counts = tessera.unique(x, return_counts=True)
    got = out.tolist()
    assert got[:2] == [0.0, 1.0] and all(math.isnan(v) for v in got[2:]) and len(got) == 4
    assert counts.tolist() == [2, 2, 1, 1]


def test_searchsorted_scalar_and_promotion():
    seq = torch.tensor([1, 3, 5, 7])
    for value, kwargs in ((4, {}), (5, {"right": True}), (2.5, {}), (5, {"side": "left"}), (9, {"out_int32": True})):
        want = torch.searchsorted(seq, value, **kwargs)
        got = tessera.searchsorted(to_tessera(seq), value, **kwargs)
        assert got.dim() == 0 and got.item() == want.item() and str(got.dtype)[8:] == str(want.dtype)[6:]
    f = torch.tensor([0.5, 1.5, math.nan])
    want = torch.searchsorted(f, torch.tensor([1, 2, 0]))
    assert to_torch(tessera.searchsorted(to_tessera(f), to_tessera(torch.tensor([1, 2, 0])))).tolist() == want.tolist()
    v = torch.tensor([math.nan, 1.0, 5.0])
    assert to_torch(tessera.searchsorted(to_tessera(f), to_tessera(v))).tolist() == torch.searchsorted(f, v).tolist()


@pytest.mark.parametrize("wdtype", ["float32", "float64", "int64", "float16"])
def test_bincount_weights(wdtype):
    x = torch.tensor([1, 3, 1, 0, 7])
    w = torch.tensor([0.5, 1.0, 2.0, 3.0, 1.5]).to(getattr(torch, wdtype))
    want = torch.bincount(x, w, minlength=3)
    got = tessera.bincount(to_tessera(x), to_tessera(w), minlength=3)
    assert str(got.dtype)[8:] == str(want.dtype)[6:]
    assert to_torch(got).tolist() == want.tolist()
    assert to_torch(tessera.bincount(tessera.tensor([], dtype=tessera.int64), minlength=4)).tolist() == [0] * 4


def test_histc_edges_like_torch():
    x = torch.linspace(-1, 1, 1001)
    for bins, lo, hi in ((7, 0, 0), (10, -1, 1), (3, -0.5, 0.25), (13, -0.9, 0.9)):
        want = torch.histc(x, bins, lo, hi)
        assert to_torch(tessera.histc(to_tessera(x), bins, lo, hi)).tolist() == want.tolist()


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("call", [
    lambda lib: lib.cat([]),
    lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3, 3)], 1),
    lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3)], 1),
    lambda lib: lib.cat([lib.ones(3), lib.tensor(1.0)]),
    lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 3)], 2),
    lambda lib: lib.cat([lib.ones(2)], out=lib.empty(0, dtype=lib.int32)),
    lambda lib: lib.stack([]),
    lambda lib: lib.stack([lib.ones(2), lib.ones(3)]),
    lambda lib: lib.flip(lib.ones(2, 3), [0, -2]),
    lambda lib: lib.roll(lib.ones(2, 3), [1, 2], [0]),
    lambda lib: lib.ones(2, 3).repeat(2),
    lambda lib: lib.tril(lib.ones(3)),
    lambda lib: lib.topk(lib.ones(3), 4),
    lambda lib: lib.topk(lib.ones(3), -1),
    lambda lib: lib.kthvalue(lib.ones(3), 0),
    lambda lib: lib.kthvalue(lib.ones(2, 3), 4, 1),
    lambda lib: lib.median(lib.ones(0, 3), 0),
    lambda lib: lib.sort(lib.ones(3), 1),
    lambda lib: lib.bincount(lib.tensor([1, -3, 1])),
    lambda lib: lib.bincount(lib.tensor([[1, 3]])),
    lambda lib: lib.bincount(lib.tensor([1, 3]), minlength=-1),
    lambda lib: lib.bincount(lib.tensor([1, 3]), lib.tensor([1.0])),
    lambda lib: lib.histc(lib.ones(2), bins=0),
    lambda lib: lib.histc(lib.ones(2), bins=4, min=3, max=1),
    lambda lib: lib.searchsorted(lib.ones(3), lib.ones(3), side="left", right=True),
    lambda lib: lib.searchsorted(lib.ones(3), lib.ones(3), side="middle"),
    lambda lib: lib.searchsorted(lib.ones(2, 3), lib.ones(3, 3)),
    lambda lib: lib.searchsorted(lib.ones(2, 3), 1.0),
    lambda lib: lib.searchsorted(lib.tensor(1.0), lib.ones(2)),
    lambda lib: lib.searchsorted(lib.ones(3), lib.ones(2), sorter=lib.tensor([0, 1])),
    lambda lib: lib.searchsorted(lib.ones(3), lib.ones(2), sorter=lib.tensor([0, 1, 2], dtype=lib.int32)),
    lambda lib: lib.searchsorted(lib.ones(3), lib.ones(2), out=lib.empty(0)),
], ids=lambda c: "")
def test_errors_like_torch(call):
    expect_same_error(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.unique(lib.ones(3, device="meta")),
    lambda lib: lib.unique_consecutive(lib.ones(3, device="meta")),
    lambda lib: lib.bincount(lib.ones(3, dtype=lib.int64, device="meta")),
])
def test_data_dependent_ops_refuse_meta(call):
    with pytest.raises(NotImplementedError):
        call(tessera)


# ---------------------------------------------------------------- tril_ / triu_

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", ["tril_", "triu_"])
def test_tril_triu_in_place(dtype, name):
    for shape, diagonal in (((4, 5), 0), ((2, 3, 4), 1), ((5, 3), -2), ((3, 3), 7), ((0, 4), 0)):
        for transposed in (False, True):
            x = make_torch(tuple(reversed(shape)) if transposed else shape, dtype, 3)
            if transposed:
                x = x.transpose(-1, -2)
            mine = to_tessera(x)
            got = getattr(mine, name)(diagonal)
            getattr(x, name)(diagonal)
            assert got is mine
            assert torch.equal(to_torch(mine), x), (shape, diagonal, transposed)


# ---------------------------------------------------------------- layouts of the results

STRIDE_CASES = {
    "cat": lambda L, a, b: L.cat([a, b], 1), "stack": lambda L, a, b: L.stack([a, b], 1),
    "flip": lambda L, a, b: L.flip(a, [0]), "roll": lambda L, a, b: L.roll(a, 1, 0),
    "roll flat": lambda L, a, b: L.roll(a, 1), "repeat": lambda L, a, b: a.repeat(1, 2, 1),
    "tile": lambda L, a, b: L.tile(a, (2,)), "tril": lambda L, a, b: L.tril(a), "triu": lambda L, a, b: L.triu(a, 1),
    "sort 0": lambda L, a, b: L.sort(a, 0), "sort -1": lambda L, a, b: L.sort(a, -1),
    "sort 1": lambda L, a, b: L.sort(a, 1), "argsort": lambda L, a, b: L.argsort(a, 1),
    "msort": lambda L, a, b: L.msort(a), "topk": lambda L, a, b: L.topk(a, 2, 1),
    "topk 0": lambda L, a, b: L.topk(a, 2, 0), "kthvalue": lambda L, a, b: L.kthvalue(a, 2, 1),
    "kthvalue keepdim": lambda L, a, b: L.kthvalue(a, 2, 1, True), "median": lambda L, a, b: L.median(a, 1),
    "median keepdim": lambda L, a, b: L.median(a, 0, True), "nanmedian": lambda L, a, b: L.nanmedian(a, 2),
    "histc": lambda L, a, b: L.histc(a),
}
STRIDE_INPUTS = {
    "permuted": lambda: torch.rand(4, 5, 6).permute(2, 0, 1), "stepped": lambda: torch.rand(6, 4, 10)[:, :, ::2],
    "expanded": lambda: torch.rand(1, 4, 5).expand(6, 4, 5), "contiguous": lambda: torch.rand(6, 4, 5),
}


@pytest.mark.parametrize("case", list(STRIDE_CASES))
@pytest.mark.parametrize("layout", list(STRIDE_INPUTS))
def test_result_strides_are_torchs_on_cpu_and_meta(case, layout):
    x, y = STRIDE_INPUTS[layout](), torch.rand(6, 4, 5)
    fn = STRIDE_CASES[case]
    want = fn(torch, x, y)
    got = fn(tessera, to_tessera(x), to_tessera(y))
    meta = fn(tessera, *[tessera.empty_strided(tuple(t.shape), tuple(t.stride()), device="meta") for t in (x, y)])
    wants = [want] if isinstance(want, torch.Tensor) else list(want)
    gots = [got] if not isinstance(got, tuple) else list(got)
    metas = [meta] if not isinstance(meta, tuple) else list(meta)
    for w, g, m in zip(wants, gots, metas):
        assert tuple(g.stride()) == tuple(w.stride()) == tuple(m.stride()), (case, layout)


# ---------------------------------------------------------------- unique's operator forms

@pytest.mark.parametrize("op,args", [("_unique2", (True, True, True)), ("unique_dim", (0, True, True, True)),
                                     ("unique_consecutive", (True, True, None)), ("_unique", (True, True))])
def test_unique_operator_out_forms(op, args):
    x = torch.tensor([3, 1, 1, 2, 2, 2, 0])
    want = getattr(torch.ops.aten, op).default(x, *args)
    n = len(want)
    names = [f"out{i}" for i in range(n)]
    want_out = getattr(torch.ops.aten, op).out(x, *args, **{k: torch.empty(0, dtype=torch.int64) for k in names})
    outs = {k: tessera.empty(0, dtype=tessera.int64) for k in names}
    got = getattr(tessera.ops.aten, op).out(to_tessera(x), *args, **outs)
    assert len(got) == n
    for k, g, w, wo in zip(names, got, want, want_out):
        # the boxed call (tessera.ops) wraps its results anew: the out tensors were written
        assert to_torch(outs[k]).tolist() == to_torch(g).tolist() == w.tolist() == wo.tolist()
    assert [to_torch(t).tolist() for t in getattr(tessera, op if op != "unique_dim" else "_unique2")(
        to_tessera(x), *(args if op != "unique_dim" else args[1:]))] == [t.tolist() for t in (
            want if op != "unique_dim" else torch._unique2(x, *args[1:]))]


def test_roll_by_huge_shifts():
    x = torch.arange(10).reshape(2, 5)
    big = (1 << 62) + 3
    want = torch.roll(x, (big, big, -big), (1, 1, 0))
    got = tessera.roll(to_tessera(x), (big, big, -big), (1, 1, 0))
    assert to_torch(got).tolist() == want.tolist()


# ---- broadcast_tensors and type_as (aten operators; composites of expand and to)

def test_broadcast_tensors_like_torch():
    shapes = [(3, 1, 5), (4, 1), (1,), ()]
    ts = [make_torch(s, "float64", i) for i, s in enumerate(shapes)]
    got = tessera.broadcast_tensors(*[to_tessera(t) for t in ts])
    want = torch.broadcast_tensors(*ts)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and g.stride() == w.stride()
        torch.testing.assert_close(to_torch(g), w)
    # views of their inputs, and differentiable: grads sum back over the broadcast dims
    a, b = (to_tessera(t).requires_grad_() for t in ts[:2])
    x, y = tessera.broadcast_tensors(a, b)
    (x * y).sum().backward()
    ta, tb = (t.clone().requires_grad_() for t in ts[:2])
    tx, ty = torch.broadcast_tensors(ta, tb)
    (tx * ty).sum().backward()
    torch.testing.assert_close(to_torch(a.grad), ta.grad)
    torch.testing.assert_close(to_torch(b.grad), tb.grad)
    assert tessera.autograd.gradcheck(lambda u, v: tessera.broadcast_tensors(u, v), (a, b))
    meta = tessera.broadcast_tensors(tessera.empty(3, 1, device="meta"), tessera.empty(4, device="meta"))
    assert all(m.is_meta and tuple(m.shape) == (3, 4) for m in meta)
    expect_same_error(lambda lib: lib.broadcast_tensors(lib.ones(3), lib.ones(4)))
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        tessera.broadcast_tensors(tessera.ones(3), tessera.ones(4))


@pytest.mark.parametrize("src,dst", [("float32", "float64"), ("int64", "float32"), ("float64", "float64"),
                                     ("bool", "int32")])
def test_type_as_like_torch(src, dst):
    t = make_torch((2, 3), src, 5)
    other = make_torch((1,), dst, 6)
    got = to_tessera(t).type_as(to_tessera(other))
    want = t.type_as(other)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    torch.testing.assert_close(to_torch(got), want)
    x = to_tessera(t)
    assert (x.type_as(to_tessera(other)) is x) == (src == dst)  # no copy when nothing changes
    if src == "float32" and dst == "float64":  # the grad comes back in the input's dtype, as torch's
        v, tv = to_tessera(t).requires_grad_(), t.clone().requires_grad_()
        (v.type_as(to_tessera(other)) * to_tessera(other)).sum().backward()
        (tv.type_as(other) * other).sum().backward()
        assert str(v.grad.dtype).split(".")[-1] == str(tv.grad.dtype).split(".")[-1]
        torch.testing.assert_close(to_torch(v.grad), tv.grad)
