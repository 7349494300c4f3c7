"""Sparse tensors against torch 1.13 (and current torch where 1.13 lags, said per test):
COO and the compressed layouts (CSR, CSC, BSR, BSC) built by the constructors and by the
conversions, their members, coalescing, printing, pickling and save/load in both
directions, the arithmetic and products on sparse operands, and gradients (to the values
of a constructor, to a sparse leaf through to_dense, torch.sparse.mm and torch.sparse.sum),
with gradcheck in float64."""
import io
import pickle
import warnings

import pytest
import torch

import tessera

from opinfo import to_tessera, to_torch

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
warnings.filterwarnings("ignore", message=".*Sparse (CSC|BSR|BSC) tensor support is in beta")

LAYOUTS = ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]


def dense_pair(shape, density=0.4, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    d = torch.randn(shape, generator=g, dtype=dtype)
    d = d * (torch.rand(shape, generator=g) < density)
    return d, to_tessera(d)


def same_dense(t_sparse, ref_sparse, atol=1e-6):
    got = to_torch(t_sparse.to_dense())
    want = ref_sparse.to_dense()
    assert got.dtype == want.dtype
    assert torch.allclose(got, want, atol=atol), (got, want)


def members(t):
    """A sparse tensor's member tensors as torch tensors, by layout."""
    if t.layout in (torch.sparse_coo, tessera.sparse_coo):
        c = t.coalesce()
        return [c.indices(), c.values()]
    if str(t.layout).endswith(("sparse_csr", "sparse_bsr")):
        return [t.crow_indices(), t.col_indices(), t.values()]
    return [t.ccol_indices(), t.row_indices(), t.values()]


def same_members(got, want):
    for g, w in zip(members(got), members(want)):
        g = to_torch(g)
        assert tuple(g.shape) == tuple(w.shape), (g, w)
        assert g.dtype == w.dtype
        assert torch.allclose(g.to(w.dtype), w), (g, w)


def convert(lib_tensor, layout, blocksize=(2, 2), dense_dim=None):
    kwargs = {} if dense_dim is None else {"dense_dim": dense_dim}
    if layout == "sparse_coo":
        return lib_tensor.to_sparse() if dense_dim is None else lib_tensor.to_sparse(lib_tensor.dim() - dense_dim)
    if layout in ("sparse_bsr", "sparse_bsc"):
        return getattr(lib_tensor, "to_" + layout)(blocksize, **kwargs)
    return getattr(lib_tensor, "to_" + layout)(**kwargs)


# ---------------------------------------------------------------- construction and members

def test_coo_constructor_members_and_flags():
    i = [[0, 1, 1, 3], [2, 0, 0, 1]]
    v = [1.0, 2.0, 3.0, 4.0]
    for lib in (torch, tessera):
        s = lib.sparse_coo_tensor(lib.tensor(i), lib.tensor(v), (4, 3))
        assert s.is_sparse and not s.is_sparse_csr
        assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.is_coalesced()) == (2, 0, 4, False)
        assert tuple(s.shape) == (4, 3) and s.dim() == 2
    t = torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), (4, 3))
    s = tessera.sparse_coo_tensor(tessera.tensor(i), tessera.tensor(v), (4, 3))
    assert torch.equal(to_torch(s._indices()), t._indices())
    assert torch.equal(to_torch(s._values()), t._values())
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == 3
    same_members(c, t.coalesce())
    same_dense(s, t)


def test_coo_inferred_size_hybrid_dtype_and_empty():
    i = [[0, 2], [1, 0]]
    for v, kwargs in (([[1.0, 2.0], [3.0, 4.0]], {}), ([1, 2], {}), ([1, 2], {"dtype": "float64"})):
        t_kwargs = {k: getattr(torch, x) for k, x in kwargs.items()}
        x_kwargs = {k: getattr(tessera, x) for k, x in kwargs.items()}
        t = torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), **t_kwargs)
        s = tessera.sparse_coo_tensor(tessera.tensor(i), tessera.tensor(v), **x_kwargs)
        assert tuple(s.shape) == tuple(t.shape)
        assert (s.sparse_dim(), s.dense_dim()) == (t.sparse_dim(), t.dense_dim())
        same_dense(s, t)
    t = torch.sparse_coo_tensor((3, 4))
    s = tessera.sparse_coo_tensor((3, 4))
    assert tuple(s.shape) == (3, 4) and s._nnz() == 0 and s.dtype == tessera.float32
    assert tuple(s._indices().shape) == tuple(t._indices().shape)
    same_dense(s, t)


@pytest.mark.parametrize("indices, values, size", [
    ([[0, 1]], [1.0, 2.0, 3.0], (2,)),           # nnz mismatch
    ([[0, 1]], [1.0, 2.0], (2, 3)),              # dims do not add up
    ([[0, 5]], [1.0, 2.0], (2,)),                # index out of bounds
    ([[0, -1]], [1.0, 2.0], (2,)),               # negative index
    ([[0, 1]], [[1.0, 2.0], [3.0, 4.0]], (2, 3)),  # dense shape mismatch
    ([0, 1], [1.0, 2.0], (2,)),                  # 1-d indices
])
def test_coo_constructor_errors(indices, values, size):
    with pytest.raises(RuntimeError) as want:
        torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), size)
    with pytest.raises(RuntimeError) as got:
        tessera.sparse_coo_tensor(tessera.tensor(indices), tessera.tensor(values), size)
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


def test_uncoalesced_members_refused_as_torch():
    for lib in (torch, tessera):
        s = lib.sparse_coo_tensor(lib.tensor([[1, 0]]), lib.tensor([1.0, 2.0]), (2,))
        for method in ("indices", "values"):
            with pytest.raises(RuntimeError, match=f"Cannot get {method} on an uncoalesced tensor"):
                getattr(s, method)()


@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_compressed_constructors_match_torch(layout):
    d, x = dense_pair((4, 6), seed=3)
    t = convert(d, layout)
    members_t = members(t)
    ctor = {"sparse_csr": "sparse_csr_tensor", "sparse_csc": "sparse_csc_tensor",
            "sparse_bsr": "sparse_bsr_tensor", "sparse_bsc": "sparse_bsc_tensor"}[layout]
    args = [to_tessera(m) for m in members_t]
    with_size = getattr(tessera, ctor)(*args, (4, 6))
    assert with_size.layout == getattr(tessera, layout) and with_size.is_sparse_csr
    assert tuple(with_size.shape) == (4, 6) and with_size._nnz() == t._nnz()
    same_dense(with_size, t)
    generic = tessera.sparse_compressed_tensor(*args, (4, 6), layout=getattr(tessera, layout))
    same_dense(generic, t)
    inferred_t = getattr(torch, ctor)(*members_t)
    inferred = getattr(tessera, ctor)(*args)
    assert tuple(inferred.shape) == tuple(inferred_t.shape)


