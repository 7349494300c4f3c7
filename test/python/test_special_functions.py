"""polygamma against torch: values over positive and negative arguments for n = 0..4 in
float64 and float32, the method and in-place forms, out=, integer inputs, Meta, and the
error for negative n. (Its derivative and digamma's are gradchecked in test_autograd.py.)
logaddexp where naive formulas fail: infinities, NaN, far-apart and huge arguments."""
import math

import pytest
import torch

import tessera

XS = [0.05, 0.3, 1.0, 1.5, 2.75, 7.0, 12.5, 40.0, 1e3, -0.4, -1.3, -2.5, -7.25]


def both(values, dtype):
    return torch.tensor(values, dtype=getattr(torch, dtype)), tessera.tensor(values, dtype=getattr(tessera, dtype))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-10), ("float32", 2e-5)])
def test_values_match_torch(n, dtype, rtol):
    t, m = both(XS, dtype)
    expected = torch.polygamma(n, t)
    got = tessera.polygamma(n, m)
    assert got.dtype == getattr(tessera, dtype)
    # torch's own trigamma (n = 1) is good to ~1e-9 relative; tessera's meets the exact
    # values below to 1e-14.
    rtol = max(rtol, 2e-9) if n == 1 else rtol
    assert torch.allclose(torch.tensor(got.tolist(), dtype=expected.dtype), expected, rtol=rtol, atol=0, equal_nan=True)


def test_exact_values():
    # psi1(1/2) = pi^2 / 2, psi1(1) = pi^2 / 6, psi2(1) = -2 zeta(3), psi3(1) = pi^4 / 15
    x = tessera.tensor([0.5, 1.0], dtype=tessera.float64)
    assert tessera.polygamma(1, x).tolist() == pytest.approx([math.pi ** 2 / 2, math.pi ** 2 / 6], rel=1e-14)
    assert tessera.polygamma(2, x).tolist()[1] == pytest.approx(-2 * 1.2020569031595942, rel=1e-14)
    assert tessera.polygamma(3, x).tolist()[1] == pytest.approx(math.pi ** 4 / 15, rel=1e-14)


def test_poles_and_special_values():
    t, m = both([0.0, -1.0, -3.0, float("inf"), float("nan")], "float64")
    for n in (2, 3):
        got, expected = tessera.polygamma(n, m).tolist(), torch.polygamma(n, t).tolist()
        assert got[:3] == expected[:3] and math.isnan(got[4]) and math.isnan(expected[4])
    # n = 1: poles are +inf (torch's reflection formula gives ~1e32 at negative integers).
    got = tessera.polygamma(1, m).tolist()
    assert got[:3] == [math.inf] * 3 and math.isnan(got[4])
    # The limit at +inf is 0 for every n >= 1 (torch: 0 for n = 1, nan for n >= 2).
    for n in (1, 2, 3):
        assert tessera.polygamma(n, m).tolist()[3] == 0.0


def test_forms():
    t, m = both([0.5, 2.0, -1.5], "float64")
    assert m.polygamma(2).tolist() == pytest.approx(t.polygamma(2).tolist(), rel=1e-12)
    c = m.clone()
    assert c.polygamma_(1) is c and c.tolist() == pytest.approx(t.clone().polygamma_(1).tolist(), rel=2e-9)
    out = tessera.empty(0, dtype=tessera.float64)
    assert tessera.polygamma(3, m, out=out) is out and out.tolist() == pytest.approx(torch.polygamma(3, t).tolist())
    ints_t, ints_m = torch.tensor([1, 2, 5]), tessera.tensor([1, 2, 5])
    r = tessera.polygamma(1, ints_m)
    assert r.dtype == tessera.float32 and r.tolist() == pytest.approx(torch.polygamma(1, ints_t).tolist(), rel=1e-6)
    meta = tessera.polygamma(2, tessera.empty(4, 5, device="meta"))
    assert meta.device.type == "meta" and tuple(meta.shape) == (4, 5) and meta.dtype == tessera.float32


def test_negative_n_raises_like_torch():
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n\."):
            lib.polygamma(-1, lib.tensor([1.0]))


def test_large_order_and_far_arguments():
    # psi^(171)(2) = 171! zeta(172, 2), about 171! / 2^172: n! alone overflows a double.
    got = tessera.polygamma(171, tessera.tensor([2.0], dtype=tessera.float64)).tolist()[0]
    assert math.log(got) == pytest.approx(math.lgamma(172) - 172 * math.log(2), rel=1e-12)
    assert tessera.polygamma(171, tessera.tensor([1e3], dtype=tessera.float64)).tolist() == [0.0]
    # Far below zero the direct sum would take ~|x| steps: NaN at once (torch loops ~|x| times).
    assert math.isnan(tessera.polygamma(2, tessera.tensor([-1e7 + 0.5], dtype=tessera.float64)).tolist()[0])


def test_keyword_input_like_torch():
    t, m = both([0.5, 2.0], "float64")
    assert tessera.polygamma(1, input=m).tolist() == pytest.approx(torch.polygamma(1, input=t).tolist(), rel=2e-9)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_logaddexp_at_the_edges(dtype):
    inf, nan = math.inf, math.nan
    a = [inf, -inf, inf, -inf, nan, 1.0, 1000.0, -1000.0, 80.0, 0.0]
    b = [inf, -inf, -inf, 5.0, 1.0, nan, 1000.0, -1000.0, -80.0, 0.0]
    ta, ma = both(a, dtype)
    tb, mb = both(b, dtype)
    want = torch.logaddexp(ta, tb)
    got = tessera.logaddexp(ma, mb)
    torch.testing.assert_close(torch.from_numpy(got.float().numpy()), want.float(), equal_nan=True)
    # integer tensors are refused, as torch 1.13 does
    with pytest.raises(RuntimeError, match="\"logaddexp_cpu\" not implemented for 'Long'"):
        tessera.logaddexp(tessera.tensor([1]), tessera.tensor([2]))
