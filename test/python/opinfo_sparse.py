"""OpInfo entries for the sparse layouts (aten/native/sparse): the constructors, the
members, the conversions between strided, COO, CSR, CSC, BSR and BSC, and the arithmetic,
sums and products on sparse operands. Each call builds its sparse operands from the
sample's dense tensors and returns dense tensors or the members, so the registry compares
them with torch 1.13's. The zero-preserving unary operators run on the registry's layout
axis instead (opinfo_unary.py: backends SparseCPU and SparseCsrCPU).

Gradient samples are the float64 samples without zeros: a conversion from strided keeps
only the nonzero positions, so a finite difference at a zero would move the pattern.
The registry's meta sweep builds meta tensors from dense ones, which for a sparse operand
would be a data-dependent conversion, so these entries are CPU entries; the sparse
kernels' meta forms are tested on sparse operands moved to meta, in test_sparse_meta.py."""
import torch

from opinfo import OpInfo, make_torch, register

FLOAT = ("float32", "float64")
SPARSE = dict(dtypes=FLOAT, supports_out=False, supports_meta=False, rtol=1e-5, atol=1e-5)


def T(shape, dtype, seed):
    return make_torch(shape, dtype, seed, -2.0, 2.0)


def Z(shape, dtype, seed):
    """Values with about half of them zero (exactly), so the pattern is sparse."""
    t = make_torch(shape, dtype, seed, -2.0, 2.0)
    keep = make_torch(shape, "float32", seed + 100, 0.0, 1.0) < 0.5
    return t * keep


def no_zeros(tensors, kwargs):
    # a sample with zeros is not a gradient sample: see the module's docstring
    return all(not t.is_floating_point() or bool((t != 0).all()) for t in tensors)


def _layout(lib, x, layout, blocksize=(2, 2)):
    if layout == "sparse_coo":
        return x.to_sparse()
    if layout in ("sparse_bsr", "sparse_bsc"):
        return getattr(x, "to_" + layout)(blocksize)
    return getattr(x, "to_" + layout)()


def _members(lib, s):
    if s.layout == lib.sparse_coo:
        c = s.coalesce()
        return c.indices(), c.values()
    # (torch 1.13 gives a compressed tensor's index members history, then fails on them:
    # they are integers, so detached here)
    if s.layout in (lib.sparse_csr, lib.sparse_bsr):
        return s.crow_indices().detach(), s.col_indices().detach(), s.values()
    return s.ccol_indices().detach(), s.row_indices().detach(), s.values()


def dense_samples(dtype):
    yield "2-d with zeros", [Z((4, 6), dtype, 1)], {}
    yield "2-d", [T((4, 6), dtype, 2)], {}
    yield "transposed", [T((6, 4), dtype, 3).t()], {}
    yield "empty rows", [torch.zeros(4, 6, dtype=getattr(torch, dtype))], {}


# ---- conversions

def to_sparse_call(lib, x, sparse_dim=None):
    return _members(lib, x.to_sparse() if sparse_dim is None else x.to_sparse(sparse_dim))


def to_sparse_samples(dtype):
    yield "sparse_dim 2 of 2", [T((3, 4), dtype, 7)], {"sparse_dim": 2}
    yield from dense_samples(dtype)
    yield "3-d hybrid", [Z((3, 4, 2), dtype, 4)], {"sparse_dim": 2}
    yield "1 sparse dim", [Z((5, 3), dtype, 5)], {"sparse_dim": 1}
    yield "0-d", [T((), dtype, 6)], {}


def compressed_call(layout):
    return lambda lib, x: _members(lib, _layout(lib, x, layout))


def compressed_samples(dtype):
    yield from dense_samples(dtype)
    yield "batched", [Z((1, 4, 6), dtype, 7).expand(2, 4, 6).clone()], {}


def to_dense_call(lib, x, layout):
    return _layout(lib, x, layout).to_dense()


def to_dense_samples(layouts):
    def samples(dtype):
        for layout in layouts:
            yield layout + " with zeros", [Z((4, 6), dtype, 8)], {"layout": layout}
            yield layout, [T((4, 6), dtype, 9)], {"layout": layout}
    return samples


# ---- constructors

def coo_call(lib, indices, values, size=None):
    s = lib.sparse_coo_tensor(indices, values) if size is None else lib.sparse_coo_tensor(indices, values, size)
    return s.to_dense()


def coo_samples(dtype):
    yield "duplicates", [torch.tensor([[0, 1, 1, 3], [2, 0, 0, 1]]), T((4,), dtype, 1)], {"size": (4, 3)}
    yield "inferred size", [torch.tensor([[0, 2], [1, 0]]), T((2,), dtype, 2)], {}
    yield "hybrid", [torch.tensor([[0, 2, 0]]), T((3, 2), dtype, 3)], {"size": (3, 2)}
    yield "empty", [torch.zeros(2, 0, dtype=torch.long), T((0,), dtype, 4)], {"size": (2, 5)}


def compressed_ctor_call(name):
    def call(lib, compressed, plain, values, size=None, layout=None):
        args = (compressed, plain, values) if size is None else (compressed, plain, values, size)
        if layout is not None:
            return getattr(lib, name)(*args, layout=getattr(lib, layout)).to_dense()
        return getattr(lib, name)(*args).to_dense()
    return call


def compressed_ctor_samples(layout):
    def samples(dtype):
        d = Z((4, 6), dtype, 11)
        members = _members(torch, _layout(torch, d, layout))
        kw = {"layout": layout} if layout.startswith("generic") else {}
        yield "with size", list(members), dict(kw, size=(4, 6))
        yield "inferred size", list(members), kw
    return samples


