"""Convolution in tessera.nn.functional against torch.nn.functional: conv1d/2d/3d and
conv_transpose1d/2d with stride, padding (ints, 'same', 'valid'), dilation, groups and
bias, batched or not; unfold and fold. Values over dtypes (float32 and bfloat16 through
oneDNN, float64 through im2col + GEMM) and layouts (non-contiguous, channels-last), grads
against torch's, gradcheck and gradgradcheck, meta shapes, and torch's errors."""
import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

F = tessera.nn.functional

# (name, input shape, weight shape, bias, kwargs)
CASES = [
    ("conv2d", (2, 4, 9, 11), (6, 4, 3, 3), True, dict()),
    ("conv2d", (2, 4, 9, 11), (6, 4, 3, 3), False, dict(stride=2, padding=1)),
    ("conv2d", (2, 4, 9, 11), (6, 4, 3, 2), True, dict(stride=(2, 1), padding=(0, 2), dilation=(2, 1))),
    ("conv2d", (2, 4, 9, 11), (6, 2, 3, 3), True, dict(groups=2, padding=1)),
    ("conv2d", (2, 4, 9, 11), (8, 1, 3, 3), False, dict(groups=4, stride=2)),  # depthwise
    ("conv2d", (2, 4, 9, 11), (5, 4, 1, 1), True, dict()),
    ("conv2d", (2, 4, 9, 11), (6, 4, 3, 4), True, dict(padding="same", dilation=(1, 2))),
    ("conv2d", (2, 4, 9, 11), (6, 4, 2, 2), False, dict(padding="same")),  # odd total: padded on the right
    ("conv2d", (2, 4, 9, 11), (6, 4, 3, 3), True, dict(padding="valid")),
    ("conv2d", (4, 9, 11), (6, 4, 3, 3), True, dict(padding=1)),  # unbatched
    ("conv2d", (2, 32, 10, 10), (32, 32, 3, 3), True, dict(padding=1)),  # blocked oneDNN layout
    ("conv2d", (2, 64, 6, 6), (32, 32, 3, 3), False, dict(groups=2, padding=1)),  # grouped, blocked
    ("conv2d", (3, 4, 6, 7), (5, 4, 2, 3), True, dict(stride=3, padding=(1, 0))),  # stride past the end
    ("conv1d", (2, 4, 13), (6, 4, 3), True, dict()),
    ("conv1d", (2, 4, 13), (6, 2, 3), False, dict(stride=2, padding=2, dilation=2, groups=2)),
    ("conv1d", (2, 4, 13), (6, 4, 4), True, dict(padding="same")),
    ("conv1d", (4, 13), (6, 4, 3), True, dict()),
    ("conv3d", (2, 3, 5, 6, 7), (4, 3, 2, 3, 2), True, dict()),
    ("conv3d", (2, 3, 5, 6, 7), (4, 3, 3, 3, 3), False, dict(stride=(1, 2, 1), padding=1)),
    ("conv3d", (2, 3, 5, 6, 7), (4, 3, 3, 2, 3), True, dict(padding="same")),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), True, dict()),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), False, dict(stride=2, padding=1, output_padding=1)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), True, dict(groups=2, stride=(1, 2))),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 2, 2, 3), True, dict(stride=3, dilation=2, output_padding=2)),
    ("conv_transpose2d", (4, 5, 6), (4, 2, 3, 3), True, dict(padding=1)),
    # output_padding beyond the stride: oneDNN refuses it, the GEMM path takes float32 and bfloat16
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), True, dict(dilation=2, output_padding=1)),
    ("conv_transpose1d", (2, 4, 7), (4, 2, 3), True, dict(stride=3, padding=1, output_padding=2)),
    ("conv_transpose1d", (2, 4, 7), (4, 3, 3), False, dict(groups=2, dilation=2)),
]
IDS = [f"{n}-{len(x)}d-{w}-{'b' if b else 'nob'}-{'-'.join(f'{k}={v}' for k, v in kw.items())}"
       for n, x, w, b, kw in CASES]


