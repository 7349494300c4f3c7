"""tessera.autograd.Function against torch.autograd.Function: the same Function body
written once for both libraries (a factory taking the library), the same inputs, and
compared outputs, grads, grad_fn names and error messages. Also the Autograd kernel of a
custom C++ operator (test/cpp/custom_ops/myops_autograd.cpp) used from Python."""
import gc
import os
import pathlib
import threading
import warnings

import pytest
import torch

import tessera


def as_lib(lib, values, requires_grad=False, dtype="float64"):
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=requires_grad)


def exp_function(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad.mul(y)

    return Exp


def scaled_sum_function(lib):
    """Two tensor inputs around a float, two outputs, ctx attributes, needs_input_grad."""
    class ScaledSum(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.k = k
            ctx.needs = ctx.needs_input_grad
            ctx.save_for_backward(a, b)
            return a.mul(k).add(b.mul(b)), a.mul(b)

        @staticmethod
        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            ga = g1.mul(ctx.k).add(g2.mul(b)) if ctx.needs_input_grad[0] else None
            gb = g1.mul(b).mul(2.0).add(g2.mul(a)) if ctx.needs_input_grad[2] else None
            return ga, None, gb

    return ScaledSum


def both(fn):
    return fn(torch), fn(tessera)


def assert_close(t, m):
    assert m is not None and t is not None
    assert torch.allclose(t, torch.tensor(m.tolist(), dtype=t.dtype), rtol=1e-12, atol=1e-12), (t, m)


def test_forward_backward_and_grad_fn_match_torch():
    for lib_fn in (exp_function, scaled_sum_function):
        results = {}
        for lib in (torch, tessera):
            fn = lib_fn(lib)
            a = as_lib(lib, [0.5, -1.0, 2.0], True)
            b = as_lib(lib, [1.5, 0.25, -0.75], True)
            if lib_fn is exp_function:
                outs = (fn.apply(a),)
            else:
                outs = fn.apply(a, 0.5, b)
            loss = outs[0].sum()
            for o in outs[1:]:
                loss = loss.add(o.mul(o).sum())
            loss.backward()
            results[lib] = (outs, a.grad, b.grad, outs[0].grad_fn.name())
        t, m = results[torch], results[tessera]
        for to, mo in zip(t[0], m[0]):
            assert_close(to, mo)
        assert_close(t[1], m[1])
        assert (t[2] is None) == (m[2] is None)
        if t[2] is not None:
            assert_close(t[2], m[2])
        assert m[3] == t[3]  # "ExpBackward", "ScaledSumBackward"


def test_needs_input_grad_and_none_grads():
    for lib in (torch, tessera):
        fn = scaled_sum_function(lib)
        a = as_lib(lib, [1.0, 2.0], True)
        b = as_lib(lib, [3.0, 4.0])
        out, _ = fn.apply(a, 2.0, b)
        out.sum().backward()
        assert b.grad is None
    ctx_needs = {}
    for lib in (torch, tessera):
        captured = {}

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k, b):
                captured["needs"] = ctx.needs_input_grad
                return a.mul(k)

            @staticmethod
            def backward(ctx, g):
                return g, None, None

        Probe.apply(as_lib(lib, [1.0], True), 3, as_lib(lib, [1.0]))
        ctx_needs[lib] = captured["needs"]
    assert ctx_needs[tessera] == ctx_needs[torch] == (True, False, False)


def test_gradcheck_and_second_derivative():
    Exp = exp_function(tessera)
    x = as_lib(tessera, [0.1, -0.7, 1.3], True)
    assert tessera.autograd.gradcheck(Exp.apply, (x,))
    assert tessera.autograd.gradgradcheck(Exp.apply, (x,))
    (g,) = tessera.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = tessera.autograd.grad(g.sum(), x)
    assert_close(torch.tensor([0.1, -0.7, 1.3], dtype=torch.float64).exp(), gg)


def test_once_differentiable():
    for lib in (torch, tessera):
        from importlib import import_module
        once = import_module(lib.__name__ + ".autograd.function").once_differentiable

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.mul(x)

            @staticmethod
            @once
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g.mul(x).mul(2.0)

        x = as_lib(lib, [3.0], True)
        (g,) = lib.autograd.grad(Square.apply(x).sum(), x)
        assert g.tolist() == [6.0]
        # The grad reaching Square's backward (x, from the mul) requires grad here.
        (g,) = lib.autograd.grad(Square.apply(x).mul(x).sum(), x, create_graph=True)
        assert g.tolist() == [27.0]
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                               "@once_differentiable"):
            g.sum().backward()


def test_mark_dirty_and_non_differentiable():
    results = {}
    for lib in (torch, tessera):
        class DoubleInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2.0)
                ctx.mark_dirty(x)
                mask = x.gt(0.0)
                ctx.mark_non_differentiable(mask)
                return x, mask

            @staticmethod
            def backward(ctx, g, g_mask):
                return g.mul(2.0)

        leaf = as_lib(lib, [1.0, -3.0], True)
        x = leaf.mul(1.0)
        y, mask = DoubleInPlace.apply(x)
        assert y is x
        assert not mask.requires_grad
        assert y.grad_fn.name() == "DoubleInPlaceBackward"
        y.mul(3.0).sum().backward()
        results[lib] = leaf.grad
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            DoubleInPlace.apply(as_lib(lib, [1.0], True))
    assert_close(results[torch], results[tessera])