@pytest.mark.parametrize("crow, col, values, size", [
    ([1, 1, 2], [0, 1], [1.0, 2.0], (2, 2)),       # does not start at 0
    ([0, 1, 3], [0, 1], [1.0, 2.0], (2, 2)),       # does not end at nnz
    ([0, 2, 1], [0, 1], [1.0, 2.0], (2, 2)),       # decreasing
    ([0, 1, 2], [0, 5], [1.0, 2.0], (2, 2)),       # column out of range
    ([0, 2, 2], [1, 0], [1.0, 2.0], (2, 2)),       # unsorted within a row
    ([0, 1, 2], [0, 1], [1.0, 2.0, 3.0], (2, 2)),  # nnz mismatch
    ([0, 1, 2], [0, 1], [1.0, 2.0], (3, 2)),       # crow too short for size
])
def test_csr_invariants_are_checked(crow, col, values, size):
    with pytest.raises(RuntimeError):
        torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), torch.tensor(values), size)
    with pytest.raises(RuntimeError):
        tessera.sparse_csr_tensor(tessera.tensor(crow), tessera.tensor(col), tessera.tensor(values), size)


# ---------------------------------------------------------------- conversions

def hybrid_compressed_reference(d, layout):
    """torch 1.13 cannot convert to a hybrid CSR/CSC (dense_dim=, current torch): the
    expected members, built from torch's hybrid COO tensor and checked by torch's own
    sparse_csr/csc_tensor constructor."""
    coo = d.to_sparse(2).coalesce()
    rows, cols = coo.indices()
    values = coo.values()
    if layout == "sparse_csc":
        order = torch.argsort(cols * d.shape[0] + rows)
        rows, cols, values = rows[order], cols[order], values[order]
        counts = torch.bincount(cols, minlength=d.shape[1])
        return torch.sparse_csc_tensor(torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)]), rows, values,
                                       d.shape)
    counts = torch.bincount(rows, minlength=d.shape[0])
    return torch.sparse_csr_tensor(torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)]), cols, values, d.shape)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape, dense_dim", [((4, 6), None), ((2, 4, 6), None), ((4, 6, 3), 1)])
def test_dense_to_layout_matches_torch_members(layout, shape, dense_dim):
    d, x = dense_pair(shape, seed=5)
    if len(shape) == 3 and dense_dim is None and layout != "sparse_coo":
        # batched compressed tensors need the same nnz in every batch
        d = d[:1].expand(shape).clone()
        x = to_tessera(d)
    if dense_dim and layout in ("sparse_bsr", "sparse_bsc"):
        pytest.skip("hybrid block layouts from strided: not in torch 1.13 to compare with")
    if dense_dim and layout in ("sparse_csr", "sparse_csc"):
        t = hybrid_compressed_reference(d, layout)
    else:
        t = convert(d, layout, dense_dim=dense_dim)
    s = convert(x, layout, dense_dim=dense_dim)
    assert s.layout == getattr(tessera, layout)
    assert (s.sparse_dim(), s.dense_dim(), s._nnz()) == (t.sparse_dim(), t.dense_dim(), t._nnz())
    same_members(s, t)
    if dense_dim and layout in ("sparse_csr", "sparse_csc"):
        assert torch.allclose(to_torch(s.to_dense()), d)  # torch 1.13 cannot densify hybrid CSR/CSC
    else:
        same_dense(s, t)


@pytest.mark.parametrize("target", ["sparse_csr", "sparse_csc"])
def test_coo_to_compressed_and_back(target):
    d, x = dense_pair((5, 7), seed=7)
    t = getattr(d.to_sparse(), "to_" + target)()
    s = getattr(x.to_sparse(), "to_" + target)()
    same_members(s, t)
    back = s.to_sparse()
    assert back.layout == tessera.sparse_coo
    # (torch 1.13 marks the column-ordered COO tensor it makes from CSC as coalesced)
    same_members(back, d.to_sparse())


def test_block_layouts_expand_to_coo_with_explicit_zeros_kept():
    # Current torch keeps the zeros inside a stored block when a BSR tensor becomes COO
    # (torch 1.13 cannot convert BSR to COO): two stored 2x2 blocks give 8 entries.
    d = torch.zeros(4, 4)
    d[0, 1] = 1.0
    d[3, 3] = 2.0
    x = to_tessera(d)
    for s in (x.to_sparse_bsr((2, 2)).to_sparse(), x.to_sparse_bsc((2, 2)).to_sparse()):
        assert s._nnz() == 8 and s.is_coalesced()
        expected = [[0, 0, 1, 1, 2, 2, 3, 3], [0, 1, 0, 1, 2, 3, 2, 3]]
        assert s.indices().tolist() == expected
        assert torch.equal(to_torch(s.to_dense()), d)


def test_to_sparse_layout_keyword_current_torch():
    # Current torch: Tensor.to_sparse(layout=, blocksize=, dense_dim=) (1.13 has only the
    # sparse_dim form); compared with the dedicated conversions of torch 1.13.
    d, x = dense_pair((4, 4), seed=9)
    for layout, want in (("sparse_csr", d.to_sparse_csr()), ("sparse_csc", d.to_sparse_csc()),
                         ("sparse_bsr", d.to_sparse_bsr((2, 2))), ("sparse_coo", d.to_sparse())):
        kwargs = {"blocksize": (2, 2)} if layout == "sparse_bsr" else {}
        got = x.to_sparse(layout=getattr(tessera, layout), **kwargs)
        assert got.layout == getattr(tessera, layout)
        same_members(got, want)
    with pytest.raises(RuntimeError, match="requires blocksize"):
        x.to_sparse(layout=tessera.sparse_bsr)


