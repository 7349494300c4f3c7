"""tessera.func against functorch 1.13 (torch 1.13's form of torch.func: the same transforms
and messages): gradients, vjps, jvps, Jacobians and Hessians of the same functions on the
same float64 inputs, pytrees and argnums, has_aux, nested transforms, composition with
autograd, functional_call, and the refusals of vmap and functionalize."""
import functorch
import pytest
import torch

import tessera
from opinfo import to_tessera, to_torch
from tessera import func


def same(got, want, tol=1e-10):
    """got (tessera values in a pytree) equals want (torch's) leaf by leaf."""
    got_leaves, got_spec = tessera.utils._pytree.tree_flatten(got)
    want_leaves, want_spec = torch.utils._pytree.tree_flatten(want)
    assert len(got_leaves) == len(want_leaves), (got, want)
    for g, w in zip(got_leaves, want_leaves):
        if isinstance(w, torch.Tensor):
            assert isinstance(g, tessera.Tensor), (g, w)
            assert tuple(g.shape) == tuple(w.shape), (g.shape, w.shape)
            assert torch.allclose(to_torch(g.detach()), w.detach(), rtol=tol, atol=tol), (g, w)
        else:
            assert g == w


def both(make):
    """make(lib) for torch and tessera."""
    return make(torch), make(tessera)


