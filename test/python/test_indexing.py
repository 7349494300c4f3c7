"""Indexing against torch: t[index] and t[index] = value for every kind of index (ints,
slices with steps, None, Ellipsis, bools, masks, index tensors and lists, mixed basic and
advanced), the ops behind them (index, index_put_, index_select, masked_fill,
masked_select, nonzero, gather, scatter, scatter_add, index_add, take) on every dtype,
out=, Meta shapes, torch's errors, and autograd through all of it."""
import numpy as np
import pytest
import torch

import tessera
from opinfo import assert_raises_like_torch, assert_same, make_torch, to_tessera, to_torch, OpInfo

_INFO = OpInfo("indexing", lambda L: None)

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _pair(shape, dtype="float32", seed=0, kind="contiguous"):
    t = make_torch(shape, dtype, seed)
    if kind == "transposed":
        t = make_torch(tuple(reversed(shape)), dtype, seed).permute(*reversed(range(len(shape))))
    elif kind == "stepped":
        t = make_torch(shape[:-1] + (shape[-1] * 2,), dtype, seed)[..., ::2]
    return t, to_tessera(t)


def _index_for(lib, index):
    """An index written once for both libraries: tensors as ('T', data[, dtype]) tuples."""
    if isinstance(index, tuple) and index and index[0] == "T":
        dtype = getattr(lib, index[2]) if len(index) > 2 else None
        return lib.tensor(index[1], dtype=dtype)
    if isinstance(index, tuple):
        return tuple(_index_for(lib, i) for i in index)
    if isinstance(index, list):
        return [_index_for(lib, i) for i in index]
    return index


def _raises_alike(expr, same_message=False):
    """expr (written with `lib`) raises the same exception class in both libraries (and
    the same first line of message, if asked)."""
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch})
    with pytest.raises(Exception) as got:
        eval(expr, {"lib": tessera})
    assert got.type.__name__ == want.type.__name__, (str(got.value), str(want.value))
    if same_message:
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


def T(data, dtype=None):
    return ("T", data, dtype) if dtype else ("T", data)


# Indices into a (4, 5, 6) tensor.
GETITEM = [
    0, -1, 3, slice(None), slice(1, 3), slice(None, None, 2), slice(-3, None), slice(5, 1), slice(-100, 100, 3),
    None, Ellipsis, True, False, (), (1, 2), (1, 2, 3), (-1, -2, -3), (slice(None), 1), (Ellipsis, 2),
    (None, 1, None, slice(1, 4, 2)), (1, Ellipsis, None), (slice(None), None, slice(None), 0),
    (True, 1), (False, slice(None)), (0, True, None), (Ellipsis,), (None, Ellipsis, None),
    [0, 2], [[0, 1], [2, 3]], [-1, 0, -4], [True, False, True, False], T([0, 3, 1]), T([[0], [2]]),
    T(1), T(True), T(False), T([1, 0, 1, 1], "uint8"),
    (slice(None), [0, 4]), (slice(None), T([[1, 2]]), T([[0], [5]])), ([0, 2], slice(None), [1, 5]),
    ([0, 2], 1, [1, 5]), (1, slice(None), [0, 2]), ([[0], [3]], [[1, 2]]), (Ellipsis, [0, -1]),
    (None, [1, 2], None), (slice(1, 3), [0, 4], slice(None, None, 2)), ([0, 1], [2, 3], [4, 5]),
    (T([True, False, True, True]), 0), (slice(None), T([True, False, True, False, True])),
    (0, T([True, False, True, False, True]), slice(None, 3)), (T([[True, False, True, False, True]] * 4),),
    (slice(None), None, T([1, 0]), T([2])), (T([1]), None, T([2])),
]


