"""The last scattered names of torch 1.13's API, each against torch: tessera.types,
FatalError and StorageBase, backends' ContextProp / PropModule flags (frozen by
disable_global_flags), autograd.DeviceType and NestedIOFunction, Tensor.reinforce and
Tensor.name, and nn.CrossMapLRN2d."""
import pickle
import subprocess
import sys
import typing
import warnings

import numpy as np
import pytest
import torch
from torch.nn.modules._functions import CrossMapLRN2d as TorchCrossMapLRN2dFunction

import tessera
from torch_compare import same_error, tn, tt


def both(fn):
    """fn(torch), fn(tessera)."""
    return fn(torch), fn(tessera)


# ---------------------------------------------------------------- tessera.types

def test_types_has_torch_types_names():
    theirs = {n.replace("torch", "tessera") for n in dir(torch.types) if not n.startswith("__")}
    assert {n for n in dir(tessera.types) if not n.startswith("__")} == theirs
    assert tessera.types.tessera is tessera


def test_types_is_reachable_after_import_tessera():
    # A fresh interpreter: the attribute must exist without importing the submodule by name.
    code = "import tessera; print(tessera.types.Number, tessera.types._device is tessera.device)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["typing.Union[int,", "float,", "bool]", "True"]
    import tessera.types as types_module
    assert types_module is tessera.types is sys.modules["tessera.types"]


def _in_tessera(annotation):
    """A torch.types annotation with torch's classes swapped for tessera's."""
    if isinstance(annotation, type) and annotation.__module__.startswith("torch"):
        return getattr(tessera, annotation.__name__)
    args = typing.get_args(annotation)
    return annotation.copy_with(tuple(_in_tessera(a) for a in args)) if args else annotation


@pytest.mark.parametrize("name", ["_TensorOrTensors", "_int", "_float", "_bool", "_dtype", "_device", "_size",
                                  "_layout", "Number", "Device"])
def test_types_aliases_name_tesseras_classes(name):
    mine = getattr(tessera.types, name)
    assert mine == _in_tessera(getattr(torch.types, name))
    assert "torch" not in repr(mine)


def test_types_aliases_work_in_annotations():
    def resize(size: tessera.types._size, device: tessera.types.Device = None) -> tessera.types._TensorOrTensors:
        return tessera.zeros(size, device=device)

    hints = typing.get_type_hints(resize)
    assert hints["size"] == typing.Union[tessera.Size, typing.List[int], typing.Tuple[int, ...]]
    assert tessera.device in typing.get_args(hints["device"]) and type(None) in typing.get_args(hints["device"])
    number_types = typing.get_args(tessera.types.Number)
    assert all(isinstance(v, number_types) for v in (1, 2.5, True)) and not isinstance("1", number_types)
    # the aliases for classes tessera lacks yet name them; the rest are classes, as torch's
    assert "qscheme" in repr(tessera.types._qscheme) and "DispatchKey" in repr(tessera.types._dispatchkey)
    for cls in ("SymInt", "Storage"):
        assert isinstance(getattr(torch.types, cls), type) and isinstance(getattr(tessera.types, cls), type)


# ---------------------------------------------------------------- FatalError, StorageBase

def test_fatal_error_is_an_exception_as_torchs():
    assert [c.__name__ for c in tessera.FatalError.__mro__] == [c.__name__ for c in torch.FatalError.__mro__]
    assert tessera.FatalError.__module__ == "tessera"
    with pytest.raises(Exception, match="bad state"):
        raise tessera.FatalError("bad state")


def test_storage_base_is_what_untyped_storages_derive_from():
    makers = {"untyped": lambda lib: lib.UntypedStorage(3), "legacy": lambda lib: lib.FloatStorage(2),
              "typed": lambda lib: lib.ones(2).storage(), "base": lambda lib: lib.StorageBase(3)}
    for what, make in makers.items():
        theirs, mine = both(lambda lib: isinstance(make(lib), lib.StorageBase))
        assert mine == theirs, what
    for cls in ("UntypedStorage", "TypedStorage", "FloatStorage", "LongStorage"):
        theirs, mine = both(lambda lib: issubclass(getattr(lib, cls), lib.StorageBase))
        assert mine == theirs, cls
    theirs, mine = both(lambda lib: (lib.StorageBase(5).nbytes(), lib.StorageBase(5).element_size(),
                                     str(lib.StorageBase(5).device), lib.is_storage(lib.StorageBase(1))))
    assert mine == theirs


