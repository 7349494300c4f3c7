"""What the math-bit tests share (test_math_bits*.py): the sample values, the kinds of
bit view, and helpers that run one expression through torch 1.13 and tessera and compare
values, bits and memory."""
import warnings

import torch

import tessera

import opinfo
from opinfo import outcome


X = [[1 + 2j, 3 - 1j, -0.5 + 0.25j], [2j, -1 + 0j, 4 + 3j]]
F = [[1.0, -2.0, 3.5], [0.25, -4.0, 6.0]]
MASK = [[True, False, True], [False, True, False]]

# What a bit view is made of: (dtype, the view from its base).
KINDS = {
    "conj": ("complex128", lambda lib, b: b.conj()),
    "neg": ("float64", lambda lib, b: lib._neg_view(b)),
    "neg_complex": ("complex128", lambda lib, b: lib._neg_view(b)),
    "both": ("complex128", lambda lib, b: lib._neg_view(b).conj()),
}


def make(lib, kind):
    """(view, base): a 2x3 view with kind's bits over a fresh base that has none."""
    dtype, view = KINDS[kind]
    base = lib.tensor(X if dtype.startswith("complex") else F, dtype=getattr(lib, dtype))
    return view(lib, base), base


def logical(t):
    """The values a tensor of either library reads as, as a torch tensor without bits."""
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().resolve_neg()
    return opinfo.to_torch(t.detach())


def assert_values(got, want, context=""):
    """Same dtype, shape and values (exact up to rounding); the bits are compared elsewhere."""
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], f"{context}: {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{context}: {tuple(got.shape)} vs {tuple(want.shape)}"
    torch.testing.assert_close(logical(got), logical(want), rtol=1e-12, atol=1e-12, equal_nan=True,
                               msg=lambda m: f"{context}: {m}")


def bits(t):
    return (t.is_conj(), t.is_neg())


def storage_base(t):
    return t.data_ptr() - t.storage_offset() * t.element_size()


def same_view(a, b):
    """a and b view the same memory the same way (not is_set_to: on a tensor with a bit it
    would compare a materialised copy, as it is no fallthrough, in torch either)."""
    return (a.data_ptr() == b.data_ptr() and a.storage_offset() == b.storage_offset() and a.stride() == b.stride()
            and tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype)


def norm(msg):
    return str(msg).replace("tessera.", "torch.").replace("tessera", "torch")


def assert_same_error(got, want, context=""):
    assert type(got).__name__ == type(want).__name__, f"{context}: tessera {got!r}, torch {want!r}"
    assert norm(got) == norm(want), f"{context}: tessera {got!r}, torch {want!r}"


def run_both(fn, *args):
    """fn(lib, *args) in each library, warnings silenced: ((status, value) torch, (status, value) tessera)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return outcome(lambda: fn(torch, *args)), outcome(lambda: fn(tessera, *args))


def toggled(lib, y):
    """y with its own bit flipped: conj() of a complex view, _neg_view of a real one."""
    return y.conj() if y.is_complex() else lib._neg_view(y)


def scalar(y):
    return 2 - 1j if y.is_complex() else 2.5

def flat_values(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]
