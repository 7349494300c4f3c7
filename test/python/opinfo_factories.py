"""OpInfo entries for the factories and the random ops (aten/native/factory/, random/):
the sizes, dtypes and values of the deterministic ones against torch's, and for random
draws and uninitialised memory the shapes and dtypes only (compare="meta"); their
distributions are tested in test_random.py, their argument errors in test_factories.py.
A factory has no tensor input: its samples carry the dtype as a string, which the call
resolves per library, and the meta test asks it for device="meta"."""
from opinfo import ALL_DTYPES, FLOATING, GradSample, M, OpInfo, make_torch, register, resolve_dtype

NUMERIC = [d for d in ALL_DTYPES if d != "bool"]
REAL = [d for d in NUMERIC if not d.startswith("complex")]
INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")


def factory(name, *args, dtypes=tuple(ALL_DTYPES), **kw):
    """name(*args, dtype=<the sample's dtype>): one sample per dtype, no tensor input."""
    def call(lib, _n=name, **k):
        # (with out=, dtype= is checked against out's: test_ops passes an out of torch's dtype)
        return getattr(lib, _n)(*args, **resolve_dtype(lib, k))

    def samples(dtype):
        yield f"{args}", [], {"dtype": dtype}
    return OpInfo(f"{name}{list(args)}", call, arity=0, dtypes=dtypes, sample_inputs=samples, **kw)


def like(name, *args, **kw):
    """name(tensor, *args): the _like factories and new_*, on every unary layout."""
    return OpInfo(name, lambda lib, a, _n=name, **k: getattr(lib, _n)(a, *args, **resolve_dtype(lib, k)),
                  supports_out=False, **kw)


def method(name, *args, **kw):
    return OpInfo(f"{name}[method]", lambda lib, a, _n=name, **k: getattr(a, _n)(*args, **resolve_dtype(lib, k)),
                  supports_out=False, **kw)


UNINITIALISED = "empty memory holds whatever was there: shapes and dtypes only"
RANDOM = "random draws differ between the two generators: shapes and dtypes only (test_random.py checks the laws)"

register(
    factory("zeros", 2, 3),
    factory("ones", 3),
    factory("full", (2, 2), 7),
    factory("eye", 3, 4),
    factory("eye", 3),
    factory("arange", 5, dtypes=tuple(NUMERIC)),
    factory("arange", 1, 9, 3, dtypes=tuple(NUMERIC)),
    factory("linspace", -2, 2, 5, dtypes=tuple(NUMERIC)),
    factory("logspace", 0, 2, 3, dtypes=tuple(d for d in NUMERIC if d != "bfloat16"), rtol=1e-5, atol=1e-5),
    factory("scalar_tensor", 3, supports_out=False),
    factory("triu_indices", 4, 3, 1, dtypes=INTEGRAL),
    factory("triu_indices", 3, 5, -1, dtypes=("int64",)),
    factory("tril_indices", 4, 3, -1, dtypes=INTEGRAL),
    factory("tril_indices", 2, 6, 3, dtypes=("int64",)),
    factory("empty", 2, 3, compare="meta", exempt={"forward": UNINITIALISED}),
    factory("empty_strided", (2, 3), (1, 2), compare="meta", supports_out=False, exempt={"forward": UNINITIALISED}),
    factory("rand", 2, 3, dtypes=tuple(FLOATING) + ("complex64", "complex128"), compare="meta",
            exempt={"forward": RANDOM}),
    factory("randn", 4, dtypes=tuple(FLOATING) + ("complex64", "complex128"), compare="meta",
            exempt={"forward": RANDOM}),
    factory("randint", 3, 10, (2, 2), dtypes=tuple(REAL), compare="meta", exempt={"forward": RANDOM}),
    factory("randperm", 6, dtypes=tuple(REAL), compare="meta", exempt={"forward": RANDOM}),
    like("zeros_like"),
    like("ones_like"),
    like("full_like", 2.5),
    like("empty_like", compare="meta", exempt={"forward": UNINITIALISED}),
    like("rand_like", dtypes=tuple(FLOATING), compare="meta", exempt={"forward": RANDOM}),
    like("randn_like", dtypes=tuple(FLOATING), compare="meta", exempt={"forward": RANDOM}),
    like("randint_like", 5, dtypes=tuple(REAL), compare="meta", exempt={"forward": RANDOM}),
    method("new_zeros", (2, 1)),
    method("new_ones", (3,)),
    method("new_full", (2,), 4),
    method("new_empty", (2, 2), compare="meta", exempt={"forward": UNINITIALISED}),
    # on a copy: the in-place fills overwrite a tensor that may be a leaf requiring grad
    OpInfo("zero_", lambda lib, a: a.clone().zero_(), supports_out=False),
    OpInfo("fill_", lambda lib, a: a.clone().fill_(3), supports_out=False),
    OpInfo("fill_[tensor]", lambda lib, a: a.clone().fill_(a.reshape(-1)[0] if a.numel() else 1), arity=1,
           supports_out=False),
)


def _bernoulli_p(lib, a, **k):
    return lib.bernoulli(a.abs() / (1 + a.abs()), **k)