# ---------------------------------------------------------------- backends: frozen flags

CONTEXT_FLAGS = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"), ("cudnn", "allow_tf32"),
                 ("mkldnn", "enabled")]


@pytest.fixture
def unfrozen_after():
    """Puts back what disable_global_flags() froze (irreversible by API, in both libraries)."""
    saved = {lib: [getattr(getattr(lib.backends, m), a) for m, a in CONTEXT_FLAGS] for lib in (torch, tessera)}
    yield
    for lib in (torch, tessera):
        setattr(lib.backends, "__allow_nonbracketed_mutation_flag", True)
        for (m, a), value in zip(CONTEXT_FLAGS, saved[lib]):
            setattr(getattr(lib.backends, m), a, value)


def test_backends_flag_modules_are_prop_modules():
    for m in ("cudnn", "mkldnn"):
        theirs, mine = both(lambda lib: (isinstance(getattr(lib.backends, m), lib.backends.PropModule),
                                         type(getattr(lib.backends, m)).__mro__[1].__name__))
        assert mine == theirs
    assert both(lambda lib: lib.backends.flags_frozen()) == (False, False)
    import tessera.backends.cudnn as cudnn
    assert cudnn is tessera.backends.cudnn and cudnn.is_available() is False


def test_backends_flags_refuse_non_bools_as_torch():
    for m, a in CONTEXT_FLAGS:
        for value in (3, None, "x"):
            same_error(lambda: setattr(getattr(torch.backends, m), a, value),
                       lambda: setattr(getattr(tessera.backends, m), a, value))


def test_disable_global_flags_freezes_assignment_not_flags_blocks(unfrozen_after):
    for lib in (torch, tessera):
        lib.backends.disable_global_flags()
    assert both(lambda lib: lib.backends.flags_frozen()) == (True, True)
    for m, a in CONTEXT_FLAGS:
        same_error(lambda: setattr(getattr(torch.backends, m), a, False),
                   lambda: setattr(getattr(tessera.backends, m), a, False))
    # plain attributes (no ContextProp) stay assignable, as in torch
    for lib in (torch, tessera):
        lib.backends.opt_einsum.enabled = False
        lib.backends.cudnn.benchmark_limit = 7
        del lib.backends.cudnn.benchmark_limit

    def read(lib):
        c = lib.backends.cudnn
        return c.enabled, c.benchmark, c.deterministic, c.allow_tf32, c.benchmark_limit, lib.backends.mkldnn.enabled

    def in_blocks(lib):
        with lib.backends.cudnn.flags(enabled=False, deterministic=True):
            inside = read(lib)
            with lib.backends.mkldnn.flags():
                innermost = read(lib)
        return inside, innermost, read(lib)

    before = both(read)
    assert before[0] == before[1]
    theirs, mine = both(in_blocks)
    assert mine == theirs and mine[2] == before[1]


def test_backends_set_flags_returns_the_previous_flags():
    def run(lib):
        c, m = lib.backends.cudnn, lib.backends.mkldnn
        first = c.set_flags(True, True, 5, True, False)
        now = (c.enabled, c.benchmark, c.deterministic, c.allow_tf32)
        second = c.set_flags(*first)
        return first, now, second, m.set_flags(False), m.enabled, m.set_flags(True), lib.backends.opt_einsum.set_flags()

    theirs, mine = both(run)
    assert mine == theirs


def test_backends_opt_einsum_cannot_be_enabled():
    for lib in (torch, tessera):
        with pytest.raises(ValueError, match="^opt_einsum is not available, so setting `enabled` to True"):
            with lib.backends.opt_einsum.flags(enabled=True):
                pass
        assert lib.backends.opt_einsum.enabled is False and lib.backends.opt_einsum.strategy is None