def test_input_returned_unchanged_is_a_new_alias():
    for lib in (torch, tessera):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g.mul(5.0)

        x = as_lib(lib, [1.0, 2.0], True)
        y = Identity.apply(x)
        assert y is not x and x.is_leaf and not y.is_leaf
        y.sum().backward()
        assert x.grad.tolist() == [5.0, 5.0]


def test_materialize_grads():
    for lib in (torch, tessera):
        seen = {}

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, materialize):
                ctx.set_materialize_grads(materialize)
                return x.mul(1.0), x.mul(2.0)

            @staticmethod
            def backward(ctx, g1, g2):
                seen["g2"] = None if g2 is None else g2.tolist()
                return g1, None

        x = as_lib(lib, [1.0, 1.0], True)
        Two.apply(x, True)[0].sum().backward()
        assert seen["g2"] == [0.0, 0.0]
        Two.apply(x, False)[0].sum().backward()
        assert seen["g2"] is None


def errors(fn):
    out = []
    for lib in (torch, tessera):
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((type(info.value), str(info.value).splitlines()[0]))
    return out


def test_errors_match_torch():
    def wrong_count(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a.mul(b)

            @staticmethod
            def backward(ctx, g):
                return g

        F.apply(as_lib(lib, [1.0], True), as_lib(lib, [2.0], True)).sum().backward()

    def grad_for_number(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                return a.mul(k)

            @staticmethod
            def backward(ctx, g):
                return g, g

        F.apply(as_lib(lib, [1.0], True), 2.0).sum().backward()

    def saved_then_modified(lib):
        Exp = exp_function(lib)
        y = Exp.apply(as_lib(lib, [0.5], True))
        y.mul_(2.0)
        y.sum().backward()

    def save_a_number(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a, 3)
                return a.mul(1.0)

        F.apply(as_lib(lib, [1.0], True))

    def no_forward(lib):
        class F(lib.autograd.Function):
            pass

        F.apply(as_lib(lib, [1.0], True))

    def instantiated(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            fn = exp_function(lib)()
        fn(as_lib(lib, [1.0], True))

    def dirty_not_returned(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2.0)
                ctx.mark_dirty(a)
                return a.sum()

            @staticmethod
            def backward(ctx, g):
                return g

        F.apply(as_lib(lib, [1.0], True).mul(1.0))

    def backward_twice(lib):
        Exp = exp_function(lib)
        y = Exp.apply(as_lib(lib, [0.5], True)).sum()
        y.backward()
        y.backward()

    for case in (wrong_count, grad_for_number, save_a_number, no_forward, instantiated, backward_twice,
                 dirty_not_returned):
        (t_type, t_msg), (m_type, m_msg) = errors(case)
        assert m_type is t_type, (case.__name__, t_type, m_type, m_msg)
        assert m_msg == t_msg, case.__name__
    (t_type, t_msg), (m_type, m_msg) = errors(saved_then_modified)
    assert m_type is t_type
    assert m_msg.replace("tessera.", "torch.") == t_msg


def test_backward_runs_python_function_from_several_threads():
    Exp = exp_function(tessera)
    failures = []

    def work(seed):
        for _ in range(20):
            x = as_lib(tessera, [0.01 * seed, -0.02 * seed], True)
            Exp.apply(x.mul(2.0)).sum().backward()
            expected = torch.tensor([0.01 * seed, -0.02 * seed], dtype=torch.float64).mul(2.0).exp().mul(2.0)
            if not torch.allclose(expected, torch.tensor(x.grad.tolist(), dtype=torch.float64)):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def build_file(name):
    path = pathlib.Path(os.environ["TESSERA_BUILD_DIR"]) / "test" / "cpp" / name
    if not path.exists():
        pytest.fail(f"{path} was not built")
    return path


def check_scale_autograd():
    x = as_lib(tessera, [1.0, -2.0, 0.5], True)
    y = tessera.ops.myops.scale(x, 3.0)
    assert y.grad_fn.name() == "(anonymous namespace)::ScaleFunction"
    y.mul(y).sum().backward()
    assert x.grad.tolist() == [18.0, -36.0, 9.0]
    assert tessera.autograd.gradcheck(lambda t: tessera.ops.myops.scale(t, -1.5), (x,))
    assert tessera.autograd.gradgradcheck(lambda t: tessera.ops.myops.scale(t, -1.5).mul(t), (x,))


def test_custom_op_autograd_kernel():
    ops, grads = build_file("libtessera_test_myops.so"), build_file("libtessera_test_myops_autograd.so")
    tessera.ops.load_library(ops)
    try:
        tessera.ops.load_library(grads)
        try:
            # In a function of its own: every Node of the library's Function class must be
            # gone before the library (its code) is unloaded.
            check_scale_autograd()
            gc.collect()
        finally:
            tessera.ops.unload_library(grads)
    finally:
        tessera.ops.unload_library(ops)
