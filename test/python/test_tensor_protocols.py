"""Python protocols of tessera.Tensor against torch.Tensor: arithmetic, bitwise and
comparison operators with tensors, Python numbers and numpy arrays on either side,
their in-place forms, unary operators, len / iter / bool / int / float / complex /
index / contains / reversed, and hashing by identity."""
import operator

import numpy as np
import pytest
import torch

import tessera
from opinfo import assert_same, make_torch, to_tessera, OpInfo

_INFO = OpInfo("protocols", lambda L: None)

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "&": operator.and_, "|": operator.or_, "^": operator.xor,
    "<<": operator.lshift, ">>": operator.rshift, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
INPLACE = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "&=": operator.iand,
    "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift,
}
BITWISE = {"&", "|", "^", "<<", ">>", "&=", "|=", "^=", "<<=", ">>="}


def _operands(dtype):
    low, high = (1, 4) if dtype in ("int64", "int32", "uint8") else (-3.0, 3.0)
    t = make_torch((3, 4), dtype, 11, low, high)
    u = make_torch((4,), dtype, 12, low, high)
    if dtype.startswith("float"):
        u = u.abs() + 0.5  # away from zero divisors and negative bases
    return t, u


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 (both libraries must fail the same way)
        return None, type(e).__name__


def _check(got, want, dtype, context):
    g, ge = got
    w, we = want
    assert ge == we, f"{context}: tessera {ge or 'returned'}, torch {we or 'returned'}"
    if we is None:
        if isinstance(w, torch.Tensor):
            assert_same(g, w, _INFO, str(w.dtype).split(".")[1], context)
        else:
            assert g == w, context


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_operators_match_torch(op, dtype):
    fn = BINARY[op]
    t, u = _operands(dtype)
    s, v = to_tessera(t), to_tessera(u)
    numbers = [2, -1, 1.5, True] if dtype != "bool" else [True, 1, 0.5]
    if op in ("<<", ">>"):
        # A negative shift count is undefined behaviour in torch 1.13's kernel; current torch
        # (and tessera) give 0 (or -1 for negatives shifted right), so it is left out here.
        numbers = [n for n in numbers if n != -1]
    _check(_outcome(lambda: fn(s, v)), _outcome(lambda: fn(t, u)), dtype, f"tensor {op} tensor")
    for n in numbers:
        _check(_outcome(lambda: fn(s, n)), _outcome(lambda: fn(t, n)), dtype, f"tensor {op} {n!r}")
        _check(_outcome(lambda: fn(n, s)), _outcome(lambda: fn(n, t)), dtype, f"{n!r} {op} tensor")
    if op in ("+", "-", "*") and dtype.startswith("float"):
        arr = u.numpy()  # torch reads a numpy operand as a tensor of its dtype
        _check(_outcome(lambda: fn(s, arr)), _outcome(lambda: fn(t, arr)), dtype, f"tensor {op} ndarray")


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_operators_match_torch(op, dtype):
    fn = INPLACE[op]
    for other in ("tensor", 2, 1.5, True):
        t, u = _operands(dtype)
        s, v = to_tessera(t), to_tessera(u)
        rt, rs = (u, v) if other == "tensor" else (other, other)
        want = _outcome(lambda: fn(t, rt))
        got = _outcome(lambda: fn(s, rs))
        _check(got, want, dtype, f"tensor {op} {other!r}")
        if want[1] is None:
            assert got[0] is s, f"{op} must return the same tensor object"
            assert_same(s, t, _INFO, str(t.dtype).split(".")[1], f"{op} {other!r}")


