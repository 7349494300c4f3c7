"""tessera.stft / istft and the window factories against torch 1.13: the windows at the edge
lengths, in both dtypes and periodicities; stft of 1-D and batched, real and complex
signals in every pad mode, uncentred, one- and two-sided, normalized, with short windows,
and as view_as_real; istft round trips and against torch; errors (torch's exception
classes); gradients (gradcheck, and torch's grads). The registry (opinfo_spectral.py) adds
the dtype and meta sweeps. Where 1.13 and current PyTorch differ, tessera follows current
PyTorch and the test says so (stft of a real signal needs return_complex; 1.13 warned)."""
import warnings

import numpy as np
import pytest
import torch

import tessera

import opinfo

TOL = {torch.float32: 3e-6, torch.complex64: 3e-6, torch.float64: 1e-12, torch.complex128: 1e-12}
REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def _pair(shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    if dtype.is_complex:
        t = torch.complex(t, torch.randn(shape, generator=g, dtype=torch.float64))
    t = t.to(dtype)
    return t, tessera.tensor(t.numpy())


def _ours(t):
    return None if t is None else tessera.tensor(t.numpy())


def _close(got, want, tol):
    """Shape, dtype and values, to tol times the largest magnitude (at least 1)."""
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    g, w = got.detach().numpy(), want.detach().numpy()
    assert g.shape == w.shape, (g.shape, w.shape)
    scale = max(float(np.abs(w).max()), 1.0) if w.size else 1.0
    np.testing.assert_allclose(g, w, rtol=0, atol=tol * scale)


# ---------------------------------------------------------------- windows

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("length", [0, 1, 2, 5, 64])
@pytest.mark.parametrize("kind", ["hann", "hamming", "blackman", "bartlett", "kaiser"])
def test_windows_like_torch(kind, length, dtype):
    name = kind + "_window"
    for periodic in ((), (True,), (False,)):  # the default is periodic
        want = getattr(torch, name)(length, *periodic, dtype=getattr(torch, dtype))
        got = getattr(tessera, name)(length, *periodic, dtype=getattr(tessera, dtype))
        _close(got, want, TOL[want.dtype])


@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("name,params", [("hamming_window", (0.6,)), ("hamming_window", (0.6, 0.3)),
                                         ("kaiser_window", (5.0,)), ("kaiser_window", (0.0,))])
def test_window_shape_parameters(name, params, periodic):
    for n in (1, 6, 33):
        for dtype in ("float32", "float64"):
            want = getattr(torch, name)(n, periodic, *params, dtype=getattr(torch, dtype))
            _close(getattr(tessera, name)(n, periodic, *params, dtype=getattr(tessera, dtype)), want, TOL[want.dtype])


def test_window_dtype_and_options():
    assert tessera.hann_window(4).dtype == tessera.float32
    old = tessera.get_default_dtype()
    tessera.set_default_dtype(tessera.float64)
    try:
        assert tessera.kaiser_window(4).dtype == tessera.float64
    finally:
        tessera.set_default_dtype(old)
    w = tessera.blackman_window(5, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    m = tessera.kaiser_window(7, False, 3.0, device="meta")
    assert m.is_meta and tuple(m.shape) == (7,) and m.dtype == tessera.float32


def _raises_like_torch(expr):
    """Both libraries raise, with one exception class; returns tessera's message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = opinfo.outcome(lambda: eval(expr, {"lib": torch}))
        got = opinfo.outcome(lambda: eval(expr, {"lib": tessera}))
    assert want[0] == got[0] == "error" and type(got[1]).__name__ == type(want[1]).__name__, (expr, got, want)
    return str(got[1])


@pytest.mark.parametrize("expr,phrase", [
    ("lib.hann_window(3, dtype=lib.int64)", "hann_window expects floating point dtypes"),
    ("lib.kaiser_window(3, True, 2.0, dtype=lib.int32)", "kaiser_window expects floating point dtypes"),
    ("lib.bartlett_window(3, dtype=lib.complex64)", "expects floating point dtypes"),
    ("lib.hann_window(-1)", "hann_window requires non-negative window_length"),
    ("lib.hamming_window(-2, False, 0.5)", "hamming_window requires non-negative window_length"),
    ("lib.blackman_window(-1, True)", "non-negative"),
    ("lib.kaiser_window(-1)", "non-negative"),
    ("lib.hann_window(3, out=lib.empty(0))", ""),  # torch's Python takes no out= for the windows
])
def test_window_errors_like_torch(expr, phrase):
    assert phrase in _raises_like_torch(expr)


# ---------------------------------------------------------------- stft

# (n_fft, hop_length, win_length, a Hann window, normalized, onesided)
STFT_ARGS = [(16, None, None, False, False, None), (16, 4, None, True, False, None), (15, 5, 9, True, True, None),
             (16, 3, 10, False, False, False), (12, 12, None, True, False, False), (16, None, None, True, True, False)]


@pytest.mark.parametrize("center,pad_mode", [(False, "reflect"), (True, "reflect"), (True, "constant"),
                                             (True, "replicate"), (True, "circular")])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.complex128, torch.complex64])
@pytest.mark.parametrize("shape", [(64,), (3, 50)])
def test_stft_like_torch(shape, dtype, center, pad_mode):
    x, y = _pair(shape, dtype, 1)
    for n_fft, hop, win, windowed, normalized, onesided in STFT_ARGS:
        w = torch.hann_window(win or n_fft, dtype=REAL.get(dtype, dtype)) if windowed else None
        kw = dict(hop_length=hop, win_length=win, center=center, pad_mode=pad_mode, normalized=normalized,
                  onesided=onesided, return_complex=True)
        _close(tessera.stft(y, n_fft, window=_ours(w), **kw), torch.stft(x, n_fft, window=w, **kw), TOL[dtype])


@pytest.mark.parametrize("signal,window", [("float32", "float64"), ("float64", "float32"), ("float32", "int64"),
                                           ("float64", "complex128"), ("complex64", "float64")])
def test_stft_promotes_like_torch(signal, window):
    x, y = _pair((40,), getattr(torch, signal), 2)
    w = torch.arange(1, 9).to(getattr(torch, window))
    want = torch.stft(x, 8, window=w, return_complex=True)
    _close(tessera.stft(y, 8, window=_ours(w), return_complex=True), want, TOL[want.dtype])


def test_stft_return_complex_false_is_view_as_real_and_warns():
    x, y = _pair((2, 40), torch.float64)
    want = torch.stft(x, 8, return_complex=False)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        got = tessera.stft(y, 8, return_complex=False)
    assert tuple(got.shape) == (2, 5, 21, 2)
    _close(got, want, 1e-12)


def test_stft_of_a_real_signal_needs_return_complex():
    # torch 1.13 only warns here; current PyTorch raises a RuntimeError, as tessera does
    y = tessera.ones(40)
    for window in (None, tessera.hann_window(8)):
        with pytest.raises(RuntimeError, match="return_complex"):
            tessera.stft(y, 8, window=window)
    # a complex window (or signal) makes the spectrum complex and two-sided by default
    spectrum = tessera.stft(y, 8, window=tessera.hann_window(8).to(tessera.complex64))
    assert spectrum.dtype == tessera.complex64 and tuple(spectrum.shape) == (8, 21)


def test_python_surface():
    x, y = _pair((100,), torch.float32)
    w, tw = torch.hann_window(16), tessera.hann_window(16)
    want = torch.stft(x, 16, return_complex=True, window=w)
    _close(tessera.stft(y, 16, return_complex=True, window=tw), want, 3e-6)
    # torch's positional order: hop, win, window, center, pad_mode, normalized, onesided, return_complex
    args = (16, 4, 16, None, False, "constant", True, None, True)
    _close(tessera.stft(y, *args), torch.stft(x, *args), 3e-6)
    _close(y.stft(16, window=tw, return_complex=True), x.stft(16, window=w, return_complex=True), 3e-6)
    spectrum = tessera.stft(y, 16, window=tw, return_complex=True)
    _close(spectrum.istft(16, window=tw), want.istft(16, window=w), 3e-6)
    _close(tessera.istft(spectrum, 16, 4, 16, tw, True, False, None, 90, False),
           torch.istft(want, 16, 4, 16, w, True, False, None, 90, False), 3e-6)
    # the aten overloads: stft has no centring, stft.center pads
    _close(tessera._C.stft(y, 16, window=tw, return_complex=True),
           torch.stft(x, 16, window=w, center=False, return_complex=True), 3e-6)
    meta = tessera.stft(tessera.empty(2, 50, device="meta"), 16, return_complex=True)
    assert meta.is_meta and tuple(meta.shape) == (2, 9, 13) and meta.dtype == tessera.complex64
    assert tuple(tessera.istft(meta, 16).shape) == (2, 48)


# ---------------------------------------------------------------- istft

@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("center", [True, False])
def test_istft_round_trip(center, batched):
    x, y = _pair((2, 80) if batched else (80,), torch.float64, 3)
    # (a Hann window's overlap-add vanishes at an uncentred signal's ends: ones there)
    w = tessera.hann_window(16, dtype=tessera.float64) if center else None
    spectrum = tessera.stft(y, 16, window=w, center=center, return_complex=True)
    _close(tessera.istft(spectrum, 16, window=w, center=center, length=80), x, 1e-12)
    z, c = _pair((80,), torch.complex128, 4)
    spectrum = tessera.stft(c, 16, window=w, center=center, return_complex=True)
    _close(tessera.istft(spectrum, 16, window=w, center=center, length=80, return_complex=True), z, 1e-12)


ISTFT_ARGS = [{}, {"length": 70}, {"length": 100}, {"center": False}, {"hop_length": 5, "win_length": 12, "window": 1},
              {"hop_length": 3, "window": 1, "normalized": True, "n_fft": 15}, {"onesided": False},
              {"onesided": False, "return_complex": True}]


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("dtype", [torch.complex128, torch.complex64])
@pytest.mark.parametrize("kw", ISTFT_ARGS, ids=str)
def test_istft_like_torch(kw, dtype, batched):
    kw = dict(kw)
    n_fft = kw.pop("n_fft", 16)
    w = torch.hann_window(kw.get("win_length", n_fft), dtype=REAL[dtype]) if kw.pop("window", 0) else None
    complex_signal = kw.get("return_complex", False)
    x, _ = _pair((2, 90) if batched else (90,), dtype if complex_signal else REAL[dtype], 5)
    spectrum = torch.stft(x, n_fft, hop_length=kw.get("hop_length"), win_length=kw.get("win_length"), window=w,
                          center=kw.get("center", True), onesided=kw.get("onesided"), return_complex=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.istft(spectrum, n_fft, window=w, **kw)
        got = tessera.istft(_ours(spectrum), n_fft, window=_ours(w), **kw)
    _close(got, want, TOL[dtype])


def test_istft_warnings_like_torch():
    spectrum = tessera.stft(tessera.ones(64, dtype=tessera.float64), 16, return_complex=True)
    with pytest.warns(UserWarning, match="padded with zeros"):
        padded = tessera.istft(spectrum, 16, length=100)
    assert tuple(padded.shape) == (100,) and float(padded[72:].abs().sum()) == 0.0
    legacy = tessera.view_as_real(spectrum)  # torch 1.13 still takes (..., 2) real input, deprecated
    with pytest.warns(UserWarning, match="complex-valued input"):
        got = tessera.istft(legacy, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(got, torch.istft(torch.view_as_real(torch.tensor(spectrum.numpy())), 16), 1e-12)


# ---------------------------------------------------------------- errors

SPECTRUM = "lib.stft(lib.ones(100), 16, return_complex=True)"
STFT_ERRORS = [  # lib.stft(<args>, return_complex=True)
    "lib.ones(100), 0", "lib.ones(100), 200, center=False", "lib.ones(10), 32", "lib.ones(100), 16, hop_length=0",
    "lib.ones(100), 16, win_length=20", "lib.ones(100), 16, win_length=0", "lib.ones(100), 16, window=lib.ones(10)",
    "lib.ones(100), 16, window=lib.ones(2, 8), win_length=8", "lib.ones(2, 3, 100), 16", "lib.ones(()), 16",
    "lib.ones(100), 16, pad_mode='sideways'", "lib.ones(100, dtype=lib.complex64), 16, onesided=True",
    "lib.ones(100), 16, window=lib.ones(16, dtype=lib.complex64), onesided=True",
    "lib.arange(100), 16, center=False", "lib.ones(100), 16, window=lib.ones(16, device='meta')"]
ISTFT_ERRORS = [  # lib.istft(<args>)
    f"{SPECTRUM}, 16, hop_length=0", f"{SPECTRUM}, 16, hop_length=20", f"{SPECTRUM}, 16, win_length=20",
    f"{SPECTRUM}, 16, window=lib.ones(10)", f"{SPECTRUM}, 16, return_complex=True", f"{SPECTRUM}, 16, onesided=False",
    f"{SPECTRUM}, 15", f"{SPECTRUM}, 16, window=lib.ones(16, dtype=lib.complex64)", f"{SPECTRUM}, 16, length=0",
    "lib.ones(9, 0, dtype=lib.complex64), 16", "lib.ones(2, 2, 9, 26, dtype=lib.complex64), 16",
    "lib.ones(9, 26, 3), 16"]


@pytest.mark.parametrize("expr", [f"lib.stft({a}, return_complex=True)" for a in STFT_ERRORS]
                         + [f"lib.istft({a})" for a in ISTFT_ERRORS])
def test_errors_like_torch(expr):
    _raises_like_torch(expr)


@pytest.mark.parametrize("args", ["window=lib.zeros(16)", "hop_length=16, window=lib.hann_window(16), center=False"])
def test_istft_refuses_a_vanishing_overlap_add(args):
    assert "window overlap add min" in _raises_like_torch(f"lib.istft({SPECTRUM}, 16, {args})")


def test_istft_dimension_errors():
    # torch raises IndexError for these, from a size(-3) lookup before its own dimension
    # check; tessera checks the dimensions first and raises its RuntimeError
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in (tessera.ones(26, dtype=tessera.complex64), tessera.ones(9, 26)):
            with pytest.raises(RuntimeError, match="istft"):
                tessera.istft(t, 16)


# ---------------------------------------------------------------- gradients

def _window(n, seed):  # positive: the overlap-add never vanishes
    return torch.rand(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) + 0.5


F64, C128 = torch.float64, torch.complex128
GRAD_CASES = {
    "stft": (lambda lib, x, w: lib.stft(x, 8, hop_length=3, window=w, return_complex=True),
             [_pair((30,), F64, 1)[0], _window(8, 1)]),
    "stft uncentred": (lambda lib, x, w: lib.stft(x, 8, win_length=6, window=w, center=False, normalized=True,
                                                  return_complex=True),
                       [_pair((2, 20), F64, 2)[0], _window(6, 2)]),
    "stft complex": (lambda lib, x, w: lib.stft(x, 8, window=w, pad_mode="replicate"),
                     [_pair((24,), C128, 3)[0], _window(8, 3)]),
    "stft view_as_real": (lambda lib, x: lib.stft(x, 6, pad_mode="circular", return_complex=False),
                          [_pair((2, 15), F64, 4)[0]]),
    "istft": (lambda lib, s, w: lib.istft(s, 8, hop_length=2, window=w), [_pair((5, 9), C128, 5)[0], _window(8, 5)]),
    "istft batched length": (lambda lib, s: lib.istft(s, 6, center=False, length=18), [_pair((2, 4, 6), C128, 6)[0]]),
    "istft complex": (lambda lib, s, w: lib.istft(s, 6, window=w, onesided=False, return_complex=True),
                      [_pair((6, 7), C128, 7)[0], _window(6, 7)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads_like_torch_and_gradcheck(name):
    fn, inputs = GRAD_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_status, want = opinfo.differentiate(torch, fn, inputs)
        got_status, got = opinfo.differentiate(tessera, fn, inputs)
    assert want_status == got_status == "graph", (want_status, got_status, got)
    for g, w in zip(got, want):
        torch.testing.assert_close(opinfo.to_torch(g), w, rtol=1e-9, atol=1e-10)
    leaves = opinfo.leaves(tessera, inputs)
    assert tessera.autograd.gradcheck(lambda *a: fn(tessera, *a), leaves)