def generic_ctor_samples(dtype):
    for layout in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        d = Z((4, 6), dtype, 12)
        yield layout, list(_members(torch, _layout(torch, d, layout))), {"size": (4, 6), "layout": layout}


def coalesce_call(lib, indices, values, size):
    s = lib.sparse_coo_tensor(indices, values, size)
    c = s.coalesce()
    return c.indices(), c.values(), c._indices()


def coalesce_samples(dtype):
    yield "duplicates", [torch.tensor([[3, 0, 1, 1, 3], [1, 2, 0, 0, 1]]), T((5,), dtype, 1)], {"size": (4, 3)}
    yield "hybrid", [torch.tensor([[2, 0, 2]]), T((3, 2), dtype, 2)], {"size": (3, 2)}


def counts_call(lib, indices, values, size):
    s = lib.sparse_coo_tensor(indices, values, size)
    c = s.coalesce()
    return (s._nnz(), c._nnz(), s.sparse_dim(), s.dense_dim(), s._dimI(), s._dimV(), s.is_coalesced(),
            c.is_coalesced(), s.to_sparse_csr()._nnz() if s.dense_dim() == 0 else 0, c._values())


def indices_call(lib, x, layout):
    s = _layout(lib, x, layout)
    return _members(lib, s)[:-1]


def indices_samples(dtype):
    for layout in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        yield layout, [Z((4, 6), dtype, 13)], {"layout": layout}


# ---- sparse_mask, sums, products, arithmetic, in-place

def sparse_mask_call(lib, x, mask):
    return _members(lib, x.sparse_mask(mask.to_sparse().coalesce()))


def mask_samples(dtype):
    yield "pattern", [T((4, 6), dtype, 1), Z((4, 6), dtype, 2)], {}
    yield "hybrid values", [T((3, 2), dtype, 3), Z((3, 2), dtype, 4)], {}


def sparse_sum_call(lib, x, dim=None):
    s = x.to_sparse()
    r = lib.sparse.sum(s) if dim is None else lib.sparse.sum(s, dim)
    return r.to_dense() if r.layout != lib.strided else r


def sum_samples(dtype):
    for dim in (None, 0, 1, (0, 1)):
        yield f"dim {dim}", [T((3, 4), dtype, 1)], {} if dim is None else {"dim": dim}
        yield f"zeros dim {dim}", [Z((3, 4), dtype, 2)], {} if dim is None else {"dim": dim}


def products_samples(dtype):
    yield "with zeros", [Z((4, 3), dtype, 1), T((3, 5), dtype, 2)], {}
    yield "full", [T((2, 3), dtype, 3), T((3, 4), dtype, 4)], {}


def sparse_mm_call(lib, a, b, layout="sparse_coo"):
    return lib.sparse.mm(_layout(lib, a, layout), b)


def sparse_sparse_call(lib, a, b):
    return lib.sparse.mm(a.to_sparse(), b.to_sparse()).to_dense()


def mm_call(lib, a, b, order="sparse_dense", layout="sparse_coo"):
    # (a sparse operand of torch.mm may not require grad: no_grad_inputs)
    if order == "sparse_dense":
        return lib.mm(_layout(lib, a, layout), b)
    if order == "dense_sparse":
        return lib.mm(b.t(), _layout(lib, a, layout).t())
    return lib.mm(a.to_sparse(), b.detach().to_sparse()).to_dense()


def mm_samples(dtype):
    yield "full sparse_dense", [T((4, 3), dtype, 3), T((3, 5), dtype, 4)], {}
    for order in ("sparse_dense", "dense_sparse", "sparse_sparse"):
        for layout in ("sparse_coo", "sparse_csr"):
            if order == "sparse_sparse" and layout == "sparse_csr":
                continue
            yield f"{order} {layout}", [Z((4, 3), dtype, 1), T((3, 5), dtype, 2)], {"order": order, "layout": layout}


def sparse_addmm_call(lib, c, a, b, beta=1, alpha=1):
    return lib.sparse.addmm(c, a.to_sparse(), b, beta=beta, alpha=alpha)


def addmm_call(lib, c, a, b, beta=1, alpha=1, layout="sparse_coo"):
    # (a sparse operand of torch.addmm may not require grad: no_grad_inputs)
    return lib.addmm(c, _layout(lib, a, layout), b, beta=beta, alpha=alpha)


def addmm_samples(dtype):
    yield "zeros", [T((4, 5), dtype, 1), Z((4, 3), dtype, 2), T((3, 5), dtype, 3)], {}
    yield "beta alpha", [T((4, 5), dtype, 4), T((4, 3), dtype, 5), T((3, 5), dtype, 6)], {"beta": 0.5, "alpha": -2.0}
    yield "broadcast self", [T((5,), dtype, 7), T((4, 3), dtype, 8), T((3, 5), dtype, 9)], {}


def binary_call(op):
    def call(lib, a, b, kind="sparse_sparse", **kw):
        x = a.to_sparse()
        if kind == "sparse_sparse":
            r = getattr(lib, op)(x, b.to_sparse(), **kw)
        elif kind == "dense_sparse":
            r = getattr(lib, op)(b, x, **kw)
        elif kind == "sparse_dense":
            r = getattr(lib, op)(x, b, **kw)
        else:  # sparse with a scalar
            r = getattr(lib, op)(x, 2.5, **kw)
        return r.to_dense() if r.layout != lib.strided else r
    return call