def test_conversion_errors_as_torch():
    x = tessera.ones(2, 3)
    with pytest.raises(RuntimeError, match="sparse_dim must be less than or equal to self.dim"):
        x.to_sparse(3)
    with pytest.raises(RuntimeError, match="needs to be divisible by blocksize"):
        x.to_sparse_bsr((2, 2))
    with pytest.raises(RuntimeError, match="Only tensors with two sparse dimensions"):
        tessera.ones(2, 3, 4).to_sparse().to_sparse_csr()


def test_transpose():
    d, x = dense_pair((3, 5), seed=11)
    t, s = d.to_sparse().t(), x.to_sparse().t()
    assert tuple(s.shape) == (5, 3)
    same_dense(s, t)
    # A compressed tensor's transpose swaps CSR and CSC (and BSR and BSC) over the same members.
    t, s = d.to_sparse_csr().transpose(0, 1), x.to_sparse_csr().transpose(0, 1)
    assert s.layout == tessera.sparse_csc and t.layout == torch.sparse_csc
    same_members(s, t)
    # dense dims transpose on the values (current torch; 1.13 refuses)
    h, hx = dense_pair((3, 4, 2), seed=12)
    assert torch.allclose(to_torch(hx.to_sparse(1).transpose(1, 2).to_dense()), h.transpose(1, 2))
    with pytest.raises(RuntimeError, match="cannot transpose sparse dim with dense dim"):
        hx.to_sparse(1).transpose(0, 2)


# ---------------------------------------------------------------- what a sparse tensor refuses

@pytest.mark.parametrize("expr, error, message", [
    # current torch (1.13 answers stride() with (1, 0) and is_contiguous() with True)
    ("s.stride()", RuntimeError, "Sparse tensors do not have strides"),
    ("s.is_contiguous()", RuntimeError, "Tensors of type SparseTensorImpl do not have is_contiguous"),
    ("c.stride()", RuntimeError, "Sparse CSR tensors do not have strides"),
    ("s.data_ptr()", RuntimeError, "Cannot access data pointer of Tensor that doesn't have storage"),
    ("s.numpy()", TypeError, "can't convert Sparse layout tensor to numpy"),
    ("s.crow_indices()", NotImplementedError, "crow_indices"),
    ("c.indices()", NotImplementedError, "indices"),
    ("tessera.ones(2).values()", NotImplementedError, "values"),
])
def test_refusals(expr, error, message):
    s = tessera.ones(2, 2).to_sparse()
    c = tessera.ones(2, 2).to_sparse_csr()
    with pytest.raises(error, match=message):
        eval(expr)


def test_strided_sparse_and_dense_dims_current_torch():
    # current torch: a strided tensor has sparse_dim 0 and dense_dim dim() (1.13 raises)
    assert tessera.ones(2, 3).sparse_dim() == 0 and tessera.ones(2, 3).dense_dim() == 2


# ---------------------------------------------------------------- printing, pickling, save/load

@pytest.mark.parametrize("layout", LAYOUTS)
def test_repr_matches_torch(layout):
    d, x = dense_pair((4, 4), seed=13)
    want = repr(convert(d, layout))
    got = repr(convert(x, layout)).replace("tessera.", "torch.")
    assert got == want


def test_repr_of_empty_and_integer_coo():
    assert repr(tessera.sparse_coo_tensor((3, 4))).replace("tessera.", "torch.") == repr(torch.sparse_coo_tensor((3, 4)))
    t = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([3, 4]), (3,))
    s = tessera.sparse_coo_tensor(tessera.tensor([[0, 1]]), tessera.tensor([3, 4]), (3,))
    assert repr(s).replace("tessera.", "torch.") == repr(t)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pickle_round_trip(layout):
    d, x = dense_pair((4, 4), seed=17)
    s = convert(x, layout)
    back = pickle.loads(pickle.dumps(s))
    assert back.layout == s.layout
    same_members(back, convert(d, layout))


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr"])
def test_save_load_both_ways_with_torch(layout):
    # torch 1.13 pickles COO and CSR (other compressed layouts: current torch only).
    d, x = dense_pair((4, 6), seed=19)
    buf = io.BytesIO()
    tessera.save({"w": convert(x, layout)}, buf)
    buf.seek(0)
    loaded = torch.load(buf)["w"]
    assert loaded.layout == getattr(torch, layout)
    assert torch.allclose(loaded.to_dense(), d)
    buf = io.BytesIO()
    torch.save({"w": convert(d, layout)}, buf)
    buf.seek(0)
    back = tessera.load(buf)["w"]
    assert back.layout == getattr(tessera, layout)
    same_members(back, convert(d, layout))


@pytest.mark.parametrize("layout", ["sparse_csc", "sparse_bsr", "sparse_bsc"])
def test_save_load_current_torch_layouts(layout):
    d, x = dense_pair((4, 4), seed=21)
    buf = io.BytesIO()
    tessera.save(convert(x, layout), buf)
    buf.seek(0)
    back = tessera.load(buf)
    same_members(back, convert(d, layout))


def test_load_refuses_out_of_bounds_indices():
    # A hostile file: a COO tensor whose indices point outside its size is refused on load.
    buf = io.BytesIO()
    torch.save(torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([1.0, 2.0]), (2,)), buf)
    raw = buf.getvalue()
    bad = io.BytesIO()
    torch.save(torch._sparse_coo_tensor_unsafe(torch.tensor([[0, 9]]), torch.tensor([1.0, 2.0]), (2,)), bad)
    bad.seek(0)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        tessera.load(bad)
    assert tessera.load(io.BytesIO(raw)).to_dense().tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- operators

def _operands(seed=23):
    a, ax = dense_pair((4, 5), seed=seed)
    b, bx = dense_pair((4, 5), seed=seed + 1)
    return a, ax, b, bx


@pytest.mark.parametrize("expr", [
    "A + B", "A - B", "A * B", "A * 2.5", "2.5 * A", "A / 4", "-A", "A.add(B, alpha=2)",
    "D + A", "D - A", "D.add(A, alpha=-3)",
    "A.abs()", "A.sqrt()", "A.sin()", "A.tanh()", "A.neg()", "A.sgn()", "A.expm1()",
    "A.floor()", "A.square()", "A.isnan()", "A.trunc()",
])
def test_arithmetic_matches_torch(expr):
    a, ax, b, bx = _operands()
    # uncoalesced operands: duplicate every entry once
    def dup(lib, s):
        s = s.coalesce()
        return lib.sparse_coo_tensor(lib.cat([s.indices(), s.indices()], 1), lib.cat([s.values(), s.values()]) / 2,
                                     s.shape)
    want = eval(expr, {"A": dup(torch, a.abs().to_sparse()), "B": dup(torch, b.to_sparse()), "D": b})
    got = eval(expr, {"A": dup(tessera, ax.abs().to_sparse()), "B": dup(tessera, bx.to_sparse()), "D": bx})
    assert got.layout == getattr(tessera, str(want.layout).split(".")[1])
    g = to_torch(got.to_dense() if got.layout != tessera.strided else got)
    w = want.to_dense() if want.layout != torch.strided else want
    assert g.dtype == w.dtype and torch.allclose(g, w, atol=1e-6, equal_nan=True)


