"""tessera.utils.checkpoint against plain autograd and torch.utils.checkpoint: the same
gradients with and without checkpointing (and as torch's), dropout replayed through the
saved RNG state, no graph kept by the checkpointed forward, and torch's warnings/errors."""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
import torch.utils.checkpoint as TC

import tessera
import tessera.nn.functional as F
import tessera.utils.checkpoint as C


def tt(x):
    return tessera.from_numpy(np.array(x.detach().numpy(), order="C"))


def make(seed, *shapes):
    """The same float64 leaves (requiring grad) for torch and tessera."""
    g = torch.Generator().manual_seed(seed)
    pt = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    return [p.clone().requires_grad_() for p in pt], [tt(p).requires_grad_() for p in pt]


def linear_of(lib, fn):
    # tessera.nn.functional may not spell linear yet; the aten op is the same function.
    return getattr(fn, "linear", None) or lib.linear


def mlp(lib, fn, params):
    w1, b1, w2, b2 = params
    linear = linear_of(lib, fn)

    def block(x, scale=1.0, act="tanh"):
        h = linear(x, w1, b1)
        h = h.tanh() if act == "tanh" else fn.relu(h)
        return linear(h * scale, w2, b2)
    return block


def grads(tensors):
    return [None if t.grad is None else t.grad.numpy() for t in tensors]


def assert_grads_equal(got, want, rtol=1e-12):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-14)


def run_mlp(checkpointed, scale=2.0, act="tanh"):
    (xt, *pt), (xs, *ps) = make(0, (5, 4), (6, 4), (6,), (3, 6), (3,))
    f_t, f_s = mlp(torch, TF, pt), mlp(tessera, F, ps)
    if checkpointed:
        yt = TC.checkpoint(f_t, xt, scale, act, use_reentrant=True)
        ys = C.checkpoint(f_s, xs, scale, act, use_reentrant=True)
    else:
        yt, ys = f_t(xt, scale, act), f_s(xs, scale, act)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    (yt * yt).sum().backward()
    (ys * ys).sum().backward()
    return grads([xt] + pt), grads([xs] + ps)


@pytest.mark.parametrize("act", ["tanh", "relu"])
def test_grads_equal_plain_and_torch(act):
    torch_ckpt, tessera_ckpt = run_mlp(True, act=act)
    _, tessera_plain = run_mlp(False, act=act)
    assert_grads_equal(tessera_ckpt, tessera_plain)
    assert_grads_equal(tessera_ckpt, torch_ckpt)


def test_forward_keeps_no_graph():
    (xs, *ps) = make(1, (5, 4), (6, 4), (6,), (3, 6), (3,))[1]
    grad_modes = []

    def fn(x):
        grad_modes.append(tessera.is_grad_enabled())
        return mlp(tessera, F, ps)(x)

    y = C.checkpoint(fn, xs, use_reentrant=True)
    assert grad_modes == [False]
    assert y.requires_grad and y.grad_fn.name() == "CheckpointFunctionBackward"
    # The only edge out of the checkpoint node leads to x's AccumulateGrad; nothing of the
    # segment's own graph (linear, tanh, ...) was recorded.
    (edge,) = y.grad_fn.next_functions
    assert edge[0].next_functions == ()

    def count_nodes(node, seen):
        if node is None or id(node) in seen:
            return 0
        seen.add(id(node))
        return 1 + sum(count_nodes(n, seen) for n, _ in node.next_functions)
    assert count_nodes(y.grad_fn, set()) == 2
    assert count_nodes(mlp(tessera, F, ps)(xs).grad_fn, set()) > 5
    y.sum().backward()
    assert grad_modes == [False, True]  # the recompute ran with grad enabled


def dropout_block(lib, fn, w):
    linear = linear_of(lib, fn)

    def block(x):
        return fn.dropout(linear(x, w).tanh(), p=0.5, training=True).sum(1)
    return block


