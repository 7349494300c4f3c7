"""Autograd's engine against torch: compositions of ops (in-place chains, writes through
views, t[...] = v) differentiated by both and gradchecked, higher derivatives, hooks,
grad modes, and torch's errors for the misuse cases (in-place on saved tensors or leaves,
backward twice, out= with grad). Each operator's own gradients are checked from its
registry entry (opinfo.py, test_op_grads.py)."""
import pytest
import torch

import tessera

from opinfo import M, V, assert_raises_like_torch
from torch_compare import same_error


def _both(data, dtype="float64"):
    t = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=True)
    s = tessera.tensor(data, dtype=getattr(tessera, dtype), requires_grad=True)
    return t, s


def _grads_match(fn, *datas):
    pairs = [_both(d) for d in datas]
    torch_in, tess_in = [p[0] for p in pairs], [p[1] for p in pairs]
    fn(torch, *torch_in).sum().backward()
    fn(tessera, *tess_in).sum().backward()
    for a, b in zip(torch_in, tess_in):
        assert b.grad is not None, "no grad reached the input"
        assert b.grad.reshape(-1).tolist() == pytest.approx(a.grad.reshape(-1).tolist(), rel=1e-6, abs=1e-9, nan_ok=True)


# Autograd's own machinery, over several ops at once: in-place chains, in-place writes
# through views (CopySlices), t[...] = v, a float32 round trip. Each operator's gradients
# are checked by its registry entry (opinfo.py, test_op_grads.py); these check how the
# engine composes them. Each is gradchecked and compared with torch's grads.
MECHANICS = [
    ("inplace_chain", lambda L, a: a.mul(2).add_(1).mul_(a).exp_(), (M,)),
    ("inplace_on_view", lambda L, a: _inplace_on_view(L, a), (M,)),
    ("view_chain", lambda L, a: a.t().reshape(3, 2).unsqueeze(0).permute(2, 0, 1).squeeze(1) * 2, (M,)),
    ("setitem", lambda L, a, b: _setitem(L, a, b), (M, V)),
    ("clone_to", lambda L, a: a.clone().to(L.float32).to(L.float64) * 2, (M,)),
    ("pow_chain", lambda L, a, b: a.abs().add(1).pow_(2).pow_(b.abs()), (M, V)),
]


def _setitem(L, a, b):
    y = a * 1
    y[0, 1:] = b[:2]
    y[y > 1] = 0.5
    y[[1, 0], [0, 0]] = b[1:] * 2
    y[1] = 3.0
    z = a * 1
    z[..., 2] = b[:2]
    z[None, 0, [2]] += b[0]
    return y + z


def _inplace_on_view(L, a):
    y = a * 1
    y.narrow(1, 0, 2).mul_(3)
    y.select(0, 1).add_(a.select(0, 0))
    return y


@pytest.mark.parametrize("name,fn,inputs", MECHANICS, ids=[c[0] for c in MECHANICS])
def test_grads_match_torch(name, fn, inputs):
    _grads_match(fn, *inputs)


@pytest.mark.parametrize("name,fn,inputs", MECHANICS, ids=[c[0] for c in MECHANICS])
def test_gradcheck(name, fn, inputs):
    if name == "clone_to":
        pytest.skip("a float32 round trip is below finite differences' resolution")
    ins = [tessera.tensor(d, dtype=tessera.float64, requires_grad=True) for d in inputs]
    assert tessera.autograd.gradcheck(lambda *xs: fn(tessera, *xs), ins)


# In-place writes through views are not yet twice differentiable (the saved view is
# rewritten by the double backward's own CopySlices): inplace_on_view is left out.
@pytest.mark.parametrize("name", ["inplace_chain", "view_chain", "setitem"])
def test_gradgradcheck(name):
    _, fn, inputs = next(c for c in MECHANICS if c[0] == name)
    ins = [tessera.tensor(d, dtype=tessera.float64, requires_grad=True) for d in inputs]
    assert tessera.autograd.gradgradcheck(lambda *xs: fn(tessera, *xs), ins)


def test_third_derivative():
    for L in (torch, tessera):
        x = L.tensor([0.3, -1.2], dtype=L.float64, requires_grad=True)
        y = (x.sin() * x * x).sum()
        (g1,) = L.autograd.grad(y, x, create_graph=True)
        (g2,) = L.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = L.autograd.grad(g2.sum(), x)
        if L is torch:
            expected = g3.tolist()
        else:
            assert g3.tolist() == pytest.approx(expected, rel=1e-9)


def test_gradcheck_rejects_a_wrong_derivative():
    def wrong(x):
        y = x * 1
        y.register_hook(lambda g: g * 3)  # the backward now returns 3x the true grad
        return y
    x = tessera.tensor([1.0, 2.0], dtype=tessera.float64, requires_grad=True)
    with pytest.raises(tessera.autograd.GradcheckError, match="Jacobian mismatch"):
        tessera.autograd.gradcheck(wrong, (x,))
    assert tessera.autograd.gradcheck(wrong, (x,), raise_exception=False) is False


