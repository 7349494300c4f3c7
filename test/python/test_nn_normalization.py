"""Normalization in tessera.nn.functional against torch.nn.functional: layer_norm (its own
kernels; mean and rstd too), batch_norm (training with running statistics, eval),
instance_norm and group_norm; values over dtypes and layouts, grads against torch's,
gradcheck and gradgradcheck, meta shapes, and torch's errors."""
import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

F = tessera.nn.functional


def rand(shape, seed, low=-2.0, high=2.0):
    return make_torch(shape, "float64", seed, low, high)


def maybe(t):
    return None if t is None else to_tessera(t)


LAYER_CASES = [((4, 6, 5), (5,), True, True), ((4, 6, 5), (6, 5), True, False), ((3, 7), (7,), False, True),
               ((3, 7), (7,), False, False), ((2, 3, 40), (40,), True, True), ((5,), (5,), True, True)]


@pytest.mark.parametrize("shape,normalized,with_weight,with_bias", LAYER_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_layer_norm_values(shape, normalized, with_weight, with_bias, dtype, layout):
    x = rand(shape, 1) * 3 + 1
    if layout == "transposed" and len(shape) >= 2:
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
    w = rand(normalized, 2) if with_weight else None
    b = rand(normalized, 3) if with_bias else None
    cast = (lambda t: None if t is None else t.to(getattr(torch, dtype)))
    reduced = dtype in ("bfloat16", "float16")
    # torch 1.13 has no reduced-precision CPU layer norm: its float32 result, rounded
    ref = (lambda t: None if t is None else t.float()) if reduced else cast
    want = torch.ops.aten.native_layer_norm(ref(cast(x)), list(normalized), ref(cast(w)), ref(cast(b)), 1e-5)
    got = tessera.native_layer_norm(to_tessera(cast(x)), list(normalized), maybe(cast(w)), maybe(cast(b)), 1e-5)
    tol = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}.get(dtype, (2e-2, 2e-2))
    for g, wnt in zip(got, want):
        assert tuple(g.shape) == tuple(wnt.shape)
        torch.testing.assert_close(to_torch(g).double(), wnt.to(getattr(torch, dtype)).double(), rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("shape,normalized,with_weight,with_bias", LAYER_CASES)
def test_layer_norm_grads(shape, normalized, with_weight, with_bias):
    x, w, b = rand(shape, 1), rand(normalized, 2) if with_weight else None, rand(normalized, 3) if with_bias else None
    tx = x.clone().requires_grad_()
    tw, tb = (None if t is None else t.clone().requires_grad_() for t in (w, b))
    sx = to_tessera(x).requires_grad_()
    sw, sb = (None if t is None else to_tessera(t).requires_grad_() for t in (w, b))
    upstream = rand(shape, 4)
    (TF.layer_norm(tx, normalized, tw, tb) * upstream).sum().backward()
    (F.layer_norm(sx, normalized, sw, sb) * to_tessera(upstream)).sum().backward()
    for mine, theirs in ((sx, tx), (sw, tw), (sb, tb)):
        if theirs is not None:
            torch.testing.assert_close(to_torch(mine.grad), theirs.grad, rtol=1e-10, atol=1e-12)
    inputs = [t for t in (sx, sw, sb) if t is not None]

    def fn(*ts):
        it = iter(ts[1:])
        return F.layer_norm(ts[0], normalized, next(it) if with_weight else None, next(it) if with_bias else None)
    assert tessera.autograd.gradcheck(fn, inputs)
    assert tessera.autograd.gradgradcheck(fn, inputs)


def test_layer_norm_backward_kernel_matches_torch_with_masks():
    x, w, b, g = rand((3, 8), 1), rand((8,), 2), rand((8,), 3), rand((3, 8), 4)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [8], w, b, 1e-5)
    for mask in ([True, True, True], [True, False, False], [False, True, True], [False, False, True]):
        want = torch.ops.aten.native_layer_norm_backward(g, x, [8], mean, rstd, w, b, mask)
        got = tessera.ops.aten.native_layer_norm_backward(to_tessera(g), to_tessera(x), [8], to_tessera(mean),
                                                          to_tessera(rstd), to_tessera(w), to_tessera(b), mask)
        for m, gt, wt in zip(mask, got, want):
            assert (gt is not None and gt.defined() if hasattr(gt, "defined") else gt is not None) == m or not m
            if m:
                torch.testing.assert_close(to_torch(gt), wt, rtol=1e-10, atol=1e-12)


def _norm_call(name):
    return {
        "batch_norm_train": lambda lib, F_, x, rm, rv, w, b: F_.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3),
        "batch_norm_eval": lambda lib, F_, x, rm, rv, w, b: F_.batch_norm(x, rm, rv, w, b, training=False),
        "batch_norm_no_stats": lambda lib, F_, x, rm, rv, w, b: F_.batch_norm(x, None, None, w, b, training=True),
        "instance_norm": lambda lib, F_, x, rm, rv, w, b: F_.instance_norm(x, rm, rv, w, b, momentum=0.2),
        "instance_norm_no_stats": lambda lib, F_, x, rm, rv, w, b: F_.instance_norm(x, weight=w, bias=b),
        "instance_norm_eval": lambda lib, F_, x, rm, rv, w, b: F_.instance_norm(x, rm, rv, w, b, use_input_stats=False),
        "group_norm": lambda lib, F_, x, rm, rv, w, b: F_.group_norm(x, 2, w, b),
        "group_norm_one_group": lambda lib, F_, x, rm, rv, w, b: F_.group_norm(x, 1, None, None, eps=1e-3),
    }[name]