def _call(lib_f, name, x, w, b, kw):
    return getattr(lib_f, name)(x, w, b, **kw)


def _bias_channels(name, w_shape, kw):
    return w_shape[1] * kw.get("groups", 1) if "transpose" in name else w_shape[0]


def _make(name, x_shape, w_shape, bias, kw, dtype):
    x = make_torch(x_shape, "float64", 1, -1, 1).to(dtype)
    w = make_torch(w_shape, "float64", 2, -1, 1).to(dtype)
    b = make_torch((_bias_channels(name, w_shape, kw),), "float64", 3, -1, 1).to(dtype) if bias else None
    return x, w, b


def _tessera(t):
    return None if t is None else to_tessera(t)


@pytest.mark.parametrize("name,x_shape,w_shape,bias,kw", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_values(name, x_shape, w_shape, bias, kw, dtype):
    x, w, b = _make(name, x_shape, w_shape, bias, kw, getattr(torch, dtype))
    reduced = dtype == "bfloat16"
    # bfloat16: against torch's float32 result of the same (rounded) operands
    up = (lambda t: None if t is None else t.float()) if reduced else (lambda t: t)
    want = _call(TF, name, up(x), up(w), up(b), kw)
    got = _call(F, name, to_tessera(x), to_tessera(w), _tessera(b), kw)
    assert str(got.dtype) == f"tessera.{dtype}"
    tol = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12), "bfloat16": (2e-2, 5e-2)}[dtype]
    torch.testing.assert_close(to_torch(got).to(want.dtype), want, rtol=tol[0], atol=tol[1])
    if dtype == "float32":  # oneDNN's backward passes (float64 goes through GEMM: below)
        upstream = make_torch(tuple(want.shape), "float32", 4)
        tensors = [t for t in (x, w, b) if t is not None]
        want_grads = torch.autograd.grad(_call(TF, name, *[t.requires_grad_() for t in tensors] + [None] * (3 - len(tensors)), kw),
                                         tensors, upstream)
        mine = [to_tessera(t.detach()).requires_grad_() for t in tensors]
        got_grads = tessera.autograd.grad(_call(F, name, *mine + [None] * (3 - len(mine)), kw), mine,
                                          to_tessera(upstream))
        for g, want_g in zip(got_grads, want_grads):
            torch.testing.assert_close(to_torch(g), want_g, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,x_shape,w_shape,bias,kw", CASES, ids=IDS)
def test_grads_gradcheck_and_meta(name, x_shape, w_shape, bias, kw):
    x, w, b = _make(name, x_shape, w_shape, bias, kw, torch.float64)
    tx, tw = x.clone().requires_grad_(), w.clone().requires_grad_()
    tb = None if b is None else b.clone().requires_grad_()
    want = _call(TF, name, tx, tw, tb, kw)
    upstream = make_torch(tuple(want.shape), "float64", 4)
    (want * upstream).sum().backward()
    sx, sw = to_tessera(x).requires_grad_(), to_tessera(w).requires_grad_()
    sb = None if b is None else to_tessera(b).requires_grad_()
    got = _call(F, name, sx, sw, sb, kw)
    (got * to_tessera(upstream)).sum().backward()
    torch.testing.assert_close(to_torch(got), want.detach(), rtol=1e-12, atol=1e-12)
    for s, t in ((sx, tx), (sw, tw), (sb, tb)):
        if t is not None:
            torch.testing.assert_close(to_torch(s.grad), t.grad, rtol=1e-11, atol=1e-11)
    inputs = tuple(t for t in (sx.detach(), sw.detach(), None if sb is None else sb.detach()) if t is not None)
    inputs = tuple(t.requires_grad_() for t in inputs)

    def fn(*ts):
        return _call(F, name, ts[0], ts[1], ts[2] if len(ts) > 2 else None, kw)
    if sum(t.numel() for t in inputs) < 2000:  # finite differences cost one call per element
        assert tessera.autograd.gradcheck(fn, inputs)
        assert tessera.autograd.gradgradcheck(fn, inputs)
    meta = _call(F, name, tessera.empty(x_shape, device="meta"), tessera.empty(w_shape, device="meta"),
                 None if b is None else tessera.empty(tuple(b.shape), device="meta"), kw)
    assert meta.is_meta and tuple(meta.shape) == tuple(want.shape)


LAYOUT_CASES = [("conv2d", (2, 4, 9, 11), (6, 4, 3, 3), True, dict(padding=1)),
                ("conv2d", (2, 32, 10, 10), (16, 32, 3, 3), True, dict(stride=2)),
                ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), True, dict(stride=2))]


