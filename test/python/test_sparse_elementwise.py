"""Sparse operands of the *_like factories, fill_, the in-place unary forms, transpose_,
division with rounding, nan_to_num, any, norm, and the compressed layouts' sum, mul and
select, each against torch 1.13 run on the same input (current torch's rule, checked on
the dense result, where 1.13 refuses: a CSC or broadcast product, a batch select)."""
import pytest
import torch

import tessera
from opinfo import to_tessera, to_torch

LAYOUTS = ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]


def dense(shape=(4, 6), seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(shape, generator=g, dtype=dtype) * 4 - 2
    return x * (torch.rand(shape, generator=g) < 0.5)


def convert(lib_tensor, layout):
    if layout == "sparse_coo":
        return lib_tensor.to_sparse()
    if layout in ("sparse_bsr", "sparse_bsc"):
        return getattr(lib_tensor, "to_" + layout)((2, 2))
    return getattr(lib_tensor, "to_" + layout)()


def pair(layout, shape=(4, 6), seed=0):
    d = dense(shape, seed)
    return convert(d, layout), convert(to_tessera(d), layout)


def close(got, want):
    got = to_torch(got.to_dense() if got.layout != tessera.strided else got)
    want = want.to_dense() if want.layout != torch.strided else want
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    assert torch.allclose(got, want, equal_nan=True), (got, want)


def as_torch_dense(t):
    d = t.to_dense()
    return to_torch(d) if isinstance(d, tessera.Tensor) else d


def uncoalesced(lib):
    i = lib.tensor([[0, 0, 1], [1, 1, 0]])
    return lib.sparse_coo_tensor(i, lib.tensor([1.0, -1.0, 3.0]), (2, 2))


# ---- empty_like, zeros_like, ones_like, full_like

@pytest.mark.parametrize("layout", LAYOUTS)
def test_like_factories_keep_the_layout(layout):
    t, m = pair(layout)
    for name in ("empty_like", "zeros_like"):
        want, got = getattr(torch, name)(t), getattr(tessera, name)(m)
        assert got.layout == m.layout and tuple(got.shape) == tuple(want.shape) and got.dtype == m.dtype
        # COO and zeros_like: nothing specified; empty_like of a compressed tensor keeps the pattern
        assert got._nnz() == want._nnz(), (name, got._nnz(), want._nnz())
        assert (got.sparse_dim(), got.dense_dim()) == (want.sparse_dim(), want.dense_dim())
    z = tessera.zeros_like(m, dtype=tessera.float32)
    assert z.dtype == tessera.float32 and z.layout == m.layout
    assert torch.equal(to_torch(z.to_dense()), torch.zeros(4, 6))


def test_like_factories_of_a_hybrid_coo_tensor():
    d = dense((3, 4, 2), seed=3)
    got = tessera.empty_like(to_tessera(d).to_sparse(2))
    want = torch.empty_like(d.to_sparse(2))
    assert (got.sparse_dim(), got.dense_dim(), got._nnz()) == (want.sparse_dim(), want.dense_dim(), 0)
    # a strided result of a COO tensor's shape, as torch gives
    s = tessera.zeros_like(to_tessera(d).to_sparse(), layout=tessera.strided)
    assert s.layout == tessera.strided and torch.equal(to_torch(s), torch.zeros(3, 4, 2, dtype=torch.float64))


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_bsc"])
def test_like_factories_refuse_another_layout(layout):
    t, m = pair(layout)
    for other in ("strided", "sparse_csc" if layout == "sparse_csr" else "sparse_bsr"):
        with pytest.raises(RuntimeError) as want:
            torch.empty_like(t, layout=getattr(torch, other))
        with pytest.raises(RuntimeError, match="empty_like with different sparse layout is not supported") as got:
            tessera.empty_like(m, layout=getattr(tessera, other))
        assert str(got.value).split(" (")[0] == str(want.value).split(" (")[0]
    with pytest.raises(RuntimeError, match="memory format option is only supported by strided tensors"):
        tessera.empty_like(m, memory_format=tessera.contiguous_format)


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr"])
def test_fill_and_ones_like_of_a_compressed_tensor(layout):
    t, m = pair(layout, seed=4)
    close(m.clone().fill_(7.5), t.clone().fill_(7.5))
    close(tessera.ones_like(m), torch.ones_like(t))
    close(tessera.full_like(m, 3.0), torch.full_like(t, 3.0))


def test_fill_of_a_coo_tensor_is_refused_like_torch():
    t, m = pair("sparse_coo")
    with pytest.raises(NotImplementedError):
        t.clone().fill_(1.0)
    with pytest.raises(NotImplementedError):
        m.clone().fill_(1.0)
    with pytest.raises(NotImplementedError):
        tessera.ones_like(m)


# ---- the in-place unary forms and transpose_

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["abs_", "neg_", "sin_", "sqrt_", "floor_", "sign_", "expm1_", "deg2rad_"])
def test_in_place_unary_updates_the_values(layout, name):
    t, m = pair(layout, seed=5)
    values_before = (m.coalesce() if layout == "sparse_coo" else m).values()
    # (torch 1.13's deg2rad_ of a compressed tensor fails in its mul_: the dense result judges)
    if name == "deg2rad_" and layout != "sparse_coo":
        want = t.to_dense().deg2rad_()
    else:
        want = getattr(t.coalesce() if layout == "sparse_coo" else t.clone(), name)()
    got = getattr(m, name)()
    assert got is m and m.layout == getattr(tessera, layout)
    close(m, want)
    if layout != "sparse_coo":  # the values member itself was written (no new tensor)
        assert values_before.data_ptr() == m.values().data_ptr()


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr"])
def test_in_place_unary_is_seen_by_autograd_through_values(layout):
    # values() shares the member's version counter: a graph that saved it fails in
    # backward after the in-place op, as torch's does, instead of using the new values
    for lib, to in ((torch, lambda t: t), (tessera, to_tessera)):
        s = convert(to(torch.tensor([[-1.0, 0.0, 2.0], [0.0, -3.0, 0.0]])), layout)
        v = s.values()
        a = lib.ones(3, requires_grad=True)
        y = (a * v).sum()
        before = v._version
        s.abs_()
        assert v._version > before
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_a_coo_transpose_has_its_own_values():
    for to in (lambda t: t, to_tessera):
        s = to(torch.tensor([[-1.0, 0.0, 2.0], [0.0, -3.0, 0.0]])).to_sparse()
        t = s.t()
        s.abs_()
        assert torch.equal(as_torch_dense(t), torch.tensor([[-1.0, 0.0], [0.0, -3.0], [2.0, 0.0]]))


