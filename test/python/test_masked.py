"""tessera.masked against torch.masked (torch 1.13): every reduction and normalization on
random inputs under random masks (fully masked-out rows and columns, broadcast masks,
non-bool masks, no mask), with keepdim, dim=None/int/tuple and dtype=; the gradients
both libraries give (backward on both); gradcheck in float64; the output-mask helpers;
torch's errors; and MaskedTensor, which needs __torch_dispatch__ (issue 28) and says so."""
import itertools
import math
import zlib

import pytest
import torch
import torch.masked

import tessera
from opinfo import to_tessera, to_torch

INF = math.inf


# ---------------------------------------------------------------- inputs on both sides

def _gen(*key):
    return torch.Generator().manual_seed(zlib.crc32(repr(key).encode()))


def make_input(shape, dtype=torch.float32, key=()):
    g = _gen("x", shape, dtype, *key)
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 8 - 4).to(dtype)
    return torch.randint(-5, 6, shape, generator=g, dtype=dtype)


def make_mask(kind, shape, key=()):
    """torch mask of the given kind for an input of `shape` (None for "none")."""
    g = _gen("m", kind, shape, *key)
    if kind == "none":
        return None
    if kind == "random":
        return torch.rand(shape, generator=g) > 0.4
    if kind == "holes":  # a fully masked-out first row (index 0 of dim 0) and second column (last dim)
        m = torch.rand(shape, generator=g) > 0.3
        if len(shape):
            m[0] = False
            if len(shape) > 1:
                m[..., 1] = False
        return m
    if kind == "all_false":
        return torch.zeros(shape, dtype=torch.bool)
    if kind == "bcast_trailing":  # fewer dims than the input
        return torch.rand(shape[1:], generator=g) > 0.4
    if kind == "bcast_ones":  # the input's dims, size 1 in the last one
        return torch.rand(shape[:-1] + (1,), generator=g) > 0.4
    if kind == "int":  # a non-bool mask is read as bool
        return (torch.rand(shape, generator=g) > 0.4).to(torch.int64)
    raise AssertionError(kind)


MASK_KINDS = ["none", "random", "holes", "all_false", "bcast_trailing", "bcast_ones", "int"]


def tmask(m):
    return None if m is None else to_tessera(m)


def assert_same(got, want, rtol=None, atol=None):
    assert isinstance(got, tessera.Tensor), type(got)
    got_t = to_torch(got)
    assert tuple(got.shape) == tuple(want.shape), (tuple(got.shape), tuple(want.shape))
    torch.testing.assert_close(got_t, want, equal_nan=True, rtol=rtol, atol=atol)


def call(lib, name, x, mask, dim="absent", keepdim=None, **kw):
    """lib.masked.<name> with its own argument order (norm's ord before dim, var/std's
    unbiased after it)."""
    fn = getattr(lib.masked, name)
    args = []
    if name in ("norm", "normalize"):
        args.append(kw.pop("ord"))
    if dim != "absent":
        args.append(dim)
    if name in ("var", "std") and "unbiased" in kw:
        args.append(kw.pop("unbiased"))
    if keepdim is not None:
        kw["keepdim"] = keepdim
    return fn(x, *args, mask=mask, **kw)


def both(name, x, mask, *args, **kw):
    """(tessera result, torch result) of the same call on the same values."""
    want = call(torch, name, x, mask, *args, **dict(kw))
    got = call(tessera, name, to_tessera(x), tmask(mask), *args, **tessera_kwargs(kw))
    return got, want


def tessera_kwargs(kw):
    """kw with a torch dtype replaced by tessera's."""
    if isinstance(kw.get("dtype"), torch.dtype):
        return dict(kw, dtype=getattr(tessera, str(kw["dtype"]).split(".")[1]))
    return dict(kw)


# ---------------------------------------------------------------- the namespace

def test_masked_is_reachable_after_import_tessera():
    assert tessera.masked.__name__ == "tessera.masked"
    assert sorted(tessera.masked.__all__) == sorted(torch.masked.__all__)
    for name in ("sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean", "median",
                 "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax", "softmin", "normalize",
                 "is_masked_tensor", "masked_tensor", "as_masked_tensor", "MaskedTensor"):
        assert hasattr(torch.masked, name) and callable(getattr(tessera.masked, name)), name


