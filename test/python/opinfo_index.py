"""OpInfo entries for the indexing operators (aten/native/index/): gather and scatter,
index_select / index_add / index_put and t[...] (aten::index), masked_fill and
masked_select, take, nonzero / argwhere. Each sample is a self of the entry's dtype with
index tensors (int64, or bool masks) built to fit it; the functional, method, in-place
and out= forms share the samples."""
import torch

from opinfo import ALL_DTYPES, GradSample, M, OpInfo, make_torch, register

NO_BOOL = [d for d in ALL_DTYPES if d != "bool"]


def _long(values):
    return torch.tensor(values, dtype=torch.int64)


def _mask(values):
    return torch.tensor(values, dtype=torch.bool)


def gather_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "dim0", [a, _long([[2, 0, 1, 1], [0, 0, 2, 1]])], {"dim": 0}
    yield "dim-1", [a, _long([[3, 0], [1, 1], [2, 3]])], {"dim": -1}
    yield "strided", [a.t(), _long([[0, 2], [1, 1], [2, 0], [0, 0]])], {"dim": 1}
    yield "0-dim", [make_torch((), dtype, 2), _long(0)], {"dim": 0}


def scatter_samples(dtype):
    """(self, index, src): index rows no longer than src's, duplicates only where the
    result does not depend on the order of writes (scatter_add sums them)."""
    a, src = make_torch((3, 4), dtype, 1), make_torch((2, 4), dtype, 2)
    yield "dim0", [a, _long([[2, 0, 1, 0], [0, 1, 2, 1]]), src], {"dim": 0}
    yield "dim1", [a, _long([[3, 0], [1, 2], [0, 3]]), make_torch((3, 2), dtype, 3)], {"dim": 1}
    yield "strided", [a.t(), _long([[0, 2, 1]]), make_torch((1, 3), dtype, 4)], {"dim": 1}


def scatter_add_samples(dtype):
    a, src = make_torch((3, 4), dtype, 1), make_torch((2, 4), dtype, 2)
    yield "repeated", [a, _long([[2, 0, 2, 0], [2, 2, 0, 1]]), src], {"dim": 0}
    yield "dim1", [a, _long([[3, 3], [1, 1], [0, 3]]), make_torch((3, 2), dtype, 3)], {"dim": -1}


def index_select_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "dim0", [a, _long([2, 0, 2])], {"dim": 0}
    yield "dim1", [a.t(), _long([1])], {"dim": 1}
    yield "0-dim index", [a, _long(3)], {"dim": 1}
    yield "empty", [a, _long([])], {"dim": 0}


def index_add_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "dim0", [a, _long([2, 0, 2]), make_torch((3, 4), dtype, 2)], {"dim": 0}
    yield "dim1 alpha", [a, _long([3, 1]), make_torch((3, 2), dtype, 3)], {"dim": 1, "alpha": 2}


def index_put_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "one index", [a, _long([2, 0]), make_torch((2, 4), dtype, 2)], {}
    yield "broadcast value", [a, _long([1]), make_torch((4,), dtype, 3)], {}
    yield "accumulate", [a, _long([2, 2, 0]), make_torch((3, 4), dtype, 4)], {"accumulate": True}


def masked_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "same shape", [a, make_torch((3, 4), "bool", 2)], {}
    yield "broadcast mask", [a, _mask([True, False, False, True])], {}
    yield "strided", [a.t(), make_torch((4, 3), "bool", 3)], {}
    yield "0-dim", [make_torch((), dtype, 4), _mask(True)], {}


def take_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "2-D index", [a, _long([[0, 11], [-1, 5]])], {}
    yield "strided", [a.t(), _long([1, 2, 3])], {}


def _getitem(L, a):
    return (a[L.tensor([1, 0, 1])] * 2 + a[:, [2, 0]].sum() + (a[a > 0.6] * 3).sum() + a[1, ::2].sum()
            + a[..., None, 1:].sum())