@pytest.mark.parametrize("kind", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize("index", GETITEM, ids=[repr(i) for i in GETITEM])
def test_getitem_matches_torch(index, kind):
    t, s = _pair((4, 5, 6), seed=1, kind=kind)
    want = t[_index_for(torch, index)]
    got = s[_index_for(tessera, index)]
    assert_same(got, want, _INFO, "float32", f"t[{index!r}]")


@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem_every_dtype(dtype):
    t, s = _pair((3, 4), dtype, seed=2)
    for index in (1, (slice(None), 2), [2, 0], (T([1, 2]), T([3, 0])), T([[True, False, True, False]] * 3)):
        assert_same(s[_index_for(tessera, index)], t[_index_for(torch, index)], _INFO, dtype, repr(index))


def test_mask_followed_by_index_follows_numpy():
    # A k-dim mask consumes k dims, as in numpy; torch 1.13 counts it as one dim here and
    # raises a shape mismatch, so numpy is the reference.
    a = np.arange(24.0).reshape(2, 3, 4)
    m = np.array([[True, False, True], [False, True, True]])
    s = tessera.tensor(a.tolist())
    sm = tessera.tensor(m.tolist())
    assert s[sm, 0].tolist() == a[m, 0].tolist()
    assert s[sm, 1:3].tolist() == a[m, 1:3].tolist()


def test_int32_indices_and_single_ellipsis():
    # Current torch accepts int32 index tensors (1.13 refuses them): compare with int64 ones.
    t, s = _pair((4, 5, 6), seed=8)
    for index in ([0, 3, -1], [[1], [2]]):
        got = s[tessera.tensor(index, dtype=tessera.int32), 1:]
        assert_same(got, t[torch.tensor(index), 1:], _INFO, "float32", f"int32 {index}")
    # Two ellipses are an error in numpy and current torch (1.13 lets them through).
    with pytest.raises(IndexError, match="single ellipsis"):
        s[..., 0, ...]


def test_basic_indexing_gives_views_and_advanced_gives_copies():
    for lib in (torch, tessera):
        x = lib.arange(12.0).reshape(3, 4)
        v = x[1, ::2]
        v[0] = 100
        c = x[[0, 2]]
        c[0, 0] = -5
        e = x[...]
        e[2, 3] = 7
        assert x.tolist() == [[0.0, 1.0, 2.0, 3.0], [100.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 7.0]]


@pytest.mark.parametrize("expr", [
    "lib.arange(6.)[6]", "lib.arange(6.)[-7]", "lib.arange(6.).reshape(2, 3)[0, 3]", "lib.arange(6.).reshape(2, 3)[:, 3]",
    "lib.arange(6.)[lib.tensor([6])]", "lib.arange(6.)[[0, -7]]", "lib.arange(6.)[1, 2]", "lib.arange(6.)[0, ..., 0]",
    "lib.arange(6.)[lib.tensor([True, False])]", "lib.arange(6.)[lib.tensor([0.5])]", "lib.arange(6.)[1.5]",
    "lib.arange(6.)['a']", "lib.tensor(1.)[0]", "lib.arange(6.)[::-1]",
    "lib.zeros(2, 3)[[0, 1], [0, 1, 2]]",
])
def test_getitem_errors_match_torch(expr):
    _raises_alike(expr)


# (index, value) pairs for a (4, 5) float tensor; values as ('T', data[, dtype]) or numbers.
SETITEM = [
    (0, 1.5), (-1, T([1.0, 2.0, 3.0, 4.0, 5.0])), (slice(1, 3), 7), ((slice(None), 2), T([1.0, 2.0, 3.0, 4.0])),
    ((slice(None), slice(None, None, 2)), T([[9.0]])), (Ellipsis, 0), ((1, 2), T(3.5)), ((1, 2), True),
    (None, T([[1.0, 2.0, 3.0, 4.0, 5.0]])), ([0, 2], 4), ((T([0, 3]), T([4, 0])), T([1.0, 2.0])),
    (T([[True, False, True, False, True]] * 4), -2), (T([True, False, True, False]), T([5.0])),
    ((slice(None), [1, 3]), T([[1.0], [2.0], [3.0], [4.0]])), (([1], slice(1, 3)), T([[6.0, 7.0]])),
    ((0, T([1, 1])), 3), (T(2), 8), (True, 1), ((slice(None), 1), T([1, 2, 3, 4])),
    ((1,), T([[[1.0, 2.0, 3.0, 4.0, 5.0]]])), ([[0, 1], [2, 3]], 0.5), ((T([1, 2]), Ellipsis), 11),
]


@pytest.mark.parametrize("index,value", SETITEM, ids=[f"{i!r}={v!r}" for i, v in SETITEM])
def test_setitem_matches_torch(index, value):
    t, s = _pair((4, 5), seed=3)
    t[_index_for(torch, index)] = _index_for(torch, value)
    s[_index_for(tessera, index)] = _index_for(tessera, value)
    assert_same(s, t, _INFO, "float32", f"t[{index!r}] = {value!r}")


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "float64", "complex64"])
def test_setitem_casts_numbers_and_basic_sources(dtype):
    t, s = _pair((3, 4), dtype, seed=4)
    for index, value in ((0, 1), ((slice(None), 1), 0), (T([[True, False, False, True]] * 3), 1)):
        t[_index_for(torch, index)] = value
        s[_index_for(tessera, index)] = value
    t[1:] = torch.ones(2, 4, dtype=torch.float64)
    s[1:] = tessera.ones(2, 4, dtype=tessera.float64)
    assert_same(s, t, _INFO, dtype, "setitem")