def test_relu_on_values_current_torch():
    # current torch has relu for COO (1.13 does not): relu of the values
    a, ax, _, _ = _operands()
    assert torch.allclose(to_torch(ax.to_sparse().relu().to_dense()), a.relu())
    assert torch.allclose(to_torch(ax.to_sparse_csr().relu().to_dense()), a.relu())


def test_arithmetic_refusals_as_torch():
    a, ax, b, bx = _operands()
    for lib, s, d in ((torch, a.to_sparse(), b), (tessera, ax.to_sparse(), bx)):
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            s + d
        with pytest.raises(RuntimeError, match="Sparse division requires a scalar"):
            s / d


def test_in_place_add_and_mul():
    a, ax, b, bx = _operands()
    d, dx = b.clone(), bx.clone()
    d.add_(a.to_sparse(), alpha=2)
    dx.add_(ax.to_sparse(), alpha=2)
    assert torch.allclose(to_torch(dx), d)
    s, sx = a.to_sparse(), ax.to_sparse()
    s.mul_(3)
    sx.mul_(3)
    same_dense(sx, s)
    s.add_(b.to_sparse())
    sx.add_(bx.to_sparse())
    same_dense(sx, s)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("rows,width", [(50, 7), (3000, 64)])
def test_dense_add_of_uncoalesced_rows(dtype, rows, width):
    """dense += alpha * sparse with repeated rows (an embedding's gradient): the row kernel
    (Note [Scattering rows]; large enough to run on several threads) and the index_add_
    path (integers) add every duplicate, in entry order."""
    g = torch.Generator().manual_seed(rows)
    nnz = rows * 2
    index = torch.randint(0, rows, (1, nnz), generator=g)
    index[0, : nnz // 4] = 3  # many entries on one row
    values = (torch.randn(nnz, width, generator=g) * 4).to(dtype)
    base = (torch.randn(rows, width, generator=g) * 4).to(dtype)
    alpha = 2 if dtype == torch.int64 else -0.25
    want = base.clone().add_(torch.sparse_coo_tensor(index, values, (rows, width)), alpha=alpha)
    threads = tessera.get_num_threads()
    tessera.set_num_threads(4)  # (the row ranges split over threads whatever the runner has)
    try:
        got = to_tessera(base).add_(tessera.sparse_coo_tensor(to_tessera(index), to_tessera(values), (rows, width)),
                                    alpha=alpha)
    finally:
        tessera.set_num_threads(threads)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    assert torch.allclose(to_torch(got), want, rtol=tol, atol=tol)
    # a strided (non-contiguous) dense operand and a 1-D sparse tensor take the same result
    want_t = base.t().clone().t().add_(torch.sparse_coo_tensor(index, values, (rows, width)), alpha=alpha)
    got_t = to_tessera(base.t().clone().t()).add_(
        tessera.sparse_coo_tensor(to_tessera(index), to_tessera(values), (rows, width)), alpha=alpha)
    assert torch.allclose(to_torch(got_t), want_t, rtol=tol, atol=tol)
    flat = torch.sparse_coo_tensor(index, values[:, 0], (rows,))
    got_flat = to_tessera(base[:, 0].contiguous()).add_(
        tessera.sparse_coo_tensor(to_tessera(index), to_tessera(values[:, 0].contiguous()), (rows,)), alpha=alpha)
    assert torch.allclose(to_torch(got_flat), base[:, 0].clone().add_(flat, alpha=alpha), rtol=tol, atol=tol)


def test_dense_add_of_its_own_rows():
    """The sparse operand's values are rows of the dense tensor it is added into: every
    entry adds the rows as they were before the call (read first, then written)."""
    base = torch.randn(64, 16, generator=torch.Generator().manual_seed(5))
    index = torch.tensor([[5, 1, 5, 63, 0] * 8])
    d = to_tessera(base)
    s = tessera.sparse_coo_tensor(to_tessera(index), d[:40], (64, 16))
    d.add_(s, alpha=0.5)
    want = base.clone().add_(torch.sparse_coo_tensor(index, base[:40].clone(), (64, 16)), alpha=0.5)
    assert torch.allclose(to_torch(d), want, atol=1e-6)


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"])
def test_compressed_zero_and_in_place_scaling(layout):
    """Current torch's zero_ leaves no specified elements (nnz 0) and keeps the shape and
    block size; mul_ by a number keeps the pattern (1.13 fails on both for CPU CSR)."""
    d, dx = dense_pair((4, 6), seed=43)
    s = convert(dx, layout)
    nnz = s._nnz()
    assert s.clone().mul_(2.0)._nnz() == nnz
    assert torch.allclose(to_torch(s.clone().mul_(2.0).to_dense()), d * 2)
    z = s.clone().zero_()
    assert z.layout == s.layout and z._nnz() == 0 and tuple(z.shape) == (4, 6)
    assert z.values().shape[1:] == s.values().shape[1:]
    assert torch.equal(to_torch(z.to_dense()), torch.zeros(4, 6))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), 2, (1, 2)])
