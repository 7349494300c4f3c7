"""The operators that filled torch 1.13's everyday names (elementwise math, splitting,
meshgrid and friends, writing into copies, renorm / dist) beyond what their registry
entries sweep: torch's argument errors, the forms with two outputs or Python-side
arguments (frexp's out=, meshgrid's indexing and warning), and gradients at special
points."""
import subprocess
import sys
import warnings

import pytest
import torch

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

ERRORS = [
    "lib.deg2rad(lib.tensor([1j]))",
    "lib.rad2deg(lib.tensor([1j]))",
    "lib.isposinf(lib.tensor([1j]))",
    "lib.isneginf(lib.tensor([1j]))",
    "lib.logaddexp2(lib.tensor([1, 2]), lib.tensor([1, 2]))",
    "lib.nextafter(lib.tensor([1, 2]), lib.tensor([1, 2]))",
    "lib.gcd(lib.tensor([1.0]), lib.tensor([2.0]))",
    "lib.lcm(lib.tensor([1.0]), lib.tensor([2.0]))",
    "lib.heaviside(lib.tensor([1.0]), lib.tensor([1], dtype=lib.float64))",
    "lib.heaviside(lib.tensor([1]), lib.tensor([0.5]))",
    "lib.ones(3).float_power_(2)",
    "lib.ones(3, dtype=lib.float64).float_power_(lib.tensor([1j]))",
    "lib.frexp(lib.tensor([1, 2]))",
    "lib.arange(4).ldexp_(lib.tensor([1]))",
    "lib.tensor_split(lib.tensor(1.0), 2)",
    "lib.tensor_split(lib.arange(6), 0)",
    "lib.tensor_split(lib.arange(6), lib.tensor([1.0]))",
    "lib.tensor_split(lib.arange(6), lib.tensor([[1]]))",
    "lib.hsplit(lib.tensor(1.0), 1)",
    "lib.hsplit(lib.ones(4, 4), 3)",
    "lib.hsplit(lib.ones(4, 4), 0)",
    "lib.vsplit(lib.ones(4), 2)",
    "lib.dsplit(lib.ones(4, 4), 2)",
    "lib.take_along_dim(lib.ones(2, 3), lib.tensor([0]), 1)",
    "lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0]], dtype=lib.int32), 1)",
    "lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0, 1, 2, 0]]), 0)",
    "lib.combinations(lib.ones(2, 2))",
    "lib.combinations(lib.arange(3), -1)",
    "lib.cartesian_prod(lib.ones(2, 2))",
    "lib.cartesian_prod(lib.arange(3), lib.ones(2))",
    "lib.block_diag(lib.ones(2, 2, 2))",
    "lib.meshgrid(lib.arange(3), lib.ones(2), indexing='ij')",
    "lib.meshgrid(lib.arange(3), lib.arange(3), indexing='foo')",
    "lib.slice_scatter(lib.zeros(4, 3), lib.ones(3, 3), 1, 0, None, 2)",
    "lib.select_scatter(lib.zeros(4, 3), lib.ones(2), 0, 1)",
    "lib.diagonal_scatter(lib.zeros(3, 3), lib.ones(3), 1)",
    "lib.zeros(2, 3).put_(lib.tensor([0, 7]), lib.ones(2))",
    "lib.zeros(2, 3).put_(lib.tensor([0, -7]), lib.ones(2))",
    "lib.zeros(2, 3).put_(lib.tensor([0, 1], dtype=lib.int32), lib.ones(2))",
    "lib.zeros(2, 3).put_(lib.tensor([0, 1]), lib.ones(2, dtype=lib.float64))",
    "lib.zeros(2, 3).put_(lib.tensor([0, 1]), lib.ones(3))",
    "lib.zeros(3).masked_scatter_(lib.tensor([True, False, True]), lib.ones(1))",
    "lib.zeros(3).masked_scatter_(lib.tensor([True, False, True]), lib.ones(3, dtype=lib.float64))",
    "lib.zeros(2, 3).renorm(2, 0, -1)",
    "lib.zeros(2, 3).renorm(0, 0, 1)",
    "lib.ones(2, 3, dtype=lib.int64).renorm(2, 0, 1)",
    "lib.dist(lib.ones(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64))",
    "lib.mode(lib.tensor([]), 0)",
    "lib.quantile(lib.tensor([1, 2, 3]), 0.3)",
    "lib.quantile(lib.tensor([1.0, 2.0]), 1.3)",
    "lib.quantile(lib.tensor([1.0, 2.0]), lib.tensor([0.2], dtype=lib.float64))",
    "lib.quantile(lib.tensor([1.0, 2.0]), 0.5, interpolation='foo')",
    "lib.quantile(lib.tensor([]), 0.5)",
    "lib.quantile(lib.tensor([1.0, 2.0]), lib.tensor([[0.5]]))",
    "lib.quantile(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 1.5]))",
    "lib.cov(lib.ones(2, 2, 2))",
    "lib.cov(lib.ones(2, 3), fweights=lib.tensor([1.0, 2.0, 3.0]))",
    "lib.cov(lib.ones(2, 3), fweights=lib.tensor([1, 2]))",
    "lib.cov(lib.ones(2, 3), aweights=lib.tensor([1, 2, 3]))",
    "lib.corrcoef(lib.ones(2, 2, 2))",
    "lib.trapezoid(lib.tensor([1.0, 2.0, 4.0]), lib.tensor([0.0, 1.0]))",
    "lib.ones(2).fill_diagonal_(5)",
    "lib.ones(2, 3, 4).fill_diagonal_(5)",
    "lib.fill(lib.ones(2), lib.ones(2))",
    "lib.bucketize(lib.ones(2), lib.ones(2, 2))",
    "lib.chain_matmul()",
    "lib.chain_matmul(lib.ones(2, 3), lib.ones(2))",
    "lib.range(1, 4, 0)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_slice_scatter_reads_start_and_end_as_current_torch():
    # torch 1.13 takes 1:3 for a one-row slice; current torch (and tessera) for two rows
    got = tessera.slice_scatter(tessera.zeros(4, 3), tessera.ones(2, 3), 0, 1, 3)
    want = torch.zeros(4, 3)
    want[1:3] = 1
    assert torch.equal(to_torch(got), want)
    out = tessera.empty(0)
    assert tessera.slice_scatter(tessera.zeros(4, 3), tessera.ones(4, 2), 1, 1, out=out) is out
    want = torch.zeros(4, 3)
    want[:, 1:] = 1
    assert torch.equal(to_torch(out), want)


def test_masked_scatter_fills_in_index_order_on_strided_self():
    # current torch's order (1.13 followed a transposed self's memory order)
    base = make_torch((3, 4), "float64", 1)
    mask = torch.tensor([True, False, True])
    source = make_torch((12,), "float64", 2)
    want = base.t().contiguous().masked_scatter_(mask, source)
    got = to_tessera(base).t().masked_scatter_(to_tessera(mask), to_tessera(source))
    assert torch.equal(to_torch(got), want)


def _torch_first_warning(expr):
    # torch warns once per process: ask a fresh one
    code = ("import warnings, torch\nwith warnings.catch_warnings(record=True) as w:\n"
            f"    warnings.simplefilter('always')\n    {expr}\nprint(str(w[0].message))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip().split(" (Triggered internally")[0]


def test_deprecated_range_and_chain_matmul_warn_like_torch():
    for expr, call in (("torch.range(1, 4)", lambda lib: lib.range(1, 4)),
                       ("torch.chain_matmul(torch.ones(2, 3), torch.ones(3, 2))",
                        lambda lib: lib.chain_matmul(lib.ones(2, 3), lib.ones(3, 2)))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = call(torch)
        with pytest.warns(UserWarning) as ours:
            got = call(tessera)
        assert str(ours[0].message) == _torch_first_warning(expr), expr
        assert torch.equal(to_torch(got), want) and str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]


def test_mode_ties_and_last_occurrence_like_torch():
    x = torch.tensor([[1, 3, 3, 2, 1, 3, 1], [5, 5, 0, 0, 9, 9, 9]])
    for dim in (0, 1, -1):
        want, got = torch.mode(x, dim), tessera.mode(to_tessera(x), dim)
        assert to_torch(got.values).tolist() == want.values.tolist()
        assert to_torch(got.indices).tolist() == want.indices.tolist()


def test_masked_scatter_wants_a_bool_mask():
    # current torch refuses other mask dtypes (1.13 still took uint8 with a deprecation warning)
    with pytest.raises(RuntimeError, match="masked_scatter_ only supports boolean masks, but got mask with dtype Byte"):
        tessera.zeros(3).masked_scatter_(tessera.tensor([1, 0, 1], dtype=tessera.uint8), tessera.ones(3))


def test_frexp_out_and_named_fields():
    x = torch.tensor([0.0, -3.5, 1e-30, 7.25, float("inf"), float("nan")], dtype=torch.float64)
    want = torch.frexp(x)
    got = tessera.frexp(to_tessera(x))
    torch.testing.assert_close(to_torch(got.mantissa), want.mantissa, equal_nan=True)
    assert to_torch(got.exponent).tolist() == want.exponent.tolist() and got.exponent.dtype == tessera.int32
    m, e = tessera.empty(0, dtype=tessera.float64), tessera.empty(0, dtype=tessera.int32)
    result = tessera.frexp(to_tessera(x), out=(m, e))
    assert result[0] is m and result[1] is e
    torch.testing.assert_close(to_torch(m), want.mantissa, equal_nan=True)
    with pytest.raises(RuntimeError, match="expects exponent to have int dtype"):
        tessera.frexp(to_tessera(x), out=(m, tessera.empty(0, dtype=tessera.int64)))


def test_meshgrid_forms_and_warning():
    a, b = make_torch((3,), "float64", 1), make_torch((2,), "float64", 2)
    for kw in ({"indexing": "ij"}, {"indexing": "xy"}):
        want = torch.meshgrid(a, b, **kw)
        got = tessera.meshgrid(to_tessera(a), to_tessera(b), **kw)
        got_list = tessera.meshgrid([to_tessera(a), to_tessera(b)], **kw)
        for w, g, gl in zip(want, got, got_list):
            assert torch.equal(to_torch(g), w) and torch.equal(to_torch(gl), w)
    with pytest.warns(UserWarning, match="indexing argument"):
        got = tessera.meshgrid(to_tessera(a), to_tessera(b))
    assert tuple(got[0].shape) == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tessera.meshgrid(to_tessera(a), indexing="ij")


def test_gradients_at_special_points_like_torch():
    # sinc at 0 (the limit), renorm's scaled rows, dist at equal points, heaviside's refusal
    x = torch.tensor([0.0, 0.5, -1.25, 2.0], dtype=torch.float64, requires_grad=True)
    sx = to_tessera(x.detach()).requires_grad_()
    torch.sinc(x).sum().backward()
    tessera.sinc(sx).sum().backward()
    torch.testing.assert_close(to_torch(sx.grad), x.grad)
    a = torch.tensor([[3.0, 4.0], [0.3, 0.4]], dtype=torch.float64, requires_grad=True)
    sa = to_tessera(a.detach()).requires_grad_()
    w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64)
    (a.renorm(2, 0, 1.0) * w).sum().backward()
    (sa.renorm(2, 0, 1.0) * to_tessera(w)).sum().backward()
    torch.testing.assert_close(to_torch(sa.grad), a.grad)
    p = torch.ones(3, dtype=torch.float64, requires_grad=True)
    sp = to_tessera(p.detach()).requires_grad_()
    torch.dist(p, p.detach()).backward()
    tessera.dist(sp, sp.detach()).backward()
    torch.testing.assert_close(to_torch(sp.grad), p.grad)
    for lib, t in ((torch, torch.ones(2, requires_grad=True)), (tessera, tessera.ones(2, requires_grad=True))):
        with pytest.raises(RuntimeError, match="heaviside"):
            lib.heaviside(t, lib.ones(2)).sum().backward()