def test_context_prop_and_prop_module_on_a_module_of_ones_own(unfrozen_after):
    def run(lib):
        import types
        store = {"level": 1}
        inner = types.ModuleType("mine")
        inner.helper = lambda: "from inner"

        class Mine(lib.backends.PropModule):
            level = lib.backends.ContextProp(lambda: store["level"], lambda v: store.update(level=v))

        mod = Mine(inner, "mine")
        mod.level = 2
        got = [mod.level, store["level"], mod.helper(), mod.m is inner]
        lib.backends.disable_global_flags()
        try:
            mod.level = 3
        except RuntimeError as e:
            got.append(str(e))
        return got

    theirs, mine = both(run)
    assert mine == theirs


# ---------------------------------------------------------------- autograd.DeviceType

def test_device_type_members_as_torchs():
    theirs, mine = torch.autograd.DeviceType, tessera.autograd.DeviceType
    assert [(k, int(v)) for k, v in mine.__members__.items()] == [(k, int(v)) for k, v in theirs.__members__.items()]
    for lib_type in (theirs, mine):
        assert lib_type.CPU == lib_type(0) and lib_type.CPU != lib_type.CUDA and lib_type.CPU != 0
        assert hash(lib_type.MPS) == 13 and int(lib_type.Meta) == 14 and [0, 1, 2][lib_type.CUDA] == 1
    for value in (0, 9, 18, 100):
        assert [f(mine(value)) for f in (repr, str)] == [f(theirs(value)) for f in (repr, str)]
        assert (mine(value).name, mine(value).value) == (theirs(value).name, theirs(value).value)
    assert [n for n in dir(mine) if not n.startswith("_")] == [n for n in dir(theirs) if not n.startswith("_")]
    assert pickle.loads(pickle.dumps(mine.XLA)) == mine.XLA
    for bad in (1.5, "CPU"):
        with pytest.raises(TypeError):
            theirs(bad)
        with pytest.raises(TypeError, match="incompatible constructor arguments"):
            mine(bad)
    for lib_type in (theirs, mine):
        with pytest.raises(AttributeError):
            lib_type.CPU.value = 3


# ---------------------------------------------------------------- autograd.NestedIOFunction

class _ScaleShiftBody:
    """outputs x * a and (x + b, a * b) from inputs x and (a, b), saving nested tensors."""

    def forward_extended(self, x, pair):
        a, b = pair
        self.save_for_backward(x, (a, b))
        return x * a, (x + b, a * b)

    def backward_extended(self, g_xa, g_pair):
        g_xb, g_ab = g_pair
        x, (a, b) = self.saved_tensors
        return g_xa * a + g_xb, (g_xa * x + g_ab * b, g_xb + g_ab * a)


class _StraightThroughBody:
    """rounds x, and passes the gradient through unchanged (not round's derivative); the
    sign mask is a second, non-differentiable output."""

    def forward_extended(self, x):
        mask = (x > 0).to(x.dtype)
        self.mark_non_differentiable(mask)
        return x.round(), mask

    def backward_extended(self, g, g_mask):
        return g


def _nested_class(body, lib):
    return type(body.__name__.strip("_").replace("Body", ""), (body, lib.autograd.NestedIOFunction), {})