def test_sums_match_torch(dim):
    h, hx = dense_pair((3, 4, 2), seed=29)
    t, s = h.to_sparse(2), hx.to_sparse(2)
    if dim is None:
        assert torch.allclose(to_torch(tessera.sparse.sum(s)), torch.sparse.sum(t))
        assert torch.allclose(to_torch(s.sum()), t.to_dense().sum())
        return
    want, got = torch.sparse.sum(t, dim), tessera.sparse.sum(s, dim)
    g = got.to_dense() if got.layout != tessera.strided else got
    w = want.to_dense() if want.layout != torch.strided else want
    assert torch.allclose(to_torch(g), w, atol=1e-6)


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr"])
def test_products_match_torch(layout):
    a, ax = dense_pair((5, 4), seed=31)
    m, mx = dense_pair((4, 3), density=1.0, seed=32)
    n, nx = dense_pair((3, 5), density=1.0, seed=33)
    s_t, s_x = convert(a, layout), convert(ax, layout)
    assert torch.allclose(to_torch(tessera.mm(s_x, mx)), torch.mm(s_t, m), atol=1e-5)
    assert torch.allclose(to_torch(s_x @ mx), s_t @ m, atol=1e-5)
    assert torch.allclose(to_torch(tessera.mm(nx, s_x)), torch.mm(n, a), atol=1e-5)
    bias, biasx = dense_pair((5, 3), density=1.0, seed=34)
    assert torch.allclose(to_torch(tessera.addmm(biasx, s_x, mx, beta=0.5, alpha=2)),
                          torch.addmm(bias, s_t, m, beta=0.5, alpha=2), atol=1e-5)
    assert torch.allclose(to_torch(tessera.sparse.addmm(biasx, s_x, mx, beta=0.5, alpha=2)),
                          torch.sparse.addmm(bias, s_t, m, beta=0.5, alpha=2), atol=1e-5)
    b, bx = dense_pair((4, 6), seed=35)
    want = torch.mm(a.to_sparse(), b.to_sparse())
    got = tessera.mm(ax.to_sparse(), bx.to_sparse())
    assert got.layout == tessera.sparse_coo
    same_dense(got, want, atol=1e-5)


def test_sparse_mask():
    a, ax, b, bx = _operands()
    want = b.sparse_mask(a.to_sparse().coalesce())
    got = bx.sparse_mask(ax.to_sparse())
    same_members(got, want)


# ---------------------------------------------------------------- autograd

def test_constructor_values_grad_matches_torch():
    # duplicates each get the whole grad at their position, as in torch
    i = [[0, 1, 1], [1, 0, 0]]
    w = [[1.0, 2.0], [3.0, 4.0]]
    grads = []
    for lib in (torch, tessera):
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(i), v, (2, 2))
        (s.to_dense() * lib.tensor(w)).sum().backward()
        grads.append(v.grad)
    assert torch.allclose(to_torch(grads[1]), grads[0])


def test_sparse_leaf_grads_keep_the_pattern():
    i = [[0, 1, 1], [1, 0, 0]]
    out = []
    for lib in (torch, tessera):
        s = lib.sparse_coo_tensor(lib.tensor(i), lib.tensor([1.0, 2.0, 3.0]), (2, 2), requires_grad=True)
        (s * 2).to_dense().sum().backward()
        first = s.grad
        lib.sparse.mm(s, lib.ones(2, 2)).sum().backward()  # accumulates
        out.append((first, s.grad, lib.sparse.sum(s)))
    (tf, tg, _), (xf, xg, _) = out
    assert xf.layout == tessera.sparse_coo and xg.layout == tessera.sparse_coo
    same_members(xg, tg)
    s = tessera.sparse_coo_tensor(tessera.tensor(i), tessera.tensor([1.0, 2.0, 3.0]), (2, 2), requires_grad=True)
    tessera.sparse.sum(s).backward()
    assert s.grad.layout == tessera.sparse_coo and s.grad.coalesce().values().tolist() == [1.0, 1.0]


def test_mm_refuses_a_sparse_operand_that_requires_grad_as_torch():
    msgs = []
    for lib in (torch, tessera):
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1], [1, 0]]), lib.tensor([1.0, 2.0]), (2, 2), requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.mm(s, lib.ones(2, 3, requires_grad=True))
        msgs.append(str(e.value).split("\n")[0])
    assert msgs[0] == msgs[1]


def test_dense_operand_grads_through_sparse_products():
    a, ax = dense_pair((5, 4), seed=41)
    m = torch.randn(4, 3, generator=torch.Generator().manual_seed(42))
    grads = []
    for lib, dense, mat in ((torch, a, m), (tessera, ax, to_tessera(m))):
        mat = mat.clone().requires_grad_()
        (lib.mm(dense.to_sparse(), mat) ** 2).sum().backward()
        grads.append(mat.grad)
    assert torch.allclose(to_torch(grads[1]), grads[0], atol=1e-5)


GRAD_CASES = [
    ("coo to_dense", lambda lib, i, v: (lib.sparse_coo_tensor(i, v, (3, 4)).to_dense() ** 2).sum()),
    ("sparse.mm", lambda lib, i, v: lib.sparse.mm(lib.sparse_coo_tensor(i, v, (3, 4)),
                                                   lib.arange(8, dtype=lib.float64).reshape(4, 2)).sin().sum()),
    ("sparse.sum dim", lambda lib, i, v: lib.sparse.sum(lib.sparse_coo_tensor(i, v, (3, 4)), 1).to_dense().exp().sum()),
    ("coalesce values", lambda lib, i, v: lib.sparse_coo_tensor(i, v, (3, 4)).coalesce().values().pow(3).sum()),
    ("sparse arithmetic", lambda lib, i, v: ((lib.sparse_coo_tensor(i, v, (3, 4)) * 3 - lib.sparse_coo_tensor(i, v * v, (3, 4)))
                                             .to_dense() ** 2).sum()),
    ("csr to_dense", lambda lib, i, v: (lib.sparse_coo_tensor(i, v, (3, 4)).to_sparse_csr().to_dense() ** 2).sum()),
]


@pytest.mark.parametrize("name, fn", GRAD_CASES)
def test_gradcheck_and_torch_grads(name, fn):
    i = [[0, 1, 1, 2, 0], [1, 0, 3, 2, 1]]
    v0 = [0.5, -1.0, 2.0, 1.5, 0.25]
    vx = tessera.tensor(v0, dtype=tessera.float64, requires_grad=True)
    assert tessera.autograd.gradcheck(lambda v: fn(tessera, tessera.tensor(i), v), (vx,))
    vt = torch.tensor(v0, dtype=torch.float64, requires_grad=True)
    if name == "csr to_dense":  # torch 1.13 has no CSR to_dense backward: its COO twin has the same grads
        fn = [f for n, f in GRAD_CASES if n == "coo to_dense"][0]
    fn(torch, torch.tensor(i), vt).backward()
    vx.grad = None
    dict(GRAD_CASES)[name](tessera, tessera.tensor(i), vx).backward()
    assert torch.allclose(to_torch(vx.grad), vt.grad)


