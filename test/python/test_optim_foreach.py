"""The multi-tensor operators under tessera.optim: each tessera._foreach_* against torch's
per-tensor operator over lists of tensors of different shapes and dtypes, the in-place
forms, autograd through the functional forms (gradcheck), meta tensors, list errors, and
the argument checks of _fused_adam_ / _fused_adamw_."""
import numpy as np
import pytest
import torch

import tessera
from opinfo import make_torch

SHAPES = [(2, 3), (4,), ()]


def _list(dtypes, seed, low=-3.0, high=3.0, shapes=SHAPES):
    return [make_torch(s, d, seed + i, low, high) for i, (s, d) in enumerate(zip(shapes, dtypes))]


def _tess(ts):
    return [tessera.from_numpy(t.numpy().copy()) for t in ts]


def _check(got, want):
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert tuple(g.shape) == tuple(w.shape)
        rtol = 1e-6 if w.dtype == torch.float32 else 1e-12
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=rtol, atol=rtol)


FLOATS = ["float32", "float64", "float32"]
MIXED = ["float64", "float32", "int64"]
INTS = ["int64", "int32", "int64"]

SCALAR_OPS = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
}


@pytest.mark.parametrize("op", sorted(SCALAR_OPS))
@pytest.mark.parametrize("dtypes", [FLOATS, MIXED, INTS], ids=["floats", "mixed", "ints"])
@pytest.mark.parametrize("scalar", [2.5, 3])
def test_scalar_binary(op, dtypes, scalar):
    xs = _list(dtypes, 1)
    want = [SCALAR_OPS[op](x, scalar) for x in xs]
    _check(getattr(tessera, "_foreach_" + op)(_tess(xs), scalar), want)


LIST_OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
            "maximum": torch.maximum, "minimum": torch.minimum}


@pytest.mark.parametrize("op", sorted(LIST_OPS))
@pytest.mark.parametrize("dtypes", [FLOATS, MIXED], ids=["floats", "mixed"])
def test_list_binary(op, dtypes):
    xs, ys = _list(dtypes, 1), _list(list(reversed(dtypes)), 7, 0.5, 3.0)
    if op in ("maximum", "minimum"):
        ys = [y.to(x.dtype) for x, y in zip(xs, ys)]  # torch.maximum needs one dtype per pair
    want = [LIST_OPS[op](x, y) for x, y in zip(xs, ys)]
    _check(getattr(tessera, "_foreach_" + op)(_tess(xs), _tess(ys)), want)
    if op in ("add", "sub") and all(x.is_floating_point() for x in xs):
        want = [LIST_OPS[op](x, y, alpha=-0.75) for x, y in zip(xs, ys)]
        _check(getattr(tessera, "_foreach_" + op)(_tess(xs), _tess(ys), alpha=-0.75), want)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_pointwise_ternary(op):
    s, a, b = _list(FLOATS, 1), _list(FLOATS, 4), _list(FLOATS, 9, 0.5, 2.0)
    for value in (1, -0.3):
        want = [getattr(torch, op)(x, y, z, value=value) for x, y, z in zip(s, a, b)]
        _check(getattr(tessera, "_foreach_" + op)(_tess(s), _tess(a), _tess(b), value), want)
    want = [getattr(torch, op)(x, y, z) for x, y, z in zip(s, a, b)]
    _check(getattr(tessera, "_foreach_" + op)(_tess(s), _tess(a), _tess(b)), want)


def test_lerp_scalar_and_list_weights():
    s, e, w = _list(FLOATS, 1), _list(FLOATS, 4), _list(FLOATS, 9, 0.0, 1.0)
    _check(tessera._foreach_lerp(_tess(s), _tess(e), 0.3), [torch.lerp(x, y, 0.3) for x, y in zip(s, e)])
    _check(tessera._foreach_lerp(_tess(s), _tess(e), _tess(w)), [torch.lerp(x, y, z) for x, y, z in zip(s, e, w)])


@pytest.mark.parametrize("ord", [2, 1, float("inf"), 3.5])
def test_norm(ord):
    xs = _list(FLOATS, 3)
    args = () if ord == 2 else (ord,)
    _check(tessera._foreach_norm(_tess(xs), *args), [torch.linalg.vector_norm(x, ord) for x in xs])


