"""Pooling in tessera.nn.functional against torch.nn.functional: max (with indices,
ceil_mode, dilation), average (count_include_pad, divisor_override) and adaptive pooling,
1-D, 2-D and 3-D, batched or not; values over dtypes and layouts (non-contiguous,
channels-last), grads against torch's, gradcheck and gradgradcheck, meta shapes, and
torch's errors."""
import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

# (name, call(F, x, **kw), input shape, kwargs variants)
CASES = [
    ("max_pool2d", lambda F, x, **k: F.max_pool2d(x, **k), (2, 3, 9, 11),
     [dict(kernel_size=3), dict(kernel_size=(3, 2), stride=2, padding=1), dict(kernel_size=3, stride=2, ceil_mode=True),
      dict(kernel_size=2, dilation=2, padding=1), dict(kernel_size=(2, 4), stride=(1, 3), dilation=(2, 1), ceil_mode=True),
      dict(kernel_size=3, stride=2, padding=1, return_indices=True)]),
    ("max_pool2d_3d", lambda F, x, **k: F.max_pool2d(x, **k), (3, 7, 6), [dict(kernel_size=2), dict(kernel_size=3, return_indices=True)]),
    ("max_pool1d", lambda F, x, **k: F.max_pool1d(x, **k), (2, 3, 13),
     [dict(kernel_size=3), dict(kernel_size=4, stride=2, padding=2, ceil_mode=True), dict(kernel_size=2, dilation=3),
      dict(kernel_size=3, return_indices=True)]),
    ("max_pool1d_2d", lambda F, x, **k: F.max_pool1d(x, **k), (4, 10), [dict(kernel_size=3, stride=1)]),
    ("avg_pool2d", lambda F, x, **k: F.avg_pool2d(x, **k), (2, 3, 9, 11),
     [dict(kernel_size=3), dict(kernel_size=(3, 2), stride=2, padding=1),
      dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), dict(kernel_size=3, stride=2, ceil_mode=True),
      dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
      dict(kernel_size=2, divisor_override=3), dict(kernel_size=3, padding=1, divisor_override=5)]),
    ("avg_pool2d_3d", lambda F, x, **k: F.avg_pool2d(x, **k), (3, 7, 6), [dict(kernel_size=2)]),
    ("avg_pool1d", lambda F, x, **k: F.avg_pool1d(x, **k), (2, 3, 13),
     [dict(kernel_size=3), dict(kernel_size=4, stride=2, padding=2, ceil_mode=True, count_include_pad=False)]),
    ("adaptive_avg_pool2d", lambda F, x, **k: F.adaptive_avg_pool2d(x, **k), (2, 3, 9, 11),
     [dict(output_size=(4, 5)), dict(output_size=(3, 7)), dict(output_size=1), dict(output_size=(None, 2)),
      dict(output_size=(9, 11)), dict(output_size=(12, 13))]),
    ("adaptive_avg_pool1d", lambda F, x, **k: F.adaptive_avg_pool1d(x, **k), (2, 3, 13), [dict(output_size=5)]),
    ("adaptive_max_pool2d", lambda F, x, **k: F.adaptive_max_pool2d(x, **k), (2, 3, 9, 11),
     [dict(output_size=(4, 5)), dict(output_size=(3, 7), return_indices=True), dict(output_size=(None, 2))]),
    ("adaptive_max_pool1d", lambda F, x, **k: F.adaptive_max_pool1d(x, **k), (2, 3, 13),
     [dict(output_size=5), dict(output_size=4, return_indices=True)]),
    ("max_pool3d", lambda F, x, **k: F.max_pool3d(x, **k), (2, 2, 5, 7, 6),
     [dict(kernel_size=3), dict(kernel_size=(3, 2, 2), stride=2, padding=1), dict(kernel_size=2, stride=2, ceil_mode=True),
      dict(kernel_size=2, dilation=(2, 1, 2), padding=1), dict(kernel_size=3, stride=2, padding=1, return_indices=True)]),
    ("max_pool3d_4d", lambda F, x, **k: F.max_pool3d(x, **k), (3, 4, 5, 6), [dict(kernel_size=2, return_indices=True)]),
    ("avg_pool3d", lambda F, x, **k: F.avg_pool3d(x, **k), (2, 2, 5, 7, 6),
     [dict(kernel_size=3), dict(kernel_size=(3, 2, 2), stride=2, padding=1),
      dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
      dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
      dict(kernel_size=2, divisor_override=3)]),
    ("avg_pool3d_4d", lambda F, x, **k: F.avg_pool3d(x, **k), (3, 4, 5, 6), [dict(kernel_size=2)]),
    ("adaptive_avg_pool3d", lambda F, x, **k: F.adaptive_avg_pool3d(x, **k), (2, 2, 5, 7, 6),
     [dict(output_size=(3, 4, 5)), dict(output_size=1), dict(output_size=(None, 2, 4)), dict(output_size=(6, 9, 7))]),
    ("adaptive_max_pool3d", lambda F, x, **k: F.adaptive_max_pool3d(x, **k), (2, 2, 5, 7, 6),
     [dict(output_size=(3, 4, 5)), dict(output_size=(2, 3, 1), return_indices=True), dict(output_size=(None, 2, 4))]),
]
FLAT = [(n, c, s, kw) for n, c, s, kws in CASES for kw in kws]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, _, _, kw in FLAT]


