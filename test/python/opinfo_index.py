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
