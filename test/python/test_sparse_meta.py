"""Sparse tensors on the meta device (SparseMeta, SparseCsrMeta; Note [Sparse meta tensors]
in aten/native/sparse/SparseUtils.h): every operator ops.yaml gives a sparse kernel runs
here on CPU operands and again on the same operands moved to meta. Where the result's
shape and nnz follow from the operands' shapes and nnz, the meta result must match the CPU
result in everything but data (device, layout, shape, dtype, sparse and dense dims, nnz,
the members' shapes and dtypes); where they depend on the index data, the meta call must
raise NotImplementedError naming it as data-dependent, as torch's data-dependent
operators do. The reference is the CPU result of the same call (torch 1.13 has SparseMeta
for only a few operators: its `to('meta')` drops the entries, and current torch keeps
them, as tessera does)."""
import dataclasses
import pathlib
from typing import Callable

import pytest
import yaml

import tessera

ROOT = pathlib.Path(__file__).resolve().parents[2]

UNARY = ["abs", "angle", "asin", "asinh", "atan", "atanh", "ceil", "deg2rad", "erf", "expm1", "floor", "frac",
         "isinf", "isnan", "log1p", "neg", "rad2deg", "relu", "round", "sgn", "sign", "signbit", "sin", "sinh",
         "sqrt", "square", "tan", "tanh", "trunc"]


def dense(seed=0, shape=(4, 5)):
    g = tessera.Generator().manual_seed(seed)
    x = tessera.rand(shape, generator=g) - 0.5
    return x * (tessera.rand(shape, generator=g) < 0.5)


def coo(seed=0, shape=(4, 5), sparse_dim=None):
    x = dense(seed, shape)
    return x.to_sparse() if sparse_dim is None else x.to_sparse(sparse_dim)


def uncoalesced():
    i = tessera.tensor([[0, 1, 0], [2, 3, 2]])
    return tessera.sparse_coo_tensor(i, tessera.tensor([1.0, 2.0, 3.0]), (4, 5))


def csr(seed=0):
    return dense(seed).to_sparse_csr()


@dataclasses.dataclass
class Case:
    label: str
    ops: tuple             # the ops.yaml operators (name.overload) the call reaches with a sparse operand
    build: Callable        # () -> the CPU operands
    call: Callable         # (*operands) -> result
    data_dependent: bool = False


def mm_dense(k=5, n=3, seed=7):
    return dense(seed, (k, n))