def test_docs_coverage_table_is_generated_from_the_registry():
    import sparse_coverage
    assert sparse_coverage.current_doc_table() == sparse_coverage.table(), \
        "docs/sparse.md is stale: run `python3 test/python/sparse_coverage.py --write`"


# ---------------------------------------------------------------- hostile members, review findings

@pytest.mark.parametrize("make", [
    # negative size with empty members
    lambda t: t.sparse_csr_tensor(t.tensor([], dtype=t.long), t.tensor([], dtype=t.long), t.tensor([]), (-1, 2)),
    # a compressed index past nnz
    lambda t: t.sparse_csr_tensor(t.tensor([0, 1000, 2]), t.tensor([0, 1]), t.tensor([1.0, 2.0]), (2, 2)),
    # unchecked members read by the conversions and products
    lambda t: t._sparse_coo_tensor_unsafe(t.tensor([[100000000], [0]]), t.tensor([1.0]), (2, 2)).to_sparse_csr(),
    lambda t: t._sparse_coo_tensor_unsafe(t.tensor([[-5], [0]]), t.tensor([1.0]), (2, 2)).to_sparse_csc(),
    lambda t: t.mm(t._sparse_coo_tensor_unsafe(t.tensor([[0], [7]]), t.tensor([1.0]), (2, 2)), t.eye(2).to_sparse()),
    lambda t: t.mm(t.eye(2).to_sparse_csr(), t._sparse_compressed_tensor_unsafe(
        t.tensor([0, 1, 2]), t.tensor([0, 100000000]), t.tensor([1.0, 1.0]), (2, 2), layout=t.sparse_csr)),
    lambda t: t._sparse_compressed_tensor_unsafe(t.tensor([0, 1]), t.tensor([0]), t.ones(1, 0, 2), (2, 2),
                                                 layout=t.sparse_bsr).to_dense(),
    lambda t: t._sparse_compressed_tensor_unsafe(t.tensor([[0, 1, 1]]), t.tensor([[0]]), t.ones(1, 1),
                                                 (300, 2, 2), layout=t.sparse_csr).to_dense(),
])
def test_bad_members_raise_instead_of_reading_out_of_bounds(make):
    with pytest.raises(RuntimeError):
        make(tessera)


def test_set_resize_and_data_on_sparse_tensors():
    s = tessera.sparse_coo_tensor(tessera.tensor([[0, 3]]), tessera.tensor([1.0, 2.0]), (4,))
    for fn in (lambda: s.set_(tessera.ones(1)), lambda: s.resize_(3), lambda: tessera.ones(2).set_(s)):
        with pytest.raises(NotImplementedError, match="sparse"):
            fn()
    other = tessera.sparse_coo_tensor(tessera.tensor([[1]]), tessera.tensor([5.0]), (2,))
    s.data = other
    assert tuple(s.shape) == (2,) and s.to_dense().tolist() == [0.0, 5.0]
    with pytest.raises(NotImplementedError, match="keeps its dtype"):
        s.data = other.double()
    c = tessera.eye(3).to_sparse_csr()
    c.data = tessera.ones(2, 2).to_sparse_csr()
    assert c.to_dense().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_integer_addmm_keeps_its_dtype():
    m = torch.tensor([[1, 0], [2, 3]])
    want = torch.addmm(torch.ones(2, 2, dtype=torch.long), m.to_sparse(), m, beta=1.0, alpha=2)
    got = tessera.addmm(tessera.ones(2, 2, dtype=tessera.long), to_tessera(m).to_sparse(), to_tessera(m), beta=1.0,
                        alpha=2)
    assert got.dtype == tessera.int64 and torch.equal(to_torch(got), want)
    got = tessera.sparse.addmm(tessera.ones(2, 2, dtype=tessera.long), to_tessera(m).to_sparse(), to_tessera(m))
    assert got.dtype == tessera.int64


def test_current_torch_coo_pickle_with_is_coalesced_loads():
    # current torch pickles COO as (indices, values, size, is_coalesced)
    from tessera._utils import _rebuild_sparse_tensor
    s = _rebuild_sparse_tensor(tessera.sparse_coo, (tessera.tensor([[0, 2]]), tessera.tensor([1.0, 2.0]),
                                                    tessera.Size([3]), True))
    assert s.is_coalesced() and s.to_dense().tolist() == [1.0, 0.0, 2.0]


def test_sparse_and_dense_grads_meet_on_the_way_to_a_leaf():
    # Current torch sums a dense and a sparse grad of one input (torch 1.13 raises
    # "expected layout Sparse but got Strided"): ones from the dense use, w at the pattern.
    w = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    s = tessera.sparse_coo_tensor(tessera.tensor([[0, 1], [2, 0]]), tessera.tensor([1.0, 2.0]), (2, 3),
                                  requires_grad=True)
    ((tessera.ones(2, 3) + s).sum() + (s.to_dense() * tessera.tensor(w)).sum()).backward()
    got = s.grad.to_dense() if s.grad.layout != tessera.strided else s.grad
    assert got.tolist() == [[1.0, 1.0, 4.0], [5.0, 1.0, 1.0]]
    s = tessera.sparse_coo_tensor(tessera.tensor([[0, 1], [2, 0]]), tessera.tensor([1.0, 2.0]), (2, 3),
                                  requires_grad=True)
    (s.to_dense() * 2).sum().backward(create_graph=True)
    s.sum().backward(create_graph=True)
    assert s.grad.to_dense().tolist() == [[1.0, 1.0, 3.0], [3.0, 1.0, 1.0]]


