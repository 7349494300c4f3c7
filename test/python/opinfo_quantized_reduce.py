"""OpInfo entries for the reductions, order operators and indexing of quantized tensors
(aten/native/quantized/ReduceOps.cpp, Sorting.cpp, Indexing.cpp): aten's mean and std,
topk, sort, max and min (whole and along a dim), flip, index_select, advanced indexing,
unfold, fill_ and masked_fill_ on QuantizedCPU. Each call quantizes float32 samples, runs the
operator and ends in dense results (int_repr, dequantize, the qparams, the result's strides,
the indices), compared with torch 1.13's exactly. mean and std reach both of torch's paths:
the integer fast path (a contiguous input reduced over trailing dims) and the fallback,
which reduces the dequantized floats in torch's summation order (Note [Quantized mean and
std]); channels-last inputs, middle dims and every-dim reductions take the fallback. The
order operators' samples have no ties where torch leaves their order to its algorithm (topk,
the unstable sort; test_quantized_reduce.py checks ties). On meta inputs the same calls make
QuantizedMeta tensors. Nothing quantized is differentiable."""
import torch

from opinfo_quantized import NOT_DIFFERENTIABLE, _per_tensor
from opinfo import OpInfo, make_torch, register

QOP = dict(dtypes=("float32",), supports_out=False, exempt=NOT_DIFFERENTIABLE, rtol=0, atol=0)
QTYPES = (("quint8", 0.05, 100), ("qint8", 0.04, -3), ("qint32", 0.001, 12))


def _q(lib, x, scale, zero_point, dtype, layout=None):
    q = lib.quantize_per_tensor(x, scale, zero_point, getattr(lib, dtype))
    return q.contiguous(memory_format=getattr(lib, layout)) if layout else q


def _described(lib, r):
    return _per_tensor(lib, r) + (lib.tensor(list(r.stride()), device=r.device),)


def reduce_samples(dtype):
    for qtype, scale, zp in QTYPES:
        # rows of 14 (an 8-lane block and a tail) and channels-last images
        yield f"{qtype}", [make_torch((3, 5, 14), "float32", 1, -5.0, 5.0)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype}
        yield f"{qtype} channels_last", [make_torch((2, 11, 6, 7), "float32", 2, -5.0, 5.0)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype, "layout": "channels_last"}
    # 9000-element rows reach the cascade's upper levels; 40 channels its 32-column blocks
    yield "long rows", [make_torch((3, 9000), "float32", 3, -5.0, 5.0)], \
        {"scale": 0.03, "zero_point": 7, "dtype": "quint8"}
    yield "long rows qint8", [make_torch((2, 5001), "float32", 9, -5.0, 5.0)], \
        {"scale": 0.03, "zero_point": -7, "dtype": "qint8"}
    yield "wide channels_last", [make_torch((2, 40, 17, 13), "float32", 4, -5.0, 5.0)], \
        {"scale": 0.02, "zero_point": -9, "dtype": "qint8", "layout": "channels_last"}
    yield "qint32 full range", [make_torch((4, 33), "float32", 5, -2.0e9, 2.0e9)], \
        {"scale": 1.0, "zero_point": 0, "dtype": "qint32"}
    yield "transposed", [make_torch((9, 4), "float32", 6).t()], {"scale": 0.05, "zero_point": 3, "dtype": "qint8"}
    yield "0-dim", [make_torch((), "float32", 7)], {"scale": 0.05, "zero_point": 3, "dtype": "quint8"}
    yield "empty", [make_torch((2, 0, 3), "float32", 8)], {"scale": 0.05, "zero_point": 3, "dtype": "qint8"}


def _each(fn, strides=True):
    def call(lib, x, scale, zero_point, dtype, layout=None):
        q = _q(lib, x, scale, zero_point, dtype, layout)
        return tuple(t for r in fn(lib, q) for t in (_described(lib, r) if strides else _per_tensor(lib, r)))
    return call


def _dims(q, *candidates):
    """The candidate dims that exist on q (samples differ in rank)."""
    return [d for d in candidates if -max(q.dim(), 1) <= d < max(q.dim(), 1)]


def _means(lib, q):
    yield q.mean()
    if q.dim() >= 1:
        yield q.mean(-1)
        yield q.mean(_dims(q, 0))  # a leading dim: the fallback
        yield lib.mean(q, _dims(q, -1, -2), keepdim=True)
    if q.dim() == 4:
        yield q.mean([2, 3])  # a conv's channels-last output pooled (torchvision's shufflenet)
        yield q.mean([1, 2, 3], keepdim=True)
    if q.is_contiguous():
        yield q.mean(dtype=q.dtype)


def _stds(lib, q):
    yield q.std()
    yield q.std(unbiased=False)
    if q.dim() >= 1:
        yield q.std(-1)
        yield q.std(_dims(q, 0), unbiased=False)
        yield lib.std(q, _dims(q, -1, -2), correction=0, keepdim=True)
        yield lib.std(q, -1, correction=2)
    if q.dim() == 4:
        yield q.std([2, 3])


register(
    OpInfo("mean[quantized]", _each(_means), sample_inputs=reduce_samples, **QOP),
    OpInfo("std[quantized]", _each(_stds), sample_inputs=reduce_samples, **QOP),
)