@pytest.mark.parametrize("name", ["abs_", "sqrt_", "sin_", "floor_", "square_", "nan_to_num_"])
def test_in_place_nonlinear_ops_need_a_coalesced_coo_tensor(name):
    with pytest.raises(RuntimeError, match=f"{name} requires coalesced input"):
        getattr(uncoalesced(tessera), name)()
    if name not in ("square_",):  # (torch 1.13 has no sparse pow_ for square_ to reach)
        with pytest.raises(RuntimeError, match="requires coalesced input"):
            getattr(uncoalesced(torch), name)()


@pytest.mark.parametrize("name", ["neg_", "deg2rad_", "rad2deg_"])
def test_in_place_linear_ops_take_an_uncoalesced_tensor(name):
    got, want = getattr(uncoalesced(tessera), name)(), getattr(uncoalesced(torch), name)()
    assert got._nnz() == want._nnz() == 3 and not got.is_coalesced()
    close(got, want)


def test_in_place_unary_keeps_the_dtype_rules():
    m = tessera.tensor([[1, 0], [0, 4]]).to_sparse()
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        m.sqrt_()
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        torch.tensor([[1, 0], [0, 4]]).to_sparse().sqrt_()


def test_transpose_in_place():
    d = dense((3, 5), seed=6)
    t, m = d.to_sparse(), to_tessera(d).to_sparse()
    assert m.transpose_(0, 1) is m and tuple(m.shape) == (5, 3)
    close(m, t.transpose_(0, 1))
    m2, t2 = to_tessera(d).to_sparse(), d.to_sparse()
    close(m2.t_(), t2.t_())
    hybrid_t, hybrid_m = dense((2, 3, 2), seed=7).to_sparse(2), to_tessera(dense((2, 3, 2), seed=7)).to_sparse(2)
    close(hybrid_m.clone().transpose_(0, 1), hybrid_t.clone().transpose_(0, 1))
    for lib, x in ((torch, hybrid_t), (tessera, hybrid_m)):
        with pytest.raises(RuntimeError):
            x.clone().transpose_(0, 2)
        with pytest.raises(RuntimeError):
            lib.zeros(2, 2, 2).to_sparse().t_()
    with pytest.raises(NotImplementedError):  # (a compressed tensor would change layout in place)
        to_tessera(d).to_sparse_csr().transpose_(0, 1)


# ---- division, nan_to_num, any, norm