def test_sparse_mm_of_two_sparse_leaves_keeps_both_patterns():
    out = []
    for lib in (torch, tessera):
        a = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [1, 0, 2]]), lib.tensor([1.0, 2.0, 3.0]), (2, 3),
                                  requires_grad=True)
        b = lib.sparse_coo_tensor(lib.tensor([[0, 2, 1], [1, 0, 1]]), lib.tensor([4.0, 5.0, 6.0]), (3, 2),
                                  requires_grad=True)
        lib.sparse.mm(a, b).to_dense().pow(2).sum().backward()
        out.append((a.grad, b.grad))
    for got, want in zip(out[1], out[0]):
        assert got.layout == tessera.sparse_coo
        same_members(got, want)


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"])
def test_compressed_times_a_number(layout):
    """Current torch's rule (1.13's CPU kernel fails on it): a compressed tensor times a
    number keeps its layout and pattern; a COO factor is refused, naming the layouts (the
    dense and compressed factors: test_sparse_elementwise.py)."""
    d, dx = dense_pair((4, 6), seed=41)
    s = convert(dx, layout)
    for got in (s * 2.5, 2.5 * s, tessera.mul(s, tessera.tensor(-3.0))):
        assert got.layout == s.layout and got._nnz() == s._nnz()
    assert torch.allclose(to_torch((s * 2.5).to_dense()), d * 2.5)
    assert torch.allclose(to_torch(tessera.mul(s, tessera.tensor(-3.0)).to_dense()), d * -3.0)
    with pytest.raises(RuntimeError, match="mul: unsupported layouts"):
        s * dx.to_sparse()


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"])
def test_compressed_addition(layout):
    # Reference: the dense sum and current torch's rule (one compressed layout in, the same
    # layout out over the union of the patterns); torch 1.13 built without MKL refuses it.
    a, ta = dense_pair((4, 6), seed=1)
    b, tb = dense_pair((4, 6), seed=2)
    got = convert(ta, layout).add(convert(tb, layout), alpha=0.5)
    assert got.layout == getattr(tessera, layout)
    assert torch.allclose(to_torch(got.to_dense()), a + 0.5 * b)
    union = (a != 0) | (b != 0)
    if layout in ("sparse_csr", "sparse_csc"):
        assert got._nnz() == int(union.sum())
    dense = ta + convert(tb, layout)
    assert dense.layout == tessera.strided and torch.allclose(to_torch(dense), a + b)
    with pytest.raises(RuntimeError, match="expected both operands in one compressed layout"):
        convert(ta, layout) + convert(tb, "sparse_csc" if layout == "sparse_csr" else "sparse_csr")


def test_compressed_grads_accumulate():
    # A CSR leaf used twice: its two sparse grads add up in CSR (current torch's add).
    x = tessera.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]], dtype=tessera.float64).to_sparse_csr().requires_grad_()
    (x.to_dense() * 3).sum().backward()
    x.to_dense().sum().backward()
    assert x.grad.layout == tessera.sparse_csr
    assert x.grad.to_dense().tolist() == [[0.0, 4.0, 0.0], [4.0, 0.0, 4.0]]


def test_shape_op_refusals_as_torch():
    d = torch.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]])
    for lib, x in ((torch, d), (tessera, to_tessera(d))):
        s = x.to_sparse()
        with pytest.raises(RuntimeError, match="cannot raise to zeroth power on sparse tensor"):
            s.pow(0)
        with pytest.raises(RuntimeError, match="Concatenating sparse tensors, but a dense tensor was found at position 1"):
            lib.cat([s, x])
        with pytest.raises(RuntimeError, match="All tensors must have the same sparse_dim and dense_dim"):
            lib.cat([s, x.to_sparse(1)])
        with pytest.raises(RuntimeError, match="transpositions between sparse and dense dimensions are not allowed"):
            x.to_sparse(1).permute(1, 0)
        with pytest.raises(IndexError):
            s.index_select(1, lib.tensor([3]))
        with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
            lib.sparse.softmax(s.long(), 0)


