"""Differential tests of every operator in the OpInfo registry against torch 1.13:
function, method, in-place and out= forms, every dtype, 0-dim / empty / broadcast /
non-contiguous inputs, and the meta backend's shapes and dtypes."""
import pytest
import torch

import tessera

import math
import os

import opinfo
from opinfo import (REGISTRY, REDUCED, assert_same, assert_same_shapes, outcome, same_outcome, to_tessera, to_torch,
                    torch_reference)

opinfo.load_all()


# TESSERA_QUICK=1 (the quick tier, scripts/test.sh --quick): one dtype per operator,
# float32 where it has one, instead of every dtype.
QUICK = os.environ.get("TESSERA_QUICK") == "1"


def _dtypes(info):
    if not QUICK:
        return info.dtypes
    return ["float32"] if "float32" in info.dtypes else list(info.dtypes)[:1]


CASES = [(info, dtype) for info in REGISTRY for dtype in _dtypes(info)]
# The device / layout axis: each entry on each backend it names (opinfo.BACKENDS).
FORWARD_CASES = [(info, dtype, backend) for info, dtype in CASES for backend in info.backends]


def _same(info, dtype, context):
    if info.compare == "meta":
        return lambda g, w: assert_same_shapes(g, w, context)
    return lambda g, w: assert_same(g, w, info, dtype, context)


@pytest.mark.parametrize("info,dtype,backend", FORWARD_CASES,
                         ids=[f"{i.name}-{d}" + ("" if b == "CPU" else f"-{b}") for i, d, b in FORWARD_CASES])
def test_forward(info, dtype, backend):
    target = opinfo.BACKENDS[backend]
    if not target.available():
        pytest.skip(f"{backend}: {target.reason}")
    for label, tensors, kwargs in info.samples(dtype):
        if not all(target.accepts(t) for t in tensors if isinstance(t, torch.Tensor)):
            continue  # (a CSR backend takes 2-D samples only)
        status, want = torch_reference(info, dtype, tensors, kwargs)
        ours = [target.convert(to_tessera(t)) for t in tensors]
        got_status, got = outcome(lambda: info.call(tessera, *ours, **kwargs))
        context = f"{info.name} {dtype} {label}"
        same = _same(info, dtype, context)
        if not same_outcome(status, want, got_status, got, context, same):
            continue
        if info.method:
            same(getattr(ours[0], info.method)(*ours[1:], **kwargs), want)


_inplace = opinfo._run_inplace


def _inplace_like_torch(info, dtype, context, tensors, kwargs, convert=lambda t: t):
    """torch's in-place op on a copy of tensors[0] and tessera's on `convert` of one: where
    torch refuses, tessera refuses with the same exception class or accepts (as in
    test_forward: more dtypes than torch 1.13 is fine) and None is returned; else tessera
    returns its target itself, and (torch's target, tessera's) come back."""
    want = tensors[0].clone()
    status, err = outcome(lambda: _inplace(info, torch, want, *tensors[1:], **kwargs))
    if status == "error" and dtype in REDUCED and info.reduced_via_float:
        return None  # torch 1.13 lacks the kernel; the functional test covers the values
    mine = convert(to_tessera(tensors[0].clone()))
    got_status, got = outcome(lambda: _inplace(info, tessera, mine, *[to_tessera(t) for t in tensors[1:]], **kwargs))
    if status == "error":
        if got_status == "error":
            assert type(got).__name__ == type(err).__name__, f"{context}: {got!r} vs {err!r}"
        return None
    assert got_status == "ok", f"{context}: tessera raised {got!r}"
    assert got is mine, f"{context}: in-place must return self"
    return want, mine


@pytest.mark.parametrize("info,dtype", [c for c in CASES if c[0].inplace], ids=lambda c: str(c))
def test_inplace(info, dtype):
    for label, tensors, kwargs in info.samples(dtype):
        if any(s == 0 for s in tensors[0].stride()) and tensors[0].numel() > 1:
            continue  # expanded targets: covered by test_inplace_overlap
        context = f"{info.name}_ {dtype} {label}"
        targets = _inplace_like_torch(info, dtype, context, tensors, kwargs)
        if targets is not None:
            _same(info, dtype, context)(targets[1], targets[0])


SPARSE_INPLACE = [(info, dtype, backend) for info, dtype in CASES if isinstance(info.inplace, str)
                  for backend in info.backends if backend != "CPU"]


@pytest.mark.parametrize("info,dtype,backend", SPARSE_INPLACE,
                         ids=[f"{i.name}_-{d}-{b}" for i, d, b in SPARSE_INPLACE])