def test_gradcheck_perturbs_non_contiguous_inputs_in_place():
    # a transposed leaf: the finite differences must move the leaf itself, not a copy
    base = tessera.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]], dtype=tessera.float64)
    x = base.t().requires_grad_()
    assert not x.is_contiguous()
    weights = tessera.tensor([[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]], dtype=tessera.float64)
    assert tessera.autograd.gradcheck(lambda t: (t * t * weights).sum(0), (x,))
    # a formula that misses the dependence (zero analytic grad) is caught only if the
    # numerical side sees the perturbation
    with pytest.raises(tessera.autograd.GradcheckError, match="Jacobian mismatch"):
        tessera.autograd.gradcheck(lambda t: (t.detach() * weights).sum(0) + (t * 0).sum(0), (x,))


def test_gradcheck_refuses_inputs_with_a_stride_0_dimension():
    # an expanded input shares memory across the expanded dim: the in-place perturbation
    # would move a whole row at once, so gradcheck refuses it, with torch's error
    def call(L, leaf):
        w = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        x = L.tensor([[1.0], [2.0], [3.0]], dtype=L.float64, requires_grad=True).expand(3, 2)
        if leaf:
            x = x.detach().requires_grad_()
        return L.autograd.gradcheck(lambda a, b: a * b, (w, x))
    for leaf in (False, True):
        same_error(lambda: call(torch, leaf), lambda: call(tessera, leaf))
    # a stride-0 dimension of size 1 overlaps nothing and is accepted, as in torch
    for L in (torch, tessera):
        x = L.tensor([1.0, 2.0, 3.0], dtype=L.float64).as_strided((3, 1), (1, 0)).requires_grad_()
        assert L.autograd.gradcheck(lambda a: a * a, (x,))


def test_gradcheck_without_an_input_requiring_grad_raises_like_torch():
    same_error(lambda: torch.autograd.gradcheck(lambda a: a * 2, (torch.ones(2, dtype=torch.float64),)),
               lambda: tessera.autograd.gradcheck(lambda a: a * 2, (tessera.ones(2, dtype=tessera.float64),)))


def test_missing_derivative_raises_at_backward():
    w = tessera.ones(3, requires_grad=True)
    out = tessera.bincount(tessera.tensor([0, 1, 1]), weights=w)
    assert out.requires_grad and out.grad_fn.name() == "NotImplemented"
    with pytest.raises(NotImplementedError, match="the derivative for 'bincount' is not implemented"):
        out.sum().backward()


def test_grad_fn_names_and_leaves():
    for L in (torch, tessera):
        x = L.ones(2, 3, requires_grad=True)
        y = (x * 2).sum(1)
        z = x.exp().transpose(0, 1)
        names = (y.grad_fn.name(), z.grad_fn.name(), x.is_leaf, y.is_leaf, x.grad_fn, y.requires_grad)
        nxt = [type(f[0]).__name__ if L is torch else f[0].name() for f in y.grad_fn.next_functions]
        if L is torch:
            expected = (names, nxt)
        else:
            assert (names, nxt) == expected


ERRORS = [
    "b = x * 2; c = b * b; b.add_(1); c.sum().backward()",
    "y = x.exp(); y.add_(1); y.sum().backward()",
    "x.add_(1)",
    "x.select(0, 0).add_(1)",
    "y = (x * x).sum(); y.backward(); y.backward()",
    "(x * x).backward()",
    "L.ones(3).sum().backward()",
    "L.add(x, x, out=L.empty(3))",
    "L.autograd.grad(x.sum(), [L.ones(2, requires_grad=True)])",
    "(x * 2).backward(L.ones(2))",
    "L.ones(3, dtype=L.long).requires_grad_()",
    "(x * 2).requires_grad_(False)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    def run(L):
        x = L.ones(3, requires_grad=True)  # noqa: F841
        exec(expr, {"L": L, "x": x})
    try:
        run(torch)
    except Exception as e:  # noqa: BLE001
        torch_error = e
    else:
        raise AssertionError("torch raised nothing")
    with pytest.raises(type(torch_error)) as info:
        run(tessera)
    theirs = str(torch_error).replace("torch.", "tessera.").replace("torch", "tessera")
    mine = str(info.value)
    # Current torch says "floating point and complex dtype" where 1.13 says "floating point dtype".
    theirs = theirs.replace("floating point dtype", "floating point and complex dtype")
    assert mine.split("\n")[0] == theirs.split("\n")[0]


def test_retain_graph_accumulates():
    for L in (torch, tessera):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        if L is torch:
            expected = x.grad.tolist()
        else:
            assert x.grad.tolist() == expected


def test_no_grad_enable_grad_and_inference_mode():
    x = tessera.ones(2, requires_grad=True)
    with tessera.no_grad():
        assert not (x * 2).requires_grad
        with tessera.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @tessera.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    with tessera.set_grad_enabled(False):
        assert not tessera.is_grad_enabled()
    assert tessera.is_grad_enabled()
    with tessera.inference_mode():
        assert not (x * 2).requires_grad and tessera.is_inference_mode_enabled()
    assert not tessera.is_inference_mode_enabled()


def test_hooks_and_retain_grad():
    for L in (torch, tessera):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = []
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: seen.append(g.tolist()))
        h = x.register_hook(lambda g: g * 10)
        (y * y).sum().backward()
        result = (seen, y.grad.tolist(), x.grad.tolist())
        h.remove()
        x.grad = None
        (x * 1).sum().backward()
        result += (x.grad.tolist(),)
        if L is torch:
            expected = result
        else:
            assert result == expected