def binary_samples(kinds, alpha=False):
    def samples(dtype):
        for kind in kinds:
            yield kind, [Z((3, 4), dtype, 1), Z((3, 4), dtype, 2)], {"kind": kind}
            if alpha and kind != "scalar":
                yield kind + " alpha", [T((3, 4), dtype, 3), T((3, 4), dtype, 4)], {"kind": kind, "alpha": 0.5}
    return samples


def transpose_call(lib, x, layout="sparse_coo", dims=(0, 1)):
    s = _layout(lib, x, layout) if layout != "hybrid" else x.to_sparse(1)
    r = s.transpose(*dims)
    return r.to_dense()


def transpose_samples(dtype):
    yield "coo", [Z((3, 5), dtype, 1)], {}
    yield "coo 3-d", [Z((2, 3, 4), dtype, 2)], {"dims": (0, 2)}


def clone_call(lib, x, layout):
    return _layout(lib, x, layout).clone().to_dense()


def to_copy_call(lib, x, layout):
    return _layout(lib, x, layout).to(lib.float64).to_dense()


def layouts_samples(dtype):
    for layout in ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        yield layout, [Z((4, 6), dtype, 21)], {"layout": layout}


def in_place_call(lib, a, b, op="add_"):
    target = a.detach().to_sparse()
    if op == "add_":
        target.add_(b.detach().to_sparse(), alpha=2)
    elif op == "mul_":
        target.mul_(3)
    elif op == "zero_":
        target.zero_()
    elif op == "copy_":
        target.copy_(b.detach().to_sparse())
    elif op == "dense add_":
        dense = b.detach().clone()
        return dense.add_(target, alpha=-1)
    return target.to_dense()


def in_place_samples(dtype):
    for op in ("add_", "mul_", "zero_", "copy_", "dense add_"):
        yield op, [Z((3, 4), dtype, 1), Z((3, 4), dtype, 2)], {"op": op}


def resize_call(lib, indices, values, size, new_size, clear=False):
    s = lib.sparse_coo_tensor(indices, values.detach(), size)
    if clear:
        s.sparse_resize_and_clear_(new_size, 2, 0)
    else:
        s.sparse_resize_(new_size, 2, 0)
    return tuple(s.shape), s._nnz(), s.to_dense()


def resize_samples(dtype):
    i = torch.tensor([[0, 1], [2, 0]])
    yield "grow", [i, T((2,), dtype, 1)], {"size": (2, 3), "new_size": (4, 5)}
    yield "clear", [i, T((2,), dtype, 2)], {"size": (2, 3), "new_size": (1, 1), "clear": True}


NO_GRAD_INTS = {"grad": "the outputs are integers and flags read from the members"}
CSR_GRAD_13 = {"torch_grad": "torch 1.13 has no derivative for this conversion or for a compressed tensor's "
                             "to_dense; current torch's (the grad in the input's layout) is followed and "
                             "gradchecked"}

def pow_call(lib, x, exponent=2):
    return x.to_sparse().pow(exponent).to_dense()


def pow_samples(dtype):
    for exponent in (2, 3, -1, 0.5):
        x = Z((3, 4), dtype, 31)
        yield f"exponent {exponent}", [x.abs() if exponent == 0.5 else x], {"exponent": exponent}
    yield "full pattern", [T((3, 4), dtype, 32)], {"exponent": 3}


def hybrid(x, sparse_dim):
    return x.to_sparse() if sparse_dim is None else x.to_sparse(sparse_dim)


def permute_call(lib, x, dims, sparse_dim=None):
    return hybrid(x, sparse_dim).permute(*dims).to_dense()


def permute_samples(dtype):
    yield "2-d", [Z((3, 5), dtype, 1)], {"dims": (1, 0)}
    yield "3-d", [Z((2, 3, 4), dtype, 2)], {"dims": (2, 0, 1)}
    yield "hybrid", [Z((2, 3, 4), dtype, 3)], {"dims": (1, 0, 2), "sparse_dim": 2}
    yield "hybrid dense dims", [Z((2, 3, 4), dtype, 4)], {"dims": (0, 2, 1), "sparse_dim": 1}
    yield "full pattern", [T((2, 3, 4), dtype, 33)], {"dims": (2, 1, 0)}


def unsqueeze_call(lib, x, dim, sparse_dim=None):
    return hybrid(x, sparse_dim).unsqueeze(dim).to_dense()


def unsqueeze_samples(dtype):
    for dim in (0, 1, -1):
        yield f"dim {dim}", [Z((3, 4), dtype, 5)], {"dim": dim}
    yield "hybrid dense dim", [Z((3, 4), dtype, 6)], {"dim": 2, "sparse_dim": 1}
    yield "full pattern", [T((3, 4), dtype, 34)], {"dim": 1}


def cat_call(lib, a, b, dim=0, sparse_dim=None, stack=False):
    fn = lib.stack if stack else lib.cat
    return fn([hybrid(a, sparse_dim), hybrid(b, sparse_dim)], dim).to_dense()


def cat_samples(dtype):
    yield "dim 0", [Z((2, 4), dtype, 7), Z((3, 4), dtype, 8)], {"dim": 0}
    yield "dim 1", [Z((3, 2), dtype, 9), Z((3, 4), dtype, 10)], {"dim": 1}
    yield "hybrid dense dim", [Z((3, 2), dtype, 11), Z((3, 3), dtype, 12)], {"dim": 1, "sparse_dim": 1}
    yield "stack", [Z((3, 4), dtype, 13), Z((3, 4), dtype, 14)], {"dim": 1, "stack": True}
    yield "full pattern", [T((3, 2), dtype, 35), T((3, 4), dtype, 36)], {"dim": 1}
    yield "full pattern stack", [T((3, 4), dtype, 37), T((3, 4), dtype, 38)], {"dim": 0, "stack": True}


