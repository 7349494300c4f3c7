"""tessera.autograd.graph (saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks)
against torch.autograd.graph: which tensors reach pack and how they look, the gradients with
hooks (first and second order), torch's errors, nesting, threads and freeing."""
import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import tessera


def tt(x):
    return tessera.from_numpy(np.array(x.detach().numpy(), order="C"))


def leaves(seed, *shapes):
    g = torch.Generator().manual_seed(seed)
    pt = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    return [p.clone().requires_grad_() for p in pt], [tt(p).requires_grad_() for p in pt]


def describe(lib):
    """pack and unpack hooks recording what they see."""
    seen = []

    def pack(x):
        seen.append(("pack", tuple(x.shape), x.requires_grad, x.is_leaf,
                     None if x.grad_fn is None else x.grad_fn.name()))
        return x

    def unpack(x):
        seen.append(("unpack", tuple(x.shape)))
        return x
    return seen, lib.autograd.graph.saved_tensors_hooks(pack, unpack)


def run_program(lib, a, b):
    seen, hooks = describe(lib)
    with hooks:
        y = a * b
        z = b.exp()
        w = (a.sin() * 2).sum()
    (y.sum() + (z * z).sum() + w).backward()
    return seen


def test_pack_sees_what_torch_passes():
    (at, bt0), (as_, bs0) = leaves(0, (3,), (3,))
    bt, bs = bt0 * 2, bs0 * 2
    want = run_program(torch, at, bt)
    got = run_program(tessera, as_, bs)
    assert [e for e in got if e[0] == "pack"] == [e for e in want if e[0] == "pack"]
    assert sorted(e for e in got if e[0] == "unpack") == sorted(e for e in want if e[0] == "unpack")
    for x, y in ((as_, at), (bs0, bt0)):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-14)


def mlp_loss(lib, x, w1, w2):
    return ((x.matmul(w1).tanh().matmul(w2)) ** 2).sum()


@pytest.mark.parametrize("kind", ["identity", "clone", "numpy", "save_on_cpu"])
def test_hooked_grads_match_plain_and_torch(kind):
    (xt, w1t, w2t), (xs, w1s, w2s) = leaves(1, (4, 5), (5, 6), (6, 2))
    mlp_loss(torch, xt, w1t, w2t).backward()
    if kind == "identity":
        hooks = tessera.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    elif kind == "clone":
        hooks = tessera.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t)
    elif kind == "numpy":
        hooks = tessera.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy().copy(),
                                                           lambda a: tessera.from_numpy(a))
    else:
        hooks = tessera.autograd.graph.save_on_cpu()
    with hooks:
        loss = mlp_loss(tessera, xs, w1s, w2s)
    loss.backward()
    for s, t in zip((xs, w1s, w2s), (xt, w1t, w2t)):
        np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=1e-13)


def test_double_backward_through_hooked_leaves():
    # The unpacked leaf must lead back to the original leaf's accumulator.
    (at, bt), (as_, bs) = leaves(2, (4,), (4,))
    gt = torch.autograd.grad((at * bt * at).sum(), at, create_graph=True)[0]
    with tessera.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (as_ * bs * as_).sum()
    gs = tessera.autograd.grad(y, as_, create_graph=True)[0]
    np.testing.assert_allclose(gs.detach().numpy(), gt.detach().numpy(), rtol=1e-14)
    (gt * gt).sum().backward()
    (gs * gs).sum().backward()
    np.testing.assert_allclose(as_.grad.numpy(), at.grad.numpy(), rtol=1e-14)
    np.testing.assert_allclose(bs.grad.numpy(), bt.grad.numpy(), rtol=1e-14)


def test_no_version_check_through_hooks_like_torch():
    for lib, a in ((torch, torch.ones(3, requires_grad=True)), (tessera, tessera.ones(3, requires_grad=True))):
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            c = a * 2
            d = c * c
        c.add_(1)  # torch cannot track versions through user hooks: the new value is used
        d.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 12.0))


