"""OpInfo entries for the reductions: every layout of the registry (0-dim, empty, strided,
expanded) with no dim, one dim, negative dims, keepdim and dtype=."""
import torch

from opinfo import FLOATING, GradSample, OpInfo, make_torch, register, resolve_dtype


def reduction(name, kwargs, **kw):
    """The function form with every kwargs sample (dtype= named by string, resolved per
    library), and the method form with the samples that need no dtype."""
    def call(lib, a, _n=name, **k):
        return getattr(lib, _n)(a, **resolve_dtype(lib, k))

    def method(lib, a, _n=name, **k):
        return getattr(a, _n)(**k)
    plain = tuple(k for k in kwargs if "dtype" not in k)
    return (OpInfo(name, call, arity=1, kwargs=kwargs, **kw),
            OpInfo(name + "[method]", method, arity=1, kwargs=plain, **dict(kw, supports_out=False)))


DIMS = ({}, {"dim": 0}, {"dim": -1, "keepdim": True})

register(*[info for pair in (
    reduction("sum", DIMS + ({"dim": (0, -1)}, {"dim": 0, "dtype": "float64"}, {"dtype": "int32"}), gradgrad=True),
    reduction("nansum", DIMS + ({"dim": (0, -1)},)),
    # zeros make prod's backward take its other path (the product of the others)
    reduction("prod", DIMS + ({"dtype": "float64"},), low=-2.0, high=2.0, grads=(
        GradSample(lambda L, a: a.prod(1) + a.prod(), ([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]],), label="zeros"),)),
    reduction("mean", DIMS + ({"dim": (0,), "keepdim": True}, {"dtype": "float64"}), gradgrad=True),
    reduction("amax", DIMS + ({"dim": (0, -1)},)),
    reduction("amin", DIMS + ({"dim": (0, -1)},)),
    reduction("any", DIMS),
    reduction("all", DIMS),
    reduction("count_nonzero", ({}, {"dim": 0}, {"dim": (0, -1)})),
    reduction("trace", ({},), supports_out=False),  # 2-D only: the other layouts check the error
) for info in pair])

register(*[info for pair in (
    reduction("argmax", ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True})),
    reduction("argmin", ({}, {"dim": 0}, {"dim": -1, "keepdim": True})),
    # max.dim's out= takes two tensors (values, indices): test_moments_scans.py checks it.
    reduction("max", ({}, {"dim": 0}, {"dim": -1, "keepdim": True}), supports_out=False),
    reduction("min", ({}, {"dim": 0}, {"dim": -1, "keepdim": True}), supports_out=False),
) for info in pair])

# max(self, other) / min(self, other): maximum / minimum under torch's older names.
register(OpInfo("max[other]", lambda lib, a, b, **k: lib.max(a, b, **k), arity=2),
         OpInfo("min[other]", lambda lib, a, b, **k: lib.min(a, b, **k), arity=2))

# Second moments: the unbiased= and correction= spellings (1.13 needs dim= beside correction=).
MOMENTS = DIMS + ({"dim": (0, -1), "correction": 0}, {"dim": 0, "correction": 2, "keepdim": True},
                  {"unbiased": False}, {"dim": None, "unbiased": True})
# A single element has no degrees of freedom: its variance is NaN, and so is current torch's
# gradient there (1.13 gives inf for var); gradients are sampled on two or more elements.
SEVERAL = dict(grad_filter=lambda tensors, kwargs: tensors[0].numel() > 1)
register(*[info for pair in (
    reduction("var", MOMENTS, gradgrad=True, **SEVERAL),
    reduction("std", MOMENTS, gradgrad=True, **SEVERAL),
    reduction("nanmean", DIMS + ({"dim": (0, -1)}, {"dtype": "float64"})),
    reduction("logsumexp", ({"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": (0, -1)})),
    # aminmax.out takes two tensors (min, max): test_moments_scans.py checks it.
    # (keepdim with a dim is tested in test_reductions.py: torch 1.13 gives a 0-dim input a
    # result of shape (1,) there, a bug current PyTorch no longer has.)
    reduction("aminmax", ({}, {"dim": 0}, {"dim": -1}, {"keepdim": True}), supports_out=False,
              exempt={"torch_grad": "torch 1.13's aminmax records a Node that is not implemented; tessera's "
                                    "aminmax is amin and amax, differentiated as those are"}),
) for info in pair])
# var_mean / std_mean: functions only in torch (no Tensor methods); out= takes two tensors.
register(OpInfo("var_mean", lambda lib, a, **k: lib.var_mean(a, **k), arity=1, kwargs=MOMENTS, supports_out=False,
                **SEVERAL),
         OpInfo("std_mean", lambda lib, a, **k: lib.std_mean(a, **k), arity=1, kwargs=MOMENTS, supports_out=False,
                **SEVERAL))


def _vector_norm(lib, a, **k):
    return lib.linalg.vector_norm(a, **resolve_dtype(lib, k))