def dropout_grads(seed, checkpointed, preserve=True):
    (x, w) = make(2, (64, 32), (32, 32))[1]
    tessera.manual_seed(seed)
    f = dropout_block(tessera, F, w)
    y = C.checkpoint(f, x, use_reentrant=True, preserve_rng_state=preserve) if checkpointed else f(x)
    # Random draws between forward and backward must not leak into the replayed mask.
    tessera.rand(100)
    (y * y).sum().backward()
    after = tessera.rand(4).numpy()
    return grads([x, w]), after


def test_dropout_preserved_rng_matches_plain():
    got, got_after = dropout_grads(7, True)
    want, want_after = dropout_grads(7, False)
    assert_grads_equal(got, want)
    # The recomputation hands the surrounding RNG stream back untouched.
    np.testing.assert_array_equal(got_after, want_after)


def test_dropout_without_preserving_rng_differs():
    got, _ = dropout_grads(7, True, preserve=False)
    want, _ = dropout_grads(7, False)
    assert not np.allclose(got[1], want[1])


def test_non_tensor_and_no_grad_inputs():
    (at, bt), (as_, bs) = make(3, (4, 3), (4, 3))
    bt.requires_grad_(False)
    bs.requires_grad_(False)

    def fn(lib):
        def f(a, mode, b, k, none):
            assert none is None and mode == "mul"
            return (a * b * k).exp(), a.sum() * k
        return f

    yt = TC.checkpoint(fn(torch), at, "mul", bt, 3, None, use_reentrant=True)
    ys = C.checkpoint(fn(tessera), as_, "mul", bs, 3, None, use_reentrant=True)
    assert isinstance(ys, tuple) and len(ys) == 2
    # Only the first output takes part in the loss: the other gets a zero gradient.
    yt[0].sum().backward()
    ys[0].sum().backward()
    assert bs.grad is None and bt.grad is None
    assert_grads_equal(grads([as_]), grads([at]))


def test_multiple_outputs_both_used():
    (at, wt), (as_, ws) = make(4, (3, 5), (5, 5))

    def fn(lib):
        return lambda a: (a.matmul(wt if lib is torch else ws).sin(), a.cos())
    for lib, a, w, ckpt in ((torch, at, wt, TC.checkpoint), (tessera, as_, ws, C.checkpoint)):
        u, v = ckpt(fn(lib), a, use_reentrant=True)
        (u.sum() + (v * v).sum()).backward()
    assert_grads_equal(grads([as_, ws]), grads([at, wt]))


def test_no_input_requires_grad_warns_like_torch():
    with pytest.warns(UserWarning) as want:
        yt = TC.checkpoint(lambda x: x * 2, torch.ones(3), use_reentrant=True)
    with pytest.warns(UserWarning) as got:
        ys = C.checkpoint(lambda x: x * 2, tessera.ones(3), use_reentrant=True)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert not ys.requires_grad and not yt.requires_grad
    np.testing.assert_array_equal(ys.numpy(), yt.numpy())


def test_recompute_without_grad_output_errors_like_torch():
    (xt,), (xs,) = make(5, (3,))
    yt = TC.checkpoint(lambda x: x.detach() * 2, xt, use_reentrant=True)
    ys = C.checkpoint(lambda x: x.detach() * 2, xs, use_reentrant=True)
    with pytest.raises(RuntimeError) as want:
        yt.sum().backward()
    with pytest.raises(RuntimeError) as got:
        ys.sum().backward()
    assert str(want.value) in str(got.value)


