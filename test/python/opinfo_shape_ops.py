"""OpInfo entries for the shape and order ops (issue 5): joining (cat and the stacks),
rearranging (flip, roll, repeat, tile, tril, triu), ordering (sort, argsort, msort, topk,
kthvalue, median, nanmedian), searchsorted, unique and the counting ops.

Where torch leaves an order open (indices of equal values after a non-stable sort or a
selection, topk's order with sorted=False), the entries compare what is determined (the
values; stable sorts in full) and test_shape_ops.py checks that the indices point at those
values."""
from opinfo import ALL_DTYPES, FLOATING, OpInfo, register

NO_COMPLEX = [d for d in ALL_DTYPES if not d.startswith("complex")]
# torch 1.13 has no Half kernel for these and the tuple results cannot go through the
# "torch in float32, rounded" reference; test_shape_ops.py covers Half by hand.
TUPLE_DTYPES = [d for d in ALL_DTYPES if d != "float16"]


def both(name, call, method_call=None, **kw):
    """The function form, and the method form under name[method] (no out=)."""
    infos = [OpInfo(name, call, **kw)]
    if method_call is not None:
        infos.append(OpInfo(name + "[method]", method_call, **dict(kw, supports_out=False, inplace=None)))
    return infos


def dense(lib, a):
    """torch's input made contiguous (works around a torch 1.13 bug); tessera's as given."""
    import torch
    return a.contiguous() if lib is torch else a

register(
    # joining: two or three inputs of every layout pairing (mismatched ones raise in both)
    OpInfo("cat", lambda lib, a, b, **k: lib.cat([a, b], **k), arity=2, kwargs=({}, {"dim": -1}, {"dim": 1}),
           gradgrad=True),
    OpInfo("cat[3]", lambda lib, a, b, c, **k: lib.cat((a, b, c), **k), arity=3, kwargs=({}, {"dim": 1})),
    OpInfo("stack", lambda lib, a, b, **k: lib.stack([a, b], **k), arity=2, kwargs=({}, {"dim": -1}, {"dim": 1})),
    OpInfo("hstack", lambda lib, a, b, **k: lib.hstack([a, b], **k), arity=2),
    OpInfo("vstack", lambda lib, a, b, **k: lib.vstack([a, b], **k), arity=2),
    OpInfo("dstack", lambda lib, a, b, **k: lib.dstack([a, b], **k), arity=2),
    OpInfo("column_stack", lambda lib, a, b, **k: lib.column_stack([a, b], **k), arity=2),
)

register(
    *both("flip", lambda lib, a, **k: lib.flip(a, **k), lambda lib, a, **k: a.flip(**k),
          kwargs=({"dims": (0,)}, {"dims": (-1,)}, {"dims": (0, 1)}, {"dims": ()}), supports_out=False),
    *both("roll", lambda lib, a, **k: lib.roll(a, **k), lambda lib, a, **k: a.roll(**k),
          kwargs=({"shifts": 1}, {"shifts": -7}, {"shifts": 2, "dims": 0}, {"shifts": (1, -2), "dims": (0, 1)},
                  {"shifts": (3,), "dims": (-1,)}), supports_out=False),
    OpInfo("repeat[method]", lambda lib, a, reps: a.repeat(reps), supports_out=False,
           kwargs=({"reps": (2, 3)}, {"reps": (2, 1, 3)}, {"reps": (1, 0)}, {"reps": (2, 2, 1, 2)})),
    *both("tile", lambda lib, a, **k: lib.tile(a, **k), lambda lib, a, **k: a.tile(**k), supports_out=False,
          kwargs=({"dims": (2,)}, {"dims": (2, 3)}, {"dims": (1, 2, 2)}, {"dims": ()})),
    # tril_/triu_ are checked in test_shape_ops.py: torch does not refuse an expanded self,
    # which test_ops' in-place overlap check expects of every in-place op
    *both("tril", lambda lib, a, **k: lib.tril(a, **k), lambda lib, a, **k: a.tril(**k),
          kwargs=({}, {"diagonal": 1}, {"diagonal": -1}, {"diagonal": 10}, {"diagonal": -10})),
    *both("triu", lambda lib, a, **k: lib.triu(a, **k), lambda lib, a, **k: a.triu(**k),
          kwargs=({}, {"diagonal": 1}, {"diagonal": -1}, {"diagonal": 10}, {"diagonal": -10})),
)

