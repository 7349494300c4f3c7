"""Operators with a specialised fast path agree with torch 1.13 where the path is taken and
at its edges: pow by a scalar exponent with an exact cheaper form (squares, cubes, roots,
reciprocals), the 2-norm read in one pass when no gradient is wanted (vector_norm,
normalize, renorm), addr as one fused pass, and average pooling with one-wide windows along
the last dim (local_response_norm's channel window). Expected values come from torch at
test time.
"""
import math

import numpy as np
import pytest
import torch

import tessera

EDGES = [-math.inf, -0.0, 0.0, math.inf, math.nan, -2.0, 3.0, 1e-30, 7.5, -1e20]


def as_tessera(t):
    return tessera.from_numpy(t.detach().numpy().copy())


def assert_same(ours, ref, rtol=1e-6, atol=1e-6):
    got = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    want = ref.detach().numpy()
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    # signs of zeros too
    both_zero = (got == 0) & (want == 0)
    assert (np.signbit(got[both_zero]) == np.signbit(want[both_zero])).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [2, 3, -2, 0.5, -0.5, -1, 1, 0, 0.75, -3, 2.0])
def test_pow_scalar_exponent_edges(dtype, exponent):
    ref = torch.tensor(EDGES * 5, dtype=getattr(torch, dtype))
    ours = as_tessera(ref)
    assert_same(ours.pow(exponent), ref.pow(exponent))
    assert_same(ours ** exponent, ref ** exponent)
    # strided bases take the same path
    assert_same(ours.reshape(5, 10).t().pow(exponent), ref.reshape(5, 10).t().pow(exponent))
    ours_c, ref_c = ours.clone(), ref.clone()
    ours_c.pow_(exponent)
    ref_c.pow_(exponent)
    assert_same(ours_c, ref_c)
    out = tessera.empty(50, dtype=ours.dtype)
    tessera.pow(ours, exponent, out=out)
    assert_same(out, ref.pow(exponent))


@pytest.mark.parametrize("name", ["int64", "float16", "bfloat16", "complex64"])
def test_pow_scalar_exponent_other_dtypes(name):
    # integers, halves and complex numbers keep the general kernel
    for exponent in ([2, 3] if name == "int64" else [2, 0.5, -1]):
        ref = torch.tensor([1, 2, 3, 4], dtype=getattr(torch, name))
        got = as_tessera(ref.to(torch.float64)).to(getattr(tessera, name)).pow(exponent)
        want = ref.pow(exponent)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(got.to(tessera.complex128).numpy(), want.to(torch.complex128).numpy(), rtol=1e-2)