def test_argument_errors():
    x = tessera.ones(2, requires_grad=True)
    with pytest.raises(ValueError) as want:
        TC.checkpoint(lambda a: a, torch.ones(2, requires_grad=True), use_reentrant=True, bogus=1, other=2)
    with pytest.raises(ValueError) as got:
        C.checkpoint(lambda a: a, x, use_reentrant=True, bogus=1, other=2)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        C.checkpoint(lambda a: a, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        C.checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(NotImplementedError, match="debug=True"):
        C.checkpoint(lambda a: a, x, use_reentrant=False, debug=True)
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        C.detach_variable([x])


def test_use_reentrant_omitted_warns_and_is_reentrant():
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        y = C.checkpoint(lambda a: a * 3, tessera.ones(2, requires_grad=True))
    assert y.grad_fn.name() == "CheckpointFunctionBackward"


@pytest.mark.parametrize("segments", [1, 2, 3, 5])
def test_checkpoint_sequential_matches_torch(segments):
    (xt, *pt), (xs, *ps) = make(6, (4, 3), (3, 3), (3, 3), (3, 3), (3, 3), (3, 3))

    def layers(lib, ws):
        return [(lambda w: (lambda h: (h.matmul(w)).tanh()))(w) for w in ws]
    yt = TC.checkpoint_sequential(layers(torch, pt), segments, xt)
    ys = C.checkpoint_sequential(layers(tessera, ps), segments, xs, use_reentrant=True)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    (yt ** 3).sum().backward()
    (ys ** 3).sum().backward()
    assert_grads_equal(grads([xs] + ps), grads([xt] + pt))


def test_checkpoint_sequential_kwargs():
    with pytest.raises(ValueError) as want:
        TC.checkpoint_sequential([lambda h: h], 1, torch.ones(2), foo=3)
    with pytest.raises(ValueError) as got:
        C.checkpoint_sequential([lambda h: h], 1, tessera.ones(2), use_reentrant=True, foo=3)
    assert str(got.value) == str(want.value)


@pytest.mark.skipif(not hasattr(tessera.nn, "Sequential") or not hasattr(tessera.nn, "Linear"),
                    reason="tessera.nn.Sequential / Linear not available yet")
def test_checkpoint_sequential_module():
    tessera.manual_seed(0)
    model = tessera.nn.Sequential(tessera.nn.Linear(4, 6), tessera.nn.Tanh(), tessera.nn.Linear(6, 2))
    x = tessera.randn(3, 4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = C.checkpoint_sequential(model, 2, x, use_reentrant=True)
    y.sum().backward()
    want = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    for p in list(model.parameters()) + [x]:
        p.grad = None
    model(x).sum().backward()
    assert_grads_equal([p.grad.numpy() for p in model.parameters()] + [x.grad.numpy()], want)


# ---------------------------------------------------------------- use_reentrant=False

def run_mlp_nonreentrant(use_grad_api):
    (xt, *pt), (xs, *ps) = make(8, (5, 4), (6, 4), (6,), (3, 6), (3,))
    yt = TC.checkpoint(mlp(torch, TF, pt), xt, 2.0, "tanh", use_reentrant=False)
    ys = C.checkpoint(mlp(tessera, F, ps), xs, 2.0, "tanh", use_reentrant=False)
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    if use_grad_api:  # autograd.grad through a checkpoint: only the non-reentrant one can
        gt = torch.autograd.grad((yt * yt).sum(), [xt] + pt)
        gs = tessera.autograd.grad((ys * ys).sum(), [xs] + ps)
        assert all(p.grad is None for p in ps)
        return [g.numpy() for g in gt], [g.numpy() for g in gs]
    (yt * yt).sum().backward()
    (ys * ys).sum().backward()
    return grads([xt] + pt), grads([xs] + ps)


@pytest.mark.parametrize("use_grad_api", [False, True])
def test_nonreentrant_grads_match_torch_and_plain(use_grad_api):
    want, got = run_mlp_nonreentrant(use_grad_api)
    assert_grads_equal(got, want)
    _, plain = run_mlp(False, scale=2.0)
    (xs, *ps) = make(8, (5, 4), (6, 4), (6,), (3, 6), (3,))[1]
    y = mlp(tessera, F, ps)(xs, 2.0)
    (y * y).sum().backward()
    assert_grads_equal(got, grads([xs] + ps))


def test_nonreentrant_reaches_params_when_no_input_requires_grad():
    # The reentrant variant warns and gives None here; the non-reentrant one, like torch's,
    # gives the closed-over weights their gradients.
    (wt,), (ws,) = make(9, (4, 4))
    xt, xs = torch.ones(3, 4, dtype=torch.float64), tessera.ones(3, 4, dtype=tessera.float64)
    TC.checkpoint(lambda x: x.matmul(wt).sin(), xt, use_reentrant=False).sum().backward()
    C.checkpoint(lambda x: x.matmul(ws).sin(), xs, use_reentrant=False).sum().backward()
    assert_grads_equal(grads([ws]), grads([wt]))


def test_nonreentrant_forward_keeps_no_activations_and_recomputes_once():
    (xs, ws) = make(10, (8, 8), (8, 8))[1]
    runs, packed = [], []

    def fn(x, *, power):
        runs.append(tessera.is_grad_enabled())
        h = x.matmul(ws).tanh()
        return (h ** power).exp()
    with tessera.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y = C.checkpoint(fn, xs, power=3, use_reentrant=False)
    # The checkpoint's own hooks are the innermost: the outer ones saw nothing inside it.
    assert packed == [] and runs == [True]
    y.sum().backward()
    assert runs == [True, True]
    want = (xs.detach().matmul(ws.detach()).tanh() ** 3).exp()
    np.testing.assert_allclose(y.detach().numpy(), want.numpy(), rtol=1e-14)


def test_nonreentrant_retain_graph_and_dropout_rng():
    (x, w) = make(2, (64, 32), (32, 32))[1]  # dropout_grads' leaves
    tessera.manual_seed(3)
    y = C.checkpoint(dropout_block(tessera, F, w), x, use_reentrant=False)
    tessera.rand(50)
    (y * y).sum().backward(retain_graph=True)
    first = grads([x, w])
    x.grad = w.grad = None
    (y * y).sum().backward()
    assert_grads_equal(grads([x, w]), first)
    want, _ = dropout_grads(3, False)
    assert_grads_equal(first, want)


def test_nonreentrant_context_fn_and_determinism_check():
    entered = []

    class Mark:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            entered.append(self.name)

        def __exit__(self, *exc):
            return False
    x = tessera.ones(3, requires_grad=True)
    y = C.checkpoint(lambda a: a.exp(), x, use_reentrant=False, context_fn=lambda: (Mark("fwd"), Mark("re")))
    y.sum().backward()
    assert entered == ["fwd", "re"]

    state = {"n": 3}

    def shape_changes(a):
        state["n"] += 1
        return a[: state["n"] - 3].exp()
    x = tessera.ones(6, requires_grad=True)
    y = C.checkpoint(shape_changes, x, use_reentrant=False)
    with pytest.raises(C.CheckpointError, match="determinism_check='none'"):
        y.sum().backward()


def test_nonreentrant_checkpoint_sequential_matches_plain_torch():
    # torch 1.13's checkpoint_sequential has no use_reentrant (current torch does): the
    # reference is the plain chain in torch.
    (xt, *pt), (xs, *ps) = make(12, (4, 3), (3, 3), (3, 3), (3, 3))

    def layers(ws):
        return [(lambda w: (lambda h: (h.matmul(w)).tanh()))(w) for w in ws]
    yt = xt
    for f in layers(pt):
        yt = f(yt)
    ys = C.checkpoint_sequential(layers(ps), 2, xs, use_reentrant=False)
    tessera.autograd.backward((ys ** 3).sum())
    (yt ** 3).sum().backward()
    assert_grads_equal(grads([xs] + ps), grads([xt] + pt))


def test_nonreentrant_nested_unused_output_and_double_backward_match_torch():
    (xt, wt), (xs, ws) = make(13, (3, 4), (4, 4))

    def inner(lib, w):
        return lambda h: (h.matmul(w).sin(), h.cos())

    def outer(lib, ckpt, w):
        def f(h):
            u, unused = ckpt(inner(lib, w), h, use_reentrant=False)  # noqa: F841 (one output unused)
            return (u * u).tanh()
        return f
    yt = TC.checkpoint(outer(torch, TC.checkpoint, wt), xt, use_reentrant=False)
    ys = C.checkpoint(outer(tessera, C.checkpoint, ws), xs, use_reentrant=False)
    # create_graph: the gradient is itself differentiable through the recomputed graph.
    gt = torch.autograd.grad(yt.sum(), xt, create_graph=True)[0]
    gs = tessera.autograd.grad(ys.sum(), xs, create_graph=True)[0]
    np.testing.assert_allclose(gs.detach().numpy(), gt.detach().numpy(), rtol=1e-12)
    (gt * gt).sum().backward()
    (gs * gs).sum().backward()
    assert_grads_equal(grads([xs, ws]), grads([xt, wt]))