@pytest.mark.parametrize("expr", [
    "lib.zeros(3).__setitem__(lib.tensor([0]), lib.tensor([1.], dtype=lib.float64))",
    "lib.zeros(2, 3).__setitem__(0, lib.ones(2))", "lib.zeros(3).__setitem__(0, 'a')",
    "lib.zeros(3).__setitem__(3, 1)", "lib.zeros(2, 3).__setitem__([0, 1], lib.ones(3, 3))",
    "lib.zeros(3).__delitem__(0)",
])
def test_setitem_errors_match_torch(expr):
    _raises_alike(expr)


def test_index_put_dtype_error_message_matches_torch():
    assert_raises_like_torch("lib.zeros(3).index_put_((lib.tensor([0]),), lib.tensor(1., dtype=lib.float64))")
    assert_raises_like_torch("lib.zeros(3).index_put((lib.tensor([0, 1]),), lib.tensor([1., 2., 3.]))")


# ---------------------------------------------------------------- the ops, on every dtype

def _ops(L, x, dtype):
    """Each op once on x (shape (3, 4)) with fixed indices; returns the results by name."""
    src = x.flip(0)
    idx = L.tensor([[2, 0, 1, 1], [0, 1, 2, 0]])
    mask = L.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
    out = {
        "index": x[L.tensor([2, 0]), L.tensor([1, 3])],
        "index_select": L.index_select(x, 1, L.tensor([3, 0, 3])),
        "index_select0": x.index_select(0, L.tensor(1)),
        "gather": L.gather(x, 0, idx),
        "gather1": x.gather(1, L.tensor([[3], [0], [2]])),
        "scatter": L.scatter(x, 0, L.tensor([[2, 0, 1, 1]]), src[:1]),
        "scatter_value": x.scatter(1, L.tensor([[0], [3], [1]]), 1),
        "masked_fill": L.masked_fill(x, mask, 1),
        "masked_fill_t": x.masked_fill(mask[0], L.tensor(0, dtype=x.dtype)),
        "masked_select": L.masked_select(x, mask),
        "masked_select_b": x.masked_select(mask[1]),
        "take": L.take(x, L.tensor([[0, -1], [5, 11]])),
        "nonzero": L.nonzero(x),
        "argwhere": L.argwhere(x),
        "index_put": L.index_put(x, (L.tensor([0, 2]), L.tensor([3, 3])), src[0, :2]),
        "index_put_mask": x.index_put((mask,), src[mask]),
    }
    if dtype != "bool":
        out["scatter_add"] = L.scatter_add(x, 0, idx, src[:2])
        out["index_add"] = L.index_add(x, 1, L.tensor([3, 0, 3]), src[:, :3])
        out["index_put_acc"] = L.index_put(x, (L.tensor([1, 1, 0]),), src[:3], accumulate=True)
        out["scatter_reduce_add"] = x.scatter(1, L.tensor([[0, 0]] * 3), src[:, :2], reduce="add")
        out["scatter_reduce_mul"] = x.scatter(0, L.tensor([[1, 1, 1, 1]]), 2, reduce="multiply")
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["contiguous", "transposed"])
def test_index_ops_match_torch(dtype, kind):
    t, s = _pair((3, 4), dtype, seed=5, kind=kind)
    want = _ops(torch, t, dtype)
    got = _ops(tessera, s, dtype)
    for name in want:
        assert_same(got[name], want[name], _INFO, dtype, name)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128"])