def test_softmax_lines_with_missing_entries_match_torch():
    # rows with one, two and no specified entries, in float64, with gradients
    d = torch.tensor([[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    w = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    out = []
    for lib in (torch, tessera):
        s = (d if lib is torch else to_tessera(d)).to_sparse().requires_grad_()
        for fn in (lib.sparse.softmax, lib.sparse.log_softmax):
            r = fn(s, 1)
            (r.to_dense() * (w if lib is torch else to_tessera(w))).sum().backward()
            out.append(to_torch(r.to_dense()) if lib is tessera else r.to_dense())
        out.append(to_torch(s.grad.to_dense()) if lib is tessera else s.grad.to_dense())
    for got, want in zip(out[3:], out[:3]):
        assert torch.allclose(got, want), (got, want)


def test_csr_mv_and_sparse_narrow():
    # CSR @ vector: reference the dense product (torch 1.13 needs MKL for it). narrow of a
    # COO tensor is narrow_copy's result (torch 1.13 fails in as_strided), the rest as torch.
    a, ta = dense_pair((4, 5), seed=3)
    v = torch.randn(5)
    got = convert(ta, "sparse_csr").mv(to_tessera(v))
    assert torch.allclose(to_torch(got), a @ v, atol=1e-6)
    n = ta.to_sparse().narrow(1, 1, 3)
    assert n.layout == tessera.sparse_coo and torch.allclose(to_torch(n.to_dense()), a.narrow(1, 1, 3))
    for lib, x in ((torch, a), (tessera, ta)):
        with pytest.raises(IndexError, match=r"select\(\): index 5 out of range"):
            x.to_sparse().select(0, 5)
        with pytest.raises(RuntimeError, match="bmm_sparse: Tensor 'mat2' must be dense"):
            lib.bmm(x.unsqueeze(0), x.unsqueeze(0).transpose(1, 2).to_sparse())
        with pytest.raises(RuntimeError, match="bmm_sparse: 'self.size\\(2\\)' and 'mat2.size\\(1\\)' must match"):
            lib.bmm(x.unsqueeze(0).to_sparse(), x.unsqueeze(0))


@pytest.mark.parametrize("fmt", ["coo", "csr", "csc", "bsr"])
def test_scipy_round_trip_shares_arrays(fmt):
    # tessera's own interop (torch has none): the arrays are shared, not copied.
    np = pytest.importorskip("numpy")
    sp = pytest.importorskip("scipy.sparse")
    dense = np.arange(24, dtype=np.float64).reshape(4, 6) * (np.arange(24).reshape(4, 6) % 3 == 0)
    m = sp.bsr_matrix(dense, blocksize=(2, 3)) if fmt == "bsr" else sp.csr_matrix(dense).asformat(fmt)
    if fmt == "bsr":
        m.sort_indices()  # (scipy builds this one's blocks out of order; the constructors need them sorted)
    t = tessera.sparse.from_scipy(m)
    assert t.layout == getattr(tessera, "sparse_" + fmt)
    assert np.array_equal(t.to_dense().numpy(), dense)
    values = t._values() if fmt == "coo" else t.values()
    assert np.shares_memory(values.numpy(), m.data)
    if fmt != "coo":
        assert np.shares_memory(t.col_indices().numpy() if fmt in ("csr", "bsr") else t.row_indices().numpy(),
                                m.indices)
    back = tessera.sparse.to_scipy(t)
    assert back.format == fmt and np.array_equal(back.toarray(), dense)
    assert np.shares_memory(back.data, values.numpy())
    # int64 indices stay int64 and shared (scipy's constructors would narrow them by copying)
    wide = tessera.tensor(dense).to_sparse_csr()
    s = tessera.sparse.to_scipy(wide)
    assert s.indices.dtype == np.int64 and np.shares_memory(s.indices, wide.col_indices().numpy())
    # torch's own idiom with scipy's arrays gives the same tensor
    if fmt == "csr":
        ref = torch.sparse_csr_tensor(m.indptr, m.indices, m.data, m.shape)
        same_members(t, ref)


def test_scipy_interop_refusals():
    sp = pytest.importorskip("scipy.sparse")
    with pytest.raises(TypeError, match="coo, csr, csc or bsr format"):
        tessera.sparse.from_scipy(sp.dok_matrix((2, 2)))
    with pytest.raises(TypeError, match="2-D sparse"):
        tessera.sparse.to_scipy(tessera.ones(2, 2, 2).to_sparse())


def test_large_kernels_match_torch():
    # sizes past one chunk of the parallel kernels (radix sort, nonzero scan, CSR x dense)
    g = torch.Generator().manual_seed(5)
    n = 300_000
    idx = torch.randint(0, 700, (2, n), generator=g)
    for dtype in (torch.float32, torch.float64, torch.int64):
        values = torch.randn(n, generator=g).mul(10).to(dtype)
        want = torch.sparse_coo_tensor(idx, values, (700, 700)).coalesce()
        got = tessera.sparse_coo_tensor(to_tessera(idx), to_tessera(values), (700, 700)).coalesce()
        assert torch.equal(to_torch(got.indices()), want.indices())
        assert torch.allclose(to_torch(got.values()), want.values(), rtol=1e-5, atol=1e-4)
    hv = torch.randn(5000, 3, generator=g)
    want = torch.sparse_coo_tensor(idx[:, :5000], hv, (700, 700, 3)).coalesce()
    got = tessera.sparse_coo_tensor(to_tessera(idx[:, :5000]), to_tessera(hv), (700, 700, 3)).coalesce()
    same_members(got, want)
    d = torch.randn(600, 700, generator=g, dtype=torch.float64)
    d[torch.rand(600, 700, generator=g) < 0.8] = 0
    d[3, 4] = -0.0
    want = d.to_sparse()
    got = to_tessera(d).to_sparse()
    same_members(got, want)
    dense = torch.randn(700, 37, generator=g, dtype=torch.float64)
    for index_dtype in (torch.int32, torch.int64):
        csr = d.to_sparse_csr()
        crow, col = csr.crow_indices().to(index_dtype), csr.col_indices().to(index_dtype)
        mine = tessera.sparse_csr_tensor(to_tessera(crow), to_tessera(col), to_tessera(csr.values()), d.shape)
        assert torch.allclose(to_torch(mine @ to_tessera(dense)), d @ dense)
    # float32 at widths that fill the kernel's register blocks (64 floats) once, twice with a
    # remainder, and not at all, on two threads
    a = torch.randn(300, 500, generator=g)
    a[torch.rand(300, 500, generator=g) < 0.9] = 0
    threads = tessera.get_num_threads()
    tessera.set_num_threads(2)
    try:
        for width in (64, 130, 8):
            dense = torch.randn(500, width, generator=g)
            got = to_tessera(a).to_sparse_csr() @ to_tessera(dense)
            assert torch.allclose(to_torch(got), a @ dense, rtol=1e-5, atol=1e-5)
    finally:
        tessera.set_num_threads(threads)
    unsafe = tessera._sparse_csr_tensor_unsafe
    for crow, col in (([0, 1, 2], [0, 99]), ([0, 1, 2], [0, -1]), ([0, 2, 1], [0, 1]), ([0, 1, 3], [0, 1]),
                      ([1, 1, 2], [0, 1])):
        bad = unsafe(tessera.tensor(crow), tessera.tensor(col), tessera.ones(2), (2, 3))
        for width in (2, 0):
            with pytest.raises(RuntimeError, match="indices are invalid"):
                bad @ tessera.ones(3, width)
    # a bad index in a late row of a matrix large enough to run on both threads
    crow = tessera.arange(0, 2001) * 2
    col = tessera.zeros(4000, dtype=tessera.int64)
    col[3999] = 5000
    bad = unsafe(crow, col, tessera.ones(4000), (2000, 4000))
    with pytest.raises(RuntimeError, match="indices are invalid"):
        bad @ tessera.ones(4000, 64)


def test_select_of_one_sparse_dim_keeps_the_dtype_and_narrow_copy_refuses_negatives():
    for lib in (torch, tessera):
        s = lib.sparse_coo_tensor(lib.tensor([[1, 1, 2]]), lib.tensor([2, 3, 4], dtype=lib.int32), (3,))
        r = s.select(0, 1)
        assert r.dtype == lib.int32 and int(r) == 5
        assert s.select(0, 2).dtype == lib.int32 and int(s.select(0, 2)) == 4
        d = lib.zeros(4, 5).to_sparse()
        with pytest.raises(RuntimeError, match="Invalid range to narrow"):
            d.narrow_copy(1, -3, 3)
        with pytest.raises(RuntimeError, match="Dimension -1 out of range"):
            d.narrow_copy(-1, 1, 3)


def test_scipy_canonical_coo_is_not_taken_as_coalesced():
    sp = pytest.importorskip("scipy.sparse")
    m = sp.coo_matrix(([1.0, 2.0], ([0, 1], [1, 0])), shape=(2, 2))
    m.sum_duplicates()  # scipy's canonical order is column-major
    t = tessera.sparse.from_scipy(m)
    assert t.coalesce().indices().tolist() == [[0, 1], [1, 0]]
    assert t.to_dense().tolist() == [[0.0, 1.0], [2.0, 0.0]]
    back = tessera.sparse.to_scipy(tessera.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse())
    assert not back.has_canonical_format and back.toarray().tolist() == [[0.0, 1.0], [2.0, 0.0]]
    unsorted = tessera._sparse_csr_tensor_unsafe(tessera.tensor([0, 2]), tessera.tensor([1, 0]), tessera.ones(2),
                                                 (1, 2))
    assert not tessera.sparse.to_scipy(unsorted).has_sorted_indices