def inputs(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
    return xs, [to_tessera(x) for x in xs]


def f_scalar(lib):
    return lambda x, y: (lib.sin(x) * y.exp()).sum() + (x ** 3).mean()


def f_tree(lib):
    return lambda p: {"out": lib.tanh(p["w"] @ p["x"]) * p["b"], "norm": (p["w"] ** 2).sum()}


FUNCTORCH = {"grad": functorch.grad, "grad_and_value": functorch.grad_and_value, "jacrev": functorch.jacrev,
             "jacfwd": functorch.jacfwd, "hessian": functorch.hessian}


@pytest.mark.parametrize("transform", ["grad", "grad_and_value"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_matches_functorch(transform, argnums):
    (x, y), (mx, my) = inputs((3, 4), (3, 4))
    want = FUNCTORCH[transform](f_scalar(torch), argnums=argnums)(x, y)
    got = getattr(func, transform)(f_scalar(tessera), argnums=argnums)(mx, my)
    same(got, want)


def test_grad_of_pytrees_with_aux_and_kwargs():
    (w, x, b), (mw, mx, mb) = inputs((4, 3), (3,), (4,))

    def loss(lib):
        def fn(p, scale=1.0):
            out = f_tree(lib)(p)
            return (out["out"].sum() + out["norm"]) * scale, {"aux": out["out"]}
        return fn
    want = functorch.grad(loss(torch), has_aux=True)({"w": w, "x": x, "b": b}, scale=2.0)
    got = func.grad(loss(tessera), has_aux=True)({"w": mw, "x": mx, "b": mb}, scale=2.0)
    same(got, want)
    assert not got[1]["aux"].requires_grad  # (aux is cut from the transform's graph too)


def test_nested_transforms_differentiate_again():
    (x,), (mx,) = inputs((5,))

    def cube(lib):
        return lambda t: (t ** 3 * lib.sin(t)).sum()
    for depth in (2, 3):
        want, got = functorch.grad(cube(torch)), func.grad(cube(tessera))
        for _ in range(depth - 1):
            want, got = functorch.grad(lambda t, g=want: g(t).sum()), func.grad(lambda t, g=got: g(t).sum())
        same(got(mx), want(x))
    # a closure over the outer input: the inner gradient (x) is differentiated by the outer
    want = functorch.grad(lambda a: functorch.grad(lambda b: (a * b).sum())(torch.ones(5, dtype=torch.float64))
                          .pow(2).sum())(x)
    got = func.grad(lambda a: func.grad(lambda b: (a * b).sum())(tessera.ones(5, dtype=tessera.float64))
                    .pow(2).sum())(mx)
    same(got, want)


def test_transforms_record_under_no_grad_and_refuse_in_place_inputs():
    (x,), (mx,) = inputs((3,))
    with torch.no_grad():
        want = (functorch.grad(lambda t: (t ** 2).sum())(x), functorch.vjp(lambda t: t.sin(), x)[1](x),
                functorch.jvp(lambda t: t.exp(), (x,), (x,)), functorch.jacrev(lambda t: t ** 3)(x))
    with tessera.no_grad():
        got = (func.grad(lambda t: (t ** 2).sum())(mx), func.vjp(lambda t: t.sin(), mx)[1](mx),
               func.jvp(lambda t: t.exp(), (mx,), (mx,)), func.jacrev(lambda t: t ** 3)(mx))
    same(got, want)
    for lib, transform in ((torch, functorch.grad), (tessera, func.grad)):
        w = (x if lib is torch else mx).clone().requires_grad_()
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad is being used in an in-place"):
            transform(lambda t: t.mul_(2).sum())(w * 1)
    # duplicates are found after negative argnums are wrapped
    with pytest.raises(RuntimeError, match=r"argnums elements must be unique, got \(0, 0\)"):
        func.grad(lambda a: a.sum(), argnums=(0, -1))(mx)
    # a tangent that requires grad makes the jvp differentiable, not the primal output
    tangent = mx.clone().requires_grad_()
    out, jv = func.jvp(lambda t: t.sin(), (mx,), (tangent,))
    assert not out.requires_grad and jv.requires_grad


def test_results_compose_with_autograd_only_when_an_input_requires_grad():
    (x,), (mx,) = inputs((4,))
    plain = func.grad(lambda t: (t ** 3).sum())(mx)
    assert not plain.requires_grad and plain.grad_fn is None
    xr, mxr = x.clone().requires_grad_(), mx.clone().requires_grad_()
    want = functorch.grad(lambda t: (t ** 3).sum())(xr)
    got = func.grad(lambda t: (t ** 3).sum())(mxr)
    assert got.requires_grad == want.requires_grad
    want.sum().backward()
    got.sum().backward()
    same(mxr.grad, xr.grad)


@pytest.mark.parametrize("has_aux", [False, True])
def test_vjp_matches_functorch(has_aux):
    (w, x, b), (mw, mx, mb) = inputs((4, 3), (3,), (4,))

    def fn(lib):
        def f(p):
            out = f_tree(lib)(p)
            return (out, out["norm"] * 2) if has_aux else out
        return f
    want = functorch.vjp(fn(torch), {"w": w, "x": x, "b": b}, has_aux=has_aux)
    got = func.vjp(fn(tessera), {"w": mw, "x": mx, "b": mb}, has_aux=has_aux)
    same(got[0], want[0])
    if has_aux:
        same(got[2], want[2])
    (c1, c2), (mc1, mc2) = inputs((4,), (), seed=3)
    # the vjp function may be called again, with other cotangents
    for scale in (1.0, -0.5):
        same(got[1]({"out": mc1 * scale, "norm": mc2}), want[1]({"out": c1 * scale, "norm": c2}))


@pytest.mark.parametrize("has_aux", [False, True])
def test_jvp_matches_functorch(has_aux):
    (x, y, tx, ty), (mx, my, mtx, mty) = inputs((3, 4), (4,), (3, 4), (4,))

    def fn(lib):
        def f(a, b):
            out = (lib.sin(a) * b, (a @ b).exp())
            return (out, b.sum()) if has_aux else out
        return f
    want = functorch.jvp(fn(torch), (x, y), (tx, ty), has_aux=has_aux)
    got = func.jvp(fn(tessera), (mx, my), (mtx, mty), has_aux=has_aux)
    same(got, want)
    # an output that does not depend on the primals has a zero jvp
    same(func.jvp(lambda a: (a * 0 + 1).detach(), (mx,), (mtx,)), functorch.jvp(lambda a: (a * 0 + 1).detach(),
                                                                                 (x,), (tx,)))


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_match_functorch(transform):
    (x, y), (mx, my) = inputs((3,), (3, 2))

    def fn(lib):
        return lambda a, b: {"m": lib.sin(a) @ b, "s": (a * a).sum() * b}
    for argnums in (0, 1, (0, 1)):
        want = FUNCTORCH[transform](fn(torch), argnums=argnums)(x, y)
        got = getattr(func, transform)(fn(tessera), argnums=argnums)(mx, my)
        same(got, want)
    want = FUNCTORCH[transform](lambda a: (a.exp(), a.sum()), has_aux=True)(x)
    got = getattr(func, transform)(lambda a: (a.exp(), a.sum()), has_aux=True)(mx)
    same(got, want)


def test_hessian_matches_functorch():
    (x, y), (mx, my) = inputs((4,), (4,))
    for argnums in (0, (0, 1)):
        want = functorch.hessian(lambda a, b: (a.sin() * b.exp() * a).sum(), argnums=argnums)(x, y)
        got = func.hessian(lambda a, b: (a.sin() * b.exp() * a).sum(), argnums=argnums)(mx, my)
        same(got, want)


ERRORS = [
    ("grad", lambda lib, t: t["grad"](lambda x: x * 2)(lib.ones(3))),
    ("grad", lambda lib, t: t["grad"](lambda x: 3.0)(lib.ones(3))),
    ("grad", lambda lib, t: t["grad"](lambda x: x.sum())(3.0)),
    ("grad", lambda lib, t: t["grad"](lambda x: x.sum(), argnums=1)(lib.ones(3))),
    ("grad", lambda lib, t: t["grad"](lambda x: x.sum(), argnums=1.5)(lib.ones(3))),
    ("grad", lambda lib, t: t["grad"](lambda x, y: x.sum(), argnums=())(lib.ones(3), lib.ones(3))),
    ("grad", lambda lib, t: t["grad"](lambda x, y: x.sum(), argnums=(0, 0))(lib.ones(3), lib.ones(3))),
    ("grad", lambda lib, t: t["grad"](lambda x: x.sum(), has_aux=True)(lib.ones(3))),
    ("grad", lambda lib, t: t["grad"](lambda: lib.ones(()))()),
    ("vjp", lambda lib, t: t["vjp"](lambda x: (x, x * 2), lib.ones(3))[1](lib.ones(3))),
    ("vjp", lambda lib, t: t["vjp"](lambda x: x * 2, lib.ones(3))[1](lib.ones(4))),
    ("vjp", lambda lib, t: t["vjp"](lambda x: x * 2, lib.ones(3), has_aux=True)),
    ("jvp", lambda lib, t: t["jvp"](lambda x: x * 2, lib.ones(3), lib.ones(3))),
    ("jvp", lambda lib, t: t["jvp"](lambda x: x * 2, (lib.ones(3),), (lib.ones(4),))),
    ("jacrev", lambda lib, t: t["jacrev"](lambda x: 3.0)(lib.ones(3))),
    ("jacfwd", lambda lib, t: t["jacfwd"](lambda x: 3.0)(lib.ones(3))),
    ("jacfwd", lambda lib, t: t["jacfwd"](lambda x: x, has_aux=True)(lib.ones(3))),
    ("jvp", lambda lib, t: t["jvp"](lambda x: x, (1.0,), (1.0,))),
    ("jvp", lambda lib, t: t["jvp"](lambda: 1, (), ())),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_functorch(case):
    _, call = ERRORS[case]
    mine = {"grad": func.grad, "vjp": func.vjp, "jvp": func.jvp, "jacrev": func.jacrev, "jacfwd": func.jacfwd}
    theirs = {"grad": functorch.grad, "vjp": functorch.vjp, "jvp": functorch.jvp, "jacrev": functorch.jacrev,
              "jacfwd": functorch.jacfwd}
    with pytest.raises(Exception) as want:
        call(torch, theirs)
    with pytest.raises(type(want.value)) as got:
        call(tessera, mine)
    assert str(got.value).replace("tessera.", "torch.") == str(want.value)


def test_functional_call_takes_dicts_and_ties_weights():
    torch.manual_seed(0)
    tessera.manual_seed(0)
    model = tessera.nn.Sequential(tessera.nn.Linear(3, 4), tessera.nn.Tanh(), tessera.nn.Linear(4, 2))
    x = tessera.randn(5, 3, dtype=tessera.float32)
    params = {k: v.detach() * 2 for k, v in model.named_parameters()}
    weights = {k: v for k, v in params.items() if k.endswith("weight")}
    biases = {k: v for k, v in params.items() if k.endswith("bias")}
    want = tessera.nn.utils.stateless.functional_call(model, params, (x,))
    assert tessera.equal(func.functional_call(model, (weights, biases), (x,)), want)
    assert tessera.equal(func.functional_call(model, params, x), want)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        func.functional_call(model, (params, weights), (x,))
    with pytest.raises(ValueError, match="Expected all elements of parameter_and_buffer_dicts to be dictionaries"):
        func.functional_call(model, (params, [1]), (x,))
    with pytest.raises(RuntimeError, match=r"Missing key\(s\): '2.bias'"):
        func.functional_call(model, {k: v for k, v in params.items() if k != "2.bias"}, (x,), strict=True)
    # per-example gradients of a loss through functional_call (a loop where torch uses vmap)
    loss = func.grad(lambda p, xi: func.functional_call(model, p, (xi,)).pow(2).sum())
    per_example = [loss(params, x[i]) for i in range(3)]
    for i, g in enumerate(per_example):
        p = {k: v.clone().requires_grad_() for k, v in params.items()}
        tessera.nn.utils.stateless.functional_call(model, p, (x[i],)).pow(2).sum().backward()
        for k in params:
            assert tessera.allclose(g[k], p[k].grad)
    # tied weights: one tensor given for a parameter registered under two names
    tied = tessera.nn.Module()
    tied.a = tessera.nn.Linear(2, 2, bias=False)
    tied.b = tessera.nn.Linear(2, 2, bias=False)
    tied.b.weight = tied.a.weight
    tied.forward = lambda t: tied.b(tied.a(t))
    w = tessera.eye(2) * 3
    assert tessera.equal(func.functional_call(tied, {"a.weight": w}, (tessera.ones(1, 2),)), tessera.full((1, 2), 9.0))
    assert not tessera.equal(func.functional_call(tied, {"a.weight": w}, (tessera.ones(1, 2),), tie_weights=False),
                             tessera.full((1, 2), 9.0))
    # strict counts a tied name as given when its twin is
    assert tessera.equal(func.functional_call(tied, {"a.weight": w}, (tessera.ones(1, 2),), strict=True),
                         tessera.full((1, 2), 9.0))


def test_vmap_and_functionalize_are_not_there_yet():
    with pytest.raises(NotImplementedError, match="Batched dispatch key"):
        func.vmap(lambda x: x)
    with pytest.raises(NotImplementedError, match="Functionalize dispatch key"):
        func.functionalize(lambda x: x)
    with pytest.raises(RuntimeError, match="randomness"):
        func.jacfwd(lambda x: x, randomness="sometimes")
