"""tessera.nn.init and tessera.nn.utils against torch: gains, fans and errors exactly;
random initialisers by their statistics and bounds next to torch's on the same shapes;
deterministic ones (eye_, dirac_, constant_, ...) value for value; gradient clipping and
parameter/vector conversion on the same gradients and parameters."""
import math

import numpy as np
import pytest
import torch
import torch.nn.init as TI
import torch.nn.utils as TU

import tessera
import tessera.nn.init as I
import tessera.nn.utils as U


from torch_compare import same_error, tt


# ------------------------------------------------------------------ gains and fans

GAINS = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None), ("conv_transpose1d", None),
         ("conv_transpose2d", None), ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
         ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 1), ("leaky_relu", 0), ("leaky_relu", -0.5),
         ("selu", None)]


@pytest.mark.parametrize("name,param", GAINS)
def test_calculate_gain(name, param):
    got, want = I.calculate_gain(name, param), TI.calculate_gain(name, param)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("name,param", [("softmax", None), ("Relu", None), ("leaky_relu", True),
                                        ("leaky_relu", "0.1"), ("leaky_relu", [0.1])])
def test_calculate_gain_errors(name, param):
    same_error(lambda: TI.calculate_gain(name, param), lambda: I.calculate_gain(name, param))


FAN_SHAPES = [(3, 5), (5, 3), (1, 1), (0, 4), (4, 0), (7, 3, 2), (16, 8, 3, 3), (8, 4, 2, 3, 5), (2, 3, 0, 4),
              (6, 1, 1, 1), (3, 5, 7, 1, 2, 2)]


@pytest.mark.parametrize("shape", FAN_SHAPES)
def test_fans_match_torch(shape):
    got = I._calculate_fan_in_and_fan_out(tessera.empty(*shape))
    assert got == TI._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for mode in ("fan_in", "fan_out", "FAN_OUT"):
        assert I._calculate_correct_fan(tessera.empty(*shape), mode) == \
            TI._calculate_correct_fan(torch.empty(*shape), mode)


@pytest.mark.parametrize("shape", [(), (4,)])
def test_fans_need_two_dims(shape):
    same_error(lambda: TI._calculate_fan_in_and_fan_out(torch.empty(shape)),
               lambda: I._calculate_fan_in_and_fan_out(tessera.empty(shape)))
    same_error(lambda: TI.xavier_uniform_(torch.empty(shape)), lambda: I.xavier_uniform_(tessera.empty(shape)))
    same_error(lambda: TI.kaiming_normal_(torch.empty(shape)), lambda: I.kaiming_normal_(tessera.empty(shape)))


def test_bad_fan_mode():
    same_error(lambda: TI.kaiming_uniform_(torch.empty(3, 4), mode="fan_avg"),
               lambda: I.kaiming_uniform_(tessera.empty(3, 4), mode="fan_avg"))


# ------------------------------------------------------------------ random initialisers

BIG = (64, 32, 3, 3)  # 18432 draws: the sample max and std sit well within the tolerances


def draw(fn_tessera, fn_torch, shape=BIG, seed=0):
    tessera.manual_seed(seed)
    torch.manual_seed(seed)
    w = tessera.empty(*shape)
    out = fn_tessera(w)
    assert out is w
    return w.numpy().astype(np.float64), fn_torch(torch.empty(*shape)).numpy().astype(np.float64)