def test_operator_edge_cases_match_torch():
    cases = [
        lambda L: L.tensor([1, 2]) == None,  # noqa: E711
        lambda L: L.tensor([1, 2]) != "a",
        lambda L: L.tensor([1, 2]) < "a",
        lambda L: L.tensor([1, 2]) + "a",
        lambda L: L.tensor([1, 2]) ** -1,
        lambda L: pow(L.tensor([1, 2]), 2, 3),
        lambda L: 2 ** L.tensor([1.0, -2.0]),
        lambda L: L.tensor([1.5]) << 1,
        lambda L: L.tensor([True]) - L.tensor([False]),
        lambda L: L.tensor([3, 4]) @ L.tensor([1, 2]),
        lambda L: L.ones(2, 3) @ L.ones(3),
        lambda L: L.tensor([1, 2]) @ 2,
        lambda L: 1 / L.tensor([0.0, 2.0]),
        lambda L: 7 // L.tensor([2, -3]),
        lambda L: -7 % L.tensor([2, 3]),
        lambda L: L.tensor(2) ** 62,
        lambda L: (1 + 2j) * L.tensor([1.0, 2.0]),
    ]
    for i, case in enumerate(cases):
        want = _outcome(lambda: case(torch))
        got = _outcome(lambda: case(tessera))
        _check(got, want, "", f"case {i}")


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64", "uint8"])
def test_unary_operators_match_torch(dtype):
    t = make_torch((2, 3), dtype, 13)
    s = to_tessera(t)
    for name, fn in (("neg", operator.neg), ("pos", operator.pos), ("abs", abs), ("invert", operator.invert)):
        _check(_outcome(lambda: fn(s)), _outcome(lambda: fn(t)), dtype, name)


def test_conversions_match_torch():
    for data in (2.5, -3, True, [4], [[0.0]], [1.0, 2.0], []):
        t, s = torch.tensor(data), tessera.tensor(data)
        for name, fn in (("bool", bool), ("int", int), ("float", float), ("complex", complex),
                         ("index", operator.index), ("len", len)):
            _check(_outcome(lambda: fn(s)), _outcome(lambda: fn(t)), "", f"{name}({data!r})")
    assert complex(tessera.tensor(1 + 2j)) == 1 + 2j
    assert [1, 2, 3][tessera.tensor(1)] == 2


def test_iteration_contains_and_reversed():
    t = torch.arange(12).reshape(3, 4)
    s = tessera.arange(12).reshape(3, 4)
    rows = list(s)
    assert len(rows) == 3 and all(tuple(r.shape) == (4,) for r in rows)
    assert [r.tolist() for r in rows] == [r.tolist() for r in t]
    rows[0][0] = 100  # rows are views
    assert s[0, 0].item() == 100
    assert [x.item() for x in tessera.tensor([1.5, 2.5])] == [1.5, 2.5]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(tessera.tensor(1.0))
    assert 5 in s and 99 not in s and s[1] in s and 2.0 in tessera.tensor([1.0, 2.0])
    assert tessera.tensor([99, 99, 99, 99]) not in s and tessera.tensor([9, 9, 9, 9]) in s
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        "a" in s  # noqa: B015
    assert reversed(s).tolist() == s.tolist()[::-1] and reversed(t).tolist() == t.tolist()[::-1]
    assert reversed(tessera.tensor(3)).item() == 3


def test_hash_by_identity():
    a, b = tessera.tensor([1.0]), tessera.tensor([1.0])
    assert hash(a) == hash(a) and hash(a) != hash(b)
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b"
    assert len({a, b, a}) == 2


def test_numpy_scalars_as_operands():
    t, s = torch.tensor([1.0, 2.0]), tessera.tensor([1.0, 2.0])
    for n in (np.float32(1.5), np.int64(3), np.float64(-2.0), np.bool_(True)):
        assert_same(s * n, t * n, _INFO, "float32", repr(n))
        assert_same(n + s, n + t, _INFO, "float32", repr(n))


def test_rsub_behind_reflected_subtraction():
    t, s = torch.tensor([1.0, 2.5]), tessera.tensor([1.0, 2.5])
    assert_same(tessera.rsub(s, 4.0, alpha=2), torch.rsub(t, 4.0, alpha=2), _INFO, "float32", "rsub.Scalar")
    assert_same(tessera.rsub(s, s * 3), torch.rsub(t, t * 3), _INFO, "float32", "rsub.Tensor")
    assert_same(3 - s, 3 - t, _INFO, "float32", "3 - tensor")