INF = float("inf")
register(
    OpInfo("linalg.vector_norm", _vector_norm, arity=1,
           kwargs=({}, {"ord": 1}, {"ord": 0, "dim": 0}, {"ord": INF}, {"ord": -INF, "dim": -1, "keepdim": True},
                   {"ord": 3.5, "dim": (0, -1)}, {"ord": -1.5, "dim": 0}, {"ord": 2, "dtype": "complex128"},
                   {"dtype": "float64"})),
    # torch.norm is a Python function over aten::norm in both libraries: p a number, None,
    # 'fro' (at most two dims) or 'nuc' (tessera: NotImplementedError until linalg exists).
    OpInfo("norm", lambda lib, a, *args, **k: lib.norm(a, *args, **resolve_dtype(lib, k)), arity=1,
           kwargs=({}, {"p": 1}, {"p": INF, "dim": 0}, {"p": 3, "dim": -1, "keepdim": True}, {"dim": 0},
                   {"p": "fro", "dim": -1, "keepdim": True}, {"p": None, "dim": (0, -1)},
                   {"p": 2, "dim": -1, "dtype": "float64"}), supports_out=False),
    OpInfo("norm[method]", lambda lib, a, **k: a.norm(**k), arity=1,
           kwargs=({}, {"p": 1, "dim": (0, -1)}, {"dim": -1}, {"p": "fro", "dim": 0, "keepdim": True}),
           supports_out=False),
)

# renorm: the slices along dim whose p-norm passes maxnorm are scaled down to it (maxnorm is
# set below some slices' norms and above others'); dist: the p-norm of the difference.
register(
    OpInfo("renorm", lambda lib, a, **k: lib.renorm(a, **k), arity=1, method="renorm",
           dtype_tolerances={"bfloat16": (2e-2, 2e-2), "float16": (4e-3, 4e-3)},
           inplace=lambda lib, a, **k: a.renorm_(**k),
           kwargs=({"p": 2, "dim": 0, "maxnorm": 3.0}, {"p": 1, "dim": -1, "maxnorm": 2.5},
                   {"p": INF, "dim": 0, "maxnorm": 1.0}, {"p": 0.5, "dim": 0, "maxnorm": 4.0})),
    OpInfo("dist", lambda lib, a, b, **k: lib.dist(a, b, **k), arity=2, method="dist",
           kwargs=({}, {"p": 1}, {"p": INF}, {"p": 0}, {"p": 3})),
)


# ---------------------------------------------------------------- statistics and integration
def _m(shape, dtype, seed, low=-4.0, high=4.0):
    from opinfo import make_torch
    return make_torch(shape, dtype, seed, low, high)


def cov_samples(dtype):
    yield "rows", [_m((3, 5), dtype, 1)], {}
    yield "one variable, correction 0", [_m((6,), dtype, 2)], {"correction": 0}
    yield "weights", [_m((2, 4), dtype, 3), torch.tensor([1, 2, 0, 3]), _m((4,), "float64", 4, 0.1, 2.0).to(
        torch.float64 if dtype == "float64" else torch.float32)], {}


def _cov(lib, x, *weights, **k):
    if weights:
        return lib.cov(x, fweights=weights[0], aweights=weights[1], **k)
    return lib.cov(x, **k)


def quantile_samples(dtype):
    x = _m((3, 5), dtype, 1)
    for how in ("linear", "lower", "higher", "midpoint", "nearest"):
        yield f"scalar q {how}", [x], {"q": 0.35, "dim": 1, "interpolation": how}
    yield "tensor q keepdim", [x, torch.tensor([0.0, 0.5, 1.0], dtype=getattr(torch, dtype))], {"dim": 0,
                                                                                              "keepdim": True}
    yield "all elements", [x], {"q": 0.9}
    yield "all keepdim", [x], {"q": 0.25, "keepdim": True}


def _quantile(name):
    def call(lib, x, *q, **k):
        if q:
            return getattr(lib, name)(x, q[0], **k)
        return getattr(lib, name)(x, k.pop("q"), **k)
    return call


def nanquantile_samples(dtype):
    x = _m((3, 5), dtype, 1)
    x[0, 1] = float("nan")
    x[2] = float("nan")
    yield "rows with NaN", [x], {"q": 0.4, "dim": 1}
    yield "all elements", [x], {"q": 0.5}


def mode_samples(dtype):
    x = torch.tensor([[1, 3, 3, 2, 1, 3], [4, 4, 2, 2, 5, 0], [7, 7, 7, 7, 7, 7]]).to(getattr(torch, dtype))
    yield "rows", [x], {}
    yield "columns keepdim", [x], {"dim": 0, "keepdim": True}
    yield "0-dim", [torch.tensor(2.5).to(getattr(torch, dtype))], {"dim": 0}


def trapezoid_samples(dtype):
    y = _m((3, 4), dtype, 1)
    yield "dx", [y], {"dx": 0.5}
    yield "x 1-D dim 0", [y, torch.tensor([0.0, 0.5, 2.0], dtype=getattr(torch, dtype))], {"dim": 0}
    yield "x broadcast", [y, _m((1, 4), dtype, 2).cumsum(-1)], {}


def _trapezoid(name):
    def call(lib, y, *x, **k):
        return getattr(lib, name)(y, *x, **k)
    return call


