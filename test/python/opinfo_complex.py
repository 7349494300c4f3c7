"""OpInfo entries for the complex-number operators (ops.yaml's "complex numbers" section):
real and imag views, conj_physical, angle, and the constructors polar and complex."""
from opinfo import GradSample, Layout, OpInfo, register

FLOAT_PAIR = ("float32", "float64")
PAIRS = ((Layout((3, 4)), Layout((3, 4))), (Layout((4, 1)), Layout((1, 5))), (Layout(()), Layout((2, 3))),
         (Layout((3, 4), "transposed"), Layout((3, 4), "stepped")), (Layout((0, 3)), Layout((3,))))


def _pair_samples(dtype, low=-3.0):
    for i, (a, b) in enumerate(PAIRS):
        yield f"{a}-{b}", [a.make(dtype, 10 * i, low, 3.0), b.make(dtype, 10 * i + 1, -3.0, 3.0)], {}


def _polar_samples(dtype):
    # magnitudes are non-negative: torch's polar (and its derivative) assume it
    return _pair_samples(dtype, low=0.1)


register(
    # real of a real tensor is the tensor; imag of one raises (test_ops compares the error)
    OpInfo("real", lambda lib, a: lib.real(a), supports_out=False),
    OpInfo("imag", lambda lib, a: lib.imag(a), supports_out=False),
    # (the float64 samples are their own conjugates: the GradSample reaches _conj_physical)
    OpInfo("conj_physical", lambda lib, a: lib.conj_physical(a), method="conj_physical", inplace="conj_physical_",
           covers=("_conj_physical",),
           grads=(GradSample(lambda lib, x: lib.view_as_real(lib.conj_physical(lib.view_as_complex(x)) * (2 - 1j)),
                             ([[0.5, 1.5], [-1.0, 0.25]],), gradgrad=True),)),
    OpInfo("angle", lambda lib, a: lib.angle(a), method="angle"),
    # torch.polar/complex take Float or Double tensors of one dtype (Half makes ComplexHalf,
    # a dtype Tessera does not have: NotImplementedError, tested in test_complex_autograd)
    OpInfo("polar", lambda lib, r, theta: lib.polar(r, theta), arity=2, dtypes=FLOAT_PAIR,
           sample_inputs=_polar_samples,
           grads=(GradSample(lambda lib, r, t: lib.polar(r, t), ([0.5, 1.5, 0.2], [0.3, -2.0, 1.0]), gradgrad=True),)),
    OpInfo("complex", lambda lib, re, im: lib.complex(re, im), arity=2, dtypes=FLOAT_PAIR,
           sample_inputs=_pair_samples,
           grads=(GradSample(lambda lib, re, im: lib.complex(re, im), ([0.5, 1.5], [0.3, -2.0]), gradgrad=True),)),
)
