"""OpInfo entries for the scans and softmax: along the first and last dim, with dtype=
where the op takes one, on every layout of the registry."""
from opinfo import FLOATING, OpInfo, register, resolve_dtype


def along(name, kwargs, method=True, inplace=None, **kw):
    """Function form (dtype= named by string, resolved per library), and the method and
    in-place forms with the samples that need no dtype."""
    def call(lib, a, _n=name, **k):
        return getattr(lib, _n)(a, **resolve_dtype(lib, k))

    def as_method(lib, a, _n=name, **k):
        return getattr(a, _n)(**k)
    plain = tuple(k for k in kwargs if "dtype" not in k)
    infos = [OpInfo(name, call, arity=1, kwargs=kwargs, **kw)]
    if method:
        infos.append(OpInfo(name + "[method]", as_method, arity=1, kwargs=plain, inplace=inplace,
                            **dict(kw, supports_out=False)))
    return infos


DIMS = ({"dim": 0}, {"dim": -1})
register(
    *along("cumsum", DIMS + ({"dim": 0, "dtype": "float64"}, {"dim": -1, "dtype": "int32"}), inplace="cumsum_"),
    *along("cumprod", DIMS + ({"dim": 0, "dtype": "float64"},), inplace="cumprod_", low=-2.0, high=2.0),
    *along("logcumsumexp", DIMS),
    # cummax.out / cummin.out take two tensors (values, indices): test_moments_scans.py checks them.
    *along("cummax", DIMS, supports_out=False),
    *along("cummin", DIMS, supports_out=False),
    *along("softmax", DIMS + ({"dim": 0, "dtype": "float64"},), gradgrad=True),
    *along("log_softmax", DIMS + ({"dim": -1, "dtype": "float64"},), gradgrad=True),
    OpInfo("_softmax", lambda lib, a, **k: lib._softmax(a, k["dim"], False), arity=1, kwargs=DIMS, dtypes=tuple(FLOATING),
           supports_out=False),
    OpInfo("_log_softmax", lambda lib, a, **k: lib._log_softmax(a, k["dim"], False), arity=1, kwargs=DIMS,
           dtypes=tuple(FLOATING), supports_out=False),
)
