"""OpInfo entries for torch.fft (ops.yaml's "Fourier transforms" section): the one-, two-
and n-dimensional transforms with n / s trimming and padding, dims and norm modes, the
sample frequencies and the shifts. The three kernels underneath (_fft_c2c, _fft_r2c,
_fft_c2r) are covered through them; test_fft.py checks the kernels' own arguments and
larger, prime and Bluestein sizes."""
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