@pytest.mark.parametrize("name", ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
                                  "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
                                  "softmin", "normalize"])
def test_signatures_match_torch(name):
    import inspect
    ours = inspect.signature(getattr(tessera.masked, name))
    theirs = inspect.signature(getattr(torch.masked, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.parameters.values()]
    assert getattr(tessera.masked, name).__doc__


# ---------------------------------------------------------------- reductions over dim(s)

REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std"]
DIMS_2D = [None, 0, 1, -1, (0, 1), (1, 0), ()]
DIMS_3D = [None, 1, (0, 2), (-1, 0), (0, 1, 2)]


def _reduction_cases():
    for name, (shape, dims), kind, keepdim in itertools.product(
            REDUCTIONS, [((4, 5), DIMS_2D), ((3, 4, 5), DIMS_3D)], MASK_KINDS, [False, True]):
        for dim in dims:
            yield name, shape, dim, kind, keepdim


def _extra(name):
    if name == "norm":
        return {"ord": 2.0}
    if name in ("var", "std"):
        return {"unbiased": True}
    return {}


@pytest.mark.parametrize("name,shape,dim,kind,keepdim", list(_reduction_cases()))
def test_reduction_matches_torch(name, shape, dim, kind, keepdim):
    x = make_input(shape, key=(name,))
    mask = make_mask(kind, shape)
    got, want = both(name, x, mask, dim, keepdim, **_extra(name))
    assert_same(got, want, **({"rtol": 1e-5, "atol": 1e-5} if name in ("var", "std", "prod") else {}))


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_default_dim_and_no_keepdim(name):
    x = make_input((3, 4), key=(name, "default"))
    mask = make_mask("holes", (3, 4))
    extra = _extra(name)
    want = getattr(torch.masked, name)(x, *extra.values(), mask=mask) if name == "norm" else \
        getattr(torch.masked, name)(x, mask=mask)
    got = getattr(tessera.masked, name)(to_tessera(x), *extra.values(), mask=to_tessera(mask)) if name == "norm" \
        else getattr(tessera.masked, name)(to_tessera(x), mask=to_tessera(mask))
    assert_same(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ord", [2.0, 1, 3.5, 0, INF, -INF, -1.5])
@pytest.mark.parametrize("kind", ["none", "random", "holes"])
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
def test_norm_orders(ord, kind, dim):
    x = make_input((4, 5), key=("norm", ord))
    mask = make_mask(kind, (4, 5))
    got, want = both("norm", x, mask, dim, True, ord=ord)
    assert_same(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("kind", ["none", "random", "holes", "bcast_ones"])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_var_std_unbiased(name, unbiased, kind, dim):
    x = make_input((4, 5), key=(name, unbiased))
    mask = make_mask(kind, (4, 5))
    got, want = both(name, x, mask, dim, False, unbiased=unbiased)
    assert_same(got, want, rtol=1e-5, atol=1e-5)


def test_var_of_single_elements_with_bessel_correction():
    x = make_input((3, 4))
    mask = torch.zeros(3, 4, dtype=torch.bool)
    mask[0, 0] = mask[1, 1] = mask[1, 2] = True  # one element, two elements, none
    for name, unbiased in itertools.product(["var", "std"], [False, True]):
        got, want = both(name, x, mask, 1, False, unbiased=unbiased)
        assert_same(got, want)


# ---------------------------------------------------------------- single-dim reductions

@pytest.mark.parametrize("name", ["argmax", "argmin", "median"])
@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_index_reductions_and_median(name, kind, dim, keepdim):
    x = make_input((5, 6), key=(name,))
    mask = make_mask(kind, (5, 6))
    got, want = both(name, x, mask, dim, keepdim)
    assert_same(got, want)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("kind", ["none", "random", "holes"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_argmin_over_the_flattened_input(name, kind, keepdim):
    x = make_input((3, 4, 5), key=(name, "flat"))
    mask = make_mask(kind, (3, 4, 5))
    got, want = both(name, x, mask, None, keepdim)
    assert_same(got, want)
    got, want = both(name, x, mask)  # dim left out
    assert_same(got, want)


def test_median_default_dim_is_last():
    x = make_input((4, 6))
    mask = make_mask("holes", (4, 6))
    assert_same(tessera.masked.median(to_tessera(x), mask=to_tessera(mask)), torch.masked.median(x, mask=mask))


def test_argmax_indices_take_the_inputs_dtype_or_dtype():
    # torch casts the indices to dtype, which defaults to input's dtype
    x = make_input((4, 5))
    mask = make_mask("random", (4, 5))
    got, want = both("argmax", x, mask, 1)
    assert want.dtype == torch.float32
    assert_same(got, want)
    got, want = both("argmin", x, mask, 1, dtype=torch.int64)
    assert_same(got, want)
    got, want = both("argmax", x, mask, 1, dtype=torch.int32)
    assert_same(got, want)


# ---------------------------------------------------------------- normalizations and scans

NORMALIZATIONS = ["cumsum", "cumprod", "softmax", "log_softmax", "softmin", "normalize"]


@pytest.mark.parametrize("name", NORMALIZATIONS)
@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("shape,dim", [((4, 5), 0), ((4, 5), 1), ((4, 5), -1), ((3, 4, 5), 1), ((3, 4, 5), -3)])
def test_normalization_matches_torch(name, kind, shape, dim):
    x = make_input(shape, key=(name,)) * (0.5 if name == "cumprod" else 1)
    mask = make_mask(kind, shape)
    extra = {"ord": 2.0} if name == "normalize" else {}
    got, want = both(name, x, mask, dim, **extra)
    assert_same(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ord", [1, 2.0, 3, INF, -INF])
@pytest.mark.parametrize("eps", [1e-12, 0.5])
def test_normalize_orders_and_eps(ord, eps):
    x = make_input((4, 5), key=("normalize", ord))
    mask = make_mask("holes", (4, 5))
    got, want = both("normalize", x, mask, 1, ord=ord, eps=eps)
    assert_same(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- logaddexp

@pytest.mark.parametrize("kinds", [("none", "none"), ("random", "none"), ("none", "holes"), ("holes", "random"),
                                   ("all_false", "all_false"), ("bcast_trailing", "bcast_ones")])
def test_logaddexp(kinds):
    a, b = make_input((4, 5), key=("a",)), make_input((4, 5), key=("b",))
    ma, mb = make_mask(kinds[0], (4, 5), key=("a",)), make_mask(kinds[1], (4, 5), key=("b",))
    want = torch.masked.logaddexp(a, b, input_mask=ma, other_mask=mb)
    got = tessera.masked.logaddexp(to_tessera(a), to_tessera(b), input_mask=tmask(ma), other_mask=tmask(mb))
    assert_same(got, want)
    want = torch.masked.logaddexp(a, b, dtype=torch.float64, input_mask=ma, other_mask=mb)
    got = tessera.masked.logaddexp(to_tessera(a), to_tessera(b), dtype=tessera.float64, input_mask=tmask(ma),
                                   other_mask=tmask(mb))
    assert_same(got, want)


# ---------------------------------------------------------------- dtypes

@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "mean", "argmax", "argmin", "median", "var", "std",
                                  "cumsum", "cumprod"])
@pytest.mark.parametrize("in_dtype", [torch.int32, torch.int64, torch.uint8, torch.int16, torch.float64])
def test_integral_and_double_inputs(name, in_dtype):
    shape = (4, 5)
    if in_dtype == torch.uint8:
        x = make_input(shape, torch.int64, key=(name,)).abs().to(torch.uint8)
    else:
        x = make_input(shape, in_dtype, key=(name,))
    if name in ("prod", "cumprod"):
        x = x.clamp(-2, 2) if in_dtype != torch.uint8 else x.clamp(0, 2)
    mask = make_mask("random", shape)
    mask[:, 0] = True  # every row keeps an element: an integral median refuses empty rows
    dim = 1
    try:
        want = call(torch, name, x, mask, dim)
    except Exception as e:  # noqa: BLE001 - the same refusal is expected
        with pytest.raises(type(e)):
            call(tessera, name, to_tessera(x), to_tessera(mask), dim)
        return
    got = call(tessera, name, to_tessera(x), to_tessera(mask), dim)
    assert_same(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,dtype", [
    ("sum", torch.float64), ("sum", torch.int32), ("prod", torch.float64), ("amax", torch.float64),
    ("amin", torch.int64), ("mean", torch.float64), ("logsumexp", torch.float64), ("norm", torch.float64),
    ("var", torch.float64), ("std", torch.float64), ("argmax", torch.int64), ("argmin", torch.int64),
    ("median", torch.float64)])
def test_reduction_dtype_kwarg(name, dtype):
    x = make_input((4, 5), key=(name, dtype))
    mask = make_mask("random", (4, 5))
    mask[:, 0] = True
    extra = _extra(name)
    want = call(torch, name, x, mask, 1, **dict(extra, dtype=dtype))
    got = call(tessera, name, to_tessera(x), to_tessera(mask), 1,
               **dict(extra, dtype=getattr(tessera, str(dtype).split(".")[1])))
    assert_same(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", NORMALIZATIONS)
def test_normalization_dtype_kwarg(name):
    x = make_input((4, 5), key=(name, "dtype")) * 0.5
    mask = make_mask("holes", (4, 5))
    extra = {"ord": 2.0} if name == "normalize" else {}
    want = call(torch, name, x, mask, 1, dtype=torch.float64, **extra)
    got = call(tessera, name, to_tessera(x), to_tessera(mask), 1, dtype=tessera.float64, **extra)
    assert_same(got, want, rtol=1e-5, atol=1e-5)


def test_integral_median_of_a_fully_masked_row_raises_like_torch():
    x = make_input((3, 4), torch.int64)
    mask = make_mask("holes", (3, 4))
    with pytest.raises(ValueError) as want:
        torch.masked.median(x, 1, mask=mask)
    with pytest.raises(ValueError) as got:
        tessera.masked.median(to_tessera(x), 1, mask=to_tessera(mask))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,in_dtype", [("amax", torch.int32), ("amin", torch.int16), ("amax", torch.uint8),
                                           ("amin", torch.uint8), ("argmax", torch.int64), ("sum", torch.int8),
                                           ("prod", torch.bool), ("sum", torch.bool)])
def test_identities_of_integral_dtypes_on_fully_masked_rows(name, in_dtype):
    x = make_input((3, 4), torch.int64).abs().to(in_dtype)
    mask = make_mask("holes", (3, 4))
    got, want = both(name, x, mask, 1)
    assert_same(got, want)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "cumsum"])
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_inputs(name, dtype):
    x = torch.complex(make_input((4, 5), torch.float64, key=("re",)), make_input((4, 5), torch.float64, key=("im",)))
    x = x.to(dtype)
    mask = make_mask("holes", (4, 5))
    for dim, kw in [(1, {}), (None, {}), (0, {"unbiased": True} if name in ("var", "std") else {})]:
        got, want = both(name, x, mask, dim, **kw) if name == "cumsum" else both(name, x, mask, dim, False, **kw)
        assert_same(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- zero-dim and one-dim inputs

@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "mean", "logsumexp", "norm", "var", "std", "argmax",
                                  "argmin"])