def _scatter_inplace(lib, a, index, src, dim):
    return a.scatter_(dim, index, src)


def _index_put_inplace(lib, a, index, values, **k):
    return a.index_put_((index,), values, **k)


register(
    OpInfo("gather", lambda lib, a, i, dim, **k: lib.gather(a, dim, i, **k), sample_inputs=gather_samples),
    OpInfo("gather[method]", lambda lib, a, i, dim: a.gather(dim, i), sample_inputs=gather_samples,
           supports_out=False),
    OpInfo("scatter", lambda lib, a, i, s, dim, **k: lib.scatter(a, dim, i, s, **k), sample_inputs=scatter_samples,
           inplace=_scatter_inplace),
    OpInfo("scatter[value]", lambda lib, a, i, s, dim, **k: lib.scatter(a, dim, i, 2, **k),
           sample_inputs=scatter_samples, supports_out=False,
           inplace=lambda lib, a, i, s, dim: a.scatter_(dim, i, 2)),
    # reduce= is neither differentiated by torch nor by tessera (test_op_grads checks both refuse)
    OpInfo("scatter[reduce]", lambda lib, a, i, s, dim: lib.scatter(a, dim, i, s, reduce="add"),
           sample_inputs=scatter_samples, supports_out=False, dtypes=tuple(NO_BOOL),
           inplace=lambda lib, a, i, s, dim: a.scatter_(dim, i, s, reduce="multiply")),
    OpInfo("scatter_add", lambda lib, a, i, s, dim, **k: lib.scatter_add(a, dim, i, s, **k),
           sample_inputs=scatter_add_samples, dtypes=tuple(NO_BOOL),
           inplace=lambda lib, a, i, s, dim: a.scatter_add_(dim, i, s)),
    OpInfo("index_select", lambda lib, a, i, dim, **k: lib.index_select(a, dim, i, **k),
           sample_inputs=index_select_samples),
    OpInfo("index_select[method]", lambda lib, a, i, dim: a.index_select(dim, i), sample_inputs=index_select_samples,
           supports_out=False),
    OpInfo("index_add", lambda lib, a, i, s, dim, **k: lib.index_add(a, dim, i, s, **k),
           sample_inputs=index_add_samples, dtypes=tuple(NO_BOOL),
           inplace=lambda lib, a, i, s, dim, **k: a.index_add_(dim, i, s, **k)),
    OpInfo("index_put", lambda lib, a, i, v, **k: lib.index_put(a, (i,), v, **k), sample_inputs=index_put_samples,
           supports_out=False, inplace=_index_put_inplace),
    # aten::index, as t[...] reaches it: one index tensor, two broadcast together, a mask
    OpInfo("index", lambda lib, a, i, v: a[i], sample_inputs=index_put_samples, supports_out=False,
           grads=(GradSample(_getitem, (M,), label="every t[...] form"),)),
    OpInfo("index[two]", lambda lib, a, i, v: a[i, i.unsqueeze(1)], sample_inputs=index_put_samples,
           supports_out=False),
    OpInfo("index[mask]", lambda lib, a, i, v: a[a != 0], sample_inputs=index_put_samples, supports_out=False,
           data_dependent=True),
    OpInfo("masked_fill", lambda lib, a, m, **k: lib.masked_fill(a, m, 2, **k), sample_inputs=masked_samples,
           supports_out=False, inplace=lambda lib, a, m: a.masked_fill_(m, 2)),
    OpInfo("masked_fill[tensor]", lambda lib, a, m: lib.masked_fill(a, m, a.reshape(-1)[0]),
           sample_inputs=masked_samples, supports_out=False,
           inplace=lambda lib, a, m: a.masked_fill_(m, a.reshape(-1)[0].clone())),
    OpInfo("masked_select", lambda lib, a, m, **k: lib.masked_select(a, m, **k), sample_inputs=masked_samples,
           method="masked_select", data_dependent=True),
    OpInfo("take", lambda lib, a, i, **k: lib.take(a, i, **k), sample_inputs=take_samples, method="take"),
    OpInfo("nonzero", lambda lib, a, **k: lib.nonzero(a, **k), method="nonzero", data_dependent=True),
    OpInfo("nonzero[as_tuple]", lambda lib, a: lib.nonzero(a, as_tuple=True), supports_out=False,
           data_dependent=True, covers=("nonzero_numpy",)),
    OpInfo("where[condition]", lambda lib, a: lib.where(a), supports_out=False, data_dependent=True),
    OpInfo("argwhere", lambda lib, a: lib.argwhere(a), method="argwhere", supports_out=False, data_dependent=True),
)