def test_in_place_forms_match_torch(dtype):
    t, s = _pair((3, 4), dtype, seed=6)
    for L, x in ((torch, t), (tessera, s)):
        src = x.flip(1)
        x.scatter_(1, L.tensor([[0], [2], [1]]), src)
        x.masked_fill_(L.tensor([False, True, False, False]), 0)
        x.index_put_((L.tensor([0]), L.tensor([1])), src[0, :1])
        if dtype != "bool":
            x.scatter_add_(0, L.tensor([[1, 2, 0, 0]]), src[:1])
            x.index_add_(0, L.tensor([2, 2]), src[:2], alpha=2)
    assert_same(s, t, _INFO, dtype, "in-place")


def test_out_variants_match_torch():
    t, s = _pair((3, 4), seed=7)
    for name, call in [
        ("index_select", lambda L, x, o: L.index_select(x, 1, L.tensor([1, 1]), out=o)),
        ("gather", lambda L, x, o: L.gather(x, 1, L.tensor([[1], [0], [3]]), out=o)),
        ("masked_select", lambda L, x, o: L.masked_select(x, x > 0, out=o)),
        ("take", lambda L, x, o: L.take(x, L.tensor([3, 1]), out=o)),
        ("scatter_add", lambda L, x, o: L.scatter_add(x, 0, L.tensor([[1, 0, 0, 2]]), x, out=o)),
        ("index_add", lambda L, x, o: L.index_add(x, 0, L.tensor([1, 1, 0]), x, out=o)),
        ("scatter", lambda L, x, o: L.scatter(x, 0, L.tensor([[1, 0, 0, 2]]), x, out=o)),
    ]:
        ot, os_ = torch.empty(0), tessera.empty(0)
        rt, rs = call(torch, t, ot), call(tessera, s, os_)
        assert rs is os_ or rs.data_ptr() == os_.data_ptr(), name
        assert_same(os_, ot, _INFO, "float32", name)
    ot, os_ = torch.empty(0, dtype=torch.int64), tessera.empty(0, dtype=tessera.int64)
    torch.nonzero(t > 0, out=ot)
    tessera.nonzero(s > 0, out=os_)
    assert_same(os_, ot, _INFO, "int64", "nonzero out=")


def test_nonzero_as_tuple_and_zero_dim():
    for x in ([[1, 0], [0, 3]], [0, 2, 0, 4], 5, 0, []):
        t, s = torch.tensor(x), tessera.tensor(x)
        assert_same(tessera.nonzero(s), torch.nonzero(t), _INFO, "int64", f"nonzero({x})")
        for g, w in zip(tessera.nonzero(s, as_tuple=True), torch.nonzero(t, as_tuple=True)):
            assert_same(g, w, _INFO, "int64", f"nonzero({x}, as_tuple=True)")
        assert len(s.nonzero(as_tuple=True)) == len(t.nonzero(as_tuple=True))


