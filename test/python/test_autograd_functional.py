"""tessera.autograd.functional against torch.autograd.functional (1.13): the same
functions at the same points give the same Jacobians, Hessians and products, nested the
same way, and the strict-mode and argument errors carry torch's messages. Also the
legacy names of tessera.autograd: Variable and anomaly_mode."""
import warnings

import numpy as np
import pytest
import torch

import tessera

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))
Y = RNG.standard_normal((2, 3))
S = RNG.standard_normal((3,))


def _lib_tensor(lib, a, requires_grad=False):
    t = lib.from_numpy(np.array(a, dtype=np.float64))
    return t.requires_grad_(requires_grad) if requires_grad else t


def _np(x):
    """Nested tuples of tensors -> nested tuples of numpy arrays."""
    if isinstance(x, tuple):
        return tuple(_np(e) for e in x)
    assert isinstance(x, (torch.Tensor, tessera.Tensor)), type(x)
    return np.array(x.detach().tolist())


def _assert_same(ours, theirs):
    ours, theirs = _np(ours), _np(theirs)
    assert type(ours) is type(theirs)
    if isinstance(theirs, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same_np(a, b)
    else:
        _assert_same_np(ours, theirs)


def _assert_same_np(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same_np(x, y)
    else:
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _both(call):
    """call(lib, functional) in both libraries, results compared."""
    ours = call(tessera, tessera.autograd.functional)
    theirs = call(torch, torch.autograd.functional)
    _assert_same(ours, theirs)
    return ours, theirs


# Functions written once for both libraries.
def f_one(x):
    return (x.exp() * 2).sum(dim=1)


def f_two_in(x, y):
    return 2 * x.exp() + 3 * y * x


def f_two_out(x):
    return x.sin(), (x * x).sum()


def f_two_two(x, y):
    return (x * y).sum(0), x.pow(3) - y


def f_scalar(x):
    return x.pow(3).sum() + (x[0] * x[1]).sum()


def f_scalar_two(x, y):
    return (2 * x.pow(2) * y + 3 * y.pow(3)).sum()


INPUT_SETS = {
    "one": (f_one, lambda L: _lib_tensor(L, X)),
    "two_in": (f_two_in, lambda L: (_lib_tensor(L, X), _lib_tensor(L, Y))),
    "two_out": (f_two_out, lambda L: _lib_tensor(L, S)),
    "two_two": (f_two_two, lambda L: (_lib_tensor(L, X), _lib_tensor(L, Y))),
    "tuple_of_one": (f_one, lambda L: (_lib_tensor(L, X),)),
}


@pytest.mark.parametrize("name", list(INPUT_SETS))
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_matches_torch(name, vectorize):
    fn, make = INPUT_SETS[name]
    ours, theirs = _both(lambda L, F: F.jacobian(fn, make(L), vectorize=vectorize))

    def requires_grad(x):
        return any(requires_grad(e) for e in x) if isinstance(x, tuple) else x.requires_grad
    assert not requires_grad(ours)


def test_jacobian_create_graph_is_differentiable_as_torch():
    def call(L, F):
        x = _lib_tensor(L, S, requires_grad=True)
        jac = F.jacobian(lambda a: a.sin() * a.sum(), x, create_graph=True)
        assert jac.requires_grad
        (g,) = L.autograd.grad(jac.pow(2).sum(), x)
        return jac, g
    _both(call)


def test_jacobian_independent_input_gives_zeros_or_strict_error():
    def f(x, y):
        return x * 2

    _both(lambda L, F: F.jacobian(f, (_lib_tensor(L, S), _lib_tensor(L, S))))
    _same_error(lambda L, F: F.jacobian(f, (_lib_tensor(L, S), _lib_tensor(L, S)), strict=True))
    _same_error(lambda L, F: F.jacobian(lambda x: L.ones(3), _lib_tensor(L, S), strict=True))
    _same_error(lambda L, F: F.jacobian(f_one, _lib_tensor(L, X), strict=True, vectorize=True))
    # create_graph=True and strict: a gradient that is constant is rejected
    _same_error(lambda L, F: F.jacobian(lambda x: x * 2, _lib_tensor(L, S), strict=True, create_graph=True))


def _same_error(call):
    errors = []
    for lib, F in ((tessera, tessera.autograd.functional), (torch, torch.autograd.functional)):
        with pytest.raises(Exception) as info:
            call(lib, F)
        errors.append((type(info.value), str(info.value).replace("tessera", "torch")))
    assert errors[0] == errors[1]
    return errors[0]


@pytest.mark.parametrize("call", [
    lambda L, F: F.jacobian(f_one, [1.0]),
    lambda L, F: F.jacobian(f_two_in, (_lib_tensor(L, X), 3.0)),
    lambda L, F: F.jacobian(lambda x: 3.0, _lib_tensor(L, S)),
    lambda L, F: F.jacobian(f_one, _lib_tensor(L, X), strategy="sideways"),
    lambda L, F: F.jacobian(f_one, _lib_tensor(L, X), strategy="forward-mode", create_graph=True),
    lambda L, F: F.jacobian(f_one, _lib_tensor(L, X), strategy="forward-mode", strict=True),
    lambda L, F: F.jacobian(f_one, _lib_tensor(L, X), strategy="forward-mode"),
    lambda L, F: F.hessian(f_one, _lib_tensor(L, X)),
    lambda L, F: F.hessian(f_two_out, _lib_tensor(L, S)),
    lambda L, F: F.hessian(lambda x: (x * 2).sum(), _lib_tensor(L, S), strict=True),
    lambda L, F: F.hessian(lambda x: x.sum() * 0 + 1.0 * L.ones(()), _lib_tensor(L, S), strict=True),
    lambda L, F: F.vjp(f_one, _lib_tensor(L, X)),
    lambda L, F: F.vjp(f_one, _lib_tensor(L, X), L.ones(3)),
    lambda L, F: F.vjp(f_two_out, _lib_tensor(L, S), (L.ones(3),)),
    lambda L, F: F.vjp(f_two_out, _lib_tensor(L, S), (L.ones(3), L.ones(2))),
    lambda L, F: F.vjp(lambda x: L.ones(2), _lib_tensor(L, S[:2]), L.ones(2), strict=True),
    lambda L, F: F.vjp(lambda x, y: x * 2, (_lib_tensor(L, S), _lib_tensor(L, S)), L.ones(3), strict=True),
    lambda L, F: F.jvp(f_one, _lib_tensor(L, X)),
    lambda L, F: F.jvp(f_two_in, (_lib_tensor(L, X), _lib_tensor(L, Y)), (L.ones(2, 3),)),
    lambda L, F: F.jvp(lambda x, y: x * 2, (_lib_tensor(L, S), _lib_tensor(L, S)), (L.ones(3), L.ones(3)),
                       strict=True),
    lambda L, F: F.jvp(f_one, _lib_tensor(L, X), [L.ones(2, 3)]),
    lambda L, F: F.hvp(f_one, _lib_tensor(L, X), L.ones(2, 3)),
    lambda L, F: F.hvp(f_two_out, _lib_tensor(L, S), L.ones(3)),
    lambda L, F: F.hvp(f_scalar, _lib_tensor(L, S)),
    lambda L, F: F.vhp(f_scalar, _lib_tensor(L, S), L.ones(4)),
    lambda L, F: F.vhp(lambda x: (x * 2).sum(), _lib_tensor(L, S), L.ones(3), strict=True),
    lambda L, F: F.hvp(lambda x: (x * 2).sum(), _lib_tensor(L, S), L.ones(3), strict=True),
    lambda L, F: F.vhp(lambda x, y: (x * x).sum(), (_lib_tensor(L, S), _lib_tensor(L, S)), (L.ones(3), L.ones(3)),
                       strict=True),
], ids=range(28))
def test_errors_match_torch(call):
    kind, text = _same_error(call)
    assert kind in (TypeError, RuntimeError, ValueError, AssertionError, NotImplementedError)


def test_forward_mode_with_vectorize_is_not_implemented():
    x = _lib_tensor(tessera, X)
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        tessera.autograd.functional.jacobian(f_one, x, strategy="forward-mode", vectorize=True)
    with pytest.raises(NotImplementedError, match="forward-mode AD"):
        tessera.autograd.functional.hessian(f_scalar, _lib_tensor(tessera, S), vectorize=True,
                                            outer_jacobian_strategy="forward-mode")
    # torch computes it; tessera's reverse-mode answer is the same Jacobian.
    want = torch.autograd.functional.jacobian(f_one, _lib_tensor(torch, X), strategy="forward-mode", vectorize=True)
    _assert_same(tessera.autograd.functional.jacobian(f_one, x), want)


@pytest.mark.parametrize("fn,make", [
    (f_scalar, lambda L: _lib_tensor(L, S)),
    (f_scalar_two, lambda L: (_lib_tensor(L, X), _lib_tensor(L, Y))),
    (f_scalar, lambda L: (_lib_tensor(L, S),)),
    (lambda x: (x * 3).sum(), lambda L: _lib_tensor(L, S)),  # linear: the Hessian is zero
], ids=["one", "two", "tuple_of_one", "linear"])
@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_matches_torch(fn, make, vectorize):
    _both(lambda L, F: F.hessian(fn, make(L), vectorize=vectorize))


def test_hessian_create_graph_matches_torch():
    def call(L, F):
        x = _lib_tensor(L, S, requires_grad=True)
        h = F.hessian(lambda a: a.pow(4).sum(), x, create_graph=True)
        (g,) = L.autograd.grad(h.sum(), x)
        return h, g
    _both(call)


def test_vjp_matches_torch():
    _both(lambda L, F: F.vjp(f_one, _lib_tensor(L, X), _lib_tensor(L, [1.0, -2.0])))
    _both(lambda L, F: F.vjp(f_two_in, (_lib_tensor(L, X), _lib_tensor(L, Y)), _lib_tensor(L, Y)))
    _both(lambda L, F: F.vjp(f_two_two, (_lib_tensor(L, X), _lib_tensor(L, Y)),
                             (_lib_tensor(L, S), _lib_tensor(L, X))))
    _both(lambda L, F: F.vjp(lambda x: x.pow(2).sum(), _lib_tensor(L, S)))  # v omitted: one element
    _both(lambda L, F: F.vjp(lambda x, y: x * 2, (_lib_tensor(L, S), _lib_tensor(L, S)), L.ones(3, dtype=L.float64)))


def test_jvp_matches_torch():
    _both(lambda L, F: F.jvp(f_one, _lib_tensor(L, X), _lib_tensor(L, Y)))
    _both(lambda L, F: F.jvp(f_two_two, (_lib_tensor(L, X), _lib_tensor(L, Y)), (_lib_tensor(L, Y), _lib_tensor(L, X))))
    _both(lambda L, F: F.jvp(f_two_out, _lib_tensor(L, S), _lib_tensor(L, S)))
    _both(lambda L, F: F.jvp(lambda x: x.exp(), _lib_tensor(L, [0.5])))  # v omitted: one element
    _both(lambda L, F: F.jvp(lambda x, y: (x * 2, y.sum() * 0), (_lib_tensor(L, S), _lib_tensor(L, S)),
                             (L.ones(3, dtype=L.float64), L.ones(3, dtype=L.float64))))


def test_hvp_vhp_match_torch():
    for name in ("hvp", "vhp"):
        _both(lambda L, F: getattr(F, name)(f_scalar, _lib_tensor(L, S), _lib_tensor(L, [1.0, 0.5, -1.0])))
        _both(lambda L, F: getattr(F, name)(f_scalar_two, (_lib_tensor(L, X), _lib_tensor(L, Y)),
                                            (_lib_tensor(L, Y), _lib_tensor(L, X))))
        _both(lambda L, F: getattr(F, name)(lambda x: x.pow(3).sum(), _lib_tensor(L, [2.0])))
        _both(lambda L, F: getattr(F, name)(lambda x: (x * 2).sum(), _lib_tensor(L, S), _lib_tensor(L, S)))


def test_products_with_create_graph_match_torch():
    def call(L, F):
        x = _lib_tensor(L, S, requires_grad=True)
        v = _lib_tensor(L, [1.0, 2.0, 3.0])
        out, prod = F.vjp(lambda a: a.sin() * a, x, v, create_graph=True)
        _, prod2 = F.jvp(lambda a: a.sin() * a, x, v, create_graph=True)
        _, prod3 = F.hvp(lambda a: a.pow(4).sum(), x, v, create_graph=True)
        assert out.requires_grad and prod.requires_grad and prod2.requires_grad and prod3.requires_grad
        grads = L.autograd.grad((prod.sum() + prod2.sum() + prod3.sum()), x)
        return out, prod, prod2, prod3, grads[0]
    _both(call)


def test_inputs_are_left_untouched():
    x = tessera.ones(3, requires_grad=True)
    tessera.autograd.functional.jacobian(lambda a: a * 2, x)
    assert x.grad is None
    y = tessera.ones(3)
    tessera.autograd.functional.hessian(lambda a: a.pow(3).sum(), y)
    assert not y.requires_grad and y.grad is None


def test_variable_is_a_legacy_tensor_constructor():
    from tessera.autograd import Variable
    for lib, V in ((torch, torch.autograd.Variable), (tessera, Variable)):
        t = lib.ones(2, requires_grad=True)
        u = t * 2
        v = V(u)
        assert v is not u and not v.requires_grad and v.grad_fn is None and type(v) is lib.Tensor
        assert v.data_ptr() == u.data_ptr()
        assert V(lib.ones(1), requires_grad=True).requires_grad and V(lib.ones(1), True).requires_grad
        assert isinstance(lib.ones(1), V) and not isinstance(3, V)
        assert tuple(V().shape) == (0,)
        with pytest.warns(UserWarning, match="volatile"):
            V(lib.ones(1), volatile=True)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            V([1.0, 2.0])
        with pytest.raises(TypeError, match="'foo' is an invalid keyword argument"):
            V(lib.ones(1), foo=1)


def test_anomaly_mode_module():
    from tessera.autograd import anomaly_mode
    assert anomaly_mode.detect_anomaly is tessera.autograd.detect_anomaly
    enabled = {torch: torch.is_anomaly_enabled, tessera: tessera.autograd.is_anomaly_enabled}
    for lib in (torch, tessera):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            ctx = lib.autograd.detect_anomaly()
        with ctx:
            assert enabled[lib]()
        assert not enabled[lib]()
        with lib.autograd.set_detect_anomaly(True):  # a context manager that restores the mode
            assert enabled[lib]()
        assert not enabled[lib]()
        lib.autograd.set_detect_anomaly(True)  # or a plain call that sets it
        assert enabled[lib]()
        lib.autograd.set_detect_anomaly(False)
        assert not enabled[lib]()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @tessera.autograd.detect_anomaly()
        def inside():
            return tessera.autograd.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert inside() is True
    assert not tessera.autograd.is_anomaly_enabled()