def index_select_call(lib, x, dim, index, sparse_dim=None):
    return hybrid(x, sparse_dim).index_select(dim, lib.tensor(index)).to_dense()


def index_select_samples(dtype):
    yield "dim 0 repeats", [Z((4, 3), dtype, 15)], {"dim": 0, "index": [3, 0, 3, 1]}
    yield "dim 1", [Z((4, 5), dtype, 16)], {"dim": 1, "index": [4, 2]}
    yield "negative", [Z((4, 5), dtype, 17)], {"dim": -1, "index": [-1, 0]}
    yield "hybrid dense dim", [Z((4, 3), dtype, 18)], {"dim": 1, "index": [2, 2, 0], "sparse_dim": 1}
    yield "full pattern", [T((4, 3), dtype, 39)], {"dim": 0, "index": [3, 0, 3]}


def softmax_call(name):
    def call(lib, x, dim, sparse_dim=None, dtype=None):
        kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        return getattr(lib.sparse, name)(hybrid(x, sparse_dim), dim, **kw).to_dense()
    return call


def softmax_samples(dtype):
    yield "dim 1", [Z((4, 5), dtype, 19)], {"dim": 1}
    yield "dim 0", [Z((4, 5), dtype, 20)], {"dim": 0}
    yield "3-d middle", [Z((2, 3, 4), dtype, 21)], {"dim": 1}
    yield "hybrid dense dim", [Z((3, 4), dtype, 22)], {"dim": 1, "sparse_dim": 1}
    yield "dtype", [Z((3, 4), dtype, 23)], {"dim": -1, "dtype": "float64"}
    yield "full pattern", [T((3, 4), dtype, 40)], {"dim": 0}
    yield "full pattern hybrid", [T((3, 4), dtype, 41)], {"dim": 1, "sparse_dim": 1}


def embedding_call(lib, w, padding_idx=None):
    return lib.nn.functional.embedding(lib.tensor([[1, 3, 3], [0, 2, 1]]), w, padding_idx=padding_idx, sparse=True)


def embedding_samples(dtype):
    yield "2-d indices", [T((5, 3), dtype, 24)], {}
    yield "padding_idx", [T((5, 3), dtype, 25)], {"padding_idx": 3}


NARROW_COPY_GRAD = {"torch_grad": "torch 1.13 has no derivative for narrow_copy; current torch's (slice_backward of "
                                  "the grad) is followed, and gradcheck judges it"}


def narrow_copy_call(lib, x, dim, start, length, sparse_dim=0):
    if sparse_dim == 0:
        return x.narrow_copy(dim, start, length)
    return x.to_sparse(sparse_dim).narrow_copy(dim, start, length).to_dense()


def narrow_copy_samples(dtype):
    yield "dim 0", [Z((4, 5), dtype, 42)], {"dim": 0, "start": 1, "length": 2}
    yield "negative start", [Z((4, 5), dtype, 43)], {"dim": 1, "start": -3, "length": 3}
    yield "full pattern", [T((4, 5), dtype, 44)], {"dim": 1, "start": 1, "length": 3}
    yield "empty", [T((4, 5), dtype, 45)], {"dim": 0, "start": 4, "length": 0}


def sparse_narrow_samples(dtype):
    for name, tensors, kw in narrow_copy_samples(dtype):
        yield name, tensors, dict(kw, sparse_dim=2)
    yield "hybrid dense dim", [T((4, 5), dtype, 46)], {"dim": 1, "start": 2, "length": 2, "sparse_dim": 1}


def select_call(lib, x, dim, index, sparse_dim=None):
    r = hybrid(x, sparse_dim).select(dim, index)
    return r.to_dense() if r.layout != lib.strided else r


def select_samples(dtype):
    yield "row", [Z((4, 5), dtype, 47)], {"dim": 0, "index": 2}
    yield "negative", [Z((4, 5), dtype, 48)], {"dim": -1, "index": -2}
    yield "full pattern", [T((3, 4, 2), dtype, 49)], {"dim": 1, "index": 3}
    yield "one sparse dim (dense result)", [T((4, 3), dtype, 50)], {"dim": 0, "index": 1, "sparse_dim": 1}
    yield "hybrid dense dim", [T((4, 3), dtype, 51)], {"dim": 1, "index": 0, "sparse_dim": 1}


def mv_call(lib, a, v):
    return a.to_sparse().mv(v)


def mv_samples(dtype):
    yield "with zeros", [Z((4, 5), dtype, 52), T((5,), dtype, 53)], {}
    yield "full pattern", [T((3, 4), dtype, 54), T((4,), dtype, 55)], {}


def bmm_call(lib, a, b):
    return lib.bmm(a.to_sparse(), b)


def bmm_samples(dtype):
    yield "with zeros", [Z((3, 4, 5), dtype, 56), T((3, 5, 2), dtype, 57)], {}
    yield "full pattern", [T((2, 3, 4), dtype, 58), T((2, 4, 3), dtype, 59)], {}
    yield "empty batch", [torch.zeros(2, 3, 4, dtype=getattr(torch, dtype)), T((2, 4, 3), dtype, 60)], {}


def sampled_addmm_call(lib, c, a, b, beta=1.0, alpha=1.0):
    return lib.sparse.sampled_addmm(c.to_sparse_csr(), a, b, beta=beta, alpha=alpha).to_dense()


def sampled_addmm_samples(dtype):
    yield "pattern with zeros", [Z((4, 5), dtype, 61), T((4, 3), dtype, 62), T((3, 5), dtype, 63)], {}
    yield "scaled", [T((3, 4), dtype, 64), T((3, 2), dtype, 65), T((2, 4), dtype, 66)], {"beta": 0.5, "alpha": -2.0}