def test_pow_tensor_exponent_and_gradients():
    g = torch.Generator().manual_seed(0)
    base = torch.rand(4, 5, generator=g, dtype=torch.float64) + 0.5
    exp = torch.full((1, 5), 2.0, dtype=torch.float64)
    assert_same(as_tessera(base).pow(as_tessera(exp)), base.pow(exp))
    for e in [2, 3, -2, 0.5, -0.5, -1]:
        x = as_tessera(base).requires_grad_()
        assert tessera.autograd.gradcheck(lambda t: t.pow(e), (x,))
        xr = base.clone().requires_grad_()
        xr.pow(e).sum().backward()
        x.pow(e).sum().backward()
        assert_same(x.grad, xr.grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims,keepdim", [(None, False), ((1,), True), ((0,), False), ((0, 2), True), ((-1,), False)])
def test_vector_norm_two_one_pass(dtype, dims, keepdim):
    g = torch.Generator().manual_seed(1)
    ref = torch.randn(6, 7, 300, generator=g, dtype=getattr(torch, dtype))
    ref[0, 0, 0] = math.nan
    ref[1, 1, 1] = math.inf
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for view in (lambda t: t, lambda t: t.transpose(0, 2), lambda t: t[:, ::2]):
        want = torch.linalg.vector_norm(view(ref), 2, dims, keepdim)
        got = tessera.linalg.vector_norm(view(as_tessera(ref)), 2, dims, keepdim)
        assert_same(got, want, rtol=rtol)
        if dims is not None:
            assert_same(view(as_tessera(ref)).norm(2, dims, keepdim), view(ref).norm(2, dims, keepdim), rtol=rtol)


def test_vector_norm_two_empty_and_large():
    for shape, dim in [((0, 4), 1), ((3, 0), 1), ((0,), None)]:
        ref = torch.zeros(shape)
        assert_same(tessera.linalg.vector_norm(as_tessera(ref), 2, dim), torch.linalg.vector_norm(ref, 2, dim))
    # (against the float64 norm: torch's float32 sum of 1.5M squares is itself off by ~2e-5)
    ref = torch.randn(3, 1 << 19, generator=torch.Generator().manual_seed(2))
    exact = ref.double()
    assert_same(tessera.linalg.vector_norm(as_tessera(ref), dim=1), exact.norm(dim=1).float(), rtol=1e-5)
    assert_same(tessera.linalg.vector_norm(as_tessera(ref)), exact.norm().float(), rtol=1e-5)
    col = ref.t()[:1000]  # columns: the reduced dim is the outer one
    assert_same(tessera.linalg.vector_norm(as_tessera(ref).t()[:1000], dim=0), torch.linalg.vector_norm(col, dim=0),
                rtol=1e-5)


def test_norm_function_argument_forms():
    ref = torch.arange(24.0).reshape(2, 3, 4) - 11
    ours = as_tessera(ref)
    for args, kw in [((), {}), ((1,), {}), ((), {"dim": 1}), (("fro",), {"dim": (0, 2)}), ((None,), {"dim": -1}),
                     ((3,), {"dim": [0, 1], "keepdim": True}), ((math.inf,), {"dim": ()}), ((2,), {"dim": []}),
                     ((2,), {"dim": 1, "dtype": torch.float64})]:
        want = torch.norm(ref, *args, **kw)
        kw_t = dict(kw, dtype=tessera.float64) if "dtype" in kw else kw
        assert_same(tessera.norm(ours, *args, **kw_t), want, rtol=1e-6)
        assert_same(ours.norm(*args, **kw_t), ref.norm(*args, **kw), rtol=1e-6)
    out = tessera.empty(0)
    tessera.norm(ours, 2, 1, out=out)
    assert_same(out, torch.norm(ref, 2, 1))
    for lib, x in ((torch, ref), (tessera, ours)):
        with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3 dimensions instead."):
            lib.norm(x, dim=(0, 1, 2))
        with pytest.raises(ValueError, match="dtype argument is not supported in frobenius norm"):
            lib.norm(x, "fro", dtype=lib.float64)
        with pytest.raises(RuntimeError, match="only valid string values are 'fro' and 'nuc', found abc"):
            lib.norm(x, "abc")
        with pytest.raises(RuntimeError, match="input dtype should be either floating point or complex"):
            lib.norm(lib.arange(3), dim=0)
    # the nuclear norm (through linalg.svdvals) of a matrix, or over two dims
    assert_same(tessera.norm(ours[0], "nuc"), torch.norm(ref[0], "nuc"), rtol=1e-6)
    assert_same(ours.norm("nuc", dim=(0, 2), keepdim=True), ref.norm("nuc", dim=(0, 2), keepdim=True), rtol=1e-6)


def test_normalize_and_renorm_forward_and_backward():
    g = torch.Generator().manual_seed(3)
    ref = torch.randn(8, 33, generator=g, dtype=torch.float64)
    ref[2] = 0
    for dim in (0, 1, -1):
        assert_same(tessera.nn.functional.normalize(as_tessera(ref), dim=dim),
                    torch.nn.functional.normalize(ref, dim=dim), rtol=1e-12)
    for p, dim, maxnorm in [(2, 0, 1.0), (2, 1, 0.5), (1, 0, 2.0), (3, 1, 0.1)]:
        assert_same(tessera.renorm(as_tessera(ref), p, dim, maxnorm), torch.renorm(ref, p, dim, maxnorm), rtol=1e-12)
    x = as_tessera(ref[:, :5]).requires_grad_()
    assert tessera.autograd.gradcheck(lambda t: tessera.nn.functional.normalize(t + 0.1, dim=1), (x,))


def test_addr_fused_forward_forms():
    g = torch.Generator().manual_seed(4)
    a, u, v = torch.randn(5, 6, generator=g), torch.randn(5, generator=g), torch.randn(6, generator=g)
    ta, tu, tv = as_tessera(a), as_tessera(u), as_tessera(v)
    for kw in [{}, {"beta": 2.0}, {"alpha": -0.5}, {"beta": 0.5, "alpha": 3}, {"beta": 0}]:
        assert_same(tessera.addr(ta, tu, tv, **kw), torch.addr(a, u, v, **kw))
        assert_same(ta.addr(tu, tv, **kw), a.addr(u, v, **kw))
    # broadcast self, integer tensors, mixed dtypes, complex alpha, bool vectors
    assert_same(tessera.addr(as_tessera(a[0]), tu, tv), torch.addr(a[0], u, v))
    assert_same(tessera.addr(as_tessera(torch.tensor(2.0)), tu, tv), torch.addr(torch.tensor(2.0), u, v))
    ai, ui, vi = torch.arange(6).reshape(2, 3), torch.tensor([1, -2]), torch.tensor([3, 4, 5])
    assert_same(tessera.addr(as_tessera(ai), as_tessera(ui), as_tessera(vi), beta=2, alpha=3),
                torch.addr(ai, ui, vi, beta=2, alpha=3))
    assert_same(tessera.addr(as_tessera(ai), as_tessera(u[:2]), as_tessera(vi)), torch.addr(ai, u[:2], vi))
    assert_same(tessera.addr(as_tessera(a.double()), tu, tv), torch.addr(a.double(), u, v))
    ub, vb = torch.tensor([True, False]), torch.tensor([True, True, False])
    assert_same(tessera.addr(as_tessera(ai), as_tessera(ub), as_tessera(vb)), torch.addr(ai, ub, vb))
    ac = a.to(torch.complex64)
    assert np.allclose(tessera.addr(as_tessera(ac), tu, tv, alpha=1j).numpy(), torch.addr(ac, u, v, alpha=1j).numpy())
    out = tessera.empty(5, 6)
    tessera.addr(ta, tu, tv, out=out)
    assert_same(out, torch.addr(a, u, v))


@pytest.mark.parametrize("kernel,stride,padding,include_pad", [
    ((5, 1, 1), 1, 0, True), ((3, 1, 1), (2, 1, 1), (1, 0, 0), False), ((1, 1, 1), 1, 0, True), ((2, 2, 1), 1, 0, True)])
def test_avg_pool3d_one_wide_windows(kernel, stride, padding, include_pad):
    g = torch.Generator().manual_seed(5)
    ref = torch.randn(2, 3, 9, 4, 17, generator=g, dtype=torch.float64, requires_grad=True)
    ours = as_tessera(ref).requires_grad_()
    want = torch.nn.functional.avg_pool3d(ref, kernel, stride, padding, count_include_pad=include_pad)
    got = tessera.nn.functional.avg_pool3d(ours, kernel, stride, padding, count_include_pad=include_pad)
    assert_same(got, want, rtol=1e-12, atol=1e-12)
    gout = torch.randn(want.shape, generator=g, dtype=torch.float64)
    want.backward(gout)
    got.backward(as_tessera(gout))
    assert_same(ours.grad, ref.grad, rtol=1e-12, atol=1e-12)
    small = as_tessera(ref[:1, :1, :6, :2, :3].detach()).requires_grad_()
    assert tessera.autograd.gradcheck(
        lambda t: tessera.nn.functional.avg_pool3d(t, kernel, stride, padding, count_include_pad=include_pad), (small,))


def test_local_response_norm_against_torch():
    g = torch.Generator().manual_seed(6)
    for shape in [(2, 7, 5, 6), (2, 7, 11), (1, 6, 3, 4, 5)]:
        ref = torch.randn(shape, generator=g, dtype=torch.float64, requires_grad=True)
        ours = as_tessera(ref).requires_grad_()
        want = torch.nn.functional.local_response_norm(ref, 3, alpha=0.1, beta=0.75, k=2.0)
        got = tessera.nn.functional.local_response_norm(ours, 3, alpha=0.1, beta=0.75, k=2.0)
        assert_same(got, want, rtol=1e-12, atol=1e-12)
        want.sum().backward()
        got.sum().backward()
        assert_same(ours.grad, ref.grad, rtol=1e-10, atol=1e-12)
