"""F.interpolate against torch: nearest (1-D, 2-D), linear, bilinear and bicubic, by size
or scale_factor, align_corners and recompute_scale_factor; values, grads, gradcheck,
meta shapes and torch's errors."""
import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

F = tessera.nn.functional

CASES = [
    ((2, 3, 5, 7), dict(size=(9, 4))), ((2, 3, 5, 7), dict(scale_factor=2)), ((2, 3, 5, 7), dict(scale_factor=(1.7, 0.6))),
    ((2, 3, 5, 7), dict(size=(9, 4), mode="bilinear")), ((2, 3, 5, 7), dict(size=(9, 4), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 7), dict(scale_factor=2.3, mode="bilinear")), ((2, 3, 5, 7), dict(size=(11, 13), mode="bicubic")),
    ((2, 3, 5, 7), dict(size=(3, 13), mode="bicubic", align_corners=True)),
    ((2, 3, 5, 7), dict(scale_factor=1.5, mode="bicubic", recompute_scale_factor=True)),
    ((2, 3, 7), dict(size=12)), ((2, 3, 7), dict(scale_factor=0.5)), ((2, 3, 7), dict(size=12, mode="linear")),
    ((2, 3, 7), dict(size=4, mode="linear", align_corners=True)), ((1, 2, 4, 4), dict(size=1, mode="bilinear")),
]
IDS = [f"{len(s)}d-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for s, kw in CASES]


@pytest.mark.parametrize("shape,kw", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_values_and_grads(shape, kw, dtype):
    x = make_torch(shape, "float64", 1).to(getattr(torch, dtype))
    # bfloat16: against torch's float32 result, rounded (torch 1.13 computes its bfloat16
    # nearest scale in bfloat16, picking other source pixels than current PyTorch)
    reduced = dtype == "bfloat16"
    want = TF.interpolate(x.float() if reduced else x, **kw)
    got = F.interpolate(to_tessera(x), **kw)
    # bicubic is evaluated one dim after the other (torch: both at once): float32 rounds apart
    tol = {"float32": (1e-5, 1e-5 if kw.get("mode") == "bicubic" else 1e-6),
           "float64": (1e-12, 1e-12)}.get(dtype, (2e-2, 2e-2))
    torch.testing.assert_close(to_torch(got).to(want.dtype), want, rtol=tol[0], atol=tol[1])
    if dtype == "float64":
        tx, sx = x.clone().requires_grad_(), to_tessera(x).requires_grad_()
        upstream = make_torch(tuple(want.shape), "float64", 2)
        (TF.interpolate(tx, **kw) * upstream).sum().backward()
        (F.interpolate(sx, **kw) * to_tessera(upstream)).sum().backward()
        torch.testing.assert_close(to_torch(sx.grad), tx.grad, rtol=1e-12, atol=1e-12)
        small = to_tessera(make_torch(tuple(min(s, 4) for s in shape), "float64", 3)).requires_grad_()
        fn = lambda t: F.interpolate(t, **kw)  # noqa: E731
        assert tessera.autograd.gradcheck(fn, (small,))
        meta = F.interpolate(tessera.empty(shape, device="meta"), **kw)
        assert meta.is_meta and tuple(meta.shape) == tuple(want.shape)


ERRORS = [
    "F.interpolate(lib.ones(1, 1, 4, 4), size=(0, 2))",
    "F.interpolate(lib.ones(1, 1, 4, 4))",
    "F.interpolate(lib.ones(1, 1, 4, 4), size=2, scale_factor=2)",
    "F.interpolate(lib.ones(1, 1, 4, 4), size=2, align_corners=True)",
    "F.interpolate(lib.ones(1, 4, 4), size=2, mode='bilinear')",
    "F.interpolate(lib.ones(1, 1, 4, 4), size=(2, 3, 4))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_modes_not_yet_there_say_so():
    for kw in (dict(mode="area"), dict(mode="nearest-exact")):
        with pytest.raises(NotImplementedError):
            F.interpolate(tessera.ones(1, 1, 4, 4), size=2, **kw)


def test_antialias_matches_torch():
    # interpolate(antialias=True): the filter widens with the downscaling factor (PIL's
    # resize); torch 1.13 has it for bilinear and bicubic on 4-D input, refuses the rest
    gen = torch.Generator().manual_seed(3)
    x = torch.rand(2, 3, 23, 17, generator=gen, dtype=torch.float64)
    cases = [dict(size=(7, 5)), dict(size=(30, 9)), dict(scale_factor=0.37), dict(size=(4, 40)),
             dict(size=(11, 6), align_corners=True)]
    for mode in ("bilinear", "bicubic"):
        for kw in cases:
            kw = {"align_corners": False, **kw}
            ref = torch.nn.functional.interpolate(x, mode=mode, antialias=True, **kw)
            got = F.interpolate(tessera.tensor(x.numpy()), mode=mode, antialias=True, **kw)
            assert tuple(got.shape) == tuple(ref.shape)
            torch.testing.assert_close(torch.from_numpy(got.numpy()), ref, rtol=1e-12, atol=1e-12)
    for mode, shape in (("nearest", (1, 1, 4, 4)), ("bilinear", (1, 4, 4)), ("linear", (1, 1, 4))):
        with pytest.raises(ValueError, match="Anti-alias option is only supported for bilinear and bicubic modes"):
            torch.nn.functional.interpolate(torch.ones(*shape), size=2, mode=mode, antialias=True)
        with pytest.raises(ValueError, match="Anti-alias option is only supported for bilinear and bicubic modes"):
            F.interpolate(tessera.ones(*shape), size=2, mode=mode, antialias=True)