UNIFORMS = [
    ("uniform", lambda m, w: m.uniform_(w, -0.3, 0.7), -0.3, 0.7),
    ("xavier_uniform", lambda m, w: m.xavier_uniform_(w), None, None),
    ("xavier_uniform_gain", lambda m, w: m.xavier_uniform_(w, gain=m.calculate_gain("tanh")), None, None),
    ("kaiming_uniform", lambda m, w: m.kaiming_uniform_(w), None, None),
    ("kaiming_uniform_relu_out", lambda m, w: m.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"), None, None),
    ("kaiming_uniform_leaky", lambda m, w: m.kaiming_uniform_(w, a=math.sqrt(5)), None, None),
]


@pytest.mark.parametrize("name,fn,lo,hi", UNIFORMS, ids=[u[0] for u in UNIFORMS])
def test_uniform_family_bounds(name, fn, lo, hi):
    got, want = draw(lambda w: fn(I, w), lambda w: fn(TI, w))
    if lo is None:
        # Symmetric bounds: torch's bound is, to within 0.1%, the largest |value| it drew.
        bound = np.abs(want).max()
        assert bound * 0.999 <= np.abs(got).max() <= bound / 0.999
        assert abs(got.mean()) < 0.02 * bound
        np.testing.assert_allclose(got.std(), bound / math.sqrt(3), rtol=0.02)
    else:
        assert got.min() >= lo and got.max() < hi
        assert abs(got.min() - want.min()) < 1e-3 and abs(got.max() - want.max()) < 1e-3
        np.testing.assert_allclose(got.mean(), (lo + hi) / 2, atol=0.01)


def formula_std(shape, kind, gain=1.0):
    fan_in, fan_out = TI._calculate_fan_in_and_fan_out(torch.empty(*shape))
    return gain * math.sqrt(2.0 / (fan_in + fan_out)) if kind == "xavier" else gain / math.sqrt(fan_in)


NORMALS = [
    ("normal", lambda m, w: m.normal_(w, 0.5, 2.0), 0.5, 2.0),
    ("xavier_normal", lambda m, w: m.xavier_normal_(w, gain=2.0), 0.0, formula_std(BIG, "xavier", 2.0)),
    ("kaiming_normal", lambda m, w: m.kaiming_normal_(w), 0.0, formula_std(BIG, "kaiming", math.sqrt(2))),
    ("kaiming_normal_relu", lambda m, w: m.kaiming_normal_(w, nonlinearity="relu"), 0.0,
     formula_std(BIG, "kaiming", math.sqrt(2))),
]


@pytest.mark.parametrize("name,fn,mean,std", NORMALS, ids=[n[0] for n in NORMALS])
def test_normal_family_statistics(name, fn, mean, std):
    got, want = draw(lambda w: fn(I, w), lambda w: fn(TI, w))
    np.testing.assert_allclose(got.std(), std, rtol=0.03)
    np.testing.assert_allclose(got.std(), want.std(), rtol=0.04)
    assert abs(got.mean() - mean) < 0.03 * std


def truncated_moments(mean, std, a, b):
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 3.0), (0.0, 0.02, -0.04, 0.04),
                                          (1.0, 1.0, 0.0, 5.0)])
def test_trunc_normal(mean, std, a, b):
    got, want = draw(lambda w: I.trunc_normal_(w, mean, std, a, b), lambda w: TI.trunc_normal_(w, mean, std, a, b))
    assert got.min() >= a and got.max() <= b
    m, s = truncated_moments(mean, std, a, b)
    assert abs(got.mean() - m) < 0.03 * s
    np.testing.assert_allclose(got.std(), s, rtol=0.03)
    np.testing.assert_allclose(got.std(), want.std(), rtol=0.04)


def test_trunc_normal_far_mean_warns_like_torch():
    with pytest.warns(UserWarning) as want:
        TI.trunc_normal_(torch.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)
    with pytest.warns(UserWarning) as got:
        out = I.trunc_normal_(tessera.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)
    assert str(got[0].message) == str(want[0].message)
    assert out.numpy().min() >= -1.0 and out.numpy().max() <= 1.0


GENERATED = [
    lambda w, g: I.uniform_(w, -1, 1, generator=g), lambda w, g: I.normal_(w, 0, 1, generator=g),
    lambda w, g: I.trunc_normal_(w, generator=g), lambda w, g: I.xavier_uniform_(w, generator=g),
    lambda w, g: I.xavier_normal_(w, generator=g), lambda w, g: I.kaiming_uniform_(w, generator=g),
    lambda w, g: I.kaiming_normal_(w, generator=g), lambda w, g: I.orthogonal_(w, generator=g),
    lambda w, g: I.sparse_(w, 0.5, generator=g),
]


