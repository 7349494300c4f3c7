"""embedding_bag (sum, mean, max; offsets or 2-D input, include_last_offset, padding_idx,
per_sample_weights, max_norm) and grid_sample (bilinear and nearest; zeros and border
padding; align_corners) against torch.nn.functional: values, grads for every
differentiable input, gradcheck and gradgradcheck, meta shapes, and torch's errors."""
import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

F = tessera.nn.functional

INDICES = [1, 2, 4, 5, 4, 3, 2, 9, 0, 0]
BAG_CASES = [
    dict(offsets=[0, 3, 3, 7], mode="sum"), dict(offsets=[0, 3, 3, 7], mode="mean"),
    dict(offsets=[0, 3, 3, 7], mode="max"), dict(offsets=[0, 3, 3, 7, 10], mode="mean", include_last_offset=True),
    dict(offsets=[0, 3, 3, 7, 10], mode="max", include_last_offset=True),
    dict(offsets=[0, 4], mode="sum", padding_idx=2), dict(offsets=[0, 4], mode="mean", padding_idx=-8),
    dict(offsets=[0, 4], mode="max", padding_idx=4), dict(offsets=[0, 2, 5], mode="sum", per_sample_weights=True),
    dict(offsets=None, mode="mean"), dict(offsets=None, mode="max"), dict(offsets=None, mode="sum", per_sample_weights=True),
]
BAG_IDS = ["-".join(f"{k}={v}" for k, v in kw.items()) for kw in BAG_CASES]


def _bag_args(kw, dtype, lib):
    kw = dict(kw)
    convert = (lambda t: t) if lib is torch else to_tessera
    idx = torch.tensor(INDICES) if kw["offsets"] is not None else torch.tensor(INDICES).reshape(2, 5)
    offsets = None if kw["offsets"] is None else torch.tensor(kw.pop("offsets"))
    kw.pop("offsets", None)
    if kw.pop("per_sample_weights", False):
        kw["per_sample_weights"] = convert(make_torch(tuple(idx.shape), dtype, 7, 0.1, 2))
    return convert(idx), None if offsets is None else convert(offsets), kw


