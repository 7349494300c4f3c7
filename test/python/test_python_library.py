"""Operators defined from Python (tessera.library.Library), against torch.library where
torch 1.13 has the same API: DEF / IMPL / FRAGMENT libraries, define and impl per
dispatch key, calls through tessera.ops (boxed, the same dispatcher as C++ ops), keyword
arguments and several results, errors, lifetime, and autograd through
tessera.autograd.Function (a Python Autograd kernel and a composite one)."""
import gc

import pytest
import torch

import tessera
from tessera.library import Library


@pytest.fixture
def lib():
    libs = []

    def make(ns, kind="DEF", key=""):
        lib = Library(ns, kind, key)
        libs.append(lib)
        return lib

    yield make
    for lib in libs:
        lib._destroy()
    gc.collect()


def test_define_and_impl_cpu_matches_torch_library(lib):
    for L, Lib, ns in ((torch, torch.library.Library, "tessera_test_a"), (tessera, None, "tessera_test_a")):
        if Lib is None:
            m = lib(ns)
        else:
            m = Lib(ns, "DEF")
        m.define("axpy(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor")
        m.impl("axpy", lambda x, y, *, alpha=1.0: x * alpha + y, "CPU")
        x, y = L.tensor([1.0, 2.0]), L.tensor([10.0, 20.0])
        out = L.ops.tessera_test_a.axpy(x, y, alpha=3.0)
        assert out.tolist() == [13.0, 26.0]
        assert L.ops.tessera_test_a.axpy.default(x, y).tolist() == [11.0, 22.0]
        if Lib is not None:
            del m  # torch's registrations go with the object as well


def test_several_results_and_scalars(lib):
    m = lib("tessera_test_b")
    m.define("split_sum(Tensor x, int k) -> (Tensor, Tensor, float)")
    m.impl("split_sum", lambda x, k: (x[:k], x[k:], float(x.sum())), "CPU")
    a, b, total = tessera.ops.tessera_test_b.split_sum(tessera.arange(5.0), 2)
    assert a.tolist() == [0.0, 1.0] and b.tolist() == [2.0, 3.0, 4.0] and total == 10.0