def test_errors_match_torch():
    def unpack_to_int(lib):
        a = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: 3):
            y = a.exp()
        y.sum().backward()

    def pack_in_place(lib):
        a = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x.detach().mul_(2), lambda x: x):
            a.exp()

    def disabled(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks in here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
    for case in (unpack_to_int, pack_in_place, disabled):
        with pytest.raises(Exception) as want:
            case(torch)
        with pytest.raises(Exception) as got:
            case(tessera)
        assert type(got.value) is type(want.value), case.__name__
        assert str(got.value) == str(want.value), case.__name__


def test_disable_restores_previous_message_and_allows_after():
    graph = tessera.autograd.graph
    with graph.disable_saved_tensors_hooks("outer"):
        with graph.disable_saved_tensors_hooks("inner"):
            with pytest.raises(RuntimeError, match="inner"):
                graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()
        with pytest.raises(RuntimeError, match="outer"):
            graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()
    with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        pass


def test_python_errors_in_hooks_propagate():
    a = tessera.ones(2, requires_grad=True)

    def bad_pack(x):
        raise KeyError("from pack")
    with pytest.raises(KeyError, match="from pack"):
        with tessera.autograd.graph.saved_tensors_hooks(bad_pack, lambda x: x):
            a.exp()

    def bad_unpack(x):
        raise ValueError("from unpack")
    with tessera.autograd.graph.saved_tensors_hooks(lambda x: x, bad_unpack):
        y = a.exp()
    with pytest.raises(ValueError, match="from unpack"):
        y.sum().backward()


def test_nesting_innermost_applies_and_custom_function_saves_go_through():
    calls = []
    outer = tessera.autograd.graph.saved_tensors_hooks(lambda x: calls.append("outer") or x, lambda x: x)
    inner = tessera.autograd.graph.saved_tensors_hooks(lambda x: calls.append("inner") or x, lambda x: x)

    class Square(tessera.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    a = tessera.ones(3, requires_grad=True)
    with outer:
        a.exp()
        with inner:
            y = Square.apply(a)
        a.sin()
    assert calls == ["outer", "inner", "outer"]
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 2.0))


def test_retain_graph_unpacks_again_and_nothing_when_no_grad():
    unpacked = []
    a = tessera.ones(2, requires_grad=True)
    with tessera.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: unpacked.append(1) or x):
        y = a.exp().sum()
        with tessera.no_grad():
            a.exp()
        tessera.ones(2).exp()
    y.backward(retain_graph=True)
    y.backward()
    assert len(unpacked) == 2


def test_hooks_are_per_thread():
    calls = []
    a = tessera.ones(2, requires_grad=True)
    with tessera.autograd.graph.saved_tensors_hooks(lambda x: calls.append(1) or x, lambda x: x):
        t = threading.Thread(target=lambda: a.exp())
        t.start()
        t.join()
        assert calls == []
        a.exp()
    assert calls == [1]


def test_packed_values_freed_with_the_graph():
    class Box:
        pass
    refs = []

    def pack(x):
        box = Box()
        box.t = x.detach().clone()
        refs.append(weakref.ref(box))
        return box
    a = tessera.ones(2, requires_grad=True)
    with tessera.autograd.graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = (a.exp() * a).sum()
    assert refs and all(r() is not None for r in refs)
    y.backward()   # frees the graph's saved values
    gc.collect()
    assert all(r() is None for r in refs)
    with tessera.autograd.graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = a.exp().sum()
    del y          # a graph that never ran backward
    gc.collect()
    assert refs[-1]() is None


def test_pack_runs_without_grad_and_save_on_cpu_frees_the_graph():
    modes = {}
    for lib in (torch, tessera):
        a = lib.ones(3, requires_grad=True)

        def pack(x, lib=lib):
            modes[lib.__name__] = lib.is_grad_enabled()
            return x * 1  # an op on a saved output: must record no graph back to its Node
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            (a * 2).exp()
    assert modes == {"torch": False, "tessera": False}
    a = tessera.ones(1000, requires_grad=True)
    with tessera.autograd.graph.save_on_cpu():
        y = (a * 1).exp()
    ref = weakref.ref(y)
    del y
    gc.collect()
    assert ref() is None  # the output, its Node and the packed copy are gone together


def test_disable_inside_active_hooks_and_empty_message_like_torch():
    for lib in (torch, tessera):
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            with pytest.raises(RuntimeError, match="not while hooks are on"):
                with lib.autograd.graph.disable_saved_tensors_hooks("not while hooks are on"):
                    pass
        with lib.autograd.graph.disable_saved_tensors_hooks(""):
            with pytest.raises(RuntimeError) as err:
                lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x).__enter__()
            assert str(err.value) == ""
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            pass
