"""tessera.nn.functional against torch.nn.functional: signatures and defaults, the
inplace= forms, and torch's errors for bad arguments. Values over dtypes and layouts are
in the OpInfo registry (opinfo_activations.py); gradients in test_autograd.py."""
import inspect

import pytest
import torch
import torch.nn.functional as TF

import tessera
import tessera.nn.functional as F
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

ACTIVATIONS = ["relu", "relu6", "elu", "selu", "celu", "leaky_relu", "silu", "mish", "hardtanh", "hardsigmoid",
               "hardswish", "threshold", "glu", "softsign", "tanhshrink", "softmax", "softmin", "log_softmax"]


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_python_signatures_match_torch(name):
    want = inspect.signature(getattr(TF, name))
    got = inspect.signature(getattr(F, name))
    assert [(p.name, p.default, p.kind) for p in got.parameters.values()] == \
        [(p.name, p.default, p.kind) for p in want.parameters.values()]


# (name, args after the input): each is called with inplace=True on a copy of the input
INPLACE = [("relu", ()), ("relu6", ()), ("elu", (0.5,)), ("selu", ()), ("celu", (1.5,)), ("leaky_relu", (0.2,)),
           ("silu", ()), ("mish", ()), ("hardtanh", (-0.5, 2.0)), ("hardsigmoid", ()), ("hardswish", ()),
           ("threshold", (0.25, -1.0))]


@pytest.mark.parametrize("name,args", INPLACE, ids=[n for n, _ in INPLACE])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_inplace_flag(name, args, layout):
    x = make_torch((4, 6), "float32", seed=3)
    if layout == "transposed":
        x = x.t()
    want_x = x.clone()
    want = getattr(TF, name)(want_x, *args, inplace=True)
    mine = to_tessera(x)
    got = getattr(F, name)(mine, *args, inplace=True)
    assert got is mine and want is want_x
    torch.testing.assert_close(to_torch(mine), want_x, rtol=1.3e-6, atol=1e-5)
    # and the out-of-place form leaves its input alone
    kept = to_tessera(x)
    getattr(F, name)(kept, *args)
    assert to_torch(kept).equal(x)


@pytest.mark.parametrize("name", ["elu_", "leaky_relu_", "hardtanh_", "relu_", "celu_", "selu_"])
def test_underscore_forms(name):
    x = make_torch((3, 5), "float64", seed=5)
    want = getattr(TF, name)(x.clone())
    got = getattr(F, name)(to_tessera(x))
    torch.testing.assert_close(to_torch(got), want)


def test_builtin_defaults():
    x = make_torch((2, 7), "float64", seed=7, low=-30, high=30)
    cases = [lambda lib, t: lib.nn.functional.gelu(t), lambda lib, t: lib.nn.functional.gelu(t, approximate="tanh"),
             lambda lib, t: lib.nn.functional.softplus(t), lambda lib, t: lib.nn.functional.softplus(t, 0.5, 4),
             lambda lib, t: lib.nn.functional.softshrink(t), lambda lib, t: lib.nn.functional.hardshrink(t, 2.0),
             lambda lib, t: lib.nn.functional.logsigmoid(t), lambda lib, t: lib.nn.functional.threshold_(t * 1, 0.0, 5.0),
             lambda lib, t: lib.nn.functional.sigmoid(t), lambda lib, t: lib.nn.functional.tanh(t),
             lambda lib, t: t.hardshrink(), lambda lib, t: t.prelu(lib.tensor([0.25], dtype=lib.float64))]
    for k, case in enumerate(cases):
        torch.testing.assert_close(to_torch(case(tessera, to_tessera(x))), case(torch, x), msg=lambda m: f"case {k}: {m}")


def test_extreme_inputs_stay_finite():
    # softplus / log_sigmoid / mish / silu / gelu at +-1e4 and the exp overflow region
    x = torch.tensor([-1e4, -200.0, -89.0, -20.0, -1e-8, 0.0, 1e-8, 20.0, 89.0, 200.0, 1e4])
    for dtype in (torch.float32, torch.float64):
        t = x.to(dtype)
        for name in ["softplus", "logsigmoid", "mish", "silu", "gelu", "elu", "selu", "celu", "hardswish", "softsign"]:
            want = getattr(TF, name)(t)
            got = to_torch(getattr(F, name)(to_tessera(t)))
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, msg=lambda m: f"{name} {dtype}: {m}")


def test_softmax_implicit_dim_warns_like_torch():
    x = make_torch((2, 3, 4), "float32", seed=1)
    for name in ["softmax", "softmin", "log_softmax"]:
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            got = getattr(F, name)(to_tessera(x))
        with pytest.warns(UserWarning):
            want = getattr(TF, name)(x)
        torch.testing.assert_close(to_torch(got), want)
        torch.testing.assert_close(to_torch(getattr(F, name)(to_tessera(x), 1, dtype=tessera.float64)),
                                   getattr(TF, name)(x, 1, dtype=torch.float64))


ERRORS = [
    "lib.nn.functional.gelu(lib.ones(3), approximate='sigmoid')",
    "lib.nn.functional.glu(lib.tensor(1.0))",
    "lib.nn.functional.glu(lib.ones(2, 3))",
    "lib.nn.functional.glu(lib.ones(3, 2), 0)",
    "lib.nn.functional.prelu(lib.ones(2, 4), lib.ones(3))",
    "lib.nn.functional.prelu(lib.ones(2, 4), lib.ones(2, 2))",
    "lib.nn.functional.celu(lib.ones(3), 0.0)",
    # backward from an in-place result is only defined for non-negative slopes
    "x = lib.ones(3, requires_grad=True); lib.nn.functional.leaky_relu(x * 1, -0.5, inplace=True).sum().backward()",
    "x = lib.ones(3, requires_grad=True); lib.nn.functional.elu(x * 1, -0.5, inplace=True).sum().backward()",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    if ";" in expr:  # statements: run them through exec
        expr = f"exec({expr!r}, {{'lib': lib}})"
    assert_raises_like_torch(expr)


@pytest.mark.parametrize("name", ["gelu", "silu", "mish", "elu", "softplus", "hardswish", "logsigmoid", "glu"])
def test_integer_inputs_are_refused(name):
    # torch names its internal kernel ("GeluKernelImpl"); tessera names the op
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
            getattr(lib.nn.functional, name)(lib.ones(2, 4, dtype=lib.int64))


def test_relu_backward_is_one_pass_threshold_backward():
    # relu's derivative is torch's threshold_backward(grad, result, 0): the same node name
    # and zero grad at 0, like torch
    for lib in (torch, tessera):
        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        y = lib.relu(x)
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 1.0]
        assert y.grad_fn.name() == "ReluBackward0"