def _call(cls, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # instantiating a Function warns, in both
        fn = cls()
    return fn(*args)


def _seeded(shape, seed, requires_grad=True):
    t = torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return t.requires_grad_(requires_grad), tt(t).requires_grad_(requires_grad)


def test_nested_io_function_cannot_run_in_torch_1_13():
    # Why the references below are computed with torch's own ops: torch 1.13's
    # NestedIOFunction calls a base-class _do_forward that torch no longer has.
    with pytest.raises(AttributeError, match="_do_forward"):
        _call(_nested_class(_ScaleShiftBody, torch), torch.ones(2), (torch.ones(2), torch.ones(2)))


def test_nested_io_function_forward_and_gradients_against_torch():
    (x, mx), (a, ma), (b, mb) = _seeded((3, 2), 0), _seeded((3, 2), 1), _seeded((3, 2), 2, requires_grad=False)
    w1, w2, w3 = (torch.randn(3, 2, dtype=torch.float64) for _ in range(3))
    y1, (y2, y3) = _call(_nested_class(_ScaleShiftBody, tessera), mx, (ma, mb))
    r1, r2, r3 = x * a, x + b, a * b
    for got, want in ((y1, r1), (y2, r2), (y3, r3)):
        torch.testing.assert_close(tn(got), want.detach())
        assert got.requires_grad and got.grad_fn is not None
    (y1 * tt(w1) + y2 * tt(w2) + y3 * tt(w3)).sum().backward()
    (r1 * w1 + r2 * w2 + r3 * w3).sum().backward()
    torch.testing.assert_close(tn(mx.grad), x.grad)
    torch.testing.assert_close(tn(ma.grad), a.grad)
    assert mb.grad is None and b.grad is None


def test_nested_io_function_uses_backward_extended_and_marks():
    x, mx = _seeded((5,), 3)
    w = torch.randn(5, dtype=torch.float64)
    rounded, mask = _call(_nested_class(_StraightThroughBody, tessera), mx)
    straight_through = x + (x.round() - x).detach()  # torch's way to write the same gradient
    torch.testing.assert_close(tn(rounded), straight_through.detach())
    torch.testing.assert_close(tn(mask), (x > 0).double())
    assert not mask.requires_grad and rounded.requires_grad
    (rounded * tt(w)).sum().backward()
    (straight_through * w).sum().backward()
    torch.testing.assert_close(tn(mx.grad), x.grad)


class _DoubledGradExpBody:
    """exp, one output: backward_extended gets its gradient as the one argument."""

    def forward_extended(self, x):
        return x.exp()

    def backward_extended(self, g):
        return g * 2


def test_nested_io_function_single_output_and_retained_graph():
    x, mx = _seeded((4,), 8)
    fn_out = _call(_nested_class(_DoubledGradExpBody, tessera), mx)
    torch.testing.assert_close(tn(fn_out), x.exp().detach())
    fn_out.sum().backward(retain_graph=True)
    fn_out.sum().backward()
    torch.testing.assert_close(tn(mx.grad), torch.full((4,), 4.0, dtype=torch.float64))
    # a third pass finds the graph freed, with torch's message for that
    with pytest.raises(RuntimeError) as theirs:
        y = x.exp()
        y.sum().backward()
        y.sum().backward()
    with pytest.raises(RuntimeError) as mine:
        fn_out.sum().backward()
    assert str(mine.value) == str(theirs.value)


def test_nested_io_function_gradcheck():
    (_, x), (_, a), (_, b) = _seeded((2, 3), 4), _seeded((2, 3), 5), _seeded((2, 3), 6)
    cls = _nested_class(_ScaleShiftBody, tessera)

    def flat(x, a, b):
        y1, (y2, y3) = _call(cls, x, (a, b))
        return y1, y2, y3

    assert tessera.autograd.gradcheck(flat, (x, a, b))


def test_nested_io_function_refuses_what_it_cannot_nest():
    same_error(lambda: _call(_nested_class(_ScaleShiftBody, torch), torch.ones(2), 3),
               lambda: _call(_nested_class(_ScaleShiftBody, tessera), tessera.ones(2), 3))


# ---------------------------------------------------------------- Tensor.reinforce, Tensor.name

def test_tensor_reinforce_raises_as_torch():
    same_error(lambda: torch.ones(2).reinforce(1.0), lambda: tessera.ones(2).reinforce(1.0))
    same_error(lambda: torch.ones(2).reinforce(), lambda: tessera.ones(2).reinforce())


def test_tensor_name_is_none_and_read_only():
    def names(lib):
        x = lib.ones(2, requires_grad=True)
        return [t.name for t in (x, x * 2, lib.nn.Parameter(lib.zeros(1)), lib.tensor(3))]

    theirs, mine = both(names)
    assert mine == theirs == [None] * 4
    for lib in (torch, tessera):
        with pytest.raises(AttributeError, match="attribute 'name' of .* objects is not writable"):
            lib.ones(1).name = "x"


# ---------------------------------------------------------------- nn.CrossMapLRN2d

LRN_CASES = [(size, channels) for size in (1, 2, 3, 4, 5, 6) for channels in (1, 3, 8)]


@pytest.mark.parametrize("size,channels", LRN_CASES)
def test_cross_map_lrn2d_forward_against_torch(size, channels):
    x = torch.randn(2, channels, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(size))
    for alpha, beta, k in ((1e-4, 0.75, 1), (0.5, 0.6, 2.0)):
        want = torch.nn.CrossMapLRN2d(size, alpha, beta, k)(x)
        got = tessera.nn.CrossMapLRN2d(size, alpha, beta, k)(tt(x))
        torch.testing.assert_close(tn(got), want, rtol=1e-12, atol=1e-12)
    want32 = torch.nn.CrossMapLRN2d(size, 0.5, 0.75)(x.float())
    torch.testing.assert_close(tn(tessera.nn.CrossMapLRN2d(size, 0.5, 0.75)(tt(x.float()))), want32)


def test_cross_map_lrn2d_module_as_torchs():
    theirs, mine = both(lambda lib: (repr(lib.nn.CrossMapLRN2d(3)), repr(lib.nn.CrossMapLRN2d(5, 1e-3, 0.5, 2.0)),
                                     lib.nn.CrossMapLRN2d(2).k, list(lib.nn.CrossMapLRN2d(2).parameters())))
    assert mine == theirs
    assert "CrossMapLRN2d" in tessera.nn.modules.normalization.__all__ and "CrossMapLRN2d" in tessera.nn.__all__
    for shape in ((3, 4, 4), (1, 2, 3, 4, 4), (5,)):
        same_error(lambda: torch.nn.CrossMapLRN2d(3)(torch.ones(shape)),
                   lambda: tessera.nn.CrossMapLRN2d(3)(tessera.ones(shape)))


# Where the window covers every channel, torch's hand-written backward is the derivative of
# its forward, and the two libraries' gradients can be compared directly.
@pytest.mark.parametrize("size,channels", [(2, 1), (5, 1), (4, 2), (6, 3), (7, 3)])
def test_cross_map_lrn2d_backward_against_torch(size, channels):
    (x, mx) = _seeded((2, channels, 3, 3), 7)
    w = torch.randn(2, channels, 3, 3, dtype=torch.float64)
    (torch.nn.CrossMapLRN2d(size, 0.3, 0.75, 1.5)(x) * w).sum().backward()
    (tessera.nn.CrossMapLRN2d(size, 0.3, 0.75, 1.5)(mx) * tt(w)).sum().backward()
    torch.testing.assert_close(tn(mx.grad), x.grad, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("size,channels", [(1, 3), (2, 4), (3, 5), (5, 8)])
def test_cross_map_lrn2d_gradient_is_the_derivative_of_torchs_forward(size, channels):
    # Elsewhere torch 1.13's backward is not its forward's derivative (its gradcheck fails:
    # the backward's window is shifted by one channel and leaves out channel 0, which the
    # forward's running sum never drops). Tessera's gradient is the derivative of the
    # forward both compute: checked here against central differences of torch's forward.
    x, mx = _seeded((1, channels, 2, 2), size)
    fn = lambda t: TorchCrossMapLRN2dFunction.apply(t, size, 0.4, 0.75, 1.0)  # noqa: E731
    if size > 1:  # (size 1 fails in torch's backward itself)
        assert not torch.autograd.gradcheck(fn, (x,), raise_exception=False)
    w = torch.randn(1, channels, 2, 2, dtype=torch.float64)
    (tessera.nn.CrossMapLRN2d(size, 0.4, 0.75, 1.0)(mx) * tt(w)).sum().backward()
    flat, eps = x.detach().flatten(), 1e-6
    numeric = torch.zeros_like(flat)
    for i in range(flat.numel()):
        step = torch.zeros_like(flat)
        step[i] = eps
        up, down = (fn((flat + s).view_as(x)) for s in (step, -step))
        numeric[i] = ((up - down) * w).sum() / (2 * eps)
    torch.testing.assert_close(tn(mx.grad).flatten(), numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("size,channels", [(1, 2), (3, 4), (4, 6), (5, 3)])
def test_cross_map_lrn2d_gradcheck(size, channels):
    _, x = _seeded((2, channels, 2, 3), 11)
    module = tessera.nn.CrossMapLRN2d(size, 0.5, 0.75, 1.0)
    assert tessera.autograd.gradcheck(module, (x,))
    assert tessera.autograd.gradgradcheck(module, (x,))


def test_cross_map_lrn2d_numbers_do_not_need_grad():
    x = np.random.default_rng(0).standard_normal((1, 4, 2, 2))
    out = tessera.nn.CrossMapLRN2d(3)(tessera.from_numpy(x))
    assert not out.requires_grad
    torch.testing.assert_close(tn(out), torch.nn.CrossMapLRN2d(3)(torch.from_numpy(x)))
