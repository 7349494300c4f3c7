"""The nn modules and functionals added with the 3-D pooling family, against torch:
MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, ConvTranspose3d, MaxUnpool1d/2d/3d,
LPPool1d/2d, LocalResponseNorm, Fold and Unfold (printed form, outputs, grads from the same
weights), and the argument errors of max_unpool, affine_grid, pdist, triu/tril_indices and
normalize; gumbel_softmax's laws (its noise comes from each library's own generator)."""
import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

MODULES = [
    ("MaxPool3d(2)", (2, 3, 4, 6, 5)),
    ("MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=1, dilation=(1, 1, 2), ceil_mode=True)", (1, 2, 5, 6, 7)),
    ("AvgPool3d(3, stride=2, padding=1, count_include_pad=False)", (2, 2, 5, 6, 7)),
    ("AvgPool3d((2, 2, 3), divisor_override=5)", (2, 4, 6, 5)),
    ("AdaptiveAvgPool3d((2, None, 3))", (2, 3, 4, 5, 7)),
    ("AdaptiveMaxPool3d(2)", (1, 3, 4, 5, 6)),
    ("ConvTranspose3d(3, 4, (2, 3, 2), stride=2, padding=(1, 0, 0), output_padding=1)", (2, 3, 3, 4, 3)),
    ("ConvTranspose3d(4, 2, 2, groups=2, bias=False, dilation=2)", (4, 2, 3, 2)),
    ("LPPool1d(2, 3, stride=2)", (2, 3, 9)),
    ("LPPool2d(1.5, (2, 3), ceil_mode=True)", (2, 3, 5, 7)),
    ("LocalResponseNorm(3, alpha=0.01, beta=0.5, k=2.0)", (2, 6, 4, 5)),
    ("LocalResponseNorm(2)", (2, 5, 7)),
    ("Fold(output_size=(4, 5), kernel_size=(2, 3), padding=1)", (2, 12, 25)),
    ("Unfold(kernel_size=2, dilation=(1, 2), stride=2)", (2, 3, 5, 6)),
]


def _copy_weights(src, dst):
    for name, value in src.state_dict().items():
        getattr(dst, name).data = to_tessera(value.detach().clone())