def index_fill_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "dim1", [a, _long([0, 2])], {"dim": 1}
    yield "dim0 negative, repeated", [a.t(), _long([-1, 0, -1])], {"dim": 0}
    yield "0-dim index", [a, _long(1)], {"dim": -2}
    yield "empty", [a, _long([])], {"dim": 0}


def index_copy_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "dim1", [a, _long([3, 0]), make_torch((3, 2), dtype, 2)], {"dim": 1}
    yield "dim-1 strided", [a.t(), _long([2, 0, 1]), make_torch((3, 4), dtype, 3).t()], {"dim": -1}
    yield "slice mismatch", [a, _long([0]), make_torch((2, 1), dtype, 5)], {"dim": 1}
    yield "0-dim index", [a, _long(1), make_torch((1, 4), dtype, 4)], {"dim": 0}


# (the index is read on the host for the bounds checks: a meta index has no values)
register(
    OpInfo("index_fill", lambda lib, a, i, dim, **k: lib.index_fill(a, dim, i, -1.5, **k), supports_out=False,
           sample_inputs=index_fill_samples, supports_meta=False,
           inplace=lambda lib, a, i, dim: a.index_fill_(dim, i, -1.5)),
    OpInfo("index_fill[tensor value]", lambda lib, a, i, dim: a.index_fill(dim, i, lib.tensor(3).to(a.dtype)),
           supports_out=False, sample_inputs=index_fill_samples, supports_meta=False,
           inplace=lambda lib, a, i, dim: a.index_fill_(dim, i, lib.tensor(3).to(a.dtype))),
    OpInfo("index_copy", lambda lib, a, i, s, dim, **k: lib.index_copy(a, dim, i, s, **k),
           sample_inputs=index_copy_samples, supports_meta=False,
           inplace=lambda lib, a, i, s, dim: a.index_copy_(dim, i, s)),
)


# ---------------------------------------------------------------- writing into copies and picking along dims

def view_scatter_samples(dtype):
    a = make_torch((4, 3), dtype, 1)
    yield "slice rows", [a, make_torch((2, 3), dtype, 2)], {"how": "slice", "dim": 0, "start": 1, "end": 3}
    yield "slice stepped cols", [a.t(), make_torch((3, 2), dtype, 3)], {"how": "slice", "dim": 1, "start": 0,
                                                                        "end": None, "step": 2}
    yield "slice mismatch", [a, make_torch((3, 3), dtype, 4)], {"how": "slice", "dim": 0, "start": 1, "end": 3}
    yield "select", [a, make_torch((3,), dtype, 5)], {"how": "select", "dim": 0, "index": -1}
    yield "diagonal", [a, make_torch((2,), dtype, 6)], {"how": "diagonal", "offset": 1}
    yield "diagonal dims", [make_torch((2, 3, 3), dtype, 7), make_torch((3, 2), dtype, 8)],  \
        {"how": "diagonal", "offset": 0, "dim1": 1, "dim2": 2}


