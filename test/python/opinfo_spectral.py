"""OpInfo entries for torch.fft (ops.yaml's "Fourier transforms" section): the one-, two-
and n-dimensional transforms with n / s trimming and padding, dims and norm modes, the
sample frequencies and the shifts. The three kernels underneath (_fft_c2c, _fft_r2c,
_fft_c2r) are covered through them; test_fft.py checks the kernels' own arguments and
larger, prime and Bluestein sizes. Also the "short-time Fourier transform" section: stft
and istft on small signals (their gradients with a window that requires grad too), and
the window factories; test_stft.py sweeps their arguments and errors."""
from opinfo import OpInfo, make_torch, register, resolve_dtype

REAL = ("float32", "float64", "int64")
ANY = REAL + ("complex64", "complex128")
TOL = {"float32": (2e-5, 2e-5), "complex64": (2e-5, 2e-5)}


def _samples_1d(kwargs):
    def samples(dtype):
        for i, shape in enumerate([(8,), (3, 5), (2, 7), (4, 6)]):
            for k, kw in enumerate(kwargs):
                yield f"{list(shape)}{kw}", [make_torch(shape, dtype, 100 * i + k)], kw
        base = make_torch((6, 8), dtype, 7)
        yield "transposed", [base.t()], {"dim": 0}
        yield "stepped", [base[:, ::2]], {}
    return samples


def _samples_nd(kwargs):
    def samples(dtype):
        for i, shape in enumerate([(4, 6), (3, 4, 5), (2, 3, 4)]):
            for k, kw in enumerate(kwargs):
                yield f"{list(shape)}{kw}", [make_torch(shape, dtype, 100 * i + k)], kw
        yield "transposed", [make_torch((5, 4), dtype, 9).t()], {}
    return samples


ONE_D = ({}, {"n": 5}, {"n": 12, "norm": "ortho"}, {"dim": 0, "norm": "forward"})
N_D = ({}, {"s": (3, 8)}, {"dim": (0, -1), "norm": "ortho"}, {"s": (4, -1), "dim": (1, 0), "norm": "forward"})
TWO_D = ({}, {"s": (3, 8)}, {"dim": (0, -1), "norm": "ortho"}, {"norm": "forward"})
# The c2r forms' inputs are half spectra: their n / s name the real output's length.
C2R_1D = ({}, {"n": 9}, {"n": 6, "norm": "ortho"}, {"dim": 0, "norm": "forward"})
C2R_N = ({}, {"s": (3, 9)}, {"dim": (0, -1), "norm": "ortho"}, {"s": (4, 6), "dim": (1, 0), "norm": "forward"})


def transform(name, samples, dtypes=ANY, **kw):
    fn = name.split(".")[1]
    return OpInfo(name, lambda lib, a, _f=fn, **k: getattr(lib.fft, _f)(a, **k), dtypes=dtypes,
                  sample_inputs=samples, dtype_tolerances=TOL, **kw)


def freq(name, n, d=1.0):
    def call(lib, _f=name, **k):
        return getattr(lib.fft, _f)(n, d, **resolve_dtype(lib, k))

    def samples(dtype):
        yield f"n={n} d={d}", [], {"dtype": dtype}
    return OpInfo(f"fft.{name}[{n}]", call, arity=0, dtypes=("float32", "float64"), sample_inputs=samples)


register(
    transform("fft.fft", _samples_1d(ONE_D), covers=("_fft_c2c",)),
    transform("fft.ifft", _samples_1d(ONE_D)),
    transform("fft.rfft", _samples_1d(ONE_D), covers=("_fft_r2c",)),
    transform("fft.ihfft", _samples_1d(ONE_D)),
    transform("fft.irfft", _samples_1d(C2R_1D), covers=("_fft_c2r",)),
    transform("fft.hfft", _samples_1d(C2R_1D)),
    transform("fft.fftn", _samples_nd(N_D)),
    transform("fft.ifftn", _samples_nd(N_D)),
    transform("fft.rfftn", _samples_nd(N_D)),
    transform("fft.ihfftn", _samples_nd(N_D)),
    transform("fft.irfftn", _samples_nd(C2R_N)),
    transform("fft.hfftn", _samples_nd(C2R_N)),
    transform("fft.fft2", _samples_nd(TWO_D)),
    transform("fft.ifft2", _samples_nd(TWO_D)),
    transform("fft.rfft2", _samples_nd(TWO_D)),
    transform("fft.ihfft2", _samples_nd(TWO_D)),
    transform("fft.irfft2", _samples_nd(C2R_N[:3])),
    transform("fft.hfft2", _samples_nd(C2R_N[:3])),
    freq("fftfreq", 5), freq("fftfreq", 8, 0.25), freq("rfftfreq", 7, 2.0), freq("rfftfreq", 8),
    OpInfo("fft.fftshift", lambda lib, a, **k: lib.fft.fftshift(a, **k), kwargs=({}, {"dim": 0}, {"dim": (-1,)}),
           supports_out=False),
    OpInfo("fft.ifftshift", lambda lib, a, **k: lib.fft.ifftshift(a, **k), kwargs=({}, {"dim": 0}, {"dim": (-1,)}),
           supports_out=False),
)