UNARY = {
    "abs": (-3, 3), "neg": (-3, 3), "exp": (-3, 3), "expm1": (-3, 3), "log": (0.1, 5), "log10": (0.1, 5),
    "log2": (0.1, 5), "log1p": (-0.5, 5), "sqrt": (0.0, 5), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
    "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-3, 3), "cosh": (-3, 3), "tanh": (-3, 3),
    "sigmoid": (-5, 5), "erf": (-2, 2), "erfc": (-2, 2), "lgamma": (0.1, 5), "reciprocal": (0.5, 3),
    "ceil": (-3, 3), "floor": (-3, 3), "round": (-3, 3), "trunc": (-3, 3), "frac": (-3, 3),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    lo, hi = UNARY[op]
    xs = _list(FLOATS, 5, lo, hi)
    want = [getattr(torch, op)(x) for x in xs]
    _check(getattr(tessera, "_foreach_" + op)(_tess(xs)), want)
    # The in-place form writes into the given tensors and bumps their versions.
    ts = _tess(xs)
    ptrs, versions = [t.data_ptr() for t in ts], [t._version for t in ts]
    assert getattr(tessera, "_foreach_" + op + "_")(ts) is None
    assert [t.data_ptr() for t in ts] == ptrs
    assert all(t._version > v for t, v in zip(ts, versions))
    _check(tuple(ts), want)


def test_unary_on_integers_follows_torch_promotion():
    xs = _list(INTS, 2)
    _check(tessera._foreach_abs(_tess(xs)), [torch.abs(x) for x in xs])
    _check(tessera._foreach_neg(_tess(xs)), [torch.neg(x) for x in xs])
    _check(tessera._foreach_sqrt(_tess([x.abs() for x in xs])), [torch.sqrt(x.abs()) for x in xs])


def test_inplace_binary_forms_mutate_and_bump_versions():
    cases = [
        ("add_", lambda ts, os: (ts, 1.5), lambda x, o: x.add(1.5)),
        ("mul_", lambda ts, os: (ts, os), lambda x, o: x.mul(o)),
        ("sub_", lambda ts, os: (ts, os), lambda x, o: x.sub(o, alpha=2), {"alpha": 2}),
        ("div_", lambda ts, os: (ts, os), lambda x, o: x.div(o)),
        ("maximum_", lambda ts, os: (ts, os), lambda x, o: torch.maximum(x, o)),
        ("minimum_", lambda ts, os: (ts, os), lambda x, o: torch.minimum(x, o)),
        ("addcmul_", lambda ts, os: (ts, os, os, 0.5), lambda x, o: x.addcmul(o, o, value=0.5)),
        ("addcdiv_", lambda ts, os: (ts, os, os, -2), lambda x, o: x.addcdiv(o, o, value=-2)),
        ("lerp_", lambda ts, os: (ts, os, 0.25), lambda x, o: x.lerp(o, 0.25)),
        ("zero_", lambda ts, os: (ts,), lambda x, o: torch.zeros_like(x)),
    ]
    for case in cases:
        name, args, ref = case[:3]
        kwargs = case[3] if len(case) > 3 else {}
        xs, os_ = _list(FLOATS, 1), _list(FLOATS, 11, 0.5, 3.0)
        ts, tos = _tess(xs), _tess(os_)
        ptrs, versions = [t.data_ptr() for t in ts], [t._version for t in ts]
        assert getattr(tessera, "_foreach_" + name)(*args(ts, tos), **kwargs) is None
        assert [t.data_ptr() for t in ts] == ptrs, name
        assert all(t._version > v for t, v in zip(ts, versions)), name
        _check(tuple(ts), [ref(x, o) for x, o in zip(xs, os_)])


def test_inplace_on_a_view_writes_through_to_the_base():
    base = tessera.zeros(2, 4)
    views = [base[0], base[1, 1:3]]
    tessera._foreach_add_(views, 2.0)
    np.testing.assert_array_equal(base.numpy(), [[2, 2, 2, 2], [0, 2, 2, 0]])


# ---------------------------------------------------------------- autograd

def _leaves(shapes, seed, low=-2.0, high=2.0):
    return [tessera.from_numpy(make_torch(s, "float64", seed + i, low, high).numpy()).requires_grad_(True)
            for i, s in enumerate(shapes)]


def test_gradcheck_mul_list():
    a, b, c, d = _leaves([(2, 3), (3,), (2, 3), (3,)], 1)
    assert tessera.autograd.gradcheck(lambda a, b, c, d: tessera._foreach_mul([a, b], [c, d]), (a, b, c, d))


def test_gradcheck_addcdiv():
    s1, s2, t1, t2 = _leaves([(2, 2), (3,), (2, 2), (3,)], 2)
    u1, u2 = _leaves([(2, 2), (3,)], 6, 0.5, 2.0)
    assert tessera.autograd.gradcheck(
        lambda s1, s2, t1, t2, u1, u2: tessera._foreach_addcdiv([s1, s2], [t1, t2], [u1, u2], 0.7),
        (s1, s2, t1, t2, u1, u2))


def test_gradcheck_norm_and_sqrt():
    a, b = _leaves([(2, 3), (4,)], 3, 0.5, 2.0)
    assert tessera.autograd.gradcheck(lambda a, b: tessera._foreach_norm([a, b]), (a, b))
    assert tessera.autograd.gradcheck(lambda a, b: tessera._foreach_norm([a, b], 3.0), (a, b))
    assert tessera.autograd.gradcheck(lambda a, b: tessera._foreach_sqrt([a, b]), (a, b))


def test_grads_through_foreach_match_torch_per_tensor():
    xs = _list(["float64"] * 2, 4, 0.5, 2.0, shapes=[(2, 3), (4,)])
    ys = _list(["float64"] * 2, 8, 0.5, 2.0, shapes=[(2, 3), (4,)])
    tx = [x.clone().requires_grad_(True) for x in xs]
    ty = [y.clone().requires_grad_(True) for y in ys]
    sum(((x * y).sqrt().sum() for x, y in zip(tx, ty))).backward()
    gx, gy = _leaves([(2, 3), (4,)], 0), _leaves([(2, 3), (4,)], 0)
    for leaf, src in zip(gx + gy, xs + ys):
        with tessera.no_grad():
            leaf.copy_(tessera.from_numpy(src.numpy().copy()))
    outs = tessera._foreach_sqrt(tessera._foreach_mul(gx, gy))
    sum(o.sum() for o in outs).backward()
    for leaf, ref in zip(gx + gy, tx + ty):
        np.testing.assert_allclose(leaf.grad.numpy(), ref.grad.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- meta, errors

def test_meta_tensors_give_output_shapes():
    a = [tessera.empty(2, 3, device="meta"), tessera.empty(4, device="meta", dtype=tessera.float64)]
    b = [tessera.empty(2, 3, device="meta"), tessera.empty(4, device="meta", dtype=tessera.float64)]
    for out in (tessera._foreach_add(a, b), tessera._foreach_mul(a, 2.0), tessera._foreach_sqrt(a),
                tessera._foreach_addcdiv(a, a, b, 0.5), tessera._foreach_lerp(a, b, 0.5),
                tessera._foreach_maximum(a, b)):
        assert [tuple(o.shape) for o in out] == [(2, 3), (4,)]
        assert [o.device.type for o in out] == ["meta", "meta"]
        assert [o.dtype for o in out] == [tessera.float32, tessera.float64]
    norms = tessera._foreach_norm(a)
    assert [tuple(o.shape) for o in norms] == [(), ()] and norms[0].device.type == "meta"
    ints = [tessera.empty(3, device="meta", dtype=tessera.int64)]
    assert tessera._foreach_div(ints, 2)[0].dtype == tessera.float32  # true division promotes
    tessera._foreach_add_(a, b)  # in-place on meta: checks only


def test_list_errors():
    x = [tessera.ones(2), tessera.ones(3)]
    with pytest.raises(RuntimeError, match="same number of tensors"):
        tessera._foreach_add(x, x[:1])
    with pytest.raises(RuntimeError, match="same number of tensors"):
        tessera._foreach_mul_(x, x + x)
    with pytest.raises(RuntimeError, match="same number of tensors"):
        tessera._foreach_addcmul(x, x, x[:1])
    with pytest.raises(RuntimeError, match="same number of tensors"):
        tessera._foreach_lerp(x, x[:1], 0.5)
    for call in (lambda: tessera._foreach_add([], 1), lambda: tessera._foreach_sqrt([]),
                 lambda: tessera._foreach_norm([]), lambda: tessera._foreach_zero_([]),
                 lambda: tessera._foreach_add_([], [])):
        with pytest.raises(RuntimeError, match="at least one tensor"):
            call()
    with pytest.raises(RuntimeError):  # element shapes must broadcast, as per tensor
        tessera._foreach_add([tessera.ones(2)], [tessera.ones(3)])


# ---------------------------------------------------------------- _fused_adam_

ADAM_ARGS = dict(lr=0.1, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)


def _adam_lists(n=2, dtype=None):
    dtype = dtype or tessera.float32
    params = [tessera.ones(3, dtype=dtype) for _ in range(n)]
    return (params, [tessera.full((3,), 0.5, dtype=dtype) for _ in range(n)],
            [tessera.zeros(3, dtype=dtype) for _ in range(n)], [tessera.zeros(3, dtype=dtype) for _ in range(n)],
            [], [tessera.tensor(1.0) for _ in range(n)])


@pytest.mark.parametrize("fused", ["_fused_adam_", "_fused_adamw_"])
def test_fused_adam_argument_errors(fused):
    op = getattr(tessera._C, fused)
    p, g, m, v, mx, s = _adam_lists()
    with pytest.raises(RuntimeError, match="exp_avgs 1"):
        op(p, g, m[:1], v, mx, s, **ADAM_ARGS)
    with pytest.raises(RuntimeError, match="max_exp_avg_sqs"):
        op(p, g, m, v, mx, s, **dict(ADAM_ARGS, amsgrad=True))
    with pytest.raises(RuntimeError, match="state_steps 1"):
        op(p, g, m, v, mx, s[:1], **ADAM_ARGS)
    # No tensor at all: nothing to dispatch on, as in torch (NotImplementedError).
    with pytest.raises(NotImplementedError, match="without tensor arguments"):
        op([], [], [], [], [], [], **ADAM_ARGS)

    bad = tessera.zeros(3, 2).t()[0]  # a strided (non-contiguous) view of 3 elements
    assert not bad.is_contiguous()
    with pytest.raises(RuntimeError, match=r"exp_avg_sqs\[1\] must be contiguous"):
        op(p, g, m, [v[0], bad], mx, s, **ADAM_ARGS)
    with pytest.raises(RuntimeError, match=r"exp_avgs\[0\] must match its parameter"):
        op(p, g, [tessera.zeros(3, dtype=tessera.float64), m[1]], v, mx, s, **ADAM_ARGS)
    with pytest.raises(RuntimeError, match=r"grads\[1\] must match its parameter"):
        op(p, [g[0], tessera.zeros(4)], m, v, mx, s, **ADAM_ARGS)
    with pytest.raises(RuntimeError, match="parameters must be float32 or float64"):
        op(*_adam_lists(dtype=tessera.float16), **ADAM_ARGS)
    with pytest.raises(RuntimeError, match=r"state_steps\[0\] must hold one value"):
        op(p, g, m, v, mx, [tessera.zeros(2), s[1]], **ADAM_ARGS)

    # Outside no_grad, a parameter that requires grad is refused (torch's in-place rule).
    leaf = [tessera.ones(3, requires_grad=True), tessera.ones(3, requires_grad=True)]
    with pytest.raises(RuntimeError, match="no_grad"):
        op(leaf, g, m, v, mx, s, **ADAM_ARGS)
    with tessera.no_grad():
        op(leaf, g, m, v, mx, s, **ADAM_ARGS)
    assert not np.allclose(leaf[0].detach().numpy(), 1.0)


def test_fused_adam_one_step_matches_torch_adam():
    xs = _list(["float32", "float32"], 3, shapes=[(2, 3), (5,)])
    gs = _list(["float32", "float32"], 8, shapes=[(2, 3), (5,)])
    tp = [torch.nn.Parameter(x.clone()) for x in xs]
    for p, gr in zip(tp, gs):
        p.grad = gr.clone()
    torch.optim.Adam(tp, lr=0.1, weight_decay=0.01, amsgrad=True).step()
    p = _tess(xs)
    s = [tessera.tensor(1.0), tessera.tensor(1.0)]
    zeros = lambda: [tessera.zeros_like(t) for t in p]  # noqa: E731
    tessera._C._fused_adam_(p, _tess(gs), zeros(), zeros(), zeros(), s,
                            **dict(ADAM_ARGS, weight_decay=0.01, amsgrad=True))
    _check(tuple(p), [t.detach() for t in tp])


# ---------------------------------------------------------------- _fused_sgd_

def test_fused_sgd_argument_errors():
    p = [tessera.nn.Parameter(tessera.ones(3)), tessera.nn.Parameter(tessera.ones(2, 2))]
    g = [tessera.ones(3), tessera.ones(2, 2)]
    bufs = [tessera.zeros(3), tessera.zeros(2, 2)]
    args = dict(weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0, nesterov=False, maximize=False,
                is_first_step=False)
    with tessera.no_grad():
        with pytest.raises(NotImplementedError, match="without tensor arguments"):  # as torch's dispatcher
            tessera._fused_sgd_([], [], [], **args)
        with pytest.raises(RuntimeError, match="length of params"):
            tessera._fused_sgd_(p, g[:1], bufs, **args)
        with pytest.raises(RuntimeError, match=r"momentum_buffer_list\[1\] must match"):
            tessera._fused_sgd_(p, g, [bufs[0], tessera.zeros(4)], **args)
        with pytest.raises(RuntimeError, match=r"grads\[0\] must be contiguous"):
            tessera._fused_sgd_(p[:1], [tessera.ones(6)[::2]], bufs[:1], **args)
        with pytest.raises(RuntimeError, match="float32 or float64"):
            tessera._fused_sgd_([tessera.ones(3, dtype=tessera.float16)], [tessera.ones(3, dtype=tessera.float16)],
                                [], **dict(args, momentum=0.0))
    with pytest.raises(RuntimeError, match="in-place operation"):
        tessera._fused_sgd_(p, g, bufs, **args)


def test_fused_sgd_steps_match_torch_sgd():
    """Two steps (the first making the momentum buffers) against torch's per-tensor SGD."""
    rng = np.random.default_rng(3)
    shapes = [(5, 4), (7,), (33,)]
    data = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(2)]
    kw = dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.05)
    tp = [torch.nn.Parameter(torch.from_numpy(d.copy())) for d in data]
    topt = torch.optim.SGD(tp, **kw)
    mp = [tessera.nn.Parameter(tessera.from_numpy(d.copy())) for d in data]
    bufs = [tessera.empty_like(p) for p in mp]
    for step in range(2):
        for p, g in zip(tp, grads[step]):
            p.grad = torch.from_numpy(g.copy())
        topt.step()
        with tessera.no_grad():
            tessera._fused_sgd_(mp, [tessera.from_numpy(g.copy()) for g in grads[step]], bufs, weight_decay=0.05,
                                momentum=0.9, lr=0.1, dampening=0.1, nesterov=False, maximize=False,
                                is_first_step=step == 0)
    for a, b in zip(mp, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13, atol=1e-14)
    for buf, p in zip(bufs, tp):
        np.testing.assert_allclose(buf.numpy(), topt.state[p]["momentum_buffer"].numpy(), rtol=1e-13, atol=1e-14)


def test_grads_keep_their_parameters_layout():
    """torch's layout contract: a Linear weight's grad (a transposed product) is stored with
    the weight's strides, so the fused updates take it."""
    for lib in (torch, tessera):
        m = lib.nn.Linear(6, 4)
        m(lib.ones(3, 6)).sum().backward()
        assert m.weight.grad.is_contiguous() and tuple(m.weight.grad.stride()) == (6, 1)
    conv = tessera.nn.Conv2d(3, 4, 3).to(memory_format=tessera.channels_last)
    conv(tessera.ones(2, 3, 5, 5).contiguous(memory_format=tessera.channels_last)).sum().backward()
    assert conv.weight.grad.is_contiguous(memory_format=tessera.channels_last)