def test_inplace_sparse(info, dtype, backend):
    """The in-place forms on the layout axis: the sparse tensor itself is updated (in its
    layout) and densifies to torch's dense in-place result; a refusal is torch's class."""
    target = opinfo.BACKENDS[backend]
    for label, tensors, kwargs in info.samples(dtype):
        if not all(target.accepts(t) for t in tensors):
            continue
        context = f"{info.name}_ {dtype} {backend} {label}"
        layout = target.convert(to_tessera(tensors[0])).layout
        targets = _inplace_like_torch(info, dtype, context, tensors, kwargs, target.convert)
        if targets is not None:
            assert targets[1].layout == layout, f"{context}: in place must keep the layout"
            _same(info, dtype, context)(targets[1], targets[0])


@pytest.mark.parametrize("info", [i for i in REGISTRY if isinstance(i.inplace, str) and getattr(i, "overlap_test", True)],
                         ids=lambda i: i.name)
def test_inplace_overlap(info):
    # (an op that writes nothing, conj_physical_ of a real tensor, refuses nothing in torch)
    t = torch.zeros(1, 3, dtype=torch.float64).expand(2, 3)
    kwargs = info.kwargs[0]
    want_status, want = opinfo.outcome(
        lambda: getattr(t, info.inplace)(*[torch.ones(2, 3, dtype=torch.float64)] * (info.arity - 1), **kwargs))
    mine = to_tessera(t)
    got_status, got = opinfo.outcome(lambda: getattr(mine, info.inplace)(
        *[to_tessera(torch.ones(2, 3, dtype=torch.float64))] * (info.arity - 1), **kwargs))
    assert got_status == want_status, f"torch {want!r}, tessera {got!r}"
    if want_status == "error":
        assert isinstance(got, RuntimeError) and isinstance(want, RuntimeError) and str(got) == str(want)


@pytest.mark.parametrize("info,dtype", [c for c in CASES if c[0].supports_out], ids=lambda c: str(c))
def test_out(info, dtype):
    for label, tensors, kwargs in list(info.samples(dtype))[:4]:
        status, want = torch_reference(info, dtype, tensors, kwargs)
        if status == "error":
            continue
        context = f"{info.name}(out=) {dtype} {label}"
        out = tessera.empty(0, dtype=opinfo.tessera_dtype(str(want.dtype).split(".")[1]))
        try:
            got = info.call(tessera, *[to_tessera(t) for t in tensors], out=out, **kwargs)
        except TypeError:
            # No out= overload takes these arguments (torch.mean(x, out=o) needs dim): torch
            # must refuse them too.
            with pytest.raises(TypeError):
                info.call(torch, *tensors, out=torch.empty(0, dtype=want.dtype), **kwargs)
            continue
        assert got is out, f"{context}: out= must return the out tensor"
        _same(info, dtype, context)(out, want)


META_CASES = [c for c in CASES if c[0].supports_meta]


@pytest.mark.parametrize("info,dtype", META_CASES, ids=[f"{i.name}-{d}" for i, d in META_CASES])
def test_meta(info, dtype):
    for label, tensors, kwargs in info.samples(dtype):
        status, want = torch_reference(info, dtype, tensors, kwargs)
        metas = [tessera.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=opinfo.tessera_dtype(
                     str(t.dtype).split(".")[1]), device="meta") for t in tensors]
        # a factory (no tensor input) is asked for its meta result by device=
        meta_kwargs = kwargs if tensors else dict(kwargs, device="meta")
        got_status, got = outcome(lambda: info.call(tessera, *metas, **meta_kwargs))
        context = f"{info.name} meta {dtype} {label}"
        if status == "error":
            continue  # dtype support is the CPU kernels' business, checked by test_forward
        if info.data_dependent:
            assert got_status == "error" and isinstance(got, NotImplementedError), f"{context}: {got!r}"
            continue
        assert got_status == "ok", f"{context}: meta raised {got!r}"
        wants = want if isinstance(want, (tuple, list)) else [want]
        gots = got if isinstance(got, (tuple, list)) else [got]
        for g, w in zip(gots, wants):
            if w is None:  # an output the call does not ask for (batch_norm_backward_reduce's flags)
                assert g is None, context
                continue
            assert g.is_meta, context
            assert tuple(g.shape) == tuple(w.shape), context
            assert str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1], context


def test_kernels_run_on_the_requested_isa():
    """ctest runs this file at the CPU's best ISA and again with TESSERA_CPU_CAPABILITY=default;
    the second run must really take the default kernels."""
    requested = os.environ.get("TESSERA_CPU_CAPABILITY", "").lower()
    assert tessera._C._cpu_capability() in ("default", "avx2")
    if requested == "default":
        assert tessera._C._cpu_capability() == "default"