def _random_fills(L, a):
    """Each random fill overwrites its copy (a zero grad); `a` itself is added once. Seeded
    inside, so gradcheck's repeated calls draw the same numbers."""
    L.manual_seed(0)
    fills = [a.mul(1).uniform_(), a.mul(1).normal_(), a.mul(1).bernoulli_(0.5), a.mul(1).bernoulli_(a.sigmoid()),
             L.bernoulli(a.sigmoid()), a.mul(1).random_(0, 5), a.mul(1).random_(5), a.mul(1).random_().mul(0.0),
             a.mul(1).exponential_(2.0), a.mul(1).geometric_(0.4), a.mul(1).log_normal_(0.0, 0.5),
             a.mul(1).cauchy_(0.0, 0.1)]
    out = a
    for f in fills:
        out = out + f
    return out


def _fills(name, *args):
    return lambda lib, a, _n=name: getattr(a.clone(), _n)(*args)


register(
    OpInfo("bernoulli", _bernoulli_p, dtypes=tuple(FLOATING), compare="meta", exempt={"forward": RANDOM}),
    OpInfo("bernoulli_", _fills("bernoulli_", 0.3), dtypes=tuple(FLOATING), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}),
    OpInfo("bernoulli_[tensor]", lambda lib, a: a.clone().bernoulli_(a.abs() / (1 + a.abs())), dtypes=tuple(FLOATING),
           compare="meta", supports_out=False, exempt={"forward": RANDOM}),
    OpInfo("normal_", _fills("normal_", 1.0, 2.0), dtypes=tuple(FLOATING), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}),
    OpInfo("uniform_", _fills("uniform_", -1.0, 3.0), dtypes=tuple(FLOATING), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}, grads=(GradSample(_random_fills, (M,), label="every fill"),)),
    OpInfo("random_", _fills("random_", 0, 5), dtypes=tuple(REAL), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}),
    OpInfo("exponential_", _fills("exponential_", 1.5), dtypes=tuple(FLOATING), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}),
    OpInfo("geometric_", _fills("geometric_", 0.3), dtypes=tuple(REAL), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}),
    OpInfo("log_normal_", _fills("log_normal_", 0.5, 0.25), dtypes=tuple(FLOATING), compare="meta",
           supports_out=False, exempt={"forward": RANDOM}),
    OpInfo("cauchy_", _fills("cauchy_", 1.0, 2.0), dtypes=tuple(FLOATING), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}),
    OpInfo("multinomial", lambda lib, a, **k: lib.multinomial(a.abs().reshape(-1, a.shape[-1]) + 0.1, 2, **k),
           dtypes=tuple(FLOATING), compare="meta", exempt={"forward": RANDOM}),
)


def _range(lib, **k):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in both libraries (test_more_ops.py checks the warning)
        return lib.range(1, 4, 0.5, **resolve_dtype(lib, k))


def _normals(lib, a, **k):
    """The three tensor-moment forms, seeded (shapes and dtypes compared; the laws are in
    test_random.py); their grads are zero, as torch's."""
    lib.manual_seed(0)
    return lib.normal(a, 0.5) + lib.normal(1.0, a.abs() + 0.1) + lib.normal(a, a.abs())


register(
    OpInfo("range", _range, arity=0, supports_out=False, dtypes=("float32", "float64", "int64"),
           sample_inputs=lambda dtype: [("1..4 by 0.5", [], {"dtype": dtype})]),
    OpInfo("normal", _normals, dtypes=("float32", "float64"), compare="meta", supports_out=False,
           exempt={"forward": RANDOM}),
    factory("normal", 0.5, 2.0, (2, 3), dtypes=("float32", "float64"), compare="meta", supports_out=False,
            exempt={"forward": RANDOM}),
    OpInfo("poisson", lambda lib, a: lib.poisson(a.abs()), dtypes=tuple(FLOATING), compare="meta",
           supports_out=False, exempt={"forward": RANDOM}),
    # (the binomial's laws: test_random.py)
    OpInfo("binomial", lambda lib, c, p: lib.binomial(c, p), dtypes=("float32", "float64"), compare="meta",
           supports_out=False, exempt={"forward": RANDOM},
           sample_inputs=lambda dtype: [("broadcast", [make_torch((3, 1), dtype, 1, 0.0, 20.0),
                                                       make_torch((4,), dtype, 2, 0.0, 1.0)], {})]),
)

# The gamma-family samplers: the draws' laws, edges and reparameterized derivative are in
# test_random.py; _standard_gamma_grad is deterministic and compared with torch's
# approximation of the same derivative, good to about 1e-3 (5e-3 in far tails; neither library
# differentiates it further).
register(
    OpInfo("_standard_gamma", lambda lib, a: lib._standard_gamma(a.abs() + 0.1), dtypes=("float32", "float64"),
           compare="meta", supports_out=False, exempt={"forward": RANDOM}),
    OpInfo("_sample_dirichlet", lambda lib, a: lib._sample_dirichlet(a.abs() + 0.1), dtypes=("float32", "float64"),
           compare="meta", supports_out=False, exempt={"forward": RANDOM}),
    OpInfo("_standard_gamma_grad", lambda lib, a, x: lib._standard_gamma_grad(a, x), dtypes=("float32", "float64"),
           supports_out=False, rtol=5e-3, atol=1e-6,
           sample_inputs=lambda dtype: [("broadcast", [make_torch((3, 1), dtype, 3, 0.2, 30.0),
                                                       make_torch((4,), dtype, 4, 0.05, 40.0)], {})]),
)