FLOAT_DTYPES = ("float32", "float64")
register(
    OpInfo("cov", _cov, sample_inputs=cov_samples, supports_out=False, dtypes=FLOAT_DTYPES,
           rtol=1e-5, atol=1e-6),
    OpInfo("corrcoef", lambda lib, x: lib.corrcoef(x), method="corrcoef", supports_out=False, dtypes=FLOAT_DTYPES,
           sample_inputs=lambda dtype: [("rows", [_m((3, 6), dtype, 5)], {})], rtol=1e-5, atol=1e-6),
    OpInfo("quantile", _quantile("quantile"), sample_inputs=quantile_samples, dtypes=FLOAT_DTYPES,
           supports_out=False),
    OpInfo("nanquantile", _quantile("nanquantile"), sample_inputs=nanquantile_samples, dtypes=FLOAT_DTYPES,
           supports_out=False, grad_filter=lambda tensors, kwargs: False,
           exempt={"grad": "the NaN samples have no finite differences: quantile's gradient cases cover the formula"}),
    # (the samples' ties have no finite differences: nudging one tied value leaves the mode; the
    # gradient case has distinct values, so the mode is the smallest, with a one-hot gradient)
    OpInfo("mode", lambda lib, x, **k: lib.mode(x, **k), sample_inputs=mode_samples, method="mode",
           supports_out=False, dtypes=("int64", "float32", "float64"), grad_filter=lambda tensors, kwargs: False,
           exempt={"grad": "tied samples: finite differences cannot see a mode that stays put; see grads"},
           grads=(GradSample(lambda L, a: L.mode(a, 1).values, ([[0.5, -1.25, 2.0], [1.5, 0.75, 0.3]],),
                             label="distinct values"),)),
    OpInfo("trapezoid", _trapezoid("trapezoid"), sample_inputs=trapezoid_samples, dtypes=FLOAT_DTYPES,
           supports_out=False, rtol=1e-5, atol=1e-6),
    OpInfo("trapz", _trapezoid("trapz"), sample_inputs=trapezoid_samples, dtypes=FLOAT_DTYPES, supports_out=False,
           rtol=1e-5, atol=1e-6),
    OpInfo("cumulative_trapezoid", _trapezoid("cumulative_trapezoid"), sample_inputs=trapezoid_samples,
           dtypes=FLOAT_DTYPES, supports_out=False, rtol=1e-5, atol=1e-6),
)

register(
    OpInfo("norm_except_dim", lambda lib, v, **k: lib.norm_except_dim(v, **k), dtypes=FLOAT_DTYPES, supports_out=False,
           sample_inputs=lambda dtype: [("dim 0", [_m((3, 4), dtype, 1)], {}),
                                        ("pow 3 dim 1", [_m((2, 3, 2), dtype, 2)], {"pow": 3, "dim": 1}),
                                        ("whole", [_m((3, 2), dtype, 3)], {"dim": -1})]),
)


# ---------------------------------------------------------------- segment_reduce
# Runs along axis by lengths (int64 or int32) or offsets, every reduction, initial and
# unsafe; random data, so max and min have no ties (test_segment_reduce.py has ties, empty
# runs, zeros in products and the errors, against torch).
def _segment_reduce(lib, data, index, reduce, by="lengths", **k):
    return lib.segment_reduce(data, reduce, **{by: index}, **k)


def segment_reduce_samples(dtype):
    for reduce in ("sum", "mean", "max", "min", "prod"):
        yield f"{reduce} lengths", [make_torch((6, 2), dtype, 1), torch.tensor([2, 1, 3])], {"reduce": reduce}
        yield f"{reduce} axis 1", [make_torch((2, 5, 3), dtype, 2), torch.tensor([[2, 3], [1, 4]])], \
            {"reduce": reduce, "axis": 1}
        yield f"{reduce} axis -1 int32", [make_torch((3, 4), dtype, 3),
                                         torch.tensor([[1, 3], [2, 2], [3, 1]], dtype=torch.int32)], \
            {"reduce": reduce, "axis": -1}
        yield f"{reduce} offsets", [make_torch((7,), dtype, 4), torch.tensor([0, 3, 4, 7])], \
            {"reduce": reduce, "by": "offsets"}
        yield f"{reduce} initial", [make_torch((5, 2), dtype, 5), torch.tensor([2, 3])], \
            {"reduce": reduce, "initial": 1.5}
        yield f"{reduce} unsafe", [make_torch((6,), dtype, 6), torch.tensor([2, 4])], {"reduce": reduce, "unsafe": True}


def _segment_prod_with_zeros(lib, a):
    return lib.segment_reduce(a, "prod", lengths=lib.tensor([3, 2, 3]), initial=2.0) * lib.tensor([1.0, 2.0, 3.0])


register(
    OpInfo("segment_reduce", _segment_reduce, sample_inputs=segment_reduce_samples, dtypes=tuple(FLOATING),
           supports_out=False, no_grad_inputs=(1,), covers=("_segment_reduce_backward",),
           grads=(GradSample(_segment_prod_with_zeros, ([0.0, 2.0, 3.0, 0.0, 1.5, 0.0, 0.0, 4.0],), label="zeros"),)),
)
