"""OpInfo entries for the complex-number operators (ops.yaml's "complex numbers" section):
real and imag views, the lazy conj() / _neg_view views and their resolve_* / is_* / adjoint
companions, conj_physical, angle, and the constructors polar and complex."""
from opinfo import ALL_DTYPES, GradSample, Layout, OpInfo, register

FLOAT_PAIR = ("float32", "float64")
PAIRS = ((Layout((3, 4)), Layout((3, 4))), (Layout((4, 1)), Layout((1, 5))), (Layout(()), Layout((2, 3))),
         (Layout((3, 4), "transposed"), Layout((3, 4), "stepped")), (Layout((0, 3)), Layout((3,))))


def _pair_samples(dtype, low=-3.0):
    for i, (a, b) in enumerate(PAIRS):
        yield f"{a}-{b}", [a.make(dtype, 10 * i, low, 3.0), b.make(dtype, 10 * i + 1, -3.0, 3.0)], {}


def _polar_samples(dtype):
    # magnitudes are non-negative: torch's polar (and its derivative) assume it
    return _pair_samples(dtype, low=0.1)


# The math bits (test_math_bits.py has the bit table and the fallback, test_math_bits_sweep.py the sweep that feeds
# every entry inputs with a bit). A negative bool view has no values to read (neg of bool
# refuses), so _neg_view's own entry leaves bool out; resolve_neg keeps it (both libraries
# raise there, which test_ops compares).
NO_BOOL = tuple(d for d in ALL_DTYPES if d != "bool")
CZ = ([[0.5, 1.5], [-1.0, 0.25], [2.0, -0.75]],)   # a (3, 2) float64 leaf: three complex numbers


def _is_conj(lib, a):
    y = a.conj()
    return (lib.is_conj(a), a.is_conj(), lib.is_conj(y), y.is_conj(), lib.ops.aten.is_conj(y), y.conj().is_conj(),
            lib._neg_view(a).conj().is_conj(), y[..., None].is_conj(), y.clone().is_conj())


def _is_neg(lib, a):
    n = lib._neg_view(a)
    return (lib.is_neg(a), a.is_neg(), lib.is_neg(n), n.is_neg(), lib.ops.aten.is_neg(n), n._neg_view().is_neg(),
            n.conj().is_neg(), n[..., None].is_neg(), lib.ops.aten.is_neg(a))


register(
    # conj() of a complex tensor is a lazy view carrying the Conjugate bit (through _conj);
    # of a real tensor, the tensor itself
    OpInfo("conj", lambda lib, a: lib.conj(a), method="conj", supports_out=False, covers=("_conj",),
           grads=(GradSample(lambda lib, x: lib.view_as_real(lib.view_as_complex(x).conj() * (2 - 1j)), CZ,
                             "ConjBackward0", gradgrad=True),
                  GradSample(lambda lib, x: lib.view_as_real(lib.view_as_complex(x)._conj().conj() * 1j), CZ,
                             "_conj twice", gradgrad=True))),
    OpInfo("resolve_conj", lambda lib, a: lib.resolve_conj(lib.conj(a)), supports_out=False,
           grads=(GradSample(lambda lib, x: lib.view_as_real(lib.view_as_complex(x).conj().resolve_conj() * (1 + 2j)),
                             CZ, "resolved conj view", gradgrad=True),)),
    OpInfo("resolve_neg", lambda lib, a: lib._neg_view(a).resolve_neg(), supports_out=False,
           grads=(GradSample(lambda lib, x: lib.resolve_neg(lib._neg_view(x)) * x, CZ, "resolved negative view",
                             gradgrad=True),)),
    OpInfo("_neg_view", lambda lib, a: lib._neg_view(a), method="_neg_view", supports_out=False, dtypes=NO_BOOL,
           grads=(GradSample(lambda lib, x: lib._neg_view(x * x).sum(0), CZ, "NegViewBackward0", gradgrad=True),
                  GradSample(lambda lib, x: lib.view_as_real(lib._neg_view(lib.view_as_complex(x)).conj() * (1 - 1j)),
                             CZ, "negative conj view", gradgrad=True))),
    OpInfo("is_conj", _is_conj, supports_out=False, supports_meta=False),
    OpInfo("is_neg", _is_neg, supports_out=False, supports_meta=False),
    # the conjugate transpose of the last two dims (a 1-D tensor raises; 0-dim: the conj)
    OpInfo("adjoint", lambda lib, a: lib.adjoint(a), method="adjoint", supports_out=False,
           grads=(GradSample(lambda lib, x: lib.view_as_real(lib.view_as_complex(x).reshape(1, 3).adjoint() * 2j), CZ,
                             "complex", gradgrad=True),)),
    # real of a real tensor is the tensor; imag of one raises (test_ops compares the error)
    OpInfo("real", lambda lib, a: lib.real(a), supports_out=False),
    OpInfo("imag", lambda lib, a: lib.imag(a), supports_out=False),
    # (the float64 samples are their own conjugates: the GradSample reaches _conj_physical)
    OpInfo("conj_physical", lambda lib, a: lib.conj_physical(a), method="conj_physical", inplace="conj_physical_",
           covers=("_conj_physical",),
           grads=(GradSample(lambda lib, x: lib.view_as_real(lib.conj_physical(lib.view_as_complex(x)) * (2 - 1j)),
                             ([[0.5, 1.5], [-1.0, 0.25]],), gradgrad=True),)),
    OpInfo("angle", lambda lib, a: lib.angle(a), method="angle"),
    # torch.polar/complex take Float or Double tensors of one dtype (complex of Half parts
    # makes complex32: test_complex_autograd)
    OpInfo("polar", lambda lib, r, theta: lib.polar(r, theta), arity=2, dtypes=FLOAT_PAIR,
           sample_inputs=_polar_samples,
           grads=(GradSample(lambda lib, r, t: lib.polar(r, t), ([0.5, 1.5, 0.2], [0.3, -2.0, 1.0]), gradgrad=True),)),
    OpInfo("complex", lambda lib, re, im: lib.complex(re, im), arity=2, dtypes=FLOAT_PAIR,
           sample_inputs=_pair_samples,
           grads=(GradSample(lambda lib, re, im: lib.complex(re, im), ([0.5, 1.5], [0.3, -2.0]), gradgrad=True),)),
)