CASES = [
    # construction and the members
    Case("coo constructor", ("sparse_dim", "dense_dim", "_nnz"),
         lambda: (tessera.tensor([[0, 1], [2, 3]]), tessera.tensor([1.0, 2.0])),
         lambda i, v: tessera.sparse_coo_tensor(i, v, (4, 5))),
    Case("csr constructor", (), lambda: (tessera.tensor([0, 1, 2]), tessera.tensor([1, 0]), tessera.tensor([1.0, 2.0])),
         lambda c, p, v: tessera.sparse_csr_tensor(c, p, v, (2, 2))),
    Case("coo members", ("_indices", "_values", "indices", "values", "is_coalesced", "_dimI", "_dimV"), lambda: (coo(),),
         lambda x: (x._indices(), x._values(), x.indices(), x.values(), x.is_coalesced(), x._dimI(), x._dimV(),
                    x.sparse_dim(), x.dense_dim(), x._nnz())),
    Case("csr members", ("crow_indices", "col_indices", "values", "sparse_dim", "dense_dim", "_nnz"), lambda: (csr(),),
         lambda x: (x.crow_indices(), x.col_indices(), x.values(), x.sparse_dim(), x.dense_dim(), x._nnz())),
    Case("csc members", ("ccol_indices", "row_indices"), lambda: (dense().to_sparse_csc(),),
         lambda x: (x.ccol_indices(), x.row_indices(), x.values())),
    Case("_coalesced_", ("_coalesced_",), lambda: (uncoalesced(),), lambda x: x.clone()._coalesced_(True)),
    Case("coalesce of a coalesced tensor", (), lambda: (coo(),), lambda x: x.coalesce()),
    Case("coalesce", ("_coalesce",), lambda: (uncoalesced(),), lambda x: x.coalesce(), data_dependent=True),
    Case("sparse_resize_", ("sparse_resize_",), lambda: (coo(),), lambda x: x.clone().sparse_resize_((6, 7), 2, 0)),
    Case("sparse_resize_and_clear_", ("sparse_resize_and_clear_",), lambda: (coo(),),
         lambda x: x.clone().sparse_resize_and_clear_((3, 2, 2), 2, 1)),
    Case("clone coo", ("clone",), lambda: (coo(),), lambda x: x.clone()),
    Case("clone csr", ("clone",), lambda: (csr(),), lambda x: x.clone()),
    Case("copy_", ("copy_",), lambda: (coo(0), coo(1)), lambda x, y: x.clone().copy_(y)),
    Case("zero_", ("zero_",), lambda: (coo(),), lambda x: x.clone().zero_()),
    Case("zero_ csr", ("zero_",), lambda: (csr(),), lambda x: x.clone().zero_()),
    Case("to(dtype) coo", ("_to_copy",), lambda: (coo(),), lambda x: x.to(tessera.float64)),
    Case("to(dtype) csr", ("_to_copy",), lambda: (csr(),), lambda x: x.to(tessera.float64)),
    Case("to_dense coo", ("_to_dense",), lambda: (coo(seed=2, shape=(3, 4, 2), sparse_dim=2),), lambda x: x.to_dense()),
    Case("to_dense csr", ("_to_dense",), lambda: (csr(),), lambda x: x.to_dense()),
    Case("to_dense bsr", ("_to_dense",), lambda: (dense().narrow(1, 0, 4).to_sparse_bsr((2, 2)),), lambda x: x.to_dense()),
    # conversions: the identity ones run, the others depend on the entries
    Case("to_sparse of coo", ("to_sparse.sparse_dim", "to_sparse"), lambda: (coo(),),
         lambda x: (x.to_sparse(2), x.to_sparse())),
    Case("to_sparse_csr of csr", ("to_sparse_csr",), lambda: (csr(),), lambda x: x.to_sparse_csr()),
    Case("csr to coo", ("to_sparse",), lambda: (csr(),), lambda x: x.to_sparse(), data_dependent=True),
    Case("coo to csr", ("to_sparse_csr",), lambda: (coo(),), lambda x: x.to_sparse_csr(), data_dependent=True),
    Case("coo to csc", ("to_sparse_csc",), lambda: (coo(),), lambda x: x.to_sparse_csc(), data_dependent=True),
    Case("csr to bsr", ("to_sparse_bsr",), lambda: (dense().narrow(1, 0, 4).to_sparse_csr(),),
         lambda x: x.to_sparse_bsr((2, 2)), data_dependent=True),
    Case("csr to bsc", ("to_sparse_bsc",), lambda: (dense().narrow(1, 0, 4).to_sparse_csr(),),
         lambda x: x.to_sparse_bsc((2, 2)), data_dependent=True),
    Case("coo to csr by layout", ("to_sparse",), lambda: (coo(),), lambda x: x.to_sparse(layout=tessera.sparse_csr),
         data_dependent=True),
    # arithmetic
    Case("dense + coo", ("add.Tensor",), lambda: (dense(1), coo()), lambda d, x: d + x),
    Case("dense + csr", ("add.Tensor",), lambda: (dense(1), csr()), lambda d, x: tessera.add(d, x)),
    Case("coo + coo", ("add.Tensor",), lambda: (coo(0), coo(1)), lambda x, y: x + y, data_dependent=True),
    Case("csr + csr", ("add.Tensor",), lambda: (csr(0), csr(1)), lambda x, y: x + y, data_dependent=True),
    Case("dense += coo", ("add_.Tensor",), lambda: (dense(1), coo()), lambda d, x: d.clone().add_(x)),
    Case("coo += coo", ("add_.Tensor",), lambda: (coo(0), coo(1)), lambda x, y: x.clone().add_(y), data_dependent=True),
    Case("dense - coo", ("sub.Tensor",), lambda: (dense(1), coo()), lambda d, x: d - x),
    Case("coo * scalar", ("mul.Tensor",), lambda: (coo(),), lambda x: x * 2.5),
    Case("csr * scalar", ("mul.Tensor",), lambda: (csr(),), lambda x: x * 2.5),
    Case("coo * dense", ("mul.Tensor",), lambda: (coo(), dense(1)), lambda x, d: x * d),
    Case("coo * coo", ("mul.Tensor",), lambda: (coo(0), coo(1)), lambda x, y: x * y, data_dependent=True),
    Case("coo *= scalar", ("mul_.Tensor",), lambda: (coo(),), lambda x: x.clone().mul_(3.0)),
    Case("csr *= scalar", ("mul_.Tensor",), lambda: (csr(),), lambda x: x.clone().mul_(3.0)),
    Case("coo / scalar", ("div.Tensor",), lambda: (coo(),), lambda x: x / 4.0),
    Case("coo ** 2", ("pow.Tensor_Tensor",), lambda: (coo(),), lambda x: x.pow(2)),
    # sums
    Case("sum", ("sum",), lambda: (coo(),), lambda x: x.sum()),
    Case("torch.sparse.sum", ("_sparse_sum", "_sparse_sum.dim"), lambda: (coo(seed=3, shape=(3, 4, 2), sparse_dim=2),),
         lambda x: (tessera.sparse.sum(x), tessera.sparse.sum(x, (0, 1)), tessera.sparse.sum(x, 2))),
    Case("torch.sparse.sum over one of two sparse dims", ("_sparse_sum.dim",), lambda: (coo(),),
         lambda x: tessera.sparse.sum(x, 0), data_dependent=True),
    Case("torch.sparse.sum backward", ("_sparse_sum_backward",), lambda: (coo(),),
         lambda x: tessera.ops.aten._sparse_sum_backward(tessera.ones(5, device=x.device), x, [0])),
    # shape operators
    Case("permute", ("permute",), lambda: (coo(seed=4, shape=(3, 4, 2)),), lambda x: x.permute(1, 0, 2)),
    Case("transpose coo", ("transpose.int",), lambda: (coo(),), lambda x: x.t()),
    Case("transpose csr", ("transpose.int",), lambda: (csr(),), lambda x: x.transpose(0, 1)),
    Case("unsqueeze and squeeze", ("unsqueeze", "squeeze.dim"), lambda: (coo(),),
         lambda x: (x.unsqueeze(1), x.unsqueeze(2), x.unsqueeze(1).squeeze(1))),
    Case("cat", ("cat",), lambda: (coo(0), coo(1)), lambda x, y: (tessera.cat([x, y]), tessera.cat([x, y], 1))),
    Case("select along a dense dim", ("select.int",), lambda: (coo(seed=5, shape=(3, 4, 2), sparse_dim=2),),
         lambda x: x.select(2, 1)),
    Case("select along a sparse dim", ("select.int",), lambda: (coo(),), lambda x: x.select(0, 1), data_dependent=True),
    Case("narrow_copy along a dense dim", ("narrow_copy",), lambda: (coo(seed=5, shape=(3, 4, 2), sparse_dim=2),),
         lambda x: x.narrow_copy(2, 0, 1)),
    Case("narrow_copy along a sparse dim", ("narrow_copy",), lambda: (coo(),), lambda x: x.narrow_copy(1, 1, 2),
         data_dependent=True),
    Case("index_select along a dense dim", ("index_select",), lambda: (coo(seed=5, shape=(3, 4, 2), sparse_dim=2),
                                                                       tessera.tensor([1, 0, 1])),
         lambda x, i: x.index_select(2, i)),
    Case("index_select along a sparse dim", ("index_select",), lambda: (coo(), tessera.tensor([1, 0])),
         lambda x, i: x.index_select(0, i), data_dependent=True),
    Case("sparse_mask coo", ("sparse_mask",), lambda: (dense(1), coo()), lambda d, m: d.sparse_mask(m)),
    Case("sparse_mask csr", ("sparse_mask",), lambda: (dense(1), csr()), lambda d, m: d.sparse_mask(m)),
    # products
    Case("coo @ dense", ("mm",), lambda: (coo(), mm_dense()), lambda x, d: x @ d),
    Case("csr @ dense", ("mm",), lambda: (csr(), mm_dense()), lambda x, d: tessera.mm(x, d)),
    Case("dense @ coo", ("mm",), lambda: (dense(1, (3, 4)), coo()), lambda d, x: tessera.mm(d, x)),
    Case("coo @ coo", ("mm",), lambda: (coo(), coo(2, (5, 3))), lambda x, y: tessera.mm(x, y), data_dependent=True),
    Case("sparse x sparse matmul", ("_sparse_sparse_matmul",), lambda: (coo(), coo(2, (5, 3))),
         lambda x, y: tessera._sparse_sparse_matmul(x, y), data_dependent=True),
    Case("addmm", ("addmm", "_sparse_addmm"), lambda: (dense(1, (4, 3)), coo(), mm_dense()),
         lambda c, x, d: (tessera.addmm(c, x, d, beta=0.5), tessera.sparse.addmm(c, x, d))),
    Case("addmm csr", ("addmm",), lambda: (dense(1, (4, 3)), csr(), mm_dense()), lambda c, x, d: tessera.addmm(c, x, d)),
    Case("mv and addmv", ("addmv",), lambda: (coo(), csr(), dense(3, (5,)), dense(4, (4,))),
         lambda x, c, v, b: (tessera.mv(x, v), tessera.addmv(b, c, v))),
    Case("bmm", ("bmm",), lambda: (coo(6, (2, 4, 5)), dense(7, (2, 5, 3))), lambda x, d: tessera.bmm(x, d)),
    Case("sampled_addmm", ("sparse_sampled_addmm",), lambda: (csr(), dense(1, (4, 3)), dense(2, (3, 5))),
         lambda c, a, b: tessera.sparse.sampled_addmm(c, a, b, beta=0.5)),
    Case("batched sampled_addmm", ("sparse_sampled_addmm",),
         lambda: ((tessera.ones(2, 4, 5) * dense(3, (4, 5))).to_sparse_csr(), dense(1, (2, 4, 3)), dense(2, (2, 3, 5))),
         lambda c, a, b: tessera.sparse.sampled_addmm(c, a, b)),
    Case("softmax", ("_sparse_softmax", "_sparse_log_softmax"), lambda: (coo(),),
         lambda x: (tessera.sparse.softmax(x, 1), tessera.sparse.log_softmax(x, 0))),
    Case("softmax backward", ("_sparse_softmax_backward_data", "_sparse_log_softmax_backward_data"),
         lambda: (coo(),),
         lambda x: (tessera._sparse_softmax_backward_data(x, tessera.sparse.softmax(x, 1), 1, x),
                    tessera._sparse_log_softmax_backward_data(x, tessera.sparse.log_softmax(x, 1), 1, x))),
]