NORM_CASES = [(name, shape) for name in ["batch_norm_train", "batch_norm_eval", "batch_norm_no_stats", "instance_norm",
                                         "instance_norm_no_stats", "instance_norm_eval", "group_norm",
                                         "group_norm_one_group"]
              for shape in [(3, 4, 5), (2, 4, 3, 3), (5, 4)]
              if not (name.startswith("instance") and len(shape) == 2)]


@pytest.mark.parametrize("name,shape", NORM_CASES, ids=[f"{n}-{s}" for n, s in NORM_CASES])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_batch_group_instance_norm(name, shape, layout):
    if layout == "channels_last" and len(shape) != 4:
        pytest.skip("channels_last is a 4-D layout")
    x = rand(shape, 1) * 2 + 0.5
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    c = shape[1]
    rm, rv, w, b = rand((c,), 2), rand((c,), 3, 0.5, 2.0), rand((c,), 4), rand((c,), 5)
    call = _norm_call(name)
    t_in = [x.clone().requires_grad_(), rm.clone(), rv.clone(), w.clone().requires_grad_(), b.clone().requires_grad_()]
    s_in = [to_tessera(x).requires_grad_(), to_tessera(rm), to_tessera(rv), to_tessera(w).requires_grad_(),
            to_tessera(b).requires_grad_()]
    want = call(torch, TF, *t_in)
    got = call(tessera, F, *s_in)
    torch.testing.assert_close(to_torch(got), want, rtol=1e-10, atol=1e-10)
    if name.startswith(("batch_norm", "group_norm")):  # the fused kernels keep a channels-last layout, as torch's
        assert got.is_contiguous(memory_format=tessera.channels_last) == \
            want.is_contiguous(memory_format=torch.channels_last)
    # the running statistics moved the same way
    torch.testing.assert_close(to_torch(s_in[1]), t_in[1], rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(to_torch(s_in[2]), t_in[2], rtol=1e-10, atol=1e-12)
    upstream = rand(shape, 6)
    (want * upstream).sum().backward()
    (got * to_tessera(upstream)).sum().backward()
    for k in (0, 3, 4):
        if t_in[k].grad is None:
            assert s_in[k].grad is None
            continue
        torch.testing.assert_close(to_torch(s_in[k].grad), t_in[k].grad, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["batch_norm_train", "batch_norm_eval", "instance_norm_no_stats", "group_norm"])
def test_batch_group_instance_norm_gradcheck(name):
    x = to_tessera(rand((3, 4, 3), 1)).requires_grad_()
    w = to_tessera(rand((4,), 2)).requires_grad_()
    b = to_tessera(rand((4,), 3)).requires_grad_()
    rm, rv = to_tessera(rand((4,), 4)), to_tessera(rand((4,), 5, 0.5, 2.0))
    call = _norm_call(name)

    def fn(x, w, b):
        return call(tessera, F, x, rm.clone(), rv.clone(), w, b)
    assert tessera.autograd.gradcheck(fn, (x, w, b))
    assert tessera.autograd.gradgradcheck(fn, (x, w, b))


def test_meta_shapes():
    x = tessera.empty(2, 4, 3, device="meta")
    w = tessera.empty(4, device="meta")
    out, mean, rstd = tessera.native_layer_norm(tessera.empty(2, 4, 3, device="meta"), [4, 3], None, None, 1e-5)
    assert out.is_meta and tuple(mean.shape) == (2, 1, 1) and tuple(rstd.shape) == (2, 1, 1)
    for y in (F.layer_norm(x, [3]), F.batch_norm(x, None, None, w, w, training=True), F.group_norm(x, 2, w, w),
              F.instance_norm(x)):
        assert y.is_meta and tuple(y.shape) == (2, 4, 3)


def test_empty_inputs_like_torch():
    for fn in (lambda L, F_: F_.layer_norm(L.zeros(0, 4), [4]), lambda L, F_: F_.group_norm(L.zeros(0, 4, 3), 2)):
        want, got = fn(torch, TF), fn(tessera, F)
        assert tuple(got.shape) == tuple(want.shape)


ERRORS = [
    "F.layer_norm(lib.zeros(4, 5), (3,))",
    "F.layer_norm(lib.zeros(4, 5), ())",
    "F.layer_norm(lib.zeros(4, 5), (5,), weight=lib.ones(4))",
    "F.layer_norm(lib.zeros(4, 5), (5,), bias=lib.ones(4))",
    "F.layer_norm(lib.zeros(4, 5), (2, 5))",
    "F.batch_norm(lib.zeros(4, 3, 5), lib.zeros(4), lib.ones(3))",
    "F.batch_norm(lib.zeros(4, 3, 5), lib.zeros(3), lib.ones(4))",
    "F.batch_norm(lib.zeros(4, 3, 5), None, None)",
    "F.batch_norm(lib.zeros(1, 3), None, None, training=True)",
    "F.batch_norm(lib.zeros(4, 3, 5), None, None, weight=lib.ones(4), training=True)",
    "F.group_norm(lib.zeros(4, 3, 5), 2)",
    "F.group_norm(lib.zeros(4, 3, 5), 3, weight=lib.ones(2))",
    "F.instance_norm(lib.zeros(2, 3, 1))",
    "F.group_norm(lib.zeros(3), 1)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_batch_norm_empty_batch_leaves_running_statistics():
    for lib in (torch, tessera):
        rm, rv = lib.zeros(3) + 0.5, lib.ones(3) * 2
        out = lib.nn.functional.batch_norm(lib.ones(0, 3, 4), rm, rv, training=True)
        assert tuple(out.shape) == (0, 3, 4)
        assert rm.tolist() == [0.5, 0.5, 0.5] and rv.tolist() == [2.0, 2.0, 2.0], lib.__name__