@pytest.mark.parametrize("kw", BAG_CASES, ids=BAG_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag(kw, dtype):
    weight = make_torch((10, 4), dtype, 1)
    ti, to, tkw = _bag_args(kw, dtype, torch)
    si, so, skw = _bag_args(kw, dtype, tessera)
    tw, sw = weight.clone().requires_grad_(), to_tessera(weight).requires_grad_()
    want = TF.embedding_bag(ti, tw, to, **tkw)
    got = F.embedding_bag(si, sw, so, **skw)
    torch.testing.assert_close(to_torch(got), want.detach())
    upstream = make_torch(tuple(want.shape), dtype, 2)
    (want * upstream).sum().backward()
    (got * to_tessera(upstream)).sum().backward()
    torch.testing.assert_close(to_torch(sw.grad), tw.grad)
    if "per_sample_weights" in tkw:  # (torch 1.13 asserts unless the weight needs a grad too)
        tp, sp = tkw["per_sample_weights"].requires_grad_(), skw["per_sample_weights"].requires_grad_()
        want_p = torch.autograd.grad(TF.embedding_bag(ti, tw, to, **tkw).sum(), tp)[0]
        got_p = tessera.autograd.grad(F.embedding_bag(si, sw, so, **skw).sum(), sp)[0]
        torch.testing.assert_close(to_torch(got_p), want_p)
    if dtype == "float64":
        others = {k: v for k, v in skw.items() if k != "per_sample_weights"}
        fn = lambda w: F.embedding_bag(si, w, so, per_sample_weights=skw.get("per_sample_weights"), **others)  # noqa: E731
        small = to_tessera(weight).requires_grad_()
        assert tessera.autograd.gradcheck(fn, (small,))
        assert tessera.autograd.gradgradcheck(fn, (small,))


def test_embedding_bag_max_norm_and_meta():
    weight = make_torch((10, 4), "float64", 1)
    tw, sw = weight.clone(), to_tessera(weight)
    idx, offsets = torch.tensor(INDICES), torch.tensor([0, 5])
    want = TF.embedding_bag(idx, tw, offsets, max_norm=1.5, mode="sum")
    got = F.embedding_bag(to_tessera(idx), sw, to_tessera(offsets), max_norm=1.5, mode="sum")
    torch.testing.assert_close(to_torch(got), want)
    torch.testing.assert_close(to_torch(sw), tw)  # the rows used were renormed in place
    meta = tessera.embedding_bag(tessera.empty(10, 4, device="meta"), tessera.empty(6, dtype=tessera.long, device="meta"),
                                 tessera.empty(3, dtype=tessera.long, device="meta"), False, 2)
    assert meta[0].is_meta and tuple(meta[0].shape) == (3, 4)


GRID_CASES = [dict(mode=m, padding_mode=p, align_corners=a)
              for m in ("bilinear", "nearest") for p in ("zeros", "border") for a in (False, True)]
GRID_IDS = ["-".join(str(v) for v in kw.values()) for kw in GRID_CASES]


@pytest.mark.parametrize("kw", GRID_CASES, ids=GRID_IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grid_sample(kw, dtype):
    x = make_torch((2, 3, 5, 6), dtype, 1)
    grid = make_torch((2, 4, 7, 2), dtype, 2, -1.2, 1.2)  # some points outside the image
    tx, tg = x.clone().requires_grad_(), grid.clone().requires_grad_()
    sx, sg = to_tessera(x).requires_grad_(), to_tessera(grid).requires_grad_()
    want, got = TF.grid_sample(tx, tg, **kw), F.grid_sample(sx, sg, **kw)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(to_torch(got), want.detach(), **tol)
    upstream = make_torch(tuple(want.shape), dtype, 3)
    (want * upstream).sum().backward()
    (got * to_tessera(upstream)).sum().backward()
    torch.testing.assert_close(to_torch(sx.grad), tx.grad, **tol)
    # nearest: torch returns a zero grid grad, tessera none (no differentiable path reaches the grid)
    grid_grad = to_torch(sg.grad) if sg.grad is not None else torch.zeros_like(tg.grad)
    assert sg.grad is not None or kw["mode"] == "nearest"
    torch.testing.assert_close(grid_grad, tg.grad, rtol=1e-4 if dtype == "float32" else 1e-10,
                               atol=1e-4 if dtype == "float32" else 1e-10)
    if dtype == "float64":
        small_x = to_tessera(make_torch((1, 2, 3, 4), dtype, 4)).requires_grad_()
        small_g = to_tessera(make_torch((1, 2, 3, 2), dtype, 5, -1.1, 1.1)).requires_grad_()
        fn = lambda a, g: F.grid_sample(a, g, **kw)  # noqa: E731
        assert tessera.autograd.gradcheck(fn, (small_x, small_g))
        assert tessera.autograd.gradgradcheck(fn, (small_x, small_g))
        meta = F.grid_sample(tessera.empty(2, 3, 5, 6, device="meta"), tessera.empty(2, 4, 7, 2, device="meta"), **kw)
        assert meta.is_meta and tuple(meta.shape) == (2, 3, 4, 7)


def test_grid_sample_default_align_corners_warns():
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(tessera.ones(1, 1, 2, 2), tessera.zeros(1, 1, 1, 2))


ERRORS = [
    "F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2))",
    "F.embedding_bag(lib.tensor([[[1, 2]]]), lib.ones(5, 2))",
    "F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0]), mode='min')",
    "F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0]), mode='mean', per_sample_weights=lib.ones(2))",
    "F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0]), mode='sum', per_sample_weights=lib.ones(3))",
    "F.embedding_bag(lib.tensor([1.0, 2.0]), lib.ones(5, 2), lib.tensor([0]))",
    "F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([0]), mode='max', scale_grad_by_freq=True)",
    "F.grid_sample(lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2, 2), mode='area', align_corners=False)",
    "F.grid_sample(lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2, 2), padding_mode='wrap', align_corners=False)",
    "F.grid_sample(lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2), align_corners=False)",
    "F.grid_sample(lib.ones(1, 1, 4, 4), lib.zeros(2, 2, 2, 2), align_corners=False)",
    "F.grid_sample(lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2, 3), align_corners=False)",
    "F.grid_sample(lib.ones(1, 1, 0, 4), lib.zeros(1, 2, 2, 2), align_corners=False)",
    "F.grid_sample(lib.ones(1, 1, 4, 4), lib.zeros(1, 2, 2, 2, dtype=lib.float64), align_corners=False)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_bag_errors_naming_their_library():
    # torch's text, where it names its own Tensor class or adds a C++ context line
    assert_raises_like_torch("F.embedding_bag(lib.tensor([1, 2]), lib.ones(5, 2), lib.tensor([1]))",
                             first_line_only=True)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None.*tessera.Tensor"):
        F.embedding_bag(tessera.tensor([[1, 2]]), tessera.ones(5, 2), tessera.tensor([0]))


def test_not_yet_there_says_so():
    x, g = tessera.ones(1, 1, 4, 4), tessera.zeros(1, 2, 2, 2)
    for kw in (dict(mode="bicubic"),):  # (reflection padding: opinfo_nn.py against torch)
        with pytest.raises(NotImplementedError):
            F.grid_sample(x, g, align_corners=False, **kw)
    # (5-D grid_sample now exists: opinfo_nn.py's grid_sample[3-D] against torch)
    # (sparse=True: test_sparse_training.py against torch)
    with pytest.raises(NotImplementedError):
        F.embedding_bag(tessera.tensor([1, 2]), tessera.ones(5, 2), tessera.tensor([0]), scale_grad_by_freq=True)