@pytest.mark.parametrize("fn", GENERATED)
def test_generator_argument(fn):
    runs = []
    for _ in range(2):
        g = tessera.Generator()
        g.manual_seed(1234)
        tessera.manual_seed(len(runs))  # the default generator differs between runs
        runs.append(fn(tessera.empty(6, 5), g).numpy())
    np.testing.assert_array_equal(runs[0], runs[1])
    tessera.manual_seed(0)
    assert not np.array_equal(fn(tessera.empty(6, 5), None).numpy(), runs[0])


def test_init_records_no_history():
    w = tessera.empty(4, 3, requires_grad=True)
    for fn in (I.uniform_, I.normal_, I.xavier_uniform_, I.kaiming_normal_, I.trunc_normal_, I.orthogonal_, I.eye_,
               I.zeros_, I.ones_, lambda t: I.constant_(t, 2.5), lambda t: I.sparse_(t, 0.3)):
        out = fn(w)
        assert out is w and w.requires_grad and w.grad_fn is None and w.is_leaf
    p = tessera.nn.Parameter(tessera.empty(5, 4))
    assert I.kaiming_uniform_(p, a=math.sqrt(5)) is p
    assert isinstance(p, tessera.nn.Parameter) and p.requires_grad and p.grad_fn is None
    assert np.abs(p.detach().numpy()).max() <= 1 / math.sqrt(4)


# ------------------------------------------------------------------ deterministic initialisers

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_constant_ones_zeros_exact(dtype):
    for call in (lambda m, w: m.constant_(w, 3), lambda m, w: m.ones_(w), lambda m, w: m.zeros_(w)):
        w = tessera.full((3, 4, 2), 7, dtype=getattr(tessera, dtype))
        want = call(TI, torch.full((3, 4, 2), 7, dtype=getattr(torch, dtype)))
        got = call(I, w)
        assert got is w
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(I.constant_(tessera.empty(5), -0.25).numpy(), TI.constant_(torch.empty(5), -0.25))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (1, 6), (0, 3)])
def test_eye_exact(shape):
    w = tessera.full(shape, 9.0)
    assert I.eye_(w) is w
    np.testing.assert_array_equal(w.numpy(), TI.eye_(torch.full(shape, 9.0)).numpy())


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4)])
def test_eye_needs_2d(shape):
    same_error(lambda: TI.eye_(torch.empty(*shape)), lambda: I.eye_(tessera.empty(*shape)))


@pytest.mark.parametrize("shape,groups", [((4, 3, 3), 1), ((6, 4, 3, 3), 2), ((6, 2, 3, 3, 3), 3), ((2, 5, 4), 1),
                                          ((4, 2, 4, 4), 4), ((8, 3, 2, 5), 2), ((3, 3, 1), 3), ((4, 4, 2, 2, 2), 1)])
def test_dirac_exact(shape, groups):
    w = tessera.full(shape, 5.0)
    assert I.dirac_(w, groups) is w
    np.testing.assert_array_equal(w.numpy(), TI.dirac_(torch.full(shape, 5.0), groups).numpy())


@pytest.mark.parametrize("shape,groups", [((3, 3), 1), ((2, 2, 2, 2, 2, 2), 1), ((6, 4, 3), 4)])
def test_dirac_errors(shape, groups):
    same_error(lambda: TI.dirac_(torch.empty(*shape), groups), lambda: I.dirac_(tessera.empty(*shape), groups))


# ------------------------------------------------------------------ orthogonal and sparse

@pytest.mark.parametrize("shape,gain", [((7, 5), 1), ((3, 8), 1), ((6, 6), 2.0), ((8, 3, 3), 1), ((4, 2, 2, 2), 0.5),
                                        ((40, 25), 1)])