register(
    # a stable sort is determined to the last index: compared in full
    *both("sort[stable]", lambda lib, a, **k: lib.sort(a, stable=True, **k),
          lambda lib, a, **k: a.sort(stable=True, **k), supports_out=False, dtypes=tuple(ALL_DTYPES),
          kwargs=({}, {"dim": 0}, {"descending": True}, {"dim": -1, "descending": True})),
    *both("sort", lambda lib, a, **k: lib.sort(a, **k).values, lambda lib, a, **k: a.sort(**k).values,
          supports_out=False, kwargs=({}, {"dim": 0}, {"descending": True})),
    *both("argsort[stable]", lambda lib, a, **k: lib.argsort(a, stable=True, **k),
          lambda lib, a, **k: a.argsort(stable=True, **k), supports_out=False,
          kwargs=({}, {"dim": 0}, {"descending": True})),
    *both("msort", lambda lib, a, **k: lib.msort(a, **k), lambda lib, a: a.msort()),
    *both("topk", lambda lib, a, **k: lib.topk(a, **k).values, lambda lib, a, **k: a.topk(**k).values,
          supports_out=False, kwargs=({"k": 1}, {"k": 2, "dim": 0}, {"k": 3, "largest": False}, {"k": 0})),
    # sorted=False leaves the order open: both sides sorted afterwards (by torch)
    OpInfo("topk[unsorted]", lambda lib, a, **k: lib.topk(a, sorted=False, **k).values.sort(-1).values,
           supports_out=False, kwargs=({"k": 2}, {"k": 2, "largest": False})),
    *both("kthvalue", lambda lib, a, **k: lib.kthvalue(a, **k).values, lambda lib, a, **k: a.kthvalue(**k).values,
          supports_out=False, kwargs=({"k": 1}, {"k": 2, "dim": 0}, {"k": 3, "keepdim": True})),
    *both("median", lambda lib, a: lib.median(a), lambda lib, a: a.median(), supports_out=False),
    # torch 1.13's median/nanmedian along a dim read an expanded (stride-0) input wrongly
    # (garbage values): torch is given the input made contiguous
    *both("median[dim]", lambda lib, a, **k: lib.median(dense(lib, a), **k).values,
          lambda lib, a, **k: dense(lib, a).median(**k).values,
          supports_out=False, kwargs=({"dim": 0}, {"dim": -1, "keepdim": True})),
    *both("nanmedian", lambda lib, a: lib.nanmedian(a), lambda lib, a: a.nanmedian(), supports_out=False),
    *both("nanmedian[dim]", lambda lib, a, **k: lib.nanmedian(dense(lib, a), **k).values,
          lambda lib, a, **k: dense(lib, a).nanmedian(**k).values, supports_out=False,
          kwargs=({"dim": 0}, {"dim": -1, "keepdim": True})),
    # searchsorted: the sequence sorted first (by each library's own sort)
    OpInfo("searchsorted", lambda lib, a, b, **k: lib.searchsorted(lib.sort(a, stable=True).values, b, **k), arity=2,
           kwargs=({}, {"right": True}, {"side": "right"}, {"out_int32": True})),
    OpInfo("searchsorted[sorter]",
           lambda lib, a, b, **k: lib.searchsorted(a, b, sorter=lib.argsort(a, stable=True), **k), arity=2,
           supports_out=False, kwargs=({}, {"right": True})),
)