def layouts(shape):
    base = make_torch(shape, "float64", seed=len(shape) * 7)
    out = [("contiguous", base)]
    if len(shape) == 4:
        out.append(("channels_last", base.contiguous(memory_format=torch.channels_last)))
    wide = make_torch(shape[:-1] + (shape[-1] * 2,), "float64", seed=3)
    out.append(("stepped", wide[..., ::2]))
    return out


def first(result):
    return result[0] if isinstance(result, tuple) else result


@pytest.mark.parametrize("name,call,shape,kw", FLAT, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_values_match_torch(name, call, shape, kw, dtype):
    for label, x in layouts(shape):
        x = x.to(getattr(torch, dtype))
        # (torch 1.13 has no reduced-precision 3-D pooling; current torch does: float, rounded)
        reduced = dtype in ("bfloat16", "float16") and not (dtype == "bfloat16" and "max" in name and "3d" not in name)
        want = call(TF, x.float() if reduced else x, **kw)
        got = call(tessera.nn.functional, to_tessera(x), **kw)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            if w.is_floating_point():
                w = w.to(getattr(torch, dtype))
            tol = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}.get(dtype, (1e-2, 1e-2))
            torch.testing.assert_close(to_torch(g), w, rtol=tol[0], atol=tol[1], msg=lambda m: f"{label}: {m}")
            if w.dim() == 4:  # a channels-last input keeps its layout
                assert g.is_contiguous(memory_format=tessera.channels_last) == \
                    w.is_contiguous(memory_format=torch.channels_last), label


@pytest.mark.parametrize("name,call,shape,kw", FLAT, ids=IDS)
def test_grads_match_torch(name, call, shape, kw):
    for label, x in layouts(shape):
        tx = x.clone().requires_grad_()
        sx = to_tessera(x).requires_grad_()
        want, got = first(call(TF, tx, **kw)), first(call(tessera.nn.functional, sx, **kw))
        w = make_torch(tuple(want.shape), "float64", seed=11)
        (want * w).sum().backward()
        (got * to_tessera(w)).sum().backward()
        torch.testing.assert_close(to_torch(sx.grad), tx.grad, rtol=1e-12, atol=1e-12, msg=lambda m: f"{label}: {m}")
        if x.dim() == 4:
            assert sx.grad.is_contiguous(memory_format=tessera.channels_last) == \
                tx.grad.is_contiguous(memory_format=torch.channels_last), label