def test_meta_shapes_match_cpu():
    x = tessera.empty(3, 4, device="meta")
    assert tuple(x[tessera.tensor([0, 2], device="meta"), 1:].shape) == (2, 3)
    assert tuple(tessera.ops.aten.index.Tensor(x, [None, tessera.empty(5, 2, dtype=tessera.int64, device="meta")]).shape) == (3, 5, 2)
    assert tuple(tessera.gather(x, 1, tessera.empty(3, 2, dtype=tessera.int64, device="meta")).shape) == (3, 2)
    assert tuple(tessera.index_select(x, 0, tessera.empty(7, dtype=tessera.int64, device="meta")).shape) == (7, 4)
    assert tuple(tessera.take(x, tessera.empty(2, 5, dtype=tessera.int64, device="meta")).shape) == (2, 5)
    assert tuple(x.scatter(0, tessera.empty(1, 4, dtype=tessera.int64, device="meta"), 1.0).shape) == (3, 4)
    assert tuple(x.index_add(0, tessera.empty(2, dtype=tessera.int64, device="meta"), tessera.empty(2, 4, device="meta")).shape) == (3, 4)
    assert tuple(x.masked_fill(tessera.empty(2, 1, 4, dtype=tessera.bool, device="meta"), 1).shape) == (2, 3, 4)
    # Shapes that depend on values cannot be computed on Meta, as in torch.
    for call in (lambda: tessera.nonzero(x), lambda: x[x > 0], lambda: tessera.masked_select(x, x > 0)):
        with pytest.raises(NotImplementedError):
            call()
    # Meta kernels check as the CPU ones do.
    with pytest.raises(RuntimeError, match="int64"):
        tessera.gather(x, 0, tessera.empty(1, 4, dtype=tessera.int32, device="meta"))


@pytest.mark.parametrize("expr", [
    "lib.gather(lib.zeros(3), 0, lib.tensor([5]))", "lib.gather(lib.zeros(3), 0, lib.tensor([-1]))",
    "lib.gather(lib.zeros(3), 0, lib.tensor([1], dtype=lib.int32))", "lib.gather(lib.zeros(2, 3), 1, lib.zeros(3, 1, dtype=lib.int64))",
    "lib.take(lib.arange(3.), lib.tensor([5]))", "lib.take(lib.arange(3.), lib.tensor([1], dtype=lib.int32))",
    "lib.take(lib.zeros(0), lib.tensor([0]))",
    "lib.index_select(lib.arange(3.), 0, lib.tensor([-1]))", "lib.index_select(lib.arange(3.), 0, lib.tensor([[1]]))",
    "lib.index_select(lib.arange(3.), 0, lib.tensor([1.]))",
    "lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1, dtype=lib.float64))",
    "lib.zeros(3).scatter_add(0, lib.tensor([0], dtype=lib.int32), lib.ones(1))",
    "lib.zeros(3).scatter(0, lib.tensor([3]), 1.)", "lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1), reduce='max')",
    "lib.zeros(2, 2).scatter(0, lib.zeros(3, 2, dtype=lib.int64), lib.ones(2, 2))",
    "lib.zeros(3).index_add(0, lib.tensor([0, 5]), lib.ones(2))",
    "lib.zeros(3).index_add(0, lib.tensor([0, 0]), lib.ones(2, dtype=lib.float64))",
    "lib.zeros(3).index_add(0, lib.tensor([0, 0, 1]), lib.ones(2))",
    "lib.zeros(3).masked_fill(lib.tensor([True]), lib.tensor([2.]))",
    "lib.zeros(3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 1.)",
    "lib.zeros(3).index_put_((lib.tensor([3]),), lib.tensor(1.))",
])
def test_op_errors_match_torch(expr):
    _raises_alike(expr, same_message=True)


def test_large_index_and_duplicates():
    t = torch.randn(1000, 7, dtype=torch.float64)
    s = to_tessera(t)
    idx = torch.randint(-1000, 1000, (5000,))
    assert_same(s[to_tessera(idx)], t[idx], _INFO, "float64", "t[idx]")
    acc_t = torch.zeros(1000, 7, dtype=torch.float64).index_put_((idx,), t[idx], accumulate=True)
    acc_s = tessera.zeros(1000, 7, dtype=tessera.float64).index_put_((to_tessera(idx),), s[to_tessera(idx)], accumulate=True)
    assert_same(acc_s, acc_t, _INFO, "float64", "index_put_ accumulate")