register(
    # unique: sorted output with inverse and counts (sorted=False may come in any order:
    # both sides sorted by value afterwards is not enough for inverse, so only sorted=True)
    OpInfo("unique", lambda lib, a, **k: lib.unique(a, **k), dtypes=tuple(TUPLE_DTYPES), supports_out=False,
           data_dependent=True, covers=("_unique", "_unique2"), kwargs=({}, {"return_inverse": True}, {"return_counts": True},
                                        {"return_inverse": True, "return_counts": True})),
    OpInfo("unique[method]", lambda lib, a, **k: a.unique(**k), dtypes=tuple(TUPLE_DTYPES), supports_out=False,
           data_dependent=True, kwargs=({"return_inverse": True},)),
    OpInfo("unique[dim]", lambda lib, a, **k: lib.unique(a, **k), dtypes=tuple(TUPLE_DTYPES), supports_out=False,
           data_dependent=True, covers=("unique_dim",), kwargs=({"dim": 0, "return_inverse": True, "return_counts": True},
                                        {"dim": -1, "return_counts": True})),
    OpInfo("unique_consecutive", lambda lib, a, **k: lib.unique_consecutive(a, **k), dtypes=tuple(TUPLE_DTYPES),
           supports_out=False, data_dependent=True,
           kwargs=({}, {"return_inverse": True, "return_counts": True}, {"dim": 0, "return_counts": True})),
    OpInfo("bincount", lambda lib, a, **k: lib.bincount(a, **k), low=0.0, high=9.0, supports_out=False,
           data_dependent=True, kwargs=({}, {"minlength": 12})),
    *both("histc", lambda lib, a, **k: lib.histc(a, **k), lambda lib, a, **k: a.histc(**k), dtypes=tuple(FLOATING),
          kwargs=({}, {"bins": 7}, {"bins": 5, "min": -2, "max": 2}, {"bins": 3, "min": 1, "max": 1})),
)


def _histogram_weighted_samples(dtype):
    import torch
    from opinfo import make_torch
    a = make_torch((3, 4), dtype, 1)
    w = make_torch((3, 4), dtype, 2).abs()
    edges = torch.tensor([-4.0, -1.0, 0.0, 0.5, 3.0]).to(getattr(torch, dtype))
    yield "weight density", [a, w, edges], {"bins": 4, "range": (-2.0, 3.0), "density": True}
    yield "edges weight", [a, w, edges], {}
    yield "edges density strided", [a.t(), w.t(), edges[::2]], {"density": True}


def _histogram_weighted(lib, a, w, edges, **k):
    return tuple(lib.histogram(a, k.pop("bins", edges), weight=w, **k))


def _histogramdd_samples(dtype):
    import torch
    from opinfo import make_torch
    points = make_torch((6, 5, 2), dtype, 1)
    weight = make_torch((6, 5), dtype, 2).abs()
    edges = (torch.tensor([-4.0, 0.0, 4.0]).to(getattr(torch, dtype)),
             torch.tensor([-2.0, -1.0, 1.0, 2.0]).to(getattr(torch, dtype)))
    yield "one count", [points, weight, *edges], {"bins": 3}
    yield "counts range weight", [points, weight, *edges], {"bins": [2, 4], "range": [-3.0, 3.0, -1.0, 4.0],
                                                            "weighted": True}
    yield "edge tensors density", [points, weight, *edges], {"density": True}


def _histogramdd(lib, a, w, e0, e1, weighted=False, **k):
    bins = k.pop("bins", [e0, e1])
    hist, edges = lib.histogramdd(a, bins, weight=w if weighted else None, **k)
    return (hist,) + tuple(edges)