def test_orthogonal(shape, gain):
    w = tessera.empty(*shape)
    assert I.orthogonal_(w, gain=gain) is w
    m = w.numpy().reshape(shape[0], -1).astype(np.float64)
    rows, cols = m.shape
    gram = m @ m.T if rows <= cols else m.T @ m
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=1e-5)


def test_orthogonal_qr_matches_torch_qr():
    # Same Gaussian matrix into both: once R's diagonal signs are fixed, Q is unique.
    for shape in [(6, 4), (5, 5), (9, 2)]:
        a = torch.randn(*shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
        q, r = torch.linalg.qr(a)
        want = q * torch.diagonal(r).sign()
        gq, gr = I._householder_qr(tt(a))
        np.testing.assert_allclose((gq * tessera.diagonal(gr).sign()).numpy(), want.numpy(), atol=1e-12)
        np.testing.assert_allclose(gq.matmul(gr).numpy(), a.numpy(), atol=1e-12)


def test_orthogonal_edge_cases():
    same_error(lambda: TI.orthogonal_(torch.empty(5)), lambda: I.orthogonal_(tessera.empty(5)))
    w = tessera.full((0, 3), 1.0)
    assert I.orthogonal_(w) is w


@pytest.mark.parametrize("shape,sparsity", [((10, 6), 0.3), ((7, 4), 0.0), ((5, 3), 1.0), ((50, 20), 0.1)])
def test_sparse(shape, sparsity):
    w = tessera.empty(*shape)
    assert I.sparse_(w, sparsity, std=0.5) is w
    got = w.numpy()
    want = TI.sparse_(torch.empty(*shape), sparsity, std=0.5).numpy()
    np.testing.assert_array_equal((got == 0).sum(0), (want == 0).sum(0))
    assert (got == 0).sum(0).tolist() == [math.ceil(sparsity * shape[0])] * shape[1]


def test_sparse_needs_2d():
    same_error(lambda: TI.sparse_(torch.empty(2, 3, 4), 0.5), lambda: I.sparse_(tessera.empty(2, 3, 4), 0.5))


def test_zero_element_kaiming_warns():
    for fn in (I.kaiming_uniform_, I.kaiming_normal_):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            fn(tessera.empty(0, 3))


def test_deprecated_aliases():
    with pytest.warns(FutureWarning, match="nn.init.uniform_"):
        w = I.uniform(tessera.empty(3, 3), 2.0, 3.0)
    assert w.numpy().min() >= 2.0


# ------------------------------------------------------------------ clip_grad

def make_params(shapes, seed, scale=1.0, skip=()):
    g = torch.Generator().manual_seed(seed)
    pt, ps = [], []
    for i, shape in enumerate(shapes):
        data = torch.randn(shape, generator=g, dtype=torch.float64)
        a, b = data.clone().requires_grad_(), tt(data).requires_grad_()
        if i not in skip:
            grad = torch.randn(shape, generator=g, dtype=torch.float64) * scale
            a.grad, b.grad = grad.clone(), tt(grad)
        pt.append(a)
        ps.append(b)
    return pt, ps


SHAPES = [(3, 4), (5,), (2, 2, 3), ()]


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    pt, ps = make_params(SHAPES, 1, skip=(1,))
    want = TU.clip_grad_norm_(pt, max_norm, norm_type=float(norm_type))
    got = U.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
    assert got.dim() == 0
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    for a, b in zip(pt, ps):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_clip_grad_norm_inputs():
    pt, ps = make_params([(6, 3)], 2)
    want = TU.clip_grad_norm_(pt[0], 0.1)
    got = U.clip_grad_norm_(ps[0], 0.1)  # a single tensor
    np.testing.assert_allclose(got.item(), want.item())
    np.testing.assert_allclose(ps[0].grad.numpy(), pt[0].grad.numpy())
    pt, ps = make_params(SHAPES, 3)
    got = U.clip_grad_norm_((p for p in ps), 1.0, foreach=True)  # a generator
    np.testing.assert_allclose(got.item(), TU.clip_grad_norm_(iter(pt), 1.0).item())
    np.testing.assert_allclose(ps[0].grad.numpy(), pt[0].grad.numpy())


def test_clip_grad_norm_empty():
    for params in ([], [tessera.ones(3, requires_grad=True)]):
        got = U.clip_grad_norm_(params, 1.0)
        assert got.dim() == 0 and got.item() == 0.0 and got.dtype == tessera.float32
    # Current torch warns that an empty generator clips nothing (1.13 is silent).
    with pytest.warns(UserWarning, match="empty generator"):
        U.clip_grad_norm_((p for p in []), 1.0)


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_clip_grad_norm_nonfinite(bad):
    pt, ps = make_params(SHAPES, 4)
    pt[0].grad[0, 0] = bad
    ps[0].grad[0, 0] = bad
    same_error(lambda: TU.clip_grad_norm_(pt, 1.0, error_if_nonfinite=True),
               lambda: U.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True))
    want = TU.clip_grad_norm_(pt, 1.0)
    got = U.clip_grad_norm_(ps, 1.0)
    np.testing.assert_array_equal(got.item(), want.item())
    for a, b in zip(pt, ps):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), equal_nan=True)