def _slice_scatter(lib, a, src, dim=0, start=None, end=None, step=1):
    """torch 1.13's slice_scatter misreads start and end (a slice of one row for 1:3); the
    reference is current torch's meaning, written with a clone and a slice assignment."""
    if lib is not torch:
        return lib.slice_scatter(a, src, dim, start, end, step)
    out = a.clone()
    index = [slice(None)] * a.dim()
    index[dim] = slice(start, end, step)
    out[tuple(index)] = src
    return out


def _view_scatter(lib, a, src, how, **k):
    if how == "slice":
        return _slice_scatter(lib, a, src, **k)
    return getattr(lib, f"{how}_scatter")(a, src, **k)


def put_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    # (distinct positions: which of two writes to one place wins is unspecified, in both libraries)
    yield "flat indices", [a, _long([0, 10, -1, 5]), make_torch((4,), dtype, 2)], {}
    yield "accumulate repeats", [a.t(), _long([[1, 1], [3, 1]]), make_torch((2, 2), dtype, 3)], {"accumulate": True}
    yield "out of range", [a, _long([12]), make_torch((1,), dtype, 4)], {}


def masked_scatter_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    mask = torch.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
    yield "2-D mask", [a, mask, make_torch((8,), dtype, 2)], {}
    # (on a contiguous self: torch 1.13 fills a transposed self in memory order, current torch
    # and tessera in index order; test_more_ops.py checks that)
    yield "broadcast row mask, longer source", [a, torch.tensor([True, False, True, True]), make_torch((3, 5), dtype, 3)], {}
    yield "short source", [a, mask, make_torch((2,), dtype, 4)], {}


def take_along_dim_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "dim1", [a, _long([[0, 3], [1, 1], [2, 0]])], {"dim": 1}
    yield "broadcast rows", [a, _long([[2], [0], [1]])], {"dim": 1}
    yield "broadcast index", [a.t(), _long([[0, 2, 1]])], {"dim": 0}
    yield "flattened", [a, _long([11, 0, 5])], {}


register(
    OpInfo("view_scatter", _view_scatter, sample_inputs=view_scatter_samples,
           covers=("slice_scatter", "select_scatter", "diagonal_scatter")),
    OpInfo("slice_scatter", _slice_scatter, supports_out=False,
           sample_inputs=lambda dtype: [("dim1", [make_torch((3, 4), dtype, 1), make_torch((3, 2), dtype, 2)],
                                         {"dim": 1, "start": 2})]),
    OpInfo("select_scatter", lambda lib, a, s, **k: lib.select_scatter(a, s, **k), method="select_scatter",
           sample_inputs=lambda dtype: [("dim1", [make_torch((3, 4), dtype, 1), make_torch((3,), dtype, 2)],
                                         {"dim": 1, "index": 2})]),
    OpInfo("diagonal_scatter", lambda lib, a, s, **k: lib.diagonal_scatter(a, s, **k), method="diagonal_scatter",
           sample_inputs=lambda dtype: [("offset -1", [make_torch((3, 4), dtype, 1), make_torch((2,), dtype, 2)],
                                         {"offset": -1})]),
    # (the indices and mask are read on the host: no meta form, as torch's checks need values)
    OpInfo("put", lambda lib, a, i, s, **k: lib.put(a, i, s, **k), method="put", sample_inputs=put_samples,
           supports_meta=False, inplace=lambda lib, a, i, s, **k: a.put_(i, s, **k)),
    # (torch 1.13 has no reduced-precision masked_scatter to compare with)
    OpInfo("masked_scatter", lambda lib, a, m, s, **k: lib.masked_scatter(a, m, s, **k), method="masked_scatter",
           sample_inputs=masked_scatter_samples, data_dependent=True,
           dtypes=tuple(d for d in ALL_DTYPES if d not in ("float16", "bfloat16")),
           inplace=lambda lib, a, m, s: a.masked_scatter_(m, s)),
    OpInfo("take_along_dim", lambda lib, a, i, **k: lib.take_along_dim(a, i, **k), method="take_along_dim",
           sample_inputs=take_along_dim_samples),
)