# ---- order operators: the stored integers ordered

def order_samples(dtype):
    for i, (qtype, scale, zp) in enumerate(QTYPES):
        # distinct values (a permutation of a grid); test_quantized_reduce.py checks ties
        values = torch.randperm(4 * 37, generator=torch.Generator().manual_seed(11 + i)).reshape(4, 37)
        yield f"{qtype}", [(values.float() - 70) * scale], {"scale": scale, "zero_point": zp, "dtype": qtype}
    yield "channels_last", [torch.randperm(120, generator=torch.Generator().manual_seed(12)).reshape(2, 5, 3, 4)
                            .float() * 0.05], \
        {"scale": 0.05, "zero_point": 10, "dtype": "quint8", "layout": "channels_last"}
    yield "transposed", [(torch.randperm(30, generator=torch.Generator().manual_seed(13)).reshape(6, 5).float() - 15)
                         .t() * 0.1], {"scale": 0.1, "zero_point": 0, "dtype": "qint8"}
    # no 0-dim sample: torch 1.13's quantized topk of one crashes (test_quantized_reduce.py
    # checks tessera's against torch's dense topk)


def _values_indices(fn):
    def call(lib, x, scale, zero_point, dtype, layout=None):
        q = _q(lib, x, scale, zero_point, dtype, layout)
        out = []
        for r in fn(lib, q):
            values, indices = r if isinstance(r, tuple) else (r, None)
            out.extend(_described(lib, values))
            if indices is not None:
                out.append(indices)
        return tuple(out)
    return call


def _topks(lib, q):
    k = min(3, q.shape[-1]) if q.dim() else 1
    yield tuple(lib.topk(q, k))
    yield tuple(lib.topk(q, k, largest=False))
    if q.dim() >= 2:
        yield tuple(lib.topk(q, 2, 0, sorted=True))


def _sorts(lib, q):
    yield tuple(lib.sort(q))
    yield tuple(lib.sort(q, descending=True))
    yield tuple(lib.sort(q, 0, stable=True))
    yield tuple(lib.sort(q, -1, stable=False))


def _extrema(lib, q):
    yield q.max()
    yield q.min()
    if q.dim():
        yield tuple(lib.max(q, -1))
        yield tuple(lib.min(q, 0, keepdim=True))


register(
    OpInfo("topk[quantized]", _values_indices(_topks), sample_inputs=order_samples, **QOP),
    OpInfo("sort[quantized]", _values_indices(_sorts), sample_inputs=order_samples, **QOP),
    OpInfo("max[quantized]", _values_indices(_extrema), sample_inputs=order_samples,
           covers=("min",), **QOP),
)


# ---- indexing and filling

def index_samples(dtype):
    for qtype, scale, zp in QTYPES:
        yield f"{qtype}", [make_torch((4, 6, 5), "float32", 21)], {"scale": scale, "zero_point": zp, "dtype": qtype}
    yield "channels_last", [make_torch((2, 5, 3, 4), "float32", 22)], \
        {"scale": 0.05, "zero_point": 10, "dtype": "quint8", "layout": "channels_last"}


def _flips(lib, q):
    yield q.flip(0)
    yield lib.flip(q, [-1, 1])


def _selects(lib, q):
    idx = lib.tensor([2, 0, 2, 1], device=q.device)
    yield q.index_select(1, idx)
    yield lib.index_select(q, 0, idx[:2])


def _indexes(lib, q):
    idx = lib.tensor([1, 0, 1], device=q.device)
    yield q[idx]
    yield q[:, idx]
    if q.device.type == "cpu":  # a mask's result size depends on its values
        yield q[q.int_repr() > q.q_zero_point()]


def _unfolds(lib, q):
    yield q.unfold(-1, 2, 1)
    yield q.unfold(0, 2, 2)


def _fills(lib, q):
    keep = q.clone(memory_format=lib.preserve_format)  # a quantized clone() is contiguous, as torch's
    yield keep.fill_(0.37)
    yield q.clone().fill_(lib.tensor(-1.23))
    yield q.clone().fill_(1e6)  # clamped to the type's range
    yield q.clone().fill_(1e300)  # inf as a float: the type's minimum
    mask = (lib.arange(q.shape[-1], device=q.device) % 3) == 0
    yield q.clone(memory_format=lib.preserve_format).masked_fill_(mask, 0.125)
    yield q.masked_fill(mask, lib.tensor(-0.3))


register(
    OpInfo("flip[quantized]", _each(_flips), sample_inputs=index_samples, **QOP),
    OpInfo("index_select[quantized]", _each(_selects), sample_inputs=index_samples, **QOP),
    # values and qparams only: torch quantizes its float index's result, whose strides follow
    # TensorIterator's choice for the float gather (tessera's index result is contiguous)
    OpInfo("index[quantized]", _each(_indexes, strides=False), sample_inputs=index_samples,
           **QOP),
    OpInfo("unfold[quantized]", _each(_unfolds), sample_inputs=index_samples, **QOP),
    OpInfo("fill_[quantized]", _each(_fills), sample_inputs=index_samples,
           covers=("masked_fill_", "masked_fill"), **QOP),
)