def test_get_total_norm_and_clip_grads_with_norm():
    pt, ps = make_params(SHAPES, 5)
    total = U.get_total_norm([p.grad for p in ps], 3.0)
    want = TU.clip_grad_norm_(pt, 0.25, norm_type=3.0)
    np.testing.assert_allclose(total.item(), want.item(), rtol=1e-12)
    U.clip_grads_with_norm_(ps, 0.25, total)
    for a, b in zip(pt, ps):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_deprecated_alias():
    _, ps = make_params(SHAPES, 6)
    with pytest.warns(FutureWarning):
        U.clip_grad_norm(ps, 1.0)


@pytest.mark.parametrize("clip_value", [0.3, 2, 0.0])
def test_clip_grad_value(clip_value):
    pt, ps = make_params(SHAPES, 7, scale=2.0, skip=(2,))
    assert U.clip_grad_value_(ps, clip_value) is None
    TU.clip_grad_value_(pt, clip_value)
    for a, b in zip(pt, ps):
        if a.grad is not None:
            np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())
    pt, ps = make_params([(4, 4)], 8, scale=3.0)
    U.clip_grad_value_(ps[0], 1)
    TU.clip_grad_value_(pt[0], 1)
    np.testing.assert_array_equal(ps[0].grad.numpy(), pt[0].grad.numpy())


# ------------------------------------------------------------------ parameters <-> vector

def test_parameters_to_vector():
    pt, ps = make_params(SHAPES, 9)
    got = U.parameters_to_vector(ps)
    np.testing.assert_array_equal(got.detach().numpy(), TU.parameters_to_vector(pt).detach().numpy())
    assert got.requires_grad  # cat of views keeps the parameters' history, as in torch


def test_vector_to_parameters():
    pt, ps = make_params(SHAPES, 10)
    vec = torch.arange(sum(p.numel() for p in pt), dtype=torch.float64) * 0.5
    tvec = tt(vec)
    TU.vector_to_parameters(vec, pt)
    U.vector_to_parameters(tvec, ps)
    for a, b in zip(pt, ps):
        assert tuple(b.shape) == tuple(a.shape) and b.requires_grad and b.is_leaf
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
    # The parameters now view the vector's memory, as torch's do.
    tvec.fill_(-1.0)
    assert (ps[0].detach().numpy() == -1.0).all()


@pytest.mark.parametrize("vec", [[1.0, 2.0], np.zeros(3), 3.0])
def test_vector_to_parameters_type_error(vec):
    same_error(lambda: TU.vector_to_parameters(vec, [torch.zeros(2)]),
               lambda: U.vector_to_parameters(vec, [tessera.zeros(2)]))