# ---------------------------------------------------------------- bucketize, isin, fills
def bucketize_samples(dtype):
    boundaries = torch.tensor([-2, 0, 1, 3]).to(getattr(torch, dtype))
    yield "left", [make_torch((3, 4), dtype, 1), boundaries], {}
    yield "right int32", [make_torch((5,), dtype, 2), boundaries], {"right": True, "out_int32": True}


def isin_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "some", [a, a.reshape(-1)[::3]], {}
    yield "invert, repeats", [a, torch.cat([a.reshape(-1)[:2], a.reshape(-1)[:2]])], {"invert": True}
    yield "empty test", [a, a.reshape(-1)[:0]], {}


def as_strided_scatter_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    yield "rows", [a, make_torch((2, 2), dtype, 2)], {"size": (2, 2), "stride": (4, 1), "storage_offset": 1}
    yield "column", [a, make_torch((3,), dtype, 3)], {"size": (3,), "stride": (4,)}


NO_BOOL = tuple(d for d in ALL_DTYPES if d != "bool" and not d.startswith("complex"))
register(
    OpInfo("bucketize", lambda lib, a, b, **k: lib.bucketize(a, b, **k), sample_inputs=bucketize_samples,
           dtypes=NO_BOOL),
    OpInfo("bucketize[scalar]", lambda lib, b, **k: lib.bucketize(1.5, b, **k), supports_out=False,
           sample_inputs=lambda dtype: [("1.5", [torch.tensor([0.0, 1.0, 2.0]).to(getattr(torch, dtype))], {})],
           dtypes=("float32", "int64")),
    OpInfo("isin", lambda lib, a, b, **k: lib.isin(a, b, **k), sample_inputs=isin_samples, dtypes=NO_BOOL),
    OpInfo("isin[scalar test]", lambda lib, a, **k: lib.isin(a, 1, **k), dtypes=NO_BOOL),
    OpInfo("isin[scalar element]", lambda lib, b, **k: lib.isin(1, b, **k), supports_out=False,
           sample_inputs=lambda dtype: [("1", [torch.tensor([0, 1, 2]).to(getattr(torch, dtype))], {})],
           dtypes=("float32", "int64")),
    OpInfo("fill", lambda lib, a, **k: lib.fill(a, 2, **k)),
    OpInfo("fill[tensor]", lambda lib, a, **k: lib.fill(a, lib.tensor(3).to(a.dtype), **k)),
    OpInfo("fill_diagonal_", lambda lib, a, **k: a.clone().fill_diagonal_(**k), supports_out=False,
           sample_inputs=lambda dtype: [("square", [make_torch((3, 3), dtype, 1)], {"fill_value": 5}),
                                        ("wide", [make_torch((2, 4), dtype, 2)], {"fill_value": -1}),
                                        ("tall wrap", [make_torch((7, 3), dtype, 3)], {"fill_value": 2, "wrap": True}),
                                        ("tall wrap strided", [make_torch((3, 7), dtype, 4).t()],
                                         {"fill_value": 2, "wrap": True}),
                                        ("cube", [make_torch((2, 2, 2), dtype, 5)], {"fill_value": 9})]),
    OpInfo("as_strided_scatter", lambda lib, a, s, **k: lib.as_strided_scatter(a, s, **k),
           sample_inputs=as_strided_scatter_samples, method="as_strided_scatter",
           exempt={"torch_grad": "torch 1.13's backward hands self uninitialised memory; current torch's (grad "
                                 "with the written region zeroed) is followed, and gradcheck checks it"}),
    OpInfo("new_empty_strided", lambda lib, a: a.new_empty_strided((2, 3), (1, 2)), compare="meta",
           supports_out=False, exempt={"forward": "empty memory holds whatever was there: shapes and dtypes only"}),
)