register(
    # (NaN is not counted: test_scatter_histogram.py checks it, as torch 1.13 counts it in a bin)
    *both("histogram", lambda lib, a, **k: tuple(lib.histogram(a, **k)), lambda lib, a, **k: tuple(a.histogram(**k)),
          dtypes=("float32", "float64"), supports_out=False,
          kwargs=({}, {"bins": 7}, {"bins": 5, "range": (-2.0, 2.0)}, {"bins": 3, "range": (1.0, 1.0)},
                  {"bins": 4, "density": True})),
    OpInfo("histogram[weight]", _histogram_weighted, supports_out=False,
           dtypes=("float32", "float64"), sample_inputs=_histogram_weighted_samples),
    OpInfo("histogramdd", _histogramdd, dtypes=("float32", "float64"), supports_out=False,
           sample_inputs=_histogramdd_samples,
           covers=("_histogramdd_bin_edges", "_histogramdd_from_bin_cts", "_histogramdd_from_bin_tensors")),
)

register(
    # repeats as a tensor: the output's length is their sum (data-dependent on meta)
    OpInfo("repeat_interleave", lambda lib, a, **k: lib.repeat_interleave(a, **k), supports_out=False,
           kwargs=({"repeats": 2}, {"repeats": 3, "dim": 0}, {"repeats": 1, "dim": -1})),
    OpInfo("repeat_interleave[tensor]", lambda lib, a: lib.repeat_interleave(a.reshape(-1)[:3].abs().to(lib.int64)),
           dtypes=("int64", "int32"), low=0.0, high=4.0, supports_out=False, data_dependent=True),
)


# ---------------------------------------------------------------- tensors built from lists and index patterns
def _vec(dtype, n, seed):
    from opinfo import make_torch
    return make_torch((n,), dtype, seed)


def combinations_samples(dtype):
    yield "r=2", [_vec(dtype, 4, 1)], {}
    yield "r=3 with replacement", [_vec(dtype, 3, 2)], {"r": 3, "with_replacement": True}
    yield "r=1", [_vec(dtype, 3, 3)], {"r": 1}
    yield "r > n", [_vec(dtype, 2, 4)], {"r": 3}
    yield "r=0", [_vec(dtype, 2, 5)], {"r": 0}


def _meshgrid(lib, a, b, **k):
    return lib.meshgrid(a, b.flatten(), **k)


register(
    OpInfo("combinations", lambda lib, a, **k: lib.combinations(a, **k), sample_inputs=combinations_samples,
           supports_out=False),
    OpInfo("concat", lambda lib, a, b, **k: lib.concat([a, b], **k), arity=2, kwargs=({}, {"dim": -1})),
    OpInfo("concatenate", lambda lib, a, b, **k: lib.concatenate([a, b], **k), arity=2, kwargs=({}, {"dim": 1})),
    OpInfo("block_diag", lambda lib, a, b, c: lib.block_diag(a, b, c), arity=3, supports_out=False),
    OpInfo("cartesian_prod", lambda lib, a, b: lib.cartesian_prod(a.flatten(), b.flatten()), arity=2,
           supports_out=False),
    OpInfo("meshgrid", lambda lib, a, b: _meshgrid(lib, a.flatten(), b, indexing="ij"), arity=2, supports_out=False),
    OpInfo("meshgrid[xy]", lambda lib, a, b: _meshgrid(lib, a.flatten(), b, indexing="xy"), arity=2,
           supports_out=False),
)

register(
    OpInfo("native_channel_shuffle", lambda lib, a: lib.native_channel_shuffle(a, 2), supports_out=False,
           exempt={"torch_grad": "torch 1.13 records a NotImplemented node; tessera's is channel_shuffle's gradient"},
           sample_inputs=lambda dtype: [("4 channels", [_vec(dtype, 16, 1).reshape(1, 4, 2, 2)], {})]),
    OpInfo("chain_matmul", lambda lib, a, b, c: lib.chain_matmul(a, b.t(), c), arity=3, supports_out=False,
           dtypes=("float32", "float64"),
           sample_inputs=lambda dtype: [("three", [_vec(dtype, 6, 1).reshape(2, 3), _vec(dtype, 12, 2).reshape(4, 3),
                                                   _vec(dtype, 8, 3).reshape(4, 2)], {})]),
)