register(
    OpInfo("narrow_copy", narrow_copy_call, sample_inputs=narrow_copy_samples, dtypes=FLOAT, supports_out=False,
           exempt=NARROW_COPY_GRAD),
    OpInfo("narrow_copy[sparse]", narrow_copy_call, sample_inputs=sparse_narrow_samples, grad_filter=no_zeros,
           exempt=NARROW_COPY_GRAD, **SPARSE),
    OpInfo("select[sparse]", select_call, sample_inputs=select_samples, grad_filter=no_zeros, **SPARSE),
    OpInfo("mv[sparse]", mv_call, arity=2, sample_inputs=mv_samples, grad_filter=no_zeros, no_grad_inputs=(0,),
           covers=("addmv",), **SPARSE),
    OpInfo("bmm[sparse]", bmm_call, arity=2, sample_inputs=bmm_samples, grad_filter=no_zeros, no_grad_inputs=(0,),
           **SPARSE),
    OpInfo("sparse_sampled_addmm[csr]", sampled_addmm_call, arity=3, sample_inputs=sampled_addmm_samples,
           grad_filter=no_zeros, **SPARSE),
)

register(
    # the weight's grad is a sparse COO tensor in both libraries (compared densified)
    OpInfo("embedding[sparse grad]", embedding_call, sample_inputs=embedding_samples,
           grad_filter=lambda t, k: "padding_idx" not in k, covers=("embedding_sparse_backward",), **SPARSE),
    OpInfo("pow[sparse]", pow_call, sample_inputs=pow_samples, grad_filter=no_zeros, **SPARSE),
    OpInfo("permute[sparse]", permute_call, sample_inputs=permute_samples, grad_filter=no_zeros, **SPARSE),
    OpInfo("unsqueeze[sparse]", unsqueeze_call, sample_inputs=unsqueeze_samples, grad_filter=no_zeros, **SPARSE),
    OpInfo("cat[sparse]", cat_call, arity=2, sample_inputs=cat_samples, grad_filter=no_zeros, covers=("stack",),
           **SPARSE),
    OpInfo("index_select[sparse]", index_select_call, sample_inputs=index_select_samples, grad_filter=no_zeros,
           **SPARSE),
    OpInfo("_sparse_softmax", softmax_call("softmax"), sample_inputs=softmax_samples, grad_filter=no_zeros,
           covers=("_sparse_softmax_backward_data",), **SPARSE),
    OpInfo("_sparse_log_softmax", softmax_call("log_softmax"), sample_inputs=softmax_samples, grad_filter=no_zeros,
           covers=("_sparse_log_softmax_backward_data",), **SPARSE),
)

