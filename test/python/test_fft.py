"""tessera.fft against torch 1.13's (pocketfft): sizes the registry's small samples do not
reach (powers of two, odd primes, Bluestein lengths, real transforms whose half length
has a large prime), the three kernels' own arguments, errors, Meta shapes and gradients
(gradcheck and gradgradcheck, complex inputs included). Values and argument sweeps of
every function are in the registry (opinfo_spectral.py)."""
import numpy as np
import pytest
import torch

import tessera

SIZES = [1, 2, 3, 16, 60, 97, 128, 1009, 2 * 1009, 4096, 6561]


def _pair(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        t = torch.complex(t, torch.randn(shape, generator=g, dtype=torch.float64))
    t = t.to(dtype)
    return t, tessera.tensor(t.numpy())


def _close(got, want, rtol):
    scale = max(float(want.abs().max()), 1.0) if want.numel() else 1.0
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_sizes_like_pocketfft(n, dtype):
    rtol = 1e-12 if dtype == torch.float64 else 5e-6
    x, y = _pair((3, n), dtype, n)
    cx, cy = _pair((2, n), torch.complex128 if dtype == torch.float64 else torch.complex64, n + 1)
    _close(tessera.fft.rfft(y), torch.fft.rfft(x), rtol)
    _close(tessera.fft.fft(cy), torch.fft.fft(cx), rtol)
    _close(tessera.fft.ifft(cy, norm="ortho"), torch.fft.ifft(cx, norm="ortho"), rtol)
    _close(tessera.fft.irfft(tessera.fft.rfft(y), n=n), torch.fft.irfft(torch.fft.rfft(x), n=n), rtol)
    half = cx[:, : n // 2 + 1]
    _close(tessera.fft.irfft(tessera.tensor(half.numpy()), n=n), torch.fft.irfft(half, n=n), rtol)


def test_multi_dim_transforms_of_large_planes():
    x, y = _pair((12, 30, 17), torch.float64)
    _close(tessera.fft.rfftn(y), torch.fft.rfftn(x), 1e-12)
    _close(tessera.fft.fftn(y, dim=(0, 2)), torch.fft.fftn(x, dim=(0, 2)), 1e-12)
    spectrum = torch.fft.rfftn(x)
    _close(tessera.fft.irfftn(tessera.tensor(spectrum.numpy()), s=(12, 30, 17)),
           torch.fft.irfftn(spectrum, s=(12, 30, 17)), 1e-12)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_long_lines_split_along_any_dim(dtype):
    # Fewer long lines than a vector holds run split across threads (columns, twiddles,
    # rows); the same lines along dim 0 are strided, in a non-contiguous input too.
    rtol = 1e-11 if dtype == torch.complex128 else 2e-5
    for shape, dim in [((1 << 16,), -1), ((2 * 3 * 5 * 7 * 11 * 13, 3), 0), ((2, 1 << 15, 2), 1)]:
        x, y = _pair(shape, dtype, len(shape))
        _close(tessera.fft.fft(y, dim=dim), torch.fft.fft(x, dim=dim), rtol)
        _close(tessera.fft.ifft(y, dim=dim, norm="forward"), torch.fft.ifft(x, dim=dim, norm="forward"), rtol)
    x, y = _pair((3, 1 << 15), dtype, 9)
    _close(tessera.fft.fft(y.t(), dim=0), torch.fft.fft(x.t(), dim=0), rtol)
    _close(tessera.fft.fft2(y.t()), torch.fft.fft2(x.t()), rtol)


def test_kernels_directly():
    x, y = _pair((4, 6), torch.complex128)
    for norm in (0, 1, 2):
        for forward in (True, False):
            _close(tessera._fft_c2c(y, [0, 1], norm, forward), torch._fft_c2c(x, [0, 1], norm, forward), 1e-12)
    r, s = _pair((4, 6), torch.float64)
    for onesided in (True, False):
        _close(tessera._fft_r2c(s, [1, 0], 2, onesided), torch._fft_r2c(r, [1, 0], 2, onesided), 1e-12)
    _close(tessera._fft_c2r(y, [0, 1], 1, 10), torch._fft_c2r(x, [0, 1], 1, 10), 1e-12)


@pytest.mark.parametrize("expr", [
    "lib.fft.fft(lib.ones(4), norm='sideways')",
    "lib.fft.fft(lib.ones(4), n=0)",
    "lib.fft.rfft(lib.ones(4, dtype=lib.complex64))",
    "lib.fft.fftn(lib.ones(4, 4), dim=(0, 0))",
    "lib.fft.fftn(lib.ones(4, 4), s=(2, 2), dim=(0,))",
    "lib.fft.fftn(lib.ones(4), s=(2, 2))",
    "lib.fft.irfftn(lib.ones(4, dtype=lib.complex64), dim=())",
    "lib.fft.fft(lib.ones(4, dtype=lib.float16))",
    "lib.fft.rfftn(lib.zeros(3, 0))",
    "lib.fft.fftn(lib.zeros(3, 0))",
    "lib.fft.fftfreq(4, dtype=lib.int64)",
])
def test_errors_like_torch(expr):
    import opinfo
    opinfo.assert_raises_like_torch(expr)


def test_meta_shapes():
    m = tessera.empty(3, 10, device="meta")
    assert tuple(tessera.fft.rfft(m).shape) == (3, 6) and tessera.fft.rfft(m).dtype == tessera.complex64
    assert tuple(tessera.fft.irfft(tessera.fft.rfft(m), n=7).shape) == (3, 7)
    assert tuple(tessera.fft.fft2(m, s=(4, 5)).shape) == (4, 5)
    c = tessera.empty(3, 10, dtype=tessera.complex128, device="meta")
    assert tessera._fft_c2r(c, [1], 0, 18).dtype == tessera.float64


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "fftn", "rfftn", "irfftn", "hfftn",
                                  "ihfftn"])
def test_gradcheck_and_gradgradcheck(name):
    fn = getattr(tessera.fft, name)
    complex_input = name in ("fft", "irfft", "hfft", "fftn", "irfftn", "hfftn")
    x = tessera.randn(3, 5, dtype=tessera.complex128 if complex_input else tessera.float64, requires_grad=True)
    kw = {"norm": "ortho"}
    assert tessera.autograd.gradcheck(lambda t: fn(t, **kw), (x,))
    assert tessera.autograd.gradgradcheck(lambda t: fn(t, **kw), (x,))
    if name in ("irfft", "hfft"):
        assert tessera.autograd.gradcheck(lambda t: fn(t, n=6), (x,))


def test_grads_like_torch_through_a_spectral_filter():
    def run(lib):
        x = lib.tensor(np.linspace(-1, 1, 64), requires_grad=True)
        spectrum = lib.fft.rfft(x)
        kept = spectrum * (lib.arange(33) < 8)
        y = lib.fft.irfft(kept, n=64)
        (y * y).sum().backward()
        return x.grad.numpy()
    np.testing.assert_allclose(run(tessera), run(torch), rtol=1e-10, atol=1e-12)


def test_names_match_torch_fft():
    public = {n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))}
    public -= {"Tensor"}  # torch.fft re-exports the Tensor type
    assert public <= set(tessera.fft.__all__)