CASES += [
    # factories over a sparse operand, fill_, the in-place unary forms, division, any
    Case("empty_like and zeros_like", ("empty_like",), lambda: (coo(seed=2, shape=(3, 4, 2), sparse_dim=2), csr()),
         lambda x, c: (tessera.empty_like(x), tessera.zeros_like(x), tessera.empty_like(c), tessera.zeros_like(c),
                       tessera.empty_like(x, layout=tessera.strided))),
    Case("fill_ csr", ("fill_.Scalar",), lambda: (csr(),), lambda x: x.clone().fill_(2.0)),
    Case("nan_to_num", ("nan_to_num", "nan_to_num_"), lambda: (coo(), csr()),
         lambda x, c: (x.nan_to_num(), c.nan_to_num(1.0), x.clone().nan_to_num_(), c.clone().nan_to_num_())),
    Case("transpose_ coo", ("transpose_",), lambda: (coo(),), lambda x: x.clone().transpose_(0, 1)),
    Case("coo /= scalar", ("div_.Tensor",), lambda: (coo(),), lambda x: x.clone().div_(4.0)),
    Case("coo / scalar with rounding", ("div.Tensor_mode", "div_.Tensor_mode"), lambda: (coo(),),
         lambda x: (tessera.div(x, 2.0, rounding_mode="floor"), x.clone().div_(2.0, rounding_mode="trunc"))),
    Case("coo // scalar", ("floor_divide", "floor_divide_.Tensor"), lambda: (coo(),),
         lambda x: (x // 2.0, x.clone().floor_divide_(2.0))),
    Case("any coo", ("any",), lambda: (coo(),), lambda x: x.any()),
    Case("csr ** 2", ("pow.Tensor_Tensor",), lambda: (csr(),), lambda x: x.pow(2)),
    Case("cat csr", ("cat",), lambda: (csr(0), csr(1)), lambda x, y: tessera.cat([x, y]), data_dependent=True),
    Case("resize_as_sparse_", ("resize_as_sparse_",), lambda: (coo(), coo(seed=2, shape=(6, 7))),
         lambda x, t: x.clone().resize_as_sparse_(t)),
    Case("sum csr", ("sum",), lambda: (csr(),), lambda x: (x.sum(), x.sum(dtype=tessera.float64))),
    Case("csr * dense", ("mul.Tensor",), lambda: (csr(), dense(1)), lambda x, d: (x * d, d * x)),
    Case("csr * csr", ("mul.Tensor",), lambda: (csr(0), csr(1)), lambda x, y: x * y, data_dependent=True),
    Case("select of a batched csr along its batch dim", ("select.int",),
         lambda: ((dense(8).unsqueeze(0) * tessera.tensor([1.0, 2.0]).reshape(2, 1, 1)).to_sparse_csr(),),
         lambda x: x.select(0, 1)),
    Case("select of a csr along a matrix dim", ("select.int",), lambda: (csr(),), lambda x: x.select(0, 1),
         data_dependent=True),
]

for _name in UNARY:
    CASES.append(Case(f"{_name} coo", (_name,), lambda: (coo(),), lambda x, f=_name: getattr(tessera, f)(x)))
    CASES.append(Case(f"{_name} csr", (_name,), lambda: (csr(),), lambda x, f=_name: getattr(tessera, f)(x)))
# the in-place forms (those with one: isnan, isinf, signbit and angle have none)
for _name in sorted(set(UNARY) - {"isnan", "isinf", "signbit", "angle"}):
    CASES.append(Case(f"{_name}_ coo", (_name + "_",), lambda: (coo(),),
                      lambda x, f=_name: getattr(x.clone(), f + "_")()))
    CASES.append(Case(f"{_name}_ csr", (_name + "_",), lambda: (csr(),),
                      lambda x, f=_name: getattr(x.clone(), f + "_")()))


def to_meta(x):
    return x.to("meta") if isinstance(x, tessera.Tensor) else x


def members_of(t):
    if t.layout == tessera.sparse_coo:
        return [t._indices(), t._values()]
    if t.layout in (tessera.sparse_csr, tessera.sparse_bsr):
        return [t.crow_indices(), t.col_indices(), t.values()]
    return [t.ccol_indices(), t.row_indices(), t.values()]


def assert_same_structure(meta, cpu, where):
    if isinstance(cpu, (tuple, list)):
        assert isinstance(meta, (tuple, list)) and len(meta) == len(cpu), where
        for i, (m, c) in enumerate(zip(meta, cpu)):
            assert_same_structure(m, c, f"{where}[{i}]")
        return
    if not isinstance(cpu, tessera.Tensor):
        assert meta == cpu, (where, meta, cpu)
        return
    assert isinstance(meta, tessera.Tensor), where
    assert meta.is_meta and meta.device.type == "meta", (where, meta.device)
    assert meta.layout == cpu.layout, (where, meta.layout, cpu.layout)
    assert tuple(meta.shape) == tuple(cpu.shape), (where, meta.shape, cpu.shape)
    assert meta.dtype == cpu.dtype, (where, meta.dtype, cpu.dtype)
    if cpu.layout != tessera.strided:
        assert (meta.sparse_dim(), meta.dense_dim(), meta._nnz()) == (cpu.sparse_dim(), cpu.dense_dim(), cpu._nnz()), where
        if cpu.layout == tessera.sparse_coo:
            assert meta.is_coalesced() == cpu.is_coalesced(), where
        for m, c in zip(members_of(meta), members_of(cpu)):
            assert_same_structure(m, c, f"{where} member")


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_sparse_op_on_meta(case):
    operands = case.build()
    want = case.call(*operands)  # the CPU call must work: the case is meaningful
    metas = [to_meta(x) for x in operands]
    if case.data_dependent:
        with pytest.raises(NotImplementedError, match="data-dependent"):
            case.call(*metas)
        return
    got = case.call(*metas)
    assert_same_structure(got, want, case.label)


def sparse_meta_ops():
    """Every ops.yaml operator with a SparseMeta or SparseCsrMeta kernel."""
    names = set()
    for entry in yaml.safe_load((ROOT / "ops.yaml").read_text()):
        keys = {k.strip() for line in (entry.get("dispatch") or {}) for k in line.split(",")}
        if keys & {"SparseMeta", "SparseCsrMeta"}:
            names.add(entry["func"].split("(")[0])
    return names


def test_every_sparse_kernel_runs_on_meta():
    """The keys go together: whatever has a SparseCPU kernel has the SparseMeta one (the
    same kernel), and each such operator is called by a case above."""
    for entry in yaml.safe_load((ROOT / "ops.yaml").read_text()):
        keys = {k.strip() for line in (entry.get("dispatch") or {}) for k in line.split(",")}
        name = entry["func"].split("(")[0]
        assert ("SparseCPU" in keys) == ("SparseMeta" in keys), name
        assert ("SparseCsrCPU" in keys) == ("SparseCsrMeta" in keys), name
    covered = {op for c in CASES for op in c.ops} | {"empty.memory_format"}
    missing = sorted(sparse_meta_ops() - covered)
    assert not missing, f"sparse operators with no meta case: {missing}"


# ---- factories, devices and printing

@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr", "sparse_csc"])
def test_empty_sparse_on_each_device(layout):
    for device in ("cpu", "meta"):
        t = tessera.empty((2, 3, 4), layout=getattr(tessera, layout), device=device, dtype=tessera.float64)
        assert t.layout == getattr(tessera, layout) and t.device.type == device
        assert tuple(t.shape) == (2, 3, 4) and t.dtype == tessera.float64 and t._nnz() == 0
    for device in ("cpu", "meta"):
        z = tessera.zeros((2, 3), layout=getattr(tessera, layout), device=device)
        assert z.device.type == device and z._nnz() == 0 and z.sparse_dim() == 2 and tuple(z.shape) == (2, 3)
    with pytest.raises(NotImplementedError, match="blocksize"):
        tessera.empty((2, 2), layout=tessera.sparse_bsr)


def test_meta_members_and_device_rules():
    x = coo()
    m = x.to("meta")
    assert m.is_meta and m._indices().is_meta and m._values().is_meta
    assert m._indices().dtype == tessera.int64 and m._nnz() == x._nnz()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        m.to("cpu")
    with pytest.raises(RuntimeError, match="same device"):
        dense(1) + m
    with pytest.raises(RuntimeError, match="same device"):
        tessera.mm(m, mm_dense())
    with pytest.raises(RuntimeError, match="same device"):  # self is checked even when beta=0 ignores it
        tessera.addmv(dense(3, (4,)), m, dense(4, (5,)).to("meta"), beta=0)
    with pytest.raises(RuntimeError, match="same device"):
        tessera.addmm(dense(3, (4, 3)), m, mm_dense().to("meta"), beta=0)
    with pytest.raises(RuntimeError, match="same device"):
        csr() + csr().to("meta")
    # constructors take meta members, and device="meta" moves CPU members there
    t = tessera.sparse_coo_tensor(x._indices(), x._values(), x.shape, device="meta")
    assert t.is_meta and t._nnz() == x._nnz()
    c = tessera.sparse_csr_tensor(tessera.tensor([0, 1, 2]), tessera.tensor([1, 0]), tessera.tensor([1.0, 2.0]),
                                  (2, 2), device="meta")
    assert c.is_meta and c.layout == tessera.sparse_csr and c.crow_indices().is_meta
    # sizes inferred from the indices need their values
    with pytest.raises(NotImplementedError, match="data-dependent"):
        tessera.sparse_coo_tensor(x._indices().to("meta"), x._values().to("meta"))
    # a dense meta tensor has no to_sparse: the pattern is its data
    with pytest.raises(NotImplementedError):
        tessera.ones(2, 3, device="meta").to_sparse()


def test_meta_repr():
    r = repr(coo().to("meta"))
    assert "device='meta'" in r and "sparse_coo" in r and "nnz=9" in r and "indices=tensor(..., size=(2, 9))" in r
    r = repr(csr().to("meta"))
    assert "device='meta'" in r and "sparse_csr" in r and "crow_indices=tensor(..., size=(5,))" in r


def test_meta_autograd_through_sparse_ops():
    """A meta leaf's graph runs backward on meta: the shapes of every gradient follow."""
    x = coo().to("meta").requires_grad_()
    d = mm_dense().to("meta").requires_grad_()
    (tessera.sparse.mm(x, d).sum()).backward()
    assert x.grad.is_meta and x.grad.layout == tessera.sparse_coo and tuple(x.grad.shape) == (4, 5)
    assert d.grad.is_meta and tuple(d.grad.shape) == (5, 3)