register(
    OpInfo("to_sparse", to_sparse_call, sample_inputs=to_sparse_samples, grad_filter=no_zeros,
           covers=("coalesce", "_coalesce", "indices", "values", "is_coalesced"), **SPARSE),
    OpInfo("to_sparse_csr", compressed_call("sparse_csr"), sample_inputs=compressed_samples, grad_filter=no_zeros,
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("to_sparse_csc", compressed_call("sparse_csc"), sample_inputs=compressed_samples, grad_filter=no_zeros,
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("to_sparse_bsr", compressed_call("sparse_bsr"), sample_inputs=dense_samples, grad_filter=no_zeros,
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("to_sparse_bsc", compressed_call("sparse_bsc"), sample_inputs=dense_samples, grad_filter=no_zeros,
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("to_dense[sparse]", to_dense_call, sample_inputs=to_dense_samples(("sparse_coo",)), grad_filter=no_zeros,
           covers=("_to_dense", "to_dense_backward"), **SPARSE),
    OpInfo("to_dense[compressed]", to_dense_call, grad_filter=no_zeros, exempt=CSR_GRAD_13,
           sample_inputs=to_dense_samples(("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")), **SPARSE),
    OpInfo("sparse_coo_tensor", coo_call, arity=2, sample_inputs=coo_samples,
           covers=("_sparse_coo_tensor_unsafe", "_sparse_coo_tensor_with_dims_and_tensors",
                   "_validate_sparse_coo_tensor_args"), **SPARSE),
    OpInfo("sparse_csr_tensor", compressed_ctor_call("sparse_csr_tensor"), arity=3,
           sample_inputs=compressed_ctor_samples("sparse_csr"), exempt=CSR_GRAD_13,
           covers=("_sparse_compressed_tensor_unsafe", "_validate_sparse_compressed_tensor_args"), **SPARSE),
    OpInfo("sparse_csc_tensor", compressed_ctor_call("sparse_csc_tensor"), arity=3,
           sample_inputs=compressed_ctor_samples("sparse_csc"), exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("sparse_bsr_tensor", compressed_ctor_call("sparse_bsr_tensor"), arity=3,
           sample_inputs=compressed_ctor_samples("sparse_bsr"), exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("sparse_bsc_tensor", compressed_ctor_call("sparse_bsc_tensor"), arity=3,
           sample_inputs=compressed_ctor_samples("sparse_bsc"), exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("sparse_compressed_tensor", compressed_ctor_call("sparse_compressed_tensor"), arity=3,
           sample_inputs=generic_ctor_samples, exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("_sparse_csr_tensor_unsafe", compressed_ctor_call("_sparse_csr_tensor_unsafe"), arity=3,
           sample_inputs=lambda d: [s for s in compressed_ctor_samples("sparse_csr")(d) if "size" in s[2]],
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("coalesce", coalesce_call, arity=2, sample_inputs=coalesce_samples,
           covers=("_indices", "_values", "_coalesced_"), **SPARSE),
    OpInfo("_nnz", counts_call, arity=2, sample_inputs=coalesce_samples, exempt=NO_GRAD_INTS,
           covers=("sparse_dim", "dense_dim", "_dimI", "_dimV"), **SPARSE),
    OpInfo("crow_indices", indices_call, sample_inputs=indices_samples, exempt=NO_GRAD_INTS,
           covers=("col_indices", "ccol_indices", "row_indices"), **SPARSE),
    OpInfo("sparse_mask", sparse_mask_call, arity=2, sample_inputs=mask_samples, no_grad_inputs=(1,),
           grad_filter=lambda t, k: bool((t[0] != 0).all()), **SPARSE),
    OpInfo("_sparse_sum", sparse_sum_call, sample_inputs=sum_samples, grad_filter=no_zeros,
           covers=("_sparse_sum_backward",), **SPARSE),
    OpInfo("_sparse_sparse_matmul", sparse_sparse_call, arity=2, sample_inputs=products_samples, grad_filter=no_zeros,
           **SPARSE),
    OpInfo("_sparse_mm", sparse_mm_call, arity=2, sample_inputs=products_samples, grad_filter=no_zeros, **SPARSE),
    OpInfo("mm[sparse]", mm_call, arity=2, sample_inputs=mm_samples, grad_filter=no_zeros, no_grad_inputs=(0,),
           **SPARSE),
    OpInfo("_sparse_addmm", sparse_addmm_call, arity=3, sample_inputs=addmm_samples, grad_filter=no_zeros,
           **SPARSE),
    OpInfo("addmm[sparse]", addmm_call, arity=3, sample_inputs=addmm_samples, grad_filter=no_zeros,
           no_grad_inputs=(1,), **SPARSE),
    OpInfo("add[sparse]", binary_call("add"), arity=2, grad_filter=no_zeros,
           sample_inputs=binary_samples(("sparse_sparse", "dense_sparse"), alpha=True), **SPARSE),
    OpInfo("sub[sparse]", binary_call("sub"), arity=2, grad_filter=no_zeros,
           sample_inputs=binary_samples(("sparse_sparse", "dense_sparse"), alpha=True), **SPARSE),
    OpInfo("mul[sparse]", binary_call("mul"), arity=2, grad_filter=no_zeros,
           sample_inputs=binary_samples(("sparse_sparse", "scalar")), **SPARSE),
    OpInfo("div[sparse]", binary_call("div"), arity=2, grad_filter=no_zeros,
           sample_inputs=binary_samples(("scalar",)), **SPARSE),
    OpInfo("transpose[sparse]", transpose_call, sample_inputs=transpose_samples, grad_filter=no_zeros, **SPARSE),
    OpInfo("clone[sparse]", clone_call, sample_inputs=layouts_samples, grad_filter=no_zeros, exempt=CSR_GRAD_13,
           **SPARSE),
    OpInfo("_to_copy[sparse]", to_copy_call, sample_inputs=layouts_samples, grad_filter=no_zeros,
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("add_[sparse in place]", in_place_call, arity=2, sample_inputs=in_place_samples,
           exempt={"grad": "the in-place forms are compared forward; their functional forms' gradients are "
                           "checked by add[sparse] and mul[sparse]"}, covers=("mul_", "zero_", "copy_"), **SPARSE),
    OpInfo("sparse_resize_", resize_call, arity=2, sample_inputs=resize_samples, exempt=NO_GRAD_INTS,
           covers=("sparse_resize_and_clear_",), **SPARSE),
)


# ---- the compressed layouts' arithmetic, selection and sums; norm, nan_to_num, any and
# division with rounding on COO. Samples that torch 1.13 refuses (a CSC product, a
# broadcast factor) run on tessera only here; test_sparse_elementwise.py compares them
# with the dense result.

def mul_compressed_call(lib, a, b, kind, layout):
    x = _layout(lib, a, layout)
    if kind == "sparse_dense":
        r = x * b
    elif kind == "dense_sparse":
        r = b * x
    elif kind == "sparse_row":
        r = x * b[0]
    else:
        r = x * _layout(lib, b, layout)
    return r.to_dense()


def mul_compressed_samples(dtype):
    for layout in ("sparse_csr", "sparse_csc"):
        for kind in ("sparse_dense", "dense_sparse", "sparse_sparse", "sparse_row"):
            yield f"{layout} {kind}", [Z((3, 4), dtype, 71), Z((3, 4), dtype, 72)], {"kind": kind, "layout": layout}
    yield "full patterns", [T((3, 4), dtype, 73), T((3, 4), dtype, 74)], {"kind": "sparse_sparse", "layout": "sparse_csr"}


def select_compressed_call(lib, x, dim, index, layout):
    r = _layout(lib, x, layout).select(dim, index)
    return r.to_dense() if r.layout != lib.strided else r


def select_compressed_samples(dtype):
    yield "csr row", [Z((4, 5), dtype, 75)], {"dim": 0, "index": 2, "layout": "sparse_csr"}
    yield "csr column", [Z((4, 5), dtype, 76)], {"dim": 1, "index": -1, "layout": "sparse_csr"}
    yield "csc row", [Z((4, 5), dtype, 77)], {"dim": 0, "index": 1, "layout": "sparse_csc"}
    yield "full pattern", [T((3, 4), dtype, 78)], {"dim": 1, "index": 2, "layout": "sparse_csr"}
    # (torch 1.13 fails on a batch select; current torch gives the batch's CSR matrix)
    yield "batch", [T((2, 3, 4), dtype, 79)], {"dim": 0, "index": 1, "layout": "sparse_csr"}


def sum_compressed_call(lib, x, layout):
    return _layout(lib, x, layout).sum()


def norm_sparse_call(lib, x, p=2, **kw):
    return x.to_sparse().norm(p, **kw)


def norm_sparse_samples(dtype):
    for p in (2, 1, 3, float("inf"), 0):
        yield f"p {p}", [Z((3, 4), dtype, 80)], {"p": p}
    yield "full pattern", [T((2, 3), dtype, 81)], {"p": 2}
    yield "every dim named", [Z((3, 4), dtype, 82)], {"p": 2, "dim": (0, 1)}
    yield "one dim (refused)", [Z((3, 4), dtype, 83)], {"p": 2, "dim": 0}


def native_norm_call(lib, x, p=2, dim=None, keepdim=False, dtype=None):
    if dim is None:
        return lib.native_norm(x.to_sparse(), p)
    return lib.native_norm(x.to_sparse(), p, dim, keepdim, dtype and getattr(lib, dtype))


def native_norm_samples(dtype):
    for p in (2, 1, 3, float("inf")):
        yield f"p {p}", [Z((3, 4), dtype, 85)], {"p": p}
    yield "every dim named", [Z((3, 4), dtype, 86)], {"p": 2, "dim": [0, -1]}
    yield "no dim named, p None", [T((2, 3), dtype, 87)], {"p": None, "dim": []}
    yield "one dim (refused)", [Z((3, 4), dtype, 88)], {"p": 2, "dim": [0]}
    yield "keepdim (refused)", [Z((3, 4), dtype, 89)], {"p": 2, "dim": [0, 1], "keepdim": True}
    yield "dtype (refused)", [Z((3, 4), dtype, 90)], {"p": 2, "dim": [0, 1], "dtype": "float32"}


NATIVE_NORM_GRAD = {"torch_grad": "torch 1.13 has no derivative for native_norm; norm's (through the values) is "
                                  "followed, and gradcheck judges it"}


def nan_to_num_sparse_call(lib, x, layout="sparse_coo", **kw):
    return _layout(lib, x, layout).nan_to_num(**kw).to_dense()


def nan_to_num_sparse_samples(dtype):
    x = Z((3, 4), dtype, 84)
    x[0, 1], x[1, 2], x[2, 0] = float("nan"), float("inf"), float("-inf")
    for layout in ("sparse_coo", "sparse_csr"):
        yield layout, [x], {"layout": layout}
        yield layout + " values", [x], {"layout": layout, "nan": 1.5, "posinf": 9.0, "neginf": -9.0}


def rounding_division_call(lib, x, op, divisor=2.0):
    s = x.to_sparse()
    if op == "floor_divide":
        r = s // divisor
    else:
        r = lib.div(s, divisor, rounding_mode=op)
    return r.to_dense()


def rounding_division_samples(dtype):
    for op in ("floor_divide", "floor", "trunc"):
        yield op, [Z((3, 4), dtype, 85) * 5], {"op": op}
        yield op + " by a negative", [Z((3, 4), dtype, 86) * 5], {"op": op, "divisor": -1.5}


def any_sparse_call(lib, x):
    return x.to_sparse().any()


def any_samples(dtype):
    yield "some", [Z((3, 4), dtype, 87)], {}
    yield "none", [torch.zeros(3, 4, dtype=getattr(torch, dtype))], {}


def zeros_like_call(lib, x, layout):
    s = _layout(lib, x, layout)
    z = lib.zeros_like(s)
    assert z.layout == s.layout and z._nnz() == 0
    return z.to_dense()


NO_GRAD = {"grad": "the result is a step function of the input (rounding, a bool): no gradient to compare"}

register(
    OpInfo("mul[compressed]", mul_compressed_call, arity=2, sample_inputs=mul_compressed_samples, grad_filter=no_zeros,
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("select[compressed]", select_compressed_call, sample_inputs=select_compressed_samples,
           grad_filter=no_zeros, exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("sum[compressed]", sum_compressed_call, sample_inputs=layouts_samples, grad_filter=no_zeros,
           exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("norm[sparse]", norm_sparse_call, sample_inputs=norm_sparse_samples, grad_filter=no_zeros, **SPARSE),
    OpInfo("native_norm", native_norm_call, sample_inputs=native_norm_samples, grad_filter=no_zeros,
           exempt=NATIVE_NORM_GRAD, **SPARSE),
    OpInfo("nan_to_num[sparse]", nan_to_num_sparse_call, sample_inputs=nan_to_num_sparse_samples,
           exempt={"grad": "the samples hold NaN and infinities, where no finite difference is defined; the "
                           "values' gradient is nan_to_num's own, gradchecked by the dense entry"}, **SPARSE),
    OpInfo("floor_divide[sparse]", rounding_division_call, sample_inputs=rounding_division_samples, exempt=NO_GRAD,
           covers=("div",), **SPARSE),
    OpInfo("any[sparse]", any_sparse_call, sample_inputs=any_samples, exempt=NO_GRAD, **SPARSE),
    OpInfo("zeros_like[sparse]", zeros_like_call, sample_inputs=layouts_samples,
           exempt={"grad": "zeros_like does not depend on its input's values"}, covers=("empty_like",), **SPARSE),
)


# ---- products with a sparse result, spdiags, the members' copies, resize_as_sparse_

def sparse_result_call(op):
    def call(lib, a, b, c=None, beta=1.0, alpha=1.0):
        if op == "hspmm":
            r = lib.hspmm(a.to_sparse(), b)
        elif op == "smm":
            r = lib.smm(a.to_sparse(), b)
        else:
            r = lib.sspaddmm(c.to_sparse(), a.to_sparse(), b, beta=beta, alpha=alpha)
        return r.to_dense()
    return call


def sparse_result_samples(dtype):
    yield "with zero rows", [Z((4, 3), dtype, 90), T((3, 2), dtype, 91)], {}
    yield "full pattern", [T((3, 4), dtype, 92), T((4, 5), dtype, 93)], {}


def sspaddmm_samples(dtype):
    yield "with zeros", [Z((4, 3), dtype, 94), T((3, 2), dtype, 95), Z((4, 2), dtype, 96)], {"beta": 0.5, "alpha": 2.0}
    yield "full patterns", [T((3, 4), dtype, 97), T((4, 2), dtype, 98), T((3, 2), dtype, 99)], {}


def spdiags_call(lib, diagonals, offsets, shape, layout):
    r = lib.sparse.spdiags(diagonals, lib.tensor(offsets), shape, layout=getattr(lib, layout))
    return r.to_dense()


def spdiags_samples(dtype):
    yield "square", [T((3, 4), dtype, 100)], {"offsets": [0, 1, -2], "shape": (3, 3), "layout": "sparse_coo"}
    yield "wide", [T((3, 2), dtype, 101)], {"offsets": [0, 1, -2], "shape": (3, 5), "layout": "sparse_coo"}
    yield "one diagonal", [T((3,), dtype, 102)], {"offsets": [1], "shape": (3, 3), "layout": "sparse_coo"}
    yield "csr", [T((3, 4), dtype, 103)], {"offsets": [0, 1, 2], "shape": (3, 3), "layout": "sparse_csr"}
    yield "csc", [T((2, 4), dtype, 104)], {"offsets": [-1, 1], "shape": (3, 3), "layout": "sparse_csc"}


def member_copy_call(lib, x, member):
    layout = {"values": "sparse_coo", "indices": "sparse_coo", "crow_indices": "sparse_csr",
              "col_indices": "sparse_csr", "ccol_indices": "sparse_csc", "row_indices": "sparse_csc"}[member]
    s = _layout(lib, x, layout)
    if layout == "sparse_coo":
        s = s.coalesce()
    copy = getattr(lib, member + "_copy")(s)
    original = getattr(s, member)()
    assert copy.data_ptr() != original.data_ptr()
    return copy


def member_copy_samples(dtype):
    for member in ("values", "indices", "crow_indices", "col_indices", "ccol_indices", "row_indices"):
        yield member, [Z((3, 4), dtype, 105)], {"member": member}


def resize_as_sparse_call(lib, x, template_shape, sparse_dim):
    s = x.detach().to_sparse()
    template = lib.zeros(template_shape, dtype=x.dtype).to_sparse(sparse_dim)
    assert s.resize_as_sparse_(template) is s
    return s.to_dense(), s.sparse_dim(), s.dense_dim()


def resize_as_sparse_samples(dtype):
    yield "grow", [Z((2, 3), dtype, 106)], {"template_shape": (4, 5), "sparse_dim": 2}
    yield "same shape", [Z((2, 3), dtype, 107)], {"template_shape": (2, 3), "sparse_dim": 2}


NO_TORCH_GRAD = {"torch_grad": "torch 1.13 has no derivative for hspmm, smm or sspaddmm; tessera's are those of "
                               "the composite (the product's, in the sparse operand's pattern), gradchecked"}

def batched_sampled_addmm_samples(dtype):
    # (a full pattern: a batched CSR tensor has the same nnz in every batch)
    yield "batch of 2", [T((2, 3, 4), dtype, 108), T((2, 3, 2), dtype, 109), T((2, 2, 4), dtype, 110)], {}
    yield "scaled", [T((3, 2, 2), dtype, 111), T((3, 2, 3), dtype, 112), T((3, 3, 2), dtype, 113)], \
        {"beta": -1.0, "alpha": 0.5}


register(
    OpInfo("sparse_sampled_addmm[batched csr]", sampled_addmm_call, arity=3, sample_inputs=batched_sampled_addmm_samples,
           exempt={"torch_grad": "torch 1.13 fails on a batched CSR input (its CPU kernel takes 2-D only); current "
                                 "torch's rule and derivative are followed, and gradchecked"}, **SPARSE),
)

register(
    OpInfo("hspmm", sparse_result_call("hspmm"), arity=2, sample_inputs=sparse_result_samples, grad_filter=no_zeros,
           exempt=NO_TORCH_GRAD, **SPARSE),
    OpInfo("smm", sparse_result_call("smm"), arity=2, sample_inputs=sparse_result_samples, grad_filter=no_zeros,
           exempt=NO_TORCH_GRAD, **SPARSE),
    OpInfo("sspaddmm", sparse_result_call("sspaddmm"), arity=3, sample_inputs=sspaddmm_samples,
           grad_filter=no_zeros, exempt=NO_TORCH_GRAD, **SPARSE),
    OpInfo("_spdiags", spdiags_call, sample_inputs=spdiags_samples, exempt=CSR_GRAD_13, **SPARSE),
    OpInfo("values_copy", member_copy_call, sample_inputs=member_copy_samples,
           exempt={"grad": "the copies of the index members are integers; values_copy's gradient is values' "
                           "(checked by to_sparse), through a clone"},
           covers=("indices_copy", "crow_indices_copy", "col_indices_copy", "ccol_indices_copy", "row_indices_copy"),
           **SPARSE),
    OpInfo("resize_as_sparse_", resize_as_sparse_call, sample_inputs=resize_as_sparse_samples, exempt=NO_GRAD_INTS,
           **SPARSE),
)