@pytest.mark.parametrize("name,call,shape,kw", FLAT, ids=IDS)
def test_gradcheck_and_gradgradcheck(name, call, shape, kw):
    # small inputs: distinct values (no ties for the max pools)
    small = tuple(min(s, 5) for s in shape)
    if "adaptive" in name and kw.get("output_size") not in (1, 5, 4):
        kw = dict(kw, output_size={4: (3, 2), 5: (3, 2, 4)}.get(len(shape), kw["output_size"]))
    n = 1
    for s in small:
        n *= s
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(5)).double().reshape(small) / n
    if "max" in name:
        kw = {k: v for k, v in kw.items() if k not in ("kernel_size", "stride", "padding", "dilation")} | (
            dict(kernel_size=2) if "adaptive" not in name else {})
    elif "adaptive" not in name:
        kw = dict(kernel_size=2, **{k: v for k, v in kw.items() if k in ("count_include_pad", "divisor_override")})
    x = to_tessera(perm).requires_grad_()
    fn = lambda t: first(call(tessera.nn.functional, t, **kw))  # noqa: E731
    assert tessera.autograd.gradcheck(fn, (x,))
    assert tessera.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name,call,shape,kw", FLAT, ids=IDS)
def test_meta_shapes(name, call, shape, kw):
    want = call(TF, torch.zeros(shape), **kw)
    got = call(tessera.nn.functional, tessera.empty(shape, device="meta"), **kw)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.is_meta and tuple(g.shape) == tuple(w.shape) and str(g.dtype).split(".")[1] == str(w.dtype).split(".")[1]


def test_nan_wins_the_max_like_torch():
    x = torch.tensor([[[[1.0, float("nan"), 3.0, 2.0], [0.0, 5.0, -1.0, 4.0]]]])
    for fn in (lambda F, t: F.max_pool2d(t, 2, return_indices=True), lambda F, t: F.adaptive_max_pool2d(t, 1, True)):
        want, got = fn(TF, x), fn(tessera.nn.functional, to_tessera(x))
        torch.testing.assert_close(to_torch(got[0]), want[0], equal_nan=True)
        assert to_torch(got[1]).tolist() == want[1].tolist()


def test_grad_fn_names_like_torch():
    names = {}
    for lib, F in ((torch, TF), (tessera, tessera.nn.functional)):
        x = lib.zeros(1, 1, 4, 4, requires_grad=True)
        names[lib] = [F.max_pool2d(x, 2).grad_fn.name(), F.avg_pool2d(x, 2).grad_fn.name(),
                      F.adaptive_avg_pool2d(x, 2).grad_fn.name(), F.adaptive_max_pool2d(x, 2).grad_fn.name()]
        v = lib.zeros(1, 1, 4, 4, 4, requires_grad=True)
        names[lib] += [F.max_pool3d(v, 2).grad_fn.name(), F.avg_pool3d(v, 2).grad_fn.name(),
                       F.adaptive_avg_pool3d(v, 2).grad_fn.name(), F.adaptive_max_pool3d(v, 2).grad_fn.name(),
                       F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2).grad_fn.name(),
                       F.max_unpool3d(*F.max_pool3d(v, 2, return_indices=True), 2).grad_fn.name()]
    assert names[tessera] == names[torch]