# ---- short-time Fourier transform

def window(name, *args):
    """name(*args, dtype=<the sample's dtype>): a window factory (no tensor input)."""
    def call(lib, _f=name, **k):
        return getattr(lib, _f)(*args, **resolve_dtype(lib, k))

    def samples(dtype):
        yield f"{args}", [], {"dtype": dtype}
    return OpInfo(f"{name}{list(args)}", call, arity=0, dtypes=("float32", "float64"), sample_inputs=samples)


REAL_OF = {"complex64": "float32", "complex128": "float64"}
STFT_TOL = {"float32": (5e-5, 5e-5), "complex64": (5e-5, 5e-5)}

# (signal shape, kwargs; "window" names a window of win_length (or n_fft) positive points,
# passed as the sample's second tensor so that its gradient is checked too)
STFT_SAMPLES = (
    ((24,), {"n_fft": 8}),
    ((2, 20), {"n_fft": 8, "hop_length": 3, "window": True}),
    ((30,), {"n_fft": 8, "win_length": 5, "window": True, "center": False, "normalized": True}),
    ((2, 16), {"n_fft": 6, "pad_mode": "constant", "onesided": False}),
    ((20,), {"n_fft": 8, "pad_mode": "replicate", "win_length": 6}),
    ((19,), {"n_fft": 7, "pad_mode": "circular", "hop_length": 2, "window": True}),
    ((2, 18), {"n_fft": 8, "return_complex": False}),
)
# (spectrum shape (batch?, freq, frames), kwargs): one-sided spectra of n_fft // 2 + 1 bins
# unless onesided=False; windows positive, so the overlap-add never vanishes.
ISTFT_SAMPLES = (
    ((5, 7), {"n_fft": 8}),
    ((2, 5, 5), {"n_fft": 8, "hop_length": 3, "window": True, "length": 14}),
    ((4, 9), {"n_fft": 7, "win_length": 5, "window": True, "normalized": True}),
    ((5, 6), {"n_fft": 8, "hop_length": 2, "center": False}),
    ((6, 6), {"n_fft": 6, "onesided": False, "return_complex": True}),
    ((2, 8, 4), {"n_fft": 8, "onesided": False, "length": 20}),
)


def _stft_samples(shapes_and_kwargs):
    def samples(dtype):
        for i, (shape, kw) in enumerate(shapes_and_kwargs):
            kw = dict(kw)
            tensors = [make_torch(shape, dtype, 300 + i)]
            if kw.pop("window", False):
                points = kw.get("win_length", kw["n_fft"])
                tensors.append(make_torch((points,), REAL_OF.get(dtype, dtype), 400 + i, low=0.5, high=1.5))
            yield f"{list(shape)}{kw}", tensors, kw
    return samples


def _stft(lib, x, w=None, return_complex=True, **k):
    return lib.stft(x, window=w, return_complex=return_complex, **k)


def _istft(lib, x, w=None, **k):
    return lib.istft(x, window=w, **k)


register(
    OpInfo("stft", _stft, dtypes=("float32", "float64", "complex64", "complex128"), sample_inputs=_stft_samples(
        STFT_SAMPLES), dtype_tolerances=STFT_TOL, supports_out=False, grad_samples=len(STFT_SAMPLES)),
    OpInfo("istft", _istft, dtypes=("complex64", "complex128"), sample_inputs=_stft_samples(ISTFT_SAMPLES),
           dtype_tolerances=STFT_TOL, supports_out=False, grad_samples=len(ISTFT_SAMPLES)),
    window("hann_window", 8), window("hann_window", 7, False),
    window("hamming_window", 8), window("hamming_window", 9, True, 0.6), window("hamming_window", 9, False, 0.6, 0.3),
    window("blackman_window", 8), window("blackman_window", 7, False),
    window("bartlett_window", 8), window("bartlett_window", 7, False),
    window("kaiser_window", 8), window("kaiser_window", 7, False), window("kaiser_window", 9, True, 5.0),
)