@pytest.mark.parametrize("expr,shape", MODULES, ids=[m for m, _ in MODULES])
def test_module_matches_torch(expr, shape):
    torch.manual_seed(0)
    theirs, ours = eval(f"torch.nn.{expr}"), eval(f"tessera.nn.{expr}")
    assert repr(ours) == repr(theirs)
    _copy_weights(theirs, ours)
    low = 0.1 if "LPPool" in expr else -2.0  # (fractional powers of negatives are NaN in both)
    x = make_torch(shape, "float64", seed=3, low=low).to(torch.float64).requires_grad_()
    theirs, ours = theirs.double(), ours.double()
    sx = to_tessera(x.detach()).requires_grad_()
    want, got = theirs(x), ours(sx)
    torch.testing.assert_close(to_torch(got), want, rtol=1e-10, atol=1e-12)
    w = make_torch(tuple(want.shape), "float64", seed=4)
    (want * w).sum().backward()
    (got * to_tessera(w)).sum().backward()
    torch.testing.assert_close(to_torch(sx.grad), x.grad, rtol=1e-10, atol=1e-12)
    for (name, p), q in zip(theirs.named_parameters(), ours.parameters()):
        torch.testing.assert_close(to_torch(q.grad), p.grad, rtol=1e-10, atol=1e-12, msg=name)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_modules_invert_max_pool(n):
    shape = {1: (2, 3, 8), 2: (2, 3, 6, 4), 3: (1, 2, 4, 6, 4)}[n]
    x = make_torch(shape, "float64", seed=n)
    outs = []
    for lib in (torch, tessera):
        pool = getattr(lib.nn, f"MaxPool{n}d")(2, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{n}d")(2)
        value, indices = pool(x if lib is torch else to_tessera(x))
        outs.append((unpool(value, indices), unpool(value, indices, output_size=shape), repr(unpool)))
    assert outs[0][2] == outs[1][2]
    for want, got in zip(outs[0][:2], outs[1][:2]):
        torch.testing.assert_close(to_torch(got), want, rtol=0, atol=0)


ERRORS = [
    "F.max_unpool2d(*F.max_pool2d(lib.zeros(1, 2, 4, 4), 2, return_indices=True), 2, output_size=(9, 9))",
    "F.max_unpool2d(*F.max_pool2d(lib.zeros(1, 2, 4, 4), 2, return_indices=True), 2, output_size=(1, 4, 4))",
    "F.max_unpool2d(lib.zeros(1, 2, 2, 2), lib.zeros(1, 2, 2, 2, dtype=lib.int32), 2)",
    "F.max_unpool2d(lib.zeros(1, 2, 2, 2), lib.full((1, 2, 2, 2), 16, dtype=lib.int64), 2)",
    "F.max_unpool2d(lib.zeros(1, 2, 2, 2), lib.zeros(1, 2, 2, 1, dtype=lib.int64), 2)",
    "F.max_unpool2d(lib.zeros(2, 2), lib.zeros(2, 2, dtype=lib.int64), 2)",
    "F.max_unpool3d(lib.zeros(1, 2, 2, 2, 2), lib.full((1, 2, 2, 2, 2), 64, dtype=lib.int64), 2)",
    "F.max_unpool3d(lib.zeros(2, 2, 2), lib.zeros(2, 2, 2, dtype=lib.int64), 2)",
    "F.max_unpool1d(lib.zeros(1, 2, 3), lib.full((1, 2, 3), 6, dtype=lib.int64), 2)",
    "F.affine_grid(lib.zeros(2, 3, 3), [2, 1, 3, 3], align_corners=False)",
    "F.affine_grid(lib.zeros(2, 3, 4), [2, 1, 3, 3, 3, 3], align_corners=False)",
    "F.affine_grid(lib.zeros(2, 2, 3), [2, 1, 0, 3], align_corners=False)",
    "F.affine_grid(lib.zeros(2, 2, 4), [2, 1, 3, 3, 2], align_corners=False)",
    "lib.affine_grid_generator(lib.zeros(2, 2, 3), [2, 3], False)",
    "lib.pdist(lib.zeros(3))",
    "lib.pdist(lib.zeros(3, 2, dtype=lib.int64))",
    "lib.pdist(lib.zeros(3, 2), -1.0)",
    "lib.triu_indices(-1, 3)",
    "lib.tril_indices(3, -2)",
    "lib.triu_indices(3, 3, dtype=lib.float32)",
    "F.max_unpool2d(*F.max_pool2d(lib.zeros(1, 2, 4, 4), 2, return_indices=True), 2, output_size=[1, 2, 9, 4])",
]


def test_error_messages_that_name_the_library():
    F = tessera.nn.functional
    with pytest.raises(ValueError, match="Expected theta to have floating point type, but got tessera.int64"):
        F.affine_grid(tessera.zeros(2, 2, 3, dtype=tessera.int64), [2, 1, 3, 3], align_corners=False)
    # current torch's wording (1.13's carries a run of spaces from a line continuation)
    with pytest.raises(ValueError, match=r"^Expected 3D or higher dimensionality input \(got 2 dimensions\)$"):
        F.local_response_norm(tessera.zeros(3, 4), 2)


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_pdist_values_and_edges_like_torch():
    x = make_torch((6, 4), "float64", seed=7)
    x[3] = x[1]  # a repeated row: distance 0, and a zero grad there as torch's
    for p in (0.0, 0.5, 1.0, 2.0, 3.0, float("inf")):
        tx, sx = x.clone().requires_grad_(), to_tessera(x).requires_grad_()
        want, got = torch.pdist(tx, p), tessera.pdist(sx, p)
        torch.testing.assert_close(to_torch(got), want, rtol=1e-12, atol=1e-12)
        if p >= 1:
            want.sum().backward(), got.sum().backward()
            torch.testing.assert_close(to_torch(sx.grad), tx.grad, rtol=1e-10, atol=1e-12, msg=f"p={p}")
    for shape in ((0, 3), (1, 3), (4, 0)):
        assert tuple(tessera.pdist(tessera.zeros(shape)).shape) == tuple(torch.pdist(torch.zeros(shape)).shape)


def test_triangle_indices_like_torch():
    for row, col in ((0, 3), (4, 4), (3, 6), (6, 2)):
        for offset in (-7, -2, 0, 1, 5):
            for name in ("triu_indices", "tril_indices"):
                want, got = getattr(torch, name)(row, col, offset), getattr(tessera, name)(row, col, offset)
                assert got.dtype == tessera.int64 and to_torch(got).tolist() == want.tolist(), (name, row, col, offset)
    assert tessera.triu_indices(3, 3, device="meta").shape == (2, 6)
    out = tessera.empty(0, dtype=tessera.int32)
    tessera.tril_indices(3, 3, out=out)
    assert out.dtype == tessera.int32 and to_torch(out).tolist() == torch.tril_indices(3, 3).tolist()


def test_normalize_out_and_dims_like_torch():
    x = make_torch((3, 4, 2), "float64", seed=9)
    for kw in ({}, {"p": 1.0, "dim": -1}, {"p": float("inf"), "dim": 0}, {"dim": 2, "eps": 10.0}):
        torch.testing.assert_close(to_torch(tessera.nn.functional.normalize(to_tessera(x), **kw)), TF.normalize(x, **kw))
    out = tessera.empty(3, 4, 2, dtype=tessera.float64)
    assert tessera.nn.functional.normalize(to_tessera(x), out=out) is out
    torch.testing.assert_close(to_torch(out), TF.normalize(x))


def test_gumbel_softmax_laws():
    F = tessera.nn.functional
    logits = tessera.tensor([[1.0, 2.0, 0.5, -1.0]], dtype=tessera.float64).repeat(20000, 1)
    tessera.manual_seed(0)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert torch.allclose(to_torch(soft.sum(-1)), torch.ones(20000, dtype=torch.float64))
    hard = F.gumbel_softmax(logits, hard=True)
    assert to_torch(hard).sum(-1).eq(1).all() and set(to_torch(hard).unique().tolist()) <= {0.0, 1.0}
    # the argmax of logits + Gumbel noise is a draw from softmax(logits)
    frequencies = to_torch(hard).mean(0)
    torch.testing.assert_close(frequencies, torch.softmax(torch.tensor([1.0, 2.0, 0.5, -1.0], dtype=torch.float64), 0),
                               rtol=0, atol=0.015)
    # straight-through: the hard sample's grad is the soft sample's
    x = tessera.zeros(3, 5, requires_grad=True)
    tessera.manual_seed(1)
    F.gumbel_softmax(x, hard=True, dim=0)[0].sum().backward()
    assert tuple(x.grad.shape) == (3, 5) and to_torch(x.grad).abs().sum() > 0
    with pytest.warns(UserWarning, match="deprecated"):
        F.gumbel_softmax(x.detach(), eps=1e-3)


# ---------------------------------------------------------------- fractional max pooling

@pytest.mark.parametrize("dims, kw", [
    (2, {"output_size": (4, 3)}), (2, {"output_ratio": 0.5, "return_indices": True}),
    (3, {"output_size": 2}), (3, {"output_ratio": (0.5, 0.75, 0.6), "return_indices": True}),
])
def test_fractional_max_pool_modules_match_torch_with_the_same_samples(dims, kw):
    shape = (2, 3, 9, 8) if dims == 2 else (2, 2, 6, 7, 5)
    x = make_torch(shape, "float64", seed=dims)
    samples = make_torch((2, shape[1], dims), "float64", seed=5, low=0.0, high=1.0)
    results = []
    for lib in (torch, tessera):
        conv = (lambda t: t) if lib is torch else to_tessera
        module = getattr(lib.nn, f"FractionalMaxPool{dims}d")(2, _random_samples=conv(samples), **kw)
        inp = conv(x).requires_grad_()
        out = module(inp)
        value = out[0] if kw.get("return_indices") else out
        (value * conv(make_torch(tuple(value.shape), "float64", seed=7))).sum().backward()
        results.append((repr(module), out, inp.grad))
    assert results[0][0] == results[1][0]
    for want, got in zip(results[0][1:], results[1][1:]):
        for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
            torch.testing.assert_close(to_torch(g), w, rtol=0, atol=0)


def test_fractional_max_pool_draws_its_own_samples():
    x = tessera.randn(2, 3, 10, 10)
    out, indices = tessera.nn.functional.fractional_max_pool2d(x, 3, output_ratio=0.5, return_indices=True)
    assert out.shape == (2, 3, 5, 5) and indices.dtype == tessera.int64
    # each output is the element of x its index names
    assert tessera.equal(x.flatten(2).gather(2, indices.flatten(2)), out.flatten(2))


FRACTIONAL_ERRORS = [
    "F.fractional_max_pool2d(lib.zeros(8, 8), 2, output_size=4)",
    "F.fractional_max_pool2d(lib.zeros(1, 1, 8, 8), 2, output_size=8)",
    "F.fractional_max_pool2d(lib.zeros(1, 0, 8, 8), 2, output_size=4)",
    "F.fractional_max_pool2d(lib.zeros(1, 1, 8, 8, dtype=lib.int64), 2, output_size=4)",
    "F.fractional_max_pool2d(lib.zeros(1, 1, 8, 8), 2, output_size=4, _random_samples=lib.zeros(1, 1, 2).double())",
    "F.fractional_max_pool2d(lib.zeros(1, 1, 8, 8), 2)",
    "F.fractional_max_pool3d(lib.zeros(1, 2, 3, 8, 8), 2, output_size=4)",
    "lib.nn.FractionalMaxPool2d(2)",
    "lib.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)",
    "lib.nn.FractionalMaxPool3d(2, output_ratio=1.5)",
]


@pytest.mark.parametrize("expr", FRACTIONAL_ERRORS)
def test_fractional_max_pool_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_fractional_max_pool_checks_what_torch_leaves_unchecked():
    """torch 1.13 reads past a random_samples of the wrong shape and pools empty windows
    for a zero kernel; tessera refuses both."""
    F = tessera.nn.functional
    with pytest.raises(RuntimeError, match="expected random_samples of shape"):
        F.fractional_max_pool2d(tessera.zeros(2, 3, 8, 8), 2, output_size=4, _random_samples=tessera.rand(1, 3, 2))
    with pytest.raises(RuntimeError, match="kernel_size must be greater than zero"):
        F.fractional_max_pool2d(tessera.zeros(1, 1, 8, 8), (0, 2), output_size=4)


def test_fractional_max_pool_samples_outside_the_unit_interval_stay_inside_the_input():
    """torch 1.13 reads outside the input for a random sample of 1 or more (or NaN); tessera
    keeps each window inside, so the result is some window's maximum."""
    x = tessera.arange(64.0).reshape(1, 1, 8, 8)
    for u in (1.0, 7.5, -3.0, float("nan")):
        samples = tessera.full((1, 1, 2), u)
        out, indices = tessera.nn.functional.fractional_max_pool2d(x, 2, output_size=3, _random_samples=samples,
                                                                   return_indices=True)
        assert indices.min().item() >= 0 and indices.max().item() < 64
        assert tessera.equal(x.flatten(2).gather(2, indices.flatten(2)), out.flatten(2))