ERRORS = [
    "F.max_pool2d(lib.zeros(1, 2, 5, 5), 0)",
    "F.max_pool2d(lib.zeros(1, 2, 5, 5), 3, dilation=0)",
    "F.max_pool2d(lib.zeros(1, 2, 5, 5), 3, padding=2)",
    "F.max_pool2d(lib.zeros(1, 2, 5, 5), 7)",
    "F.max_pool2d(lib.zeros(5, 5), 2)",
    "F.max_pool2d(lib.zeros(1, 2, 5, 5), (2, 2, 2))",
    "F.max_pool2d(lib.zeros(1, 2, 5, 5), 2, padding=-1)",
    "F.max_pool2d(lib.zeros(1, 0, 4, 4), 2)",
    "F.max_pool2d(lib.ones(1, 1, 4, 4, dtype=lib.int64), 2)",
    "F.avg_pool2d(lib.zeros(1, 2, 5, 5), 0)",
    "F.avg_pool2d(lib.zeros(1, 2, 5, 5), 3, padding=2)",
    "F.avg_pool2d(lib.zeros(1, 2, 5, 5), 7)",
    "F.avg_pool2d(lib.zeros(1, 2, 5, 5), 2, divisor_override=0)",
    "F.avg_pool2d(lib.zeros(5, 5), 2)",
    "F.adaptive_avg_pool2d(lib.zeros(5, 5), 2)",
    "F.adaptive_max_pool2d(lib.zeros(5, 5), 2)",
    "F.adaptive_avg_pool2d(lib.ones(1, 1, 4, 4, dtype=lib.int64), 2)",
    "F.max_pool1d(lib.zeros(5), 2)",
    "F.avg_pool1d(lib.zeros(2, 3, 5), 7)",
    "F.max_pool3d(lib.zeros(2, 3), 2)",
    "F.max_pool3d(lib.zeros(1, 2, 3, 4, 5), (2, 2))",
    "F.max_pool3d(lib.zeros(1, 2, 3, 4, 5), 2, padding=2)",
    "F.max_pool3d(lib.zeros(1, 2, 3, 4, 5), 4)",
    "F.max_pool3d(lib.zeros(1, 2, 3, 4, 5), 0)",
    "F.max_pool3d(lib.zeros(1, 2, 3, 4, 5), 2, dilation=0)",
    "F.max_pool3d(lib.zeros(1, 0, 3, 4, 5), 2)",
    "F.max_pool3d(lib.ones(1, 2, 3, 4, 5, dtype=lib.int32), 2)",
    "F.avg_pool3d(lib.zeros(2, 3), 2)",
    "F.avg_pool3d(lib.zeros(1, 2, 3, 4, 5), 4)",
    "F.avg_pool3d(lib.zeros(1, 2, 3, 4, 5), 2, divisor_override=0)",
    "F.avg_pool3d(lib.zeros(1, 2, 3, 4, 5), (2, 2))",
    "F.adaptive_avg_pool3d(lib.zeros(2, 3), 2)",
    "F.adaptive_max_pool3d(lib.zeros(2, 3), 2)",
    "F.adaptive_avg_pool3d(lib.zeros(1, 0, 2, 2), 2)",
    "F.adaptive_max_pool3d(lib.zeros(1, 0, 2, 2), 2)",
    "F.adaptive_avg_pool3d(lib.zeros(1, 2, 3, 4, 5), (2, 2))",
    "F.adaptive_avg_pool3d(lib.ones(1, 2, 3, 4, 5, dtype=lib.int64), 2)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_max_pool1d_without_grad_allows_an_empty_output():
    # torch's values-only max_pool1d returns [N, C, 0]; with a grad to record it refuses
    want = TF.max_pool1d(torch.zeros(2, 3, 5), 7)
    got = tessera.nn.functional.max_pool1d(tessera.zeros(2, 3, 5), 7)
    assert tuple(got.shape) == tuple(want.shape) == (2, 3, 0)
    for lib, F in ((torch, TF), (tessera, tessera.nn.functional)):
        with pytest.raises(RuntimeError, match="Output size is too small"):
            F.max_pool1d(lib.zeros(2, 3, 5, requires_grad=True), 7)


def test_empty_batch_and_empty_output():
    for fn in (lambda F, t: F.max_pool2d(t, 2), lambda F, t: F.avg_pool2d(t, 2), lambda F, t: F.adaptive_avg_pool2d(t, 3),
               lambda F, t: F.adaptive_max_pool2d(t, (0, 2))):
        for shape in ((0, 2, 4, 4), (1, 2, 4, 4)):
            want = fn(TF, torch.zeros(shape))
            got = fn(tessera.nn.functional, tessera.zeros(shape))
            assert tuple(got.shape) == tuple(want.shape)
    for fn in (lambda F, t: F.max_pool3d(t, 2), lambda F, t: F.avg_pool3d(t, 2), lambda F, t: F.adaptive_avg_pool3d(t, 3),
               lambda F, t: F.adaptive_max_pool3d(t, (0, 2, 1))):
        for shape in ((0, 2, 4, 4, 4), (1, 2, 4, 4, 4)):
            want = fn(TF, torch.zeros(shape))
            got = fn(tessera.nn.functional, tessera.zeros(shape))
            assert tuple(got.shape) == tuple(want.shape)