@pytest.mark.parametrize("m", [None, True, False])
def test_zero_dim_input(name, m):
    x = torch.tensor(1.5)
    mask = None if m is None else torch.tensor(m)
    extra = _extra(name) if name != "var" and name != "std" else {}
    got, want = both(name, x, mask, **extra)
    assert_same(got, want)
    got, want = both(name, x, mask, 0, True, **extra) if name not in ("argmax", "argmin") else both(name, x, mask, 0)
    assert_same(got, want)


@pytest.mark.parametrize("name", REDUCTIONS + ["argmax", "argmin", "median"])
def test_one_dim_input(name):
    x = make_input((7,), key=(name, "1d"))
    mask = make_mask("random", (7,))
    got, want = both(name, x, mask, 0, **_extra(name))
    assert_same(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", REDUCTIONS + NORMALIZATIONS + ["argmax", "median"])
def test_non_contiguous_input_and_mask(name):
    x = make_input((5, 4), key=(name, "t")).t()  # (4, 5), strides (1, 4)
    mask = make_mask("holes", (5, 4)).t()
    extra = {"ord": 2.0} if name in ("norm", "normalize") else {}
    got, want = both(name, x, mask, 1, **extra)
    assert_same(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- the mask helpers

@pytest.mark.parametrize("name", REDUCTIONS + ["argmax", "argmin", "median"])
@pytest.mark.parametrize("kind", ["random", "holes", "bcast_trailing", "bcast_ones", "int"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_output_mask_of_reductions(name, kind, keepdim):
    x = make_input((3, 4, 5))
    mask = make_mask(kind, (3, 4, 5))
    args = (2.0, (0, 2)) if name == "norm" else ((1,) if name in ("argmax", "argmin", "median") else ((0, 2),))
    want = torch.masked._output_mask(getattr(torch.masked, name), x, *args, mask=mask, keepdim=keepdim)
    got = tessera.masked._output_mask(getattr(tessera.masked, name), to_tessera(x), *args, mask=to_tessera(mask),
                                      keepdim=keepdim)
    assert_same(got, want)


@pytest.mark.parametrize("name", NORMALIZATIONS)
def test_output_mask_of_normalizations(name):
    x = make_input((3, 4))
    mask = make_mask("bcast_trailing", (3, 4))
    want = torch.masked._output_mask(getattr(torch.masked, name), x, 1, mask=mask)
    got = tessera.masked._output_mask(getattr(tessera.masked, name), to_tessera(x), 1, mask=to_tessera(mask))
    assert_same(got, want)


def test_input_mask_broadcasts_and_reads_bool():
    x = make_input((3, 4))
    for kind in ["random", "bcast_trailing", "bcast_ones", "int"]:
        mask = make_mask(kind, (3, 4))
        assert_same(tessera.masked._input_mask(to_tessera(x), mask=to_tessera(mask)),
                    torch.masked._input_mask(x, mask=mask))


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "argmax", "argmin", "logsumexp", "median", "mean",
                                  "var", "std", "norm", "cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.uint8])
def test_reduction_identity(name, dtype):
    x = torch.zeros((), dtype=dtype)
    try:
        want = torch.masked._reduction_identity(name, x)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            tessera.masked._reduction_identity(name, to_tessera(x))
        return
    got = tessera.masked._reduction_identity(name, to_tessera(x))
    if want is None:
        assert got is None
    else:
        assert_same(got, want)


def test_reduction_identity_of_norm_minus_inf():
    x = torch.zeros(())
    assert_same(tessera.masked._reduction_identity("norm", to_tessera(x), -INF),
                torch.masked._reduction_identity("norm", x, -INF))


@pytest.mark.parametrize("dim,ndim", [(None, 3), ((), 2), (1, 3), (-1, 3), ((2, 0), 3), ([1, -3], 3), (0, 0),
                                      (-1, 0)])
def test_canonical_dim(dim, ndim):
    assert tessera.masked._canonical_dim(dim, ndim) == torch.masked._canonical_dim(dim, ndim)


# ---------------------------------------------------------------- errors

def _raises_alike(fn_name, *args, **kwargs):
    """Both raise the same class with the same message (torch.Size printed as tessera.Size)."""
    def run(lib):
        conv = (lambda v: v) if lib is torch else (lambda v: to_tessera(v) if isinstance(v, torch.Tensor) else v)
        return getattr(lib.masked, fn_name)(*map(conv, args), **{k: conv(v) for k, v in kwargs.items()})
    with pytest.raises(Exception) as want:
        run(torch)
    with pytest.raises(Exception) as got:
        run(tessera)
    assert got.type.__name__ == want.type.__name__
    assert str(got.value) == str(want.value).replace("torch.Size", "tessera.Size")


def test_mask_with_more_dims_than_input():
    _raises_alike("sum", make_input((4,)), 0, mask=torch.ones(2, 4, dtype=torch.bool))
    _raises_alike("softmax", make_input((4,)), 0, mask=torch.ones(2, 4, dtype=torch.bool))


def test_mask_that_does_not_broadcast():
    _raises_alike("amax", make_input((3, 4)), 1, mask=torch.ones(3, dtype=torch.bool))


def test_dim_out_of_range_and_repeated():
    _raises_alike("sum", make_input((3, 4)), 2)
    _raises_alike("prod", make_input((3, 4)), (0, -3))
    _raises_alike("mean", make_input((3, 4)), (1, 1))
    _raises_alike("softmax", make_input((3, 4)), -3)


def test_output_mask_refuses_other_callables():
    with pytest.raises(ValueError) as want:
        torch.masked._output_mask(torch.add, torch.zeros(2), mask=torch.ones(2, dtype=torch.bool))
    with pytest.raises(ValueError):
        tessera.masked._output_mask(tessera.add, tessera.zeros(2), mask=tessera.ones(2, dtype=tessera.bool))
    assert "expected masked operation" in str(want.value)
    with pytest.raises(ValueError, match="_input_mask requires explicit mask"):
        tessera.masked._input_mask(tessera.zeros(2))


# ---------------------------------------------------------------- gradients against torch's

def _seed_for(out_torch, key):
    """A random grad_output, zero where the result is not finite (a fully masked-out slice
    of amax, mean, softmax...): both libraries then backpropagate the same finite seed."""
    g = torch.rand(out_torch.shape, generator=_gen("g", *key), dtype=torch.float64) + 0.5
    return torch.where(torch.isfinite(out_torch.detach()), g, torch.zeros_like(g))


def _grads(name, x, mask, args, kw, key):
    xt = x.clone().requires_grad_()
    out_t = call(torch, name, xt, mask, *args, **dict(kw))
    seed = _seed_for(out_t, key)
    out_t.backward(seed)
    xs = to_tessera(x).requires_grad_()
    out_s = call(tessera, name, xs, tmask(mask), *args, **dict(kw))
    out_s.backward(to_tessera(seed))
    return xs.grad, xt.grad


GRAD_CASES = (
    [(n, d, {}) for n in ["sum", "prod", "amax", "amin", "mean", "logsumexp"] for d in [(None, False), (1, True),
                                                                                        ((0, 2), False)]]
    + [("norm", d, {"ord": o}) for o in [2.0, 1, 3.5, INF] for d in [(None, False), (1, True)]]
    + [(n, d, {"unbiased": u}) for n in ["var", "std"] for u in [False, True] for d in [(None, False), (2, True)]]
    + [("median", (d, k), {}) for d in [0, -1] for k in [False, True]]
    + [(n, (d,), {}) for n in ["cumsum", "cumprod", "softmax", "log_softmax", "softmin"] for d in [0, 2]]
    + [("normalize", (d,), {"ord": o}) for d in [1, -1] for o in [2.0, 1]])


@pytest.mark.parametrize("name,args,kw", GRAD_CASES, ids=[f"{n}-{a}-{k}" for n, a, k in GRAD_CASES])
@pytest.mark.parametrize("kind", ["none", "random", "holes", "bcast_trailing"])
def test_gradient_matches_torch(name, args, kw, kind):
    shape = (3, 4, 5)
    x = make_input(shape, torch.float64, key=("grad", name)) * (0.5 if name in ("prod", "cumprod") else 1)
    mask = make_mask(kind, shape, key=("grad",))
    got, want = _grads(name, x, mask, args, kw, key=(name, args, kind))
    assert got is not None
    assert_same(got, want, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("kinds", [("random", "holes"), ("none", "holes"), ("all_false", "random")])
def test_logaddexp_gradients_match_torch(kinds):
    a, b = make_input((4, 5), torch.float64, key=("a",)), make_input((4, 5), torch.float64, key=("b",))
    ma, mb = make_mask(kinds[0], (4, 5), key=("a",)), make_mask(kinds[1], (4, 5), key=("b",))
    at, bt = a.clone().requires_grad_(), b.clone().requires_grad_()
    out_t = torch.masked.logaddexp(at, bt, input_mask=ma, other_mask=mb)
    seed = _seed_for(out_t, ("logaddexp",) + kinds)
    out_t.backward(seed)
    as_, bs = to_tessera(a).requires_grad_(), to_tessera(b).requires_grad_()
    out_s = tessera.masked.logaddexp(as_, bs, input_mask=tmask(ma), other_mask=tmask(mb))
    out_s.backward(to_tessera(seed))
    assert_same(as_.grad, at.grad)
    assert_same(bs.grad, bt.grad)


def test_masked_out_elements_get_zero_gradient():
    x = tessera.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=tessera.float64, requires_grad=True)
    mask = tessera.tensor([[True, False, True], [False, False, False]])
    for name in ["sum", "prod", "amax", "amin", "logsumexp", "norm", "softmax", "log_softmax", "softmin",
                 "cumsum", "cumprod"]:
        x.grad = None
        extra = {"ord": 2.0} if name == "norm" else {}
        out = call(tessera, name, x, mask, 1, **extra)
        out.masked_fill(~tessera.isfinite(out), 0).sum().backward()
        assert x.grad[0, 1].item() == 0 and x.grad[1].abs().sum().item() == 0, name
        assert math.isfinite(x.grad.sum().item()), name


# ---------------------------------------------------------------- gradcheck (float64)

def _gradcheck_case(name, args, kw, kind):
    shape = (2, 3, 4)
    x = make_input(shape, torch.float64, key=("gradcheck", name)) * (0.5 if name in ("prod", "cumprod") else 1)
    mask = make_mask(kind, shape, key=("gradcheck",))
    if name in ("var", "std") and mask is not None:
        # a fully masked-out slice's var is 0 / 0 and its elements' gradient NaN, in torch as
        # well (test_gradient_matches_torch compares those): keep two elements per slice here
        mask[:, :2, :] = True
    xs = to_tessera(x).requires_grad_()
    m = tmask(mask)
    probe = call(tessera, name, xs.detach(), m, *args, **dict(kw))
    finite = tessera.isfinite(probe)

    def fn(inp):
        # the result where it is finite: a fully masked-out slice's -inf / NaN stays out
        return call(tessera, name, inp, m, *args, **dict(kw)).masked_fill(~finite, 0)
    return fn, xs


GRADCHECK_CASES = (
    [(n, (1, False), {}) for n in ["sum", "prod", "amax", "amin", "mean", "logsumexp"]]
    + [(n, ((0, 2), True), {}) for n in ["sum", "prod", "mean", "logsumexp"]]
    + [("norm", (None, False), {"ord": o}) for o in [2.0, 3.5, 1]] + [("norm", (-1, True), {"ord": 2.0})]
    + [(n, (1, False), {"unbiased": u}) for n in ["var", "std"] for u in [False, True]]
    + [("median", (1, False), {})]
    + [(n, (2,), {}) for n in ["cumsum", "cumprod", "softmax", "log_softmax", "softmin"]]
    + [("normalize", (2,), {"ord": 2.0})])


@pytest.mark.parametrize("name,args,kw", GRADCHECK_CASES, ids=[f"{n}-{a}-{k}" for n, a, k in GRADCHECK_CASES])
@pytest.mark.parametrize("kind", ["none", "holes"])
def test_gradcheck(name, args, kw, kind):
    fn, xs = _gradcheck_case(name, args, kw, kind)
    assert tessera.autograd.gradcheck(fn, (xs,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_gradcheck_logaddexp():
    a = to_tessera(make_input((3, 4), torch.float64, key=("gc", "a"))).requires_grad_()
    b = to_tessera(make_input((3, 4), torch.float64, key=("gc", "b"))).requires_grad_()
    ma, mb = tmask(make_mask("random", (3, 4), key=("a",))), tmask(make_mask("random", (3, 4), key=("b",)))
    finite = tessera.isfinite(tessera.masked.logaddexp(a.detach(), b.detach(), input_mask=ma, other_mask=mb))
    assert tessera.autograd.gradcheck(
        lambda x, y: tessera.masked.logaddexp(x, y, input_mask=ma, other_mask=mb).masked_fill(~finite, 0), (a, b))


# ---------------------------------------------------------------- MaskedTensor

def test_is_masked_tensor_is_false_for_tessera_tensors():
    assert tessera.masked.is_masked_tensor(tessera.zeros(3)) is False
    assert tessera.masked.is_masked_tensor(tessera.nn.Parameter(tessera.zeros(3))) is False
    assert tessera.masked.is_masked_tensor([1, 2]) is False
    assert torch.masked.is_masked_tensor(torch.zeros(3)) is False


def test_masked_tensor_needs_torch_dispatch():
    data, mask = tessera.arange(6.0).reshape(2, 3), tessera.tensor([[True, False, True], [False, True, True]])
    for make in (lambda: tessera.masked.masked_tensor(data, mask),
                 lambda: tessera.masked.masked_tensor(data, mask, requires_grad=True),
                 lambda: tessera.masked.as_masked_tensor(data, mask),
                 lambda: tessera.masked.MaskedTensor(data, mask)):
        with pytest.raises(NotImplementedError, match="__torch_dispatch__.*issue 28"):
            make()
    assert issubclass(tessera.masked.MaskedTensor, tessera.Tensor)