# ---------------------------------------------------------------- sigmoid far below zero

SIGMOID_X = [-1e4, -900.0, -746.0, -744.0, -720.0, -710.0, -700.0, -300.0, -104.0, -103.0, -100.0, -95.0, -90.0,
             -89.0, -88.8, -88.7, -88.0, -87.0, -40.0, -20.0, -17.0, -16.0, -1.0, -0.0, 0.0, 3.0, 40.0, 1e4,
             -math.inf, math.inf, math.nan]


def sigmoid_exact(x):
    """sigmoid in double, written so that no step overflows (e^x for x < 0)."""
    if math.isnan(x):
        return x
    if x < 0:
        e = math.exp(x)
        return e / (1 + e)
    return 1 / (1 + math.exp(-x))


@pytest.mark.parametrize("dtype", opinfo.FLOATING)
@pytest.mark.parametrize("layout", ["contiguous", "stepped"])
def test_sigmoid_large_negative_inputs(dtype, layout):
    """1 / (1 + e^-x) overflows e^-x below about -88 in float (-709 in double); the kernels
    use e^x / (1 + e^x) there, on the vector lanes, the scalar tails and strided rows alike.
    Run by ctest at the CPU's best ISA and again with TESSERA_CPU_CAPABILITY=default."""
    # 99 values: full vectors, then a tail of 3 (8 float or 4 double lanes) that underflows
    xs = SIGMOID_X * 3 + [-100.0, -95.0, -90.0, -720.0, -744.0, -103.0]
    base = torch.tensor([v for x in xs for v in (x, 1.0)], dtype=torch.float64).to(opinfo.torch_dtype(dtype))
    x = base[::2] if layout == "stepped" else base[::2].contiguous()
    mine = to_tessera(x).sigmoid()
    got = to_torch(mine)
    context = f"sigmoid {dtype} {layout} on {tessera._C._cpu_capability()}"
    # against torch (torch 1.13 has no Half sigmoid: float32, rounded), at the usual tolerances
    want = torch.sigmoid(x.float()).to(x.dtype) if dtype == "float16" else torch.sigmoid(x)
    assert_same(mine, want, next(i for i in REGISTRY if i.name == "sigmoid"), dtype, context)
    # and against the exact value rounded to the dtype: a few ulps, and within two of the
    # smallest subnormal where the result is subnormal (torch itself flushes those to 0)
    exact = torch.tensor([sigmoid_exact(float(v)) for v in x.double()], dtype=torch.float64).to(x.dtype)
    info = torch.finfo(x.dtype)
    ulps = 8 if dtype in ("float32", "float64") else 1
    tiny = 2 * info.tiny * info.eps  # two of the smallest subnormals
    torch.testing.assert_close(got.double(), exact.double(), rtol=ulps * info.eps, atol=tiny, equal_nan=True,
                               msg=lambda m: f"{context}: {m}")
    assert bool(((got >= 0) & (got <= 1) | got.isnan()).all()), context


# ---------------------------------------------------------------- overlapping operands

OVERLAP_CASES = {
    # written and read share some memory: refused (results would depend on vector width
    # and on the split across threads)
    "add_": lambda lib, a: a.narrow(0, 1, 9).add_(a.narrow(0, 0, 9)),
    "copy_": lambda lib, a: a.narrow(0, 1, 9).copy_(a.narrow(0, 0, 9)),
    "copy_ strided": lambda lib, a: a.narrow(0, 0, 9).view(3, 3).copy_(a.narrow(0, 0, 9).view(3, 3).t()),
    "add out=": lambda lib, a: lib.add(a.narrow(0, 0, 9), 1, out=a.narrow(0, 1, 9)),
    "exp out=": lambda lib, a: lib.exp(a.narrow(0, 0, 9), out=a.narrow(0, 1, 9)),
    # the same elements, or none in common: fine
    "add_ self": lambda lib, a: a.add_(a),
    "add_ disjoint": lambda lib, a: a.narrow(0, 5, 5).add_(a.narrow(0, 0, 5)),
    "copy_ disjoint": lambda lib, a: a.narrow(0, 5, 5).copy_(a.narrow(0, 0, 5)),
}