def test_backward_inputs_and_autograd_grad_allow_unused():
    for L in (torch, tessera):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        ga, gb = a.grad.tolist(), b.grad
        g = L.autograd.grad((a * a).sum(), [a, b], allow_unused=True)
        result = (ga, gb, g[0].tolist(), g[1])
        if L is torch:
            expected = result
        else:
            assert result == expected


def test_inplace_into_view_of_non_requires_grad_base():
    for L in (torch, tessera):
        base = L.zeros(4)
        w = L.tensor([1.0, 2.0], requires_grad=True)
        base.narrow(0, 1, 2).copy_(w * w)
        result = [base.requires_grad, base.grad_fn.name() if L is tessera else type(base.grad_fn).__name__]
        (base * L.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        result.append(w.grad.tolist())
        if L is torch:
            expected = result
        else:
            assert result == expected


def test_anomaly_mode_names_the_forward_op():
    x = tessera.tensor([0.0, 1.0], requires_grad=True)
    with tessera.autograd.detect_anomaly():
        y = x.sqrt() * 0  # sqrt'(0) = inf; inf * 0 = nan in the backward of sqrt
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            y.sum().backward()
    assert not tessera.autograd.is_anomaly_enabled()


def test_long_chain_backward_and_destruction():
    x = tessera.ones(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
    del y  # destroying a 100,000-node graph must not overflow the stack


def test_node_hooks_see_both_grads():
    for L in (torch, tessera):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append(([g.tolist() for g in gi if g is not None],
                                                             [g.tolist() for g in go])))
        y.sum().backward()
        if L is torch:
            expected = seen
        else:
            assert seen == expected


def test_double_backward_through_an_in_place_op_on_a_view_like_torch():
    # The create_graph pass reaches exp_'s Node both through CopySlices (via the base) and
    # directly (via its saved output); freeing the first graph in the second pass must not
    # empty that Node before both are done (torch drops CopySlices' reference instead).
    def run(lib, retain):
        x = lib.tensor([0.5, 1.0, 1.5, 2.0], dtype=lib.float64, requires_grad=True)
        b = x * 1
        b[:2].exp_()
        (g,) = lib.autograd.grad((b * b).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x, retain_graph=retain)
        return g.detach().tolist(), h.tolist()
    for retain in (None, True):
        got, want = run(tessera, retain), run(torch, retain)
        for a, b in zip(got, want):
            assert a == pytest.approx(b, rel=1e-13)


def test_backward_twice_through_copy_slices_gives_torchs_error():
    for lib in (torch, tessera):
        x = lib.ones(4, dtype=lib.float64, requires_grad=True)
        b = x * 1
        b[:2].mul_(3)
        y = (b * b).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            y.backward()


@pytest.mark.parametrize("layout", ["transposed", "permuted", "channels_last", "sliced", "expanded"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_leaf_grads_follow_torchs_layout_contract(layout, create_graph):
    """A leaf's grad takes the leaf's strides when the leaf is non-overlapping and dense,
    else contiguous ones, whatever layout the backward produced (torch's contract)."""
    def leaf(lib):
        base = lib.arange(24.0).reshape(2, 3, 4)
        t = {"transposed": lambda: base[0].t(), "permuted": lambda: base.permute(2, 0, 1),
             "channels_last": lambda: base.reshape(1, 2, 3, 4).contiguous(memory_format=lib.channels_last),
             "sliced": lambda: base[:, ::2], "expanded": lambda: base[:, :1].expand(2, 3, 4)}[layout]()
        return t.detach().requires_grad_() if layout != "channels_last" else t.requires_grad_()
    for _ in range(2):  # the first grad is stored, the second accumulated into it
        strides = []
        for lib in (torch, tessera):
            x = leaf(lib)
            (x * x).sum().backward(create_graph=create_graph)
            (x.sin()).sum().backward(create_graph=create_graph)
            strides.append(x.grad.stride())
            grad = x.grad.detach()
        assert strides[1] == strides[0], f"{layout}: tessera {strides[1]}, torch {strides[0]}"
        torch.testing.assert_close(torch.from_numpy(grad.numpy().copy()),
                                   (2 * leaf(torch) + leaf(torch).cos()).detach())