# ---------------------------------------------------------------- scatter_reduce, index_reduce
REDUCIBLE = tuple(d for d in ALL_DTYPES if d != "bool" and not d.startswith("complex"))


def scatter_reduce_samples(dtype):
    """Every reduction, with and without self's own elements; repeated indices (the
    reductions do not depend on the order of writes beyond rounding)."""
    a, src = make_torch((3, 4), dtype, 1), make_torch((2, 4), dtype, 2)
    index = _long([[2, 0, 2, 0], [2, 2, 0, 1]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            yield f"{reduce} include_self={include_self}", [a, index, src], \
                {"dim": 0, "reduce": reduce, "include_self": include_self}
    yield "dim1 strided", [a.t(), _long([[0, 2], [1, 1], [2, 0], [0, 0]]), make_torch((4, 2), dtype, 3)], \
        {"dim": 1, "reduce": "amin", "include_self": False}
    yield "0-dim", [make_torch((), dtype, 4), _long(0), make_torch((), dtype, 5)], {"dim": 0, "reduce": "prod"}


def index_reduce_samples(dtype):
    a = make_torch((3, 4), dtype, 1)
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            yield f"{reduce} include_self={include_self}", [a, _long([2, 0, 2]), make_torch((3, 4), dtype, 2)], \
                {"dim": 0, "reduce": reduce, "include_self": include_self}
    yield "dim1 strided", [a.t(), _long([2, 1, 2, 0]), make_torch((4, 4), dtype, 3).t()], {"dim": 1, "reduce": "mean"}


def _prod_with_zeros(lib, a, src):
    """prod's gradient where self or one or two sources of a slot are zero (the division
    by the element fails there, so the formula takes other paths)."""
    index = lib.tensor([[0, 1, 1], [0, 1, 2]])
    return lib.scatter_reduce(a, 0, index, src, "prod") * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])


register(
    OpInfo("scatter_reduce", lambda lib, a, i, s, dim, **k: lib.scatter_reduce(a, dim, i, s, **k),
           sample_inputs=scatter_reduce_samples, dtypes=REDUCIBLE,
           inplace=lambda lib, a, i, s, dim, **k: a.scatter_reduce_(dim, i, s, **k),
           grads=(GradSample(_prod_with_zeros, ([[0.0, 2.0, 3.0], [1.0, 0.0, 2.0], [5.0, 6.0, 7.0]],
                                                [[4.0, 0.0, 0.0], [3.0, 0.0, 5.0]]), label="prod with zeros"),)),
    OpInfo("scatter_reduce[method]", lambda lib, a, i, s, dim, **k: a.scatter_reduce(dim, i, s, **k),
           sample_inputs=scatter_reduce_samples, dtypes=("float32", "int64"), supports_out=False),
    OpInfo("index_reduce[method]", lambda lib, a, i, s, dim, **k: a.index_reduce(dim, i, s, **k),
           sample_inputs=index_reduce_samples, dtypes=("float32", "int64"), supports_out=False),
    OpInfo("scatter_reduce[bool, complex]", lambda lib, a, i, s, dim, **k: lib.scatter_reduce(a, dim, i, s, **k),
           supports_out=False, dtypes=("bool", "complex64", "complex128"),
           sample_inputs=lambda dtype: [(r, [make_torch((3, 4), dtype, 1), _long([[2, 0, 2, 0], [2, 2, 0, 1]]),
                                             make_torch((2, 4), dtype, 2)], {"dim": 0, "reduce": r})
                                        for r in (("sum", "prod", "amax", "amin") if dtype == "bool"
                                                  else ("sum", "prod", "mean"))]),
    OpInfo("index_reduce", lambda lib, a, i, s, dim, **k: lib.index_reduce(a, dim, i, s, **k),
           sample_inputs=index_reduce_samples, dtypes=REDUCIBLE,
           inplace=lambda lib, a, i, s, dim, **k: a.index_reduce_(dim, i, s, **k)),
)