@pytest.mark.parametrize("case", list(OVERLAP_CASES))
def test_partial_overlap_is_refused_like_torch(case):
    fn = OVERLAP_CASES[case]
    want_a, mine_a = torch.arange(10.0), tessera.arange(10.0)
    status, want = outcome(lambda: fn(torch, want_a))
    got_status, got = outcome(lambda: fn(tessera, mine_a))
    assert got_status == status, f"{case}: torch {want!r}, tessera {got!r}"
    if status == "error":
        assert type(got).__name__ == type(want).__name__ and str(got) == str(want), case
    assert to_torch(mine_a).tolist() == want_a.tolist(), case


# ---------------------------------------------------------------- integer wrap-around

WRAP_CASES = {
    "mul": lambda lib, a, b: lib.mul(a, b),
    "addcmul": lambda lib, a, b: lib.addcmul(a, a, b, value=3),
    "pow": lambda lib, a, b: lib.pow(a, 3),
    "square": lambda lib, a, b: lib.square(a),
    "neg": lambda lib, a, b: lib.neg(a),
    "sub": lambda lib, a, b: lib.sub(a, b),
}


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("case", list(WRAP_CASES))
def test_integer_overflow_wraps_like_torch(case, dtype):
    """Products far outside the dtype wrap as torch's do. Narrow types are computed in at
    least unsigned int: 16-bit operands promoted to int overflowed it (undefined behaviour,
    reported by UBSan in the sanitizer build's run of this file)."""
    a = torch.tensor([-3, -200, 300, 32767, -32768, 127, -128, 255], dtype=torch.int64)
    b = torch.tensor([-1, -300, -200, 32767, -32768, -128, 127, 255], dtype=torch.int64)
    a, b = a.to(opinfo.torch_dtype(dtype)), b.to(opinfo.torch_dtype(dtype))
    want = WRAP_CASES[case](torch, a, b)
    got = WRAP_CASES[case](tessera, to_tessera(a), to_tessera(b))
    assert to_torch(got).tolist() == want.tolist(), f"{case} {dtype}"


def test_isclose_complex_nans_with_equal_nan():
    # A complex value is NaN when either part is; equal_nan makes any two such values close.
    n = float("nan")
    a = [complex(n, 0), complex(0, n), complex(n, 1), complex(1, n), complex(1, 1)]
    b = [complex(n, 0), complex(n, 0), complex(n, 2), complex(n, n), complex(1, n)]
    for equal_nan in (False, True):
        want = torch.isclose(torch.tensor(a), torch.tensor(b), equal_nan=equal_nan).tolist()
        got = tessera.isclose(tessera.tensor(a), tessera.tensor(b), equal_nan=equal_nan).tolist()
        assert got == want, equal_nan


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "bool"])
def test_isclose_integers_by_value_with_tolerances(dtype):
    # Found by the differential fuzzer: integer isclose ignored rtol/atol. torch compares
    # integers in the default float dtype (so 2**40 and 2**40 + 3 are close), never wrapping.
    pairs = {"uint8": [(4, 5), (5, 4), (0, 255), (250, 5)], "int8": [(-128, 127), (3, 5), (-3, -1)],
             "int64": [(3, 5), (5, 3), (2**40, 2**40 + 3)], "bool": [(True, False), (False, True)]}[dtype]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    for rtol, atol in [(0.1, 0.5), (0.5, 0.0), (0.0, 1.0), (0.0, 2.0), (0.0, 0.0), (1e-5, 1e-8)]:
        want = torch.isclose(torch.tensor(a, dtype=getattr(torch, dtype)), torch.tensor(b, dtype=getattr(torch, dtype)),
                             rtol=rtol, atol=atol)
        got = tessera.isclose(tessera.tensor(a, dtype=getattr(tessera, dtype)),
                              tessera.tensor(b, dtype=getattr(tessera, dtype)), rtol=rtol, atol=atol)
        assert got.tolist() == want.tolist(), (rtol, atol)
        assert tessera.allclose(tessera.tensor(a[:1], dtype=getattr(tessera, dtype)),
                                tessera.tensor(b[:1], dtype=getattr(tessera, dtype)), rtol=rtol, atol=atol) == \
            torch.allclose(torch.tensor(a[:1], dtype=getattr(torch, dtype)),
                           torch.tensor(b[:1], dtype=getattr(torch, dtype)), rtol=rtol, atol=atol)


def test_cat_of_only_legacy_empties_takes_any_dim():
    # Found by the differential fuzzer: torch checks no dim when every input is a 1-D empty.
    for dim in (0, 1, 100, -7):
        for lib in (torch, tessera):
            out = lib.cat([lib.empty(0, dtype=lib.bool), lib.empty(0)], dim=dim)
            assert tuple(out.shape) == (0,) and str(out.dtype).endswith("float32")