@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("divisor", [2.0, -1.5, 0.0])
def test_division_by_a_number(mode, divisor):
    for lib_t, lib_m in ((uncoalesced(torch), uncoalesced(tessera)), (dense().to_sparse(), to_tessera(dense()).to_sparse())):
        want = torch.div(lib_t, divisor, rounding_mode=mode)
        got = tessera.div(lib_m, divisor, rounding_mode=mode)
        close(got, want)
        in_place = lib_m.clone()
        assert in_place.div_(divisor, rounding_mode=mode) is in_place
        close(in_place, want)
    close(to_tessera(dense()).to_sparse() // 2.0, dense().to_sparse() // 2.0)
    x = to_tessera(dense()).to_sparse()
    assert x.floor_divide_(2.0) is x
    close(x, dense().to_sparse() // 2.0)


def test_division_errors_like_torch():
    ints_t = torch.tensor([[1, 0], [0, 4]]).to_sparse()
    ints_m = to_tessera(ints_t.to_dense()).to_sparse()
    for lib, x in ((torch, ints_t), (tessera, ints_m)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            x // 0
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            x.clone().div_(2)
        with pytest.raises(RuntimeError, match="Sparse division requires a scalar or zero-dim dense tensor divisor"):
            lib.div(x, lib.ones(2, 2, dtype=lib.int64), rounding_mode="floor")


def test_nan_to_num():
    d = dense(seed=8, dtype=torch.float32)
    d[0, 1], d[1, 2], d[2, 0] = float("nan"), float("inf"), float("-inf")
    t, m = d.to_sparse(), to_tessera(d).to_sparse()
    close(m.nan_to_num(), t.nan_to_num())
    close(m.nan_to_num(1.0, 2.0, -2.0), t.nan_to_num(1.0, 2.0, -2.0))
    close(m.clone().nan_to_num_(0.5), t.clone().nan_to_num_(0.5))
    # compressed: current torch's rule (1.13 has no kernel), checked on the dense result
    c = to_tessera(d).to_sparse_csr()
    got = c.nan_to_num(nan=3.0)
    assert got.layout == tessera.sparse_csr and got._nnz() == c._nnz()
    close(got, torch.nan_to_num(d, nan=3.0))


def test_any():
    for d in (dense(), torch.zeros(3, 4)):
        assert bool(to_tessera(d).to_sparse().any()) == bool(d.to_sparse().any())
    # Duplicates that cancel: tessera answers for the tensor's value (all zero, False);
    # torch 1.13 reads the raw values and answers True.
    assert bool(uncoalesced(tessera).to_dense().any()) is True  # (1 - 1 at one position, 3 at another)
    cancel = tessera.sparse_coo_tensor(tessera.tensor([[0, 0]]), tessera.tensor([2.0, -2.0]), (3,))
    assert not bool(cancel.any()) and not bool(cancel.to_dense().any())


@pytest.mark.parametrize("p", [2, 1, 3.5, float("inf"), 0])
def test_norm(p):
    d = dense(seed=9)
    close(to_tessera(d).to_sparse().norm(p), d.to_sparse().norm(p))
    close(uncoalesced(tessera).norm(p), uncoalesced(torch).norm(p))
    close(tessera.norm(to_tessera(d).to_sparse(), p, dim=(0, 1)), torch.norm(d, p, dim=(0, 1)))


def test_norm_refusals_like_torch():
    t, m = dense().to_sparse(), to_tessera(dense()).to_sparse()
    for lib, x in ((torch, t), (tessera, m)):
        for dim in (0, -1):  # (a 0-dim tensor has no dim to name)
            with pytest.raises(RuntimeError, match="only supports full reductions"):
                lib.norm(lib.tensor(3.0).to_sparse(), 2, dim=dim)
        with pytest.raises(RuntimeError, match="does not support keepdim=True"):
            lib.norm(x, 2, dim=(0, 1), keepdim=True)
        with pytest.raises(RuntimeError, match="norm_sparse currently only supports full reductions"):
            lib.norm(x, 2, dim=0)
        with pytest.raises(RuntimeError, match="norm_sparse currently does not support 'dtype' argument"):
            lib.norm(x, p=2, dtype=lib.float32)
        with pytest.raises(RuntimeError, match="input dtype should be either floating point or complex"):
            lib.tensor([[1, 0], [0, 4]]).to_sparse().norm()


def test_norm_gradient_reaches_the_values():
    # torch 1.13's sparse norm has no working backward (masked_fill_ on SparseCPU); the
    # reference is the dense norm's gradient, zero off the pattern (gradcheck: the registry)
    d = dense(seed=10)
    s = to_tessera(d).to_sparse().requires_grad_()
    s.norm().backward()
    assert s.grad.layout == tessera.sparse_coo
    x = d.clone().requires_grad_()
    x.norm().backward()
    close(s.grad, x.grad)


# ---- the compressed layouts: sum, mul, select

@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"])
def test_sum_of_a_compressed_tensor(layout):
    t, m = pair(layout, seed=11)
    close(m.sum(), t.sum())
    close(m.sum(dtype=tessera.float32), t.sum(dtype=torch.float32))


def test_mul_of_csr_tensors_like_torch():
    a, b = dense(seed=12), dense(seed=13)
    ta, ma = a.to_sparse_csr(), to_tessera(a).to_sparse_csr()
    for got, want in ((ma * to_tessera(b).to_sparse_csr(), ta * b.to_sparse_csr()),
                      (ma * to_tessera(b), ta * b), (to_tessera(b) * ma, b * ta)):
        assert got.layout == tessera.sparse_csr and got._nnz() == want._nnz()
        close(got, want)
    in_place = ma.clone()
    assert in_place.mul_(to_tessera(b)) is in_place
    close(in_place, ta.clone().mul_(b))
    # in place, the product is cast back to self's dtype where torch allows it
    single = to_tessera(a.float()).to_sparse_csr()
    close(single.mul_(to_tessera(b)), a.float().to_sparse_csr().mul_(b))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        to_tessera(a.long()).to_sparse_csr().mul_(to_tessera(b))


@pytest.mark.parametrize("layout", ["sparse_csc", "sparse_bsr", "sparse_bsc"])
def test_mul_of_other_compressed_layouts_by_dense(layout):
    # current torch multiplies CSR only; the rule (the pattern of the compressed operand)
    # carries over, checked on the dense product
    a, b = dense(seed=14), dense(seed=15)
    m = convert(to_tessera(a), layout)
    got = m * to_tessera(b)
    assert got.layout == m.layout and got._nnz() == m._nnz()
    close(got, a * b)
    if layout == "sparse_csc":
        close(m * convert(to_tessera(b), layout), a * b)
    else:
        with pytest.raises(NotImplementedError, match="multiplies 2-D CSR and CSC"):
            m * convert(to_tessera(b), layout)


def test_mul_broadcasts_the_dense_operand_to_the_sparse_shape():
    a, row = dense(seed=16), torch.tensor([1.0, -2.0, 0.5, 3.0, 2.0, -1.0], dtype=torch.float64)
    close(to_tessera(a).to_sparse() * to_tessera(row), a.to_sparse() * row)  # (torch 1.13 broadcasts COO too)
    close(to_tessera(a).to_sparse_csr() * to_tessera(row), a * row)
    with pytest.raises(NotImplementedError, match="only a COO operand grows"):
        to_tessera(a).to_sparse_csr() * tessera.ones(2, 4, 6, dtype=tessera.float64)


GROWING = [  # (dense shape, sparse dims) of the sparse operand, the dense operand's shape
    ((4, 6), 2, (3, 4, 6)), ((4, 6), 2, (3, 1, 6)), ((4, 6), 2, (2, 3, 1, 1)),
    ((4, 3, 2), 1, (2, 4, 3, 2)), ((4, 1, 2), 1, (4, 5, 2)), ((4, 3, 2), 2, (3, 4, 3, 1)),
]


@pytest.mark.parametrize("shape,sparse_dim,other", GROWING)
def test_mul_grows_a_coo_operand_to_the_broadcast_shape(shape, sparse_dim, other):
    # torch 1.13's rule: new leading dims become sparse dims over which the pattern repeats;
    # dense dims widen in the values
    a = dense(shape, seed=18)
    b = torch.rand(other, generator=torch.Generator().manual_seed(19), dtype=torch.float64) + 0.5
    want, t = a.to_sparse(sparse_dim) * b, b * a.to_sparse(sparse_dim)
    for got in (to_tessera(a).to_sparse(sparse_dim) * to_tessera(b), to_tessera(b) * to_tessera(a).to_sparse(sparse_dim)):
        assert got.layout == tessera.sparse_coo and got.is_coalesced()
        assert (got.sparse_dim(), got.dense_dim(), got._nnz()) == (want.sparse_dim(), want.dense_dim(), want._nnz())
        close(got, want)
        close(got, t)


def test_mul_widens_a_size_one_sparse_dim():
    # torch 1.13 keeps one row's entries for a [1, 6] pattern times a [3, 6] operand (its
    # result is not the dense product); the dense product is the reference here
    a = dense((1, 6), seed=20)
    a[0, 1] = 1.5
    b = torch.rand(3, 6, generator=torch.Generator().manual_seed(21), dtype=torch.float64)
    got = to_tessera(a).to_sparse() * to_tessera(b)
    assert tuple(got.shape) == (3, 6) and got.is_coalesced() and got._nnz() == 3 * int((a != 0).sum())
    close(got, a * b)
    assert torch.equal(to_torch(got._indices()), to_torch(got.coalesce()._indices()))


def test_mul_grows_a_coo_operand_without_sparse_dims():
    # a COO tensor with sparse_dim 0 (one entry holding the whole dense value) grows too
    v = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    want = torch.sparse_coo_tensor(torch.zeros(0, 1, dtype=torch.int64), v, (2,)) * torch.ones(3, 2, dtype=torch.float64)
    got = (tessera.sparse_coo_tensor(tessera.zeros(0, 1, dtype=tessera.int64), to_tessera(v), (2,))
           * tessera.ones(3, 2, dtype=tessera.float64))
    close(got, want)


LEAF_GROWTH = [((1,), 1, (3,)), ((1, 2), 1, (3, 2)), ((1, 1), 2, (2, 3)), ((4, 3), 2, (2, 4, 3)),
               ((4, 1, 2), 1, (3, 4, 5, 2)), ((2, 1), 1, (2, 3))]


@pytest.mark.parametrize("shape,sparse_dim,other", LEAF_GROWTH)
def test_a_growing_product_gives_its_coo_leaf_a_grad_in_its_own_layout(shape, sparse_dim, other):
    # the grad keeps the leaf's layout and sparse dims (an optimizer adds it to the leaf);
    # its values are the dense operand summed to the leaf's shape
    a = dense(shape, seed=26) + 3.0  # (every element specified)
    b = torch.rand(other, generator=torch.Generator().manual_seed(27), dtype=torch.float64)
    leaf = to_tessera(a).to_sparse(sparse_dim).requires_grad_()
    (leaf * to_tessera(b)).to_dense().sum().backward()
    assert leaf.grad.layout == tessera.sparse_coo and leaf.grad.sparse_dim() == sparse_dim
    close(leaf.grad, b.sum_to_size(shape))
    assert tessera.autograd.gradcheck(lambda x: (x * to_tessera(b)).to_dense(), (leaf.detach().requires_grad_(),),
                                      masked=True)
    leaf.detach().add_(leaf.grad, alpha=-0.1)  # (an SGD step on the leaf takes it)


def test_a_zero_dim_coo_leaf_grows_and_keeps_its_layout_in_its_grad():
    leaf = tessera.sparse_coo_tensor(tessera.zeros(0, 1, dtype=tessera.int64),
                                     tessera.tensor([2.0], dtype=tessera.float64), ()).requires_grad_()
    (leaf * tessera.arange(3.0, dtype=tessera.float64)).to_dense().sum().backward()
    assert leaf.grad.layout == tessera.sparse_coo and tuple(leaf.grad.shape) == ()
    assert leaf.grad.to_dense().item() == 3.0


def test_mul_of_two_coo_tensors_broadcasts_and_checks_sparse_dims():
    # torch asks for one shape (1.13's message for different sparse dims is an internal
    # one); tessera broadcasts, as the gradient of a growing product needs, checked on the
    # dense product
    a, b = dense((4, 3), seed=24), dense((2, 4, 3), seed=25)
    got = to_tessera(a).to_sparse() * to_tessera(b).to_sparse()
    assert tuple(got.shape) == (2, 4, 3) and got.sparse_dim() == 3
    close(got, a * b)
    with pytest.raises(RuntimeError, match="same number of sparse dims, got 1 and 2"):
        to_tessera(a).to_sparse(1) * to_tessera(a).to_sparse(2)


def test_mul_in_place_cannot_grow_a_sparse_tensor():
    # (torch 1.13 resizes self here; an in-place op keeps its operand's shape, as dense ones do)
    m = to_tessera(dense(seed=22)).to_sparse()
    with pytest.raises(RuntimeError, match=r"output with shape \[4, 6\] doesn't match the broadcast shape \[2, 4, 6\]"):
        m.mul_(tessera.ones(2, 4, 6, dtype=tessera.float64))
    assert tuple(m.shape) == (4, 6)


def test_mul_growing_a_coo_operand_passes_gradients():
    # torch 1.13's backward fails on these operands; gradcheck is the reference
    pattern = to_tessera(dense((4, 3), seed=23)).to_sparse()
    values = pattern._values().clone().requires_grad_()
    b = tessera.rand(2, 4, 3, dtype=tessera.float64, requires_grad=True)

    def product(v, y):
        return (tessera.sparse_coo_tensor(pattern._indices(), v, (4, 3)) * y).to_dense()

    assert tessera.autograd.gradcheck(product, (values, b))


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc"])
def test_select_of_a_compressed_tensor(layout):
    t, m = pair(layout, seed=17)
    for dim, index in ((0, 1), (1, 3), (-1, -1), (0, 0)):
        want, got = t.select(dim, index), m.select(dim, index)
        assert got.layout == tessera.sparse_coo and want.layout == torch.sparse_coo
        close(got, want)
    with pytest.raises(IndexError, match="out of range"):
        m.select(0, 9)


def test_select_along_a_batch_dim_and_the_block_layouts():
    d = dense((1, 4, 6), seed=18).expand(3, 4, 6) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64).view(3, 1, 1)
    m = to_tessera(d.contiguous()).to_sparse_csr()
    got = m.select(0, 2)
    assert got.layout == tessera.sparse_csr and tuple(got.shape) == (4, 6)
    close(got, d[2])  # (torch 1.13 fails here; current torch gives the batch's matrix)
    close(m.select(1, 3), d[:, 3])
    for lib, x in ((torch, dense().to_sparse_bsr((2, 2))), (tessera, to_tessera(dense()).to_sparse_bsr((2, 2)))):
        with pytest.raises(RuntimeError, match="selecting non-batch dimensions is currently only supported"):
            x.select(0, 1)


# ---- products with a sparse result and spdiags (values: the registry; here the layouts,
# the out= forms and what torch's results look like)

def test_sparse_results_have_torchs_structure():
    a = dense((5, 3), seed=19)
    a[2] = 0
    b = dense((3, 2), seed=20)
    for lib, x, y in ((torch, a, b), (tessera, to_tessera(a), to_tessera(b))):
        h = lib.hspmm(x.to_sparse(), y)
        assert (h.sparse_dim(), h.dense_dim()) == (1, 1) and h._nnz() == int((a != 0).any(1).sum())
        s = lib.smm(x.to_sparse(), y)
        assert (s.sparse_dim(), s.dense_dim(), s._nnz()) == (2, 0, h._nnz() * 2)
        out = lib.empty(0).to_sparse().to(x.dtype)
        assert lib.hspmm(x.to_sparse(), y, out=out) is out
        close(out, a @ b) if lib is tessera else None
        c = lib.zeros(5, 2, dtype=x.dtype).to_sparse()
        out2 = lib.empty(0).to_sparse().to(x.dtype)
        assert lib.sspaddmm(c, x.to_sparse(), y, beta=0.5, alpha=2.0, out=out2) is out2
        if lib is tessera:
            close(out2, 2.0 * (a @ b))
    assert tessera.dsmm is tessera.mm and tessera.spmm is tessera.mm and tessera.hsmm is tessera.hspmm
    assert tessera.saddmm is tessera.sspaddmm


def test_spdiags_follows_scipy_on_any_shape():
    import numpy as np
    import scipy.sparse
    data = dense((3, 5), seed=21)
    for shape in ((4, 2), (2, 6), (5, 5), (0, 3)):
        got = tessera.sparse.spdiags(to_tessera(data), tessera.tensor([0, 1, -2]), shape)
        want = scipy.sparse.spdiags(data.numpy(), np.array([0, 1, -2]), *shape).toarray()
        assert torch.allclose(to_torch(got.to_dense()), torch.from_numpy(want)), shape
    with pytest.raises(RuntimeError, match="Offset Tensor must have dtype Long"):
        tessera.sparse.spdiags(to_tessera(data), tessera.tensor([0.0, 1.0, 2.0]), (3, 3))
    with pytest.raises(RuntimeError, match="Output shape must be 2d"):
        tessera.sparse.spdiags(to_tessera(data), tessera.tensor([0, 1, 2]), (3, 3, 3))


# ---- cat and pow of the compressed layouts (current torch's operations; 1.13 has
# neither): checked on the dense result

@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"])
def test_cat_of_compressed_tensors(layout):
    a, b = dense((4, 6), seed=22), dense((2, 6), seed=23)
    got = tessera.cat([convert(to_tessera(a), layout), convert(to_tessera(b), layout)])
    assert got.layout == getattr(tessera, layout) and tuple(got.shape) == (6, 6)
    close(got, torch.cat([a, b]))
    c = dense((4, 2), seed=24)
    close(tessera.cat([convert(to_tessera(a), layout), convert(to_tessera(c), layout)], 1), torch.cat([a, c], 1))
    if layout in ("sparse_csr", "sparse_csc"):  # batched: along the batch dim and a matrix dim
        x = dense((1, 3, 4), seed=25).expand(2, 3, 4) * torch.tensor([1.0, 2.0], dtype=torch.float64).view(2, 1, 1)
        y = dense((1, 3, 4), seed=26).expand(2, 3, 4).contiguous()
        tx, ty = convert(to_tessera(x.contiguous()), layout), convert(to_tessera(y), layout)
        close(tessera.cat([tx, ty], 2), torch.cat([x, y], 2))
        close(tessera.cat([tx, ty], -2), torch.cat([x, y], -2))
        close(tessera.cat([tx, tx * 3]), torch.cat([x, x * 3]))  # along the batch dim: one nnz per batch
        with pytest.raises(RuntimeError, match="need the same nnz"):
            tessera.cat([tx, ty])
    with pytest.raises(RuntimeError, match="expected every tensor in the"):
        tessera.cat([convert(to_tessera(a), layout), to_tessera(b).to_sparse()])


@pytest.mark.parametrize("layout", ["sparse_csr", "sparse_csc", "sparse_bsr"])
def test_pow_of_a_compressed_tensor(layout):
    d = dense(seed=27)
    m = convert(to_tessera(d), layout)
    # (a block holds explicit zeros, which a negative exponent takes to inf: positive ones there)
    for exponent in (2, 3) if layout == "sparse_bsr" else (2, 3, -1.0):
        got = m.pow(exponent)
        assert got.layout == m.layout and got._nnz() == m._nnz()
        # the specified elements raised; the unspecified ones stay 0 (as for COO)
        want = torch.where(d != 0, d.pow(exponent), torch.zeros((), dtype=d.dtype))
        close(got, want)
    with pytest.raises(RuntimeError, match="cannot raise to zeroth power"):
        m.pow(0)


def test_batched_sampled_addmm():
    # current torch's batched form (1.13's CPU kernel takes 2-D only): each batch's dense
    # product read at that batch's pattern
    pattern = (dense((3, 4), seed=28) != 0).double()
    c = (torch.ones(2, 3, 4, dtype=torch.float64) * pattern) * dense((2, 3, 4), seed=29).abs().add(1)
    a, b = dense((2, 3, 5), seed=30), dense((2, 5, 4), seed=31)
    got = tessera.sparse.sampled_addmm(to_tessera(c).to_sparse_csr(), to_tessera(a), to_tessera(b), beta=0.5, alpha=2.0)
    assert got.layout == tessera.sparse_csr and tuple(got.shape) == (2, 3, 4)
    close(got, (0.5 * c + 2.0 * torch.bmm(a, b)) * pattern)
    with pytest.raises(RuntimeError, match="batch sizes of self, mat1 and mat2 to match"):
        tessera.sparse.sampled_addmm(to_tessera(c).to_sparse_csr(), to_tessera(a[:1]), to_tessera(b[:1]))


def test_sspaddmm_keeps_self_dtype_and_checks_the_operands():
    s, a, b = torch.tensor([[1, 0], [0, 2]]), torch.tensor([[1, 0], [3, 0]]), torch.tensor([[2, 1], [1, 1]])
    want = torch.sspaddmm(s.to_sparse(), a.to_sparse(), b, alpha=1.5)
    got = tessera.sspaddmm(to_tessera(s).to_sparse(), to_tessera(a).to_sparse(), to_tessera(b), alpha=1.5)
    assert got.dtype == tessera.int64 and want.dtype == torch.int64
    close(got, want)
    with pytest.raises(RuntimeError, match="one dtype"):
        tessera.sspaddmm(to_tessera(s).double().to_sparse(), to_tessera(a).to_sparse(), to_tessera(b))
    with pytest.raises(RuntimeError, match="Expected dim 1 size 2, got 3"):
        tessera.sspaddmm(tessera.zeros(2, 3, dtype=tessera.int64).to_sparse(), to_tessera(a).to_sparse(),
                         to_tessera(b))


NO_COMPRESSED_KERNEL = [  # torch (1.13 and current) has no compressed kernel for these
    ("permute", lambda lib, m: m.permute(1, 0)),
    ("unsqueeze", lambda lib, m: m.unsqueeze(0)),
    ("narrow", lambda lib, m: m.narrow(0, 0, 2)),
    ("narrow_copy", lambda lib, m: lib.narrow_copy(m, 0, 0, 2)),
    ("index_select", lambda lib, m: m.index_select(0, lib.tensor([0, 2]))),
    ("stack", lambda lib, m: lib.stack([m, m])),
    ("div", lambda lib, m: m / 2.0),
    ("div_tensor", lambda lib, m: lib.div(m, lib.tensor(2.0, dtype=lib.float64))),
    ("index", lambda lib, m: lib.ones(4, 6, dtype=lib.float64)[m.to(lib.int64)]),
]


@pytest.mark.parametrize("name,fn", NO_COMPRESSED_KERNEL, ids=[n for n, _ in NO_COMPRESSED_KERNEL])
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_compressed_layouts_refuse_what_torch_refuses(layout, name, fn):
    t, m = pair(layout, seed=30)
    with pytest.raises((RuntimeError, NotImplementedError)) as want:
        fn(torch, t)
    with pytest.raises((RuntimeError, NotImplementedError)) as got:
        fn(tessera, m)
    # torch's class, or a subclass of it (NotImplementedError is a RuntimeError: an `except`
    # written for torch's error catches tessera's)
    assert isinstance(got.value, want.type), (got.value, want.value)
    word = {"sparse_csr": "Csr", "sparse_csc": "Csc", "sparse_bsr": "Bsr", "sparse_bsc": "Bsc"}[layout]
    assert word.lower() in str(got.value).lower(), got.value


def test_sparse_out_arguments_refuse_a_narrowing_cast():
    # torch's sparse out= kernels take the result's dtype (1.13 refuses even a widening one);
    # tessera takes the casts canCast allows and refuses the others, as its dense out= do
    ad, bd = dense((3, 4), seed=27), dense((4, 2), seed=28)
    a, b = to_tessera(ad).to_sparse(), to_tessera(bd)
    out = tessera.zeros(1, dtype=tessera.int64).to_sparse()
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired output type Long"):
        tessera.hspmm(a, b, out=out)
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired output type Long"):
        tessera.sspaddmm(to_tessera(dense((3, 2), seed=29)).to_sparse(), a, b, out=out)
    wide = tessera.zeros(1, dtype=tessera.complex128).to_sparse()
    assert tessera.hspmm(a, b, out=wide) is wide and wide.dtype == tessera.complex128
    close(wide, torch.hspmm(ad.to_sparse(), bd).to(torch.complex128))


def test_cat_of_compressed_tensors_keeps_stored_entries_and_checks_shapes():
    # blocks of explicit zeros stay (a batch of BSR matrices needs them: one nnz per batch)
    x = torch.zeros(2, 4, 4, dtype=torch.float64)
    x[:, :2, :2], x[:, 2:, 2:] = 1.0, 2.0
    m = to_tessera(x).to_sparse_bsr((2, 2))
    batch_zero = tessera.sparse_bsr_tensor(m.crow_indices(), m.col_indices(), m.values() * tessera.tensor(
        [1.0, 0.0], dtype=tessera.float64).view(2, 1, 1, 1), (2, 4, 4))  # (batch 1's blocks all zero)
    for dim in (1, 2):
        got = tessera.cat([batch_zero, batch_zero], dim)
        assert got._nnz() == 2 * batch_zero._nnz()
        close(got, torch.cat([as_torch_dense(batch_zero)] * 2, dim))
    single = tessera.sparse_bsr_tensor(tessera.tensor([0, 1, 2]), tessera.tensor([0, 1]),
                                       tessera.zeros(2, 2, 2, dtype=tessera.float64), (4, 4))
    assert tessera.cat([single, single])._nnz() == 4 and tessera.cat([single, single], 1)._nnz() == 4
    # int32 indices stay int32
    i32 = tessera.sparse_csr_tensor(tessera.tensor([0, 1, 2], dtype=tessera.int32),
                                    tessera.tensor([1, 0], dtype=tessera.int32), tessera.tensor([1.0, 2.0]), (2, 2))
    assert tessera.cat([i32, i32], 1).crow_indices().dtype == tessera.int32
    # shapes but the cat dim must agree, batch shapes included; zero batches are fine
    x5 = to_tessera(torch.ones(2, 2, 5)).to_sparse_csr()
    x3 = to_tessera(torch.ones(2, 2, 3)).to_sparse_csr()
    with pytest.raises(RuntimeError, match="must have the same shape"):
        tessera.cat([x5, x3], 0)
    with pytest.raises(RuntimeError, match="must have the same shape"):
        tessera.cat([x5, to_tessera(torch.ones(3, 2, 5)).to_sparse_csr()], 2)
    empty = tessera.sparse_csr_tensor(tessera.zeros(0, 3, dtype=tessera.int64), tessera.zeros(0, 0, dtype=tessera.int64),
                                      tessera.zeros(0, 0), (0, 2, 3))
    for dim in (0, 1, 2):
        got = tessera.cat([empty, empty], dim)
        assert tuple(got.shape) == tuple(torch.cat([torch.zeros(0, 2, 3)] * 2, dim).shape)
        assert tuple(got.to_dense().shape) == tuple(got.shape)


def test_cat_of_compressed_tensors_passes_gradients():
    # (the grad of a compressed input arrives dense, which a sparse leaf accepts)
    a, b = dense((3, 4), seed=33), dense((2, 4), seed=34)
    x = to_tessera(a).to_sparse_csr().requires_grad_()
    y = to_tessera(b).to_sparse_csr().requires_grad_()
    (tessera.cat([x, y]).to_dense() * tessera.arange(20.0, dtype=tessera.float64).view(5, 4)).sum().backward()
    want = torch.arange(20.0, dtype=torch.float64).view(5, 4)
    assert torch.allclose(as_torch_dense(x.grad) * (a != 0), want[:3] * (a != 0))
    assert torch.allclose(as_torch_dense(y.grad) * (b != 0), want[3:] * (b != 0))


def test_every_coo_transpose_has_its_own_values():
    for sparse_dim, dims in ((2, (0, 0)), (1, (1, 2))):
        s = to_tessera(dense((2, 3, 2), seed=35)).to_sparse(sparse_dim)
        t = s.transpose(*dims)
        before = as_torch_dense(t)
        s.neg_()
        assert torch.equal(as_torch_dense(t), before)


def test_sspaddmm_scalars_follow_torch():
    s, a, b = torch.tensor([[1, 0], [0, 2]]), torch.tensor([[1, 0], [3, 0]]), torch.tensor([[2, 1], [1, 1]])
    for lib, to in ((torch, lambda t: t), (tessera, to_tessera)):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            lib.sspaddmm(to(s).to_sparse(), to(a).to_sparse(), to(b), beta=2.7)
    with pytest.raises(RuntimeError, match="complex beta or alpha needs a complex self"):
        tessera.sspaddmm(to_tessera(s).double().to_sparse(), to_tessera(a).double().to_sparse(),
                         to_tessera(b).double(), alpha=1j)


def test_batched_sampled_addmm_gradients_with_a_partial_pattern():
    pattern = (dense((3, 4), seed=36) != 0).double()
    c = to_tessera(torch.ones(2, 3, 4, dtype=torch.float64) * pattern * 1.5).to_sparse_csr()
    a = to_tessera(dense((2, 3, 5), seed=37)).requires_grad_()
    b = to_tessera(dense((2, 5, 4), seed=38)).requires_grad_()
    assert tessera.autograd.gradcheck(
        lambda x, y: tessera.sparse.sampled_addmm(c, x, y, beta=0.5, alpha=2.0).to_dense(), (a, b))
    # the gradients against the dense product read at the pattern
    out = tessera.sparse.sampled_addmm(c, a, b, alpha=2.0).to_dense()
    weight = tessera.arange(24.0, dtype=tessera.float64).view(2, 3, 4)
    (out * weight).sum().backward()
    ta, tb = to_torch(a.detach()).requires_grad_(), to_torch(b.detach()).requires_grad_()
    (2.0 * torch.bmm(ta, tb) * pattern * to_torch(weight)).sum().backward()
    assert torch.allclose(to_torch(a.grad), ta.grad) and torch.allclose(to_torch(b.grad), tb.grad)