# ---------------------------------------------------------------- autograd

def test_gradcheck_through_getitem_and_setitem():
    def fn(L, x):
        y = x * 1
        y[0, [1, 2]] = x[1, :2] * 2
        y[y > 0.5] = 0.0
        return y[[1, 0], ::2] + x[None, 0, 1:].sum()

    x = tessera.randn(2, 3, dtype=tessera.float64, requires_grad=True)
    assert tessera.autograd.gradcheck(lambda v: fn(tessera, v), (x,))
    assert tessera.autograd.gradgradcheck(lambda v: fn(tessera, v), (x,))
    t = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    fn(torch, t).sum().backward()
    fn(tessera, x).sum().backward()
    assert x.grad.reshape(-1).tolist() == pytest.approx(t.grad.reshape(-1).tolist())


@pytest.mark.parametrize("name,fn", [
    ("gather", lambda L, x: L.gather(x, 1, L.tensor([[2, 0, 2], [1, 1, 0]]))),
    ("index_select", lambda L, x: x.index_select(1, L.tensor([2, 2, 0]))),
    ("take", lambda L, x: L.take(x, L.tensor([0, 0, 5]))),
    ("masked_select", lambda L, x: x.masked_select(L.tensor([[True], [False]]))),
    ("index", lambda L, x: x[L.tensor([1, 1, 0])][:, [2, 2]]),
    ("scatter_add", lambda L, x: L.zeros(2, 4, dtype=L.float64).scatter_add(1, L.tensor([[0, 0, 3], [1, 1, 1]]), x)),
    ("index_put_acc", lambda L, x: L.zeros(4, dtype=L.float64).index_put((L.tensor([1, 1, 3]),), x[0], accumulate=True)),
])
def test_gradgradcheck_of_index_ops(name, fn):
    x = tessera.randn(2, 3, dtype=tessera.float64, requires_grad=True)
    assert tessera.autograd.gradcheck(lambda v: fn(tessera, v), (x,))
    assert tessera.autograd.gradgradcheck(lambda v: fn(tessera, v), (x,))


# ---------------------------------------------------------------- edge cases found in review

def test_numpy_arrays_as_indices():
    t, s = _pair((4, 5), seed=9)
    for index in (np.array([0, 2]), np.array([True, False, True, True]), (np.array([0, 3]), np.array([1, 4])),
                  (slice(None), np.array([4, 0]))):
        assert_same(s[index], t[index], _INFO, "float32", repr(index))
    t[np.array([1, 2])] = 5
    s[np.array([1, 2])] = 5
    assert_same(s, t, _INFO, "float32", "setitem with an ndarray")
    assert_same(s[np.int64(2)], t[np.int64(2)], _INFO, "float32", "numpy integer scalar")


def test_zero_dim_integer_tensor_indexes_like_an_int():
    for lib in (torch, tessera):
        x = lib.zeros(3, 2)
        x[lib.tensor(1)].add_(10)  # a view: the write lands in x
        assert x.tolist() == [[0.0, 0.0], [10.0, 10.0], [0.0, 0.0]]
    assert tuple(tessera.zeros(3, 4, 5)[tessera.tensor(1), :, [0, 1]].shape) == \
        tuple(torch.zeros(3, 4, 5)[torch.tensor(1), :, [0, 1]].shape)


def test_many_indexed_dims():
    t = torch.arange(256.0).reshape([2] * 8)
    s = to_tessera(t)
    m_t, m_s = torch.ones([2] * 7, dtype=torch.bool), tessera.ones([2] * 7, dtype=tessera.bool)
    m_t[0, 1] = False
    m_s[0, 1] = False
    # numpy's reading of a mask followed by an int (see test_mask_followed_by_index_follows_numpy)
    want = t.numpy()[m_t.numpy(), 0]
    assert s[m_s, 0].tolist() == want.tolist()
    assert_same(s[m_s], t[m_t], _INFO, "float32", "7-dim mask")
    s7, t7 = s[0].clone(), t[0].clone()
    s7[s7 >= 10] = 1
    t7[t7 >= 10] = 1
    assert_same(s7, t7, _INFO, "float32", "7-dim mask assignment")
    x = tessera.randn([2] * 7, dtype=tessera.float64, requires_grad=True)
    x[x.detach() >= 0].sum().backward()
    assert x.grad.tolist() == (x.detach() >= 0).to(tessera.float64).tolist()