def test_dispatch_keys_meta_and_composite(lib):
    m = lib("tessera_test_c")
    m.define("twice(Tensor x) -> Tensor")
    calls = []

    def cpu(x):
        calls.append("cpu")
        return x * 2

    def meta(x):
        calls.append("meta")
        return tessera.empty_like(x)

    m.impl("twice", cpu, "CPU")
    m.impl("twice", meta, "Meta")
    assert tessera.ops.tessera_test_c.twice(tessera.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert tuple(tessera.ops.tessera_test_c.twice(tessera.empty(4, 2, device="meta")).shape) == (4, 2)
    assert calls == ["cpu", "meta"]
    m.define("thrice(Tensor x) -> Tensor")
    m.impl("thrice", lambda x: x * 3, "CompositeImplicitAutograd")
    x = tessera.tensor([1.0, 2.0], requires_grad=True)
    y = tessera.ops.tessera_test_c.thrice(x)
    y.sum().backward()  # the composite kernel's own ops record the graph
    assert x.grad.tolist() == [3.0, 3.0]


def test_impl_library_and_fragment(lib):
    d = lib("tessera_test_d")
    d.define("neg1(Tensor x) -> Tensor")
    i = lib("tessera_test_d", "IMPL", "CPU")
    i.impl("neg1", lambda x: -x)
    assert tessera.ops.tessera_test_d.neg1(tessera.tensor([1.0])).tolist() == [-1.0]
    # 1.13's torch.library lacks FRAGMENT; current torch's semantics: more definitions in a
    # namespace another library owns.
    f = lib("tessera_test_d", "FRAGMENT")
    f.define("plus1(Tensor x) -> Tensor")
    f.impl("plus1", lambda x: x + 1, "CPU")
    assert tessera.ops.tessera_test_d.plus1(tessera.tensor([1.0])).tolist() == [2.0]
    with pytest.raises(RuntimeError):
        i.define("nope(Tensor x) -> Tensor")  # IMPL libraries do not define


def test_errors_like_torch(lib):
    with pytest.raises(ValueError):
        Library("tessera_test_e", "OTHER")
    with pytest.raises(ValueError):
        Library("prim", "DEF")
    m = lib("tessera_test_e")
    with pytest.raises(RuntimeError):
        lib("tessera_test_e")  # a second DEF for the namespace
    with pytest.raises(RuntimeError):
        lib("aten")  # aten is defined by tessera itself
    m.define("f(Tensor x) -> Tensor")
    with pytest.raises(TypeError):
        m.impl("f", 3, "CPU")
    m.impl("f", lambda x: x, "CPU")
    with pytest.raises(RuntimeError, match="already a kernel registered from python"):
        m.impl("f", lambda x: x, "CPU")
    with pytest.raises(Exception):
        m.define("f(Tensor x) -> Tensor")  # defined twice


def test_kernel_errors_reach_the_caller(lib):
    m = lib("tessera_test_f")
    m.define("check(Tensor x) -> Tensor")

    def kernel(x):
        raise ValueError("x must be positive")

    m.impl("check", kernel, "CPU")
    with pytest.raises(ValueError, match="x must be positive"):
        tessera.ops.tessera_test_f.check(tessera.ones(1))
    m.define("bad(Tensor x) -> Tensor")
    m.impl("bad", lambda x: "not a tensor", "CPU")
    with pytest.raises(TypeError):
        tessera.ops.tessera_test_f.bad(tessera.ones(1))


def test_registrations_end_with_the_library():
    m = Library("tessera_test_g", "DEF")
    m.define("g(Tensor x) -> Tensor")
    m.impl("g", lambda x: x + 1, "CPU")
    packet = tessera.ops.tessera_test_g.g
    assert packet(tessera.zeros(1)).tolist() == [1.0]
    m._destroy()
    del m
    gc.collect()
    with pytest.raises(AttributeError):
        tessera.ops.tessera_test_g.g
    with pytest.raises(RuntimeError, match="No such operator"):
        packet(tessera.zeros(1))  # a packet kept from before finds the op gone
    m2 = Library("tessera_test_g", "DEF")  # the namespace is free again
    m2.define("g(Tensor x) -> Tensor")
    m2._destroy()


class _Sin(tessera.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with tessera._C._AutoDispatchBelowAutograd():
            return tessera.ops.tessera_test_h.mysin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


def test_autograd_kernel_with_a_custom_function(lib):
    m = lib("tessera_test_h")
    m.define("mysin(Tensor x) -> Tensor")
    m.impl("mysin", lambda x: x.sin(), "CPU")
    m.impl("mysin", lambda x: _Sin.apply(x), "Autograd")
    x = tessera.tensor([0.5, -1.0, 2.0], dtype=tessera.float64, requires_grad=True)
    y = tessera.ops.tessera_test_h.mysin(x)
    assert y.grad_fn is not None
    y.sum().backward()
    t = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    torch.sin(t).sum().backward()
    assert x.grad.tolist() == pytest.approx(t.grad.tolist())
    assert tessera.autograd.gradcheck(lambda v: tessera.ops.tessera_test_h.mysin(v), (x.detach().requires_grad_(),))


def test_kernel_exceptions_keep_their_type_and_lists_are_results(lib):
    m = lib("tessera_test_i")
    m.define("boom(Tensor x) -> Tensor")
    m.impl("boom", lambda x: {}["missing"], "CPU")
    with pytest.raises(KeyError, match="missing"):
        tessera.ops.tessera_test_i.boom(tessera.ones(1))
    m.define("pair(Tensor x) -> (Tensor, Tensor)")
    m.impl("pair", lambda x: [x, x * 2], "CPU")
    a, b = tessera.ops.tessera_test_i.pair(tessera.ones(1))
    assert b.tolist() == [2.0]


def test_a_kernel_that_defines_operators_while_called(lib):
    m = lib("tessera_test_j")
    m.define("f(Tensor(a!) x, int n) -> Tensor(a!)")
    count = [0]

    def f(x, n):
        if n < 0:
            return x
        if n == 0:
            count[0] += 1
            m.define(f"g{count[0]}(Tensor x) -> Tensor")  # moves the schema generation mid-call
            return tessera.ops.tessera_test_j.f(x, -1)
        return tessera.ops.tessera_test_j.f(x, n - 1)

    m.impl("f", f, "CPU")
    for _ in range(20):
        x = tessera.ones(3)
        assert tessera.ops.tessera_test_j.f(x, 2) is x


def test_bad_internal_arguments_raise():
    with pytest.raises(TypeError):
        tessera._C._OpCall("aten::add", 1)
    with pytest.raises(TypeError):
        tessera._C._call_op("aten::add", None, (tessera.ones(1), tessera.ones(1)), 5)
    guard = tessera._C._AutoDispatchBelowAutograd()
    with guard:
        with pytest.raises(RuntimeError, match="already entered"):
            guard.__enter__()
