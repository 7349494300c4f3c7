"""OpInfo entries for the reductions: every layout of the registry (0-dim, empty, strided,
expanded) with no dim, one dim, negative dims, keepdim and dtype=."""
from opinfo import GradSample, OpInfo, register, resolve_dtype


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
    # torch.norm is a Python function over the same operators; tessera binds aten::norm.
    OpInfo("norm", lambda lib, a, *args, **k: lib.norm(a, *args, **k), arity=1,
           kwargs=({}, {"p": 1}, {"p": INF, "dim": 0}, {"p": 3, "dim": -1, "keepdim": True}), supports_out=False),
    OpInfo("norm[method]", lambda lib, a, **k: a.norm(**k), arity=1, kwargs=({}, {"p": 1, "dim": (0, -1)}),
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