def test_full_views_backprop_identity():
    views = [lambda x: x.reshape(2, 3).t(), lambda x: x.reshape(2, 3)[:, ::2], lambda x: x[:1].expand(3, 4)]
    for view in views:
        grads = []
        for L in (torch, tessera):
            x = L.arange(6.0, requires_grad=True)
            v = view(x)
            ((v[...] * 2).sum() + (v[()] * 3).sum()).backward()
            grads.append(x.grad.tolist())
        assert grads[0] == grads[1]


def test_zero_dim_masks_and_empty_lists():
    for L in (torch, tessera):
        x = L.zeros(3)
        x.index_put_((L.tensor(True),), L.tensor(1.0))
        assert x.tolist() == [1.0, 1.0, 1.0]
        assert tuple(L.zeros(3)[L.tensor(True)].shape) == (1, 3)
        assert tuple(L.zeros(3)[L.tensor(False)].shape) == (0, 3)
        assert L.arange(3)[[]].tolist() == [] and tuple(L.zeros(2, 3)[:, []].shape) == (2, 0)
        y = L.zeros(3)
        y[[]] = 5.0
        assert y.tolist() == [0.0, 0.0, 0.0]
    g = tessera.tensor(2.0, requires_grad=True)
    tessera.masked_select(g, tessera.tensor(True)).sum().backward()
    assert g.grad.item() == 1.0


def test_errors_name_the_given_index_and_check_devices_and_overlap():
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        tessera.arange(3)[[-4]]
    with pytest.raises(IndexError, match="index out of range in self"):
        tessera.zeros(2, 0).index_select(0, tessera.tensor([5]))
    meta_index = tessera.tensor([0, 1], device="meta")
    for call in (lambda: tessera.zeros(3, 4).index_select(0, meta_index), lambda: tessera.zeros(3, 4)[meta_index],
                 lambda: tessera.zeros(3).index_put_((meta_index,), tessera.tensor(1.0)),
                 lambda: tessera.zeros(3).masked_fill_(tessera.tensor([True, False, True]), tessera.tensor(1.0, device="meta"))):
        with pytest.raises(RuntimeError, match="device"):
            call()
    for L in (torch, tessera):
        x = L.arange(10).flip(0).contiguous()
        with pytest.raises(RuntimeError, match="single memory location"):
            x.index_put_((x,), L.tensor(0))
        y = L.tensor([1, 2, 0])
        with pytest.raises(RuntimeError, match="single memory location"):
            y.scatter_(0, y, 0)
        z = L.ones(3, 3, dtype=L.bool)
        with pytest.raises(RuntimeError, match="single memory location"):
            z.masked_fill_(z[0], False)


def test_index_add_alpha_is_cast_to_self_dtype_like_torch():
    for alpha in (2, 3):
        t = torch.zeros(5, dtype=torch.int64).index_add(0, torch.tensor([0, 1, 1]), torch.tensor([3, 4, 5]), alpha=alpha)
        s = tessera.zeros(5, dtype=tessera.int64).index_add(0, tessera.tensor([0, 1, 1]), tessera.tensor([3, 4, 5]),
                                                            alpha=alpha)
        assert s.tolist() == t.tolist()
    f = tessera.zeros(3).index_add(0, tessera.tensor([0, 2]), tessera.ones(2), alpha=0.5)
    assert f.tolist() == [0.5, 0.0, 0.5]
    with pytest.raises(RuntimeError):
        tessera.zeros(3).index_add(0, tessera.tensor([0]), tessera.ones(1), alpha=1j)
