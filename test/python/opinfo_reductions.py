"""OpInfo entries for the reductions: every layout of the registry (0-dim, empty, strided,
expanded) with no dim, one dim, negative dims, keepdim and dtype=."""
from opinfo import OpInfo, register


def reduction(name, kwargs, **kw):
    """The function form with every kwargs sample (dtype= named by string, resolved per
    library), and the method form with the samples that need no dtype."""
    def call(lib, a, _n=name, **k):
        if isinstance(k.get("dtype"), str):
            k = dict(k, dtype=getattr(lib, k["dtype"]))
        return getattr(lib, _n)(a, **k)

    def method(lib, a, _n=name, **k):
        return getattr(a, _n)(**k)
    plain = tuple(k for k in kwargs if "dtype" not in k)
    return (OpInfo(name, call, arity=1, kwargs=kwargs, **kw),
            OpInfo(name + "[method]", method, arity=1, kwargs=plain, **dict(kw, supports_out=False)))


DIMS = ({}, {"dim": 0}, {"dim": -1, "keepdim": True})

register(*[info for pair in (
    reduction("sum", DIMS + ({"dim": (0, -1)}, {"dim": 0, "dtype": "float64"}, {"dtype": "int32"})),
    reduction("nansum", DIMS + ({"dim": (0, -1)},)),
    reduction("prod", DIMS + ({"dtype": "float64"},), low=-2.0, high=2.0),
    reduction("mean", DIMS + ({"dim": (0,), "keepdim": True}, {"dtype": "float64"})),
    reduction("amax", DIMS + ({"dim": (0, -1)},)),
    reduction("amin", DIMS + ({"dim": (0, -1)},)),
    reduction("any", DIMS),
    reduction("all", DIMS),
    reduction("count_nonzero", ({}, {"dim": 0}, {"dim": (0, -1)})),
) for info in pair])

register(*[info for pair in (
    reduction("argmax", ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True})),
    reduction("argmin", ({}, {"dim": 0}, {"dim": -1, "keepdim": True})),
    # max.dim's out= takes two tensors (values, indices): not bound from Python yet.
    reduction("max", ({}, {"dim": 0}, {"dim": -1, "keepdim": True}), supports_out=False),
    reduction("min", ({}, {"dim": 0}, {"dim": -1, "keepdim": True}), supports_out=False),
) for info in pair])

# max(self, other) / min(self, other): maximum / minimum under torch's older names.
register(OpInfo("max[other]", lambda lib, a, b, **k: lib.max(a, b, **k), arity=2),
         OpInfo("min[other]", lambda lib, a, b, **k: lib.min(a, b, **k), arity=2))