@pytest.mark.parametrize("name,x_shape,w_shape,bias,kw", LAYOUT_CASES)
@pytest.mark.parametrize("layout", ["channels_last", "channels_last_weight", "strided"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layouts(name, x_shape, w_shape, bias, kw, layout, dtype):
    x, w, b = _make(name, x_shape, w_shape, bias, kw, getattr(torch, dtype))
    if layout == "strided":  # every other column of a wider input, and a transposed weight
        x = make_torch(x_shape[:-1] + (2 * x_shape[-1],), dtype, 5, -1, 1)[..., ::2]
        w = w.transpose(2, 3).contiguous().transpose(2, 3)
    sx, sw = to_tessera(x), to_tessera(w)
    if layout == "channels_last":
        x, sx = x.contiguous(memory_format=torch.channels_last), sx.contiguous(memory_format=tessera.channels_last)
    if layout == "channels_last_weight":
        w, sw = w.contiguous(memory_format=torch.channels_last), sw.contiguous(memory_format=tessera.channels_last)
    tx, sx = x.clone().requires_grad_(), sx.requires_grad_()
    want = _call(TF, name, tx, w, b, kw)
    got = _call(F, name, sx, sw, _tessera(b), kw)
    tol = (1e-5, 1e-5) if dtype == "float32" else (1e-12, 1e-12)
    torch.testing.assert_close(to_torch(got), want.detach(), rtol=tol[0], atol=tol[1])
    # a channels-last input or weight gives a channels-last output (torch 1.13 does so for
    # convolution, contiguous for the transposed one; tessera keeps channels-last for both)
    channels_last = layout != "strided"
    assert got.is_contiguous(memory_format=tessera.channels_last) == channels_last
    if "transpose" not in name:
        assert want.is_contiguous(memory_format=torch.channels_last) == channels_last
    want.sum().backward()
    got.sum().backward()
    torch.testing.assert_close(to_torch(sx.grad), tx.grad, rtol=tol[0], atol=tol[1])


def test_half_computes_in_float():
    x, w, b = _make("conv2d", (2, 4, 6, 6), (3, 4, 3, 3), True, {}, torch.float16)
    want = TF.conv2d(x.float(), w.float(), b.float(), padding=1)
    got = F.conv2d(to_tessera(x), to_tessera(w), to_tessera(b), padding=1)
    assert got.dtype == tessera.float16
    torch.testing.assert_close(to_torch(got).float(), want, rtol=1e-2, atol=1e-2)


def test_empty_batch_and_zero_channels():
    got = F.conv2d(tessera.ones(0, 3, 5, 5), tessera.ones(4, 3, 3, 3))
    assert tuple(got.shape) == (0, 4, 3, 3)
    x = tessera.ones(2, 0, 5, 5, requires_grad=True)
    w = tessera.ones(4, 0, 3, 3, requires_grad=True)
    out = F.conv2d(x, w, tessera.tensor([1.0, 2.0, 3.0, 4.0]))
    # a sum over no channels is 0, so the output is the bias (torch 1.13 returns a
    # [2, 0, 3, 3] tensor here; current PyTorch the bias)
    want = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 4, 1, 1).expand(2, 4, 3, 3)
    torch.testing.assert_close(to_torch(out), want)
    out.sum().backward()
    assert tuple(x.grad.shape) == (2, 0, 5, 5) and tuple(w.grad.shape) == (4, 0, 3, 3)


# ---------------------------------------------------------------- unfold / fold

UNFOLD_CASES = [((2, 3, 6, 7), dict(kernel_size=2)), ((2, 3, 6, 7), dict(kernel_size=(2, 3), stride=2, padding=1)),
                ((2, 3, 6, 7), dict(kernel_size=3, dilation=(2, 1), padding=(1, 0))), ((3, 6, 7), dict(kernel_size=2))]


@pytest.mark.parametrize("shape,kw", UNFOLD_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unfold_fold(shape, kw, dtype):
    x = make_torch(shape, dtype, 1)
    want = TF.unfold(x, **kw) if len(shape) == 4 else TF.unfold(x.unsqueeze(0), **kw)[0]
    got = F.unfold(to_tessera(x), **kw)
    torch.testing.assert_close(to_torch(got), want)
    folded = TF.fold(want.unsqueeze(0) if len(shape) == 3 else want, shape[-2:], **kw)
    folded = folded[0] if len(shape) == 3 else folded
    torch.testing.assert_close(to_torch(F.fold(got, shape[-2:], **kw)), folded)
    if dtype == "float64":
        small = to_tessera(x).requires_grad_()
        assert tessera.autograd.gradcheck(lambda t: F.unfold(t, **kw), (small,))
        assert tessera.autograd.gradgradcheck(lambda t: F.fold(F.unfold(t, **kw), shape[-2:], **kw), (small,))
        meta = F.unfold(tessera.empty(shape, device="meta"), **kw)
        assert meta.is_meta and tuple(meta.shape) == tuple(want.shape)


ERRORS = [
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 2, 3, 3))",
    "F.conv2d(lib.ones(1, 3, 2, 2), lib.ones(4, 3, 3, 3))",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), padding=-1)",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), stride=0)",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), dilation=0)",
    "F.conv2d(lib.ones(1, 4, 5, 5), lib.ones(3, 2, 3, 3), groups=2)",
    "F.conv2d(lib.ones(1, 4, 5, 5), lib.ones(4, 2, 3, 3), groups=0)",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), lib.ones(3))",
    "F.conv2d(lib.ones(3, 5), lib.ones(4, 3, 3, 3))",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), stride=2, padding='same')",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), padding='full')",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3, dtype=lib.float64))",
    "F.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), stride=(1, 1, 1))",
    "F.conv1d(lib.ones(1, 3, 5), lib.ones(4, 3, 3, 3))",
    "F.conv3d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3, 3))",
    "F.conv_transpose2d(lib.ones(1, 3, 5, 5), lib.ones(4, 2, 3, 3))",
    "F.conv_transpose2d(lib.ones(1, 3, 5, 5), lib.ones(3, 2, 3, 3), output_padding=1)",
    "F.conv_transpose2d(lib.ones(1, 3, 5, 5), lib.ones(3, 2, 3, 3), lib.ones(3))",
    "F.unfold(lib.ones(1, 2, 3, 3), 4)",
    "F.unfold(lib.ones(1, 1, 2, 2), 3, stride=2)",
    "F.fold(lib.ones(1, 9, 1), (2, 2), 3, stride=2)",
    "F.fold(lib.ones(1, 8, 5), (3, 3), 2)",
    "F.fold(lib.ones(1, 7, 4), (3, 3), 2)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_errors_beyond_torch_1_13():
    # current PyTorch: integer convolutions are not implemented on CPU (1.13 computed
    # them); im2col takes 3-D or 4-D inputs (1.13's F.unfold failed on indexing)
    with pytest.raises(RuntimeError, match="convolution\" not implemented for 'Long'"):
        F.conv2d(tessera.ones(1, 3, 5, 5, dtype=tessera.long), tessera.ones(4, 3, 3, 3, dtype=tessera.long))
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D .* but got: \[2, 3\]"):
        F.unfold(tessera.ones(2, 3), 1)
    with pytest.raises(NotImplementedError, match="complex"):
        F.conv2d(tessera.ones(1, 3, 5, 5, dtype=tessera.complex64), tessera.ones(4, 3, 3, 3, dtype=tessera.complex64))
