"""torch's legacy tensor API against torch: the typed tensor classes (isinstance,
constructors, type names), the typed storages, Tensor.new / new_tensor, apply_ / map_ /
map2_, as_subclass, and the device probes a CPU-only torch answers (cuda(), pin_memory(),
is_xpu, volatile, ...)."""

import pytest
import torch

import tessera

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "BoolTensor"]
DTYPES = ["float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16", "int32", "int64", "bool",
          "complex64"]
STORAGES = ["FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "ByteStorage", "CharStorage",
            "ShortStorage", "IntStorage", "LongStorage", "BoolStorage", "ComplexFloatStorage", "ComplexDoubleStorage"]


from torch_compare import outcome  # noqa: E402


def same_kind(fn):
    """Runs fn(torch) and fn(tessera): both succeed with equal results, or both raise the
    same exception type."""
    theirs, mine = outcome(lambda: fn(torch)), outcome(lambda: fn(tessera))
    assert mine[0] == theirs[0], (mine, theirs)
    if mine[0] == "ok":
        assert mine[1] == theirs[1]
    return mine


@pytest.mark.parametrize("name", TYPES)
def test_isinstance_of_typed_classes_matches_torch(name):
    for dtype in DTYPES:
        mine, theirs = tessera.ones(2, dtype=getattr(tessera, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
        assert isinstance(mine, getattr(tessera, name)) is isinstance(theirs, getattr(torch, name)), dtype
    for obj in (1, [1.0], None):
        assert isinstance(obj, getattr(tessera, name)) is isinstance(obj, getattr(torch, name)) is False
    param = tessera.nn.Parameter(tessera.ones(1))
    assert isinstance(param, tessera.FloatTensor) is isinstance(torch.nn.Parameter(torch.ones(1)), torch.FloatTensor)


@pytest.mark.parametrize("name", TYPES)
def test_typed_class_attributes_match_torch(name):
    mine, theirs = getattr(tessera, name), getattr(torch, name)
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert (mine.is_cuda, mine.is_sparse, mine.__name__) == (theirs.is_cuda, theirs.is_sparse, theirs.__name__)
    assert type(mine).__name__ == type(theirs).__name__ == "tensortype"
    assert issubclass(mine, tessera.Tensor) is issubclass(theirs, torch.Tensor) is False
    assert repr(mine) == repr(theirs).replace("torch", "tessera")
    assert mine.storage_type().__name__ == theirs.storage_type(theirs(1)).__name__
    assert mine.add is tessera.Tensor.add


CTOR_ARGS = [lambda lib: (), lambda lib: (2, 3), lambda lib: ([1, 2],), lambda lib: ((2, 3),),
             lambda lib: (lib.Size([2, 3]),), lambda lib: ([[1, 2], [3, 4]],), lambda lib: ([True, False],),
             lambda lib: ([1.7, -2.2],), lambda lib: (2.5,), lambda lib: (-1,), lambda lib: ([[1, 2], [3]],),
             lambda lib: ([1], [2]), lambda lib: ("ab",)]


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("make_args", CTOR_ARGS)
def test_typed_constructors_match_torch(name, make_args):
    def build(lib):
        t = getattr(lib, name)(*make_args(lib))
        assert type(t) is lib.Tensor
        return tuple(t.shape), str(t.dtype).split(".")[1]
    kind = same_kind(build)
    if kind[0] == "ok" and make_args(torch) and isinstance(make_args(torch)[0], list):
        data = make_args(torch)[0]
        assert getattr(tessera, name)(data).tolist() == getattr(torch, name)(data).tolist()


def test_typed_constructors_from_tensors_storages_and_devices():
    t = tessera.tensor([1.0, 2.0])
    alias = tessera.FloatTensor(t)
    assert alias.data_ptr() == t.data_ptr()
    same_kind(lambda lib: lib.FloatTensor(lib.ones(2, dtype=lib.int64)))
    s = tessera.FloatStorage([1, 2, 3])
    assert tessera.FloatTensor(s).tolist() == torch.FloatTensor(torch.FloatStorage([1, 2, 3])).tolist()
    assert same_kind(lambda lib: tuple(lib.FloatTensor(2, device="cpu").shape))[1] == (2,)
    assert same_kind(lambda lib: lib.FloatTensor([1], device="cuda"))[0] == "RuntimeError"
    same_kind(lambda lib: lib.FloatTensor(2, dtype=lib.float64))
    same_kind(lambda lib: lib.ByteTensor([255, 0, 7]).tolist())
    same_kind(lambda lib: lib.LongTensor([1.7, -2.2]).tolist())


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("dtype", DTYPES)
def test_type_names_and_casts_by_class(dtype):
    mine, theirs = tessera.ones(2, dtype=getattr(tessera, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    assert mine.type() == theirs.type()
    for name in ("DoubleTensor", "LongTensor", "BoolTensor"):
        assert mine.type(getattr(tessera, name)).type() == theirs.type(getattr(torch, name)).type()
    assert mine.storage_type().__name__ == theirs.storage_type().__name__
    assert isinstance(mine.storage(), mine.storage_type()) and isinstance(theirs.storage(), theirs.storage_type())
    same_kind(lambda lib: lib.ones(2).type("torch.FloatStorage" if lib is torch else "tessera.FloatStorage"))


@pytest.mark.parametrize("name", STORAGES)
def test_typed_storages_match_torch(name):
    for args in ((), (3,), ([1, 0, 1],), ((1, 1),)):
        def build(lib):
            s = getattr(lib, name)(*args)
            values = s.tolist() if args and not isinstance(args[0], int) else None
            return s.size(), len(s), str(s.dtype).split(".")[1], values, isinstance(s, getattr(lib, name))
        same_kind(build)
    same_kind(lambda lib: getattr(lib, name)(2.5))
    same_kind(lambda lib: getattr(lib, name)(3, dtype=lib.float64))
    for other in STORAGES:
        assert isinstance(getattr(tessera, name)(1), getattr(tessera, other)) is \
            isinstance(getattr(torch, name)(1), getattr(torch, other))
    assert str(getattr(tessera, name).dtype).split(".")[1] == str(getattr(torch, name).dtype).split(".")[1]


def test_storage_of_a_tensor_and_untyped_storage():
    mine, theirs = tessera.arange(6.0).reshape(2, 3)[1], torch.arange(6.0).reshape(2, 3)[1]
    assert mine.storage().tolist() == theirs.storage().tolist()
    assert mine.storage()[4] == theirs.storage()[4] and len(mine.storage()) == len(theirs.storage())
    assert list(mine.storage()) == list(theirs.storage())
    assert tessera.Storage is tessera.FloatStorage and torch.Storage is torch.FloatStorage
    assert same_kind(lambda lib: (lib.UntypedStorage(3).nbytes(), len(lib.UntypedStorage(3))))[1] == (3, 3)
    assert same_kind(lambda lib: lib.UntypedStorage([1, 255]).tolist())[1] == [1, 255]
    assert str(tessera.UntypedStorage(2).device) == str(torch.UntypedStorage(2).device)


NEW_ARGS = [lambda lib, t: (), lambda lib, t: (2, 3), lambda lib, t: ([1, 2],), lambda lib, t: ((2, 3),),
            lambda lib, t: (lib.Size([2, 3]),), lambda lib, t: (2.5,), lambda lib, t: ([1.5, 2],),
            lambda lib, t: (lib.ones(2, dtype=lib.long),), lambda lib, t: ([1, 2], [3])]


@pytest.mark.parametrize("make_args", NEW_ARGS)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_new_matches_torch(make_args, dtype):
    def build(lib):
        t = lib.arange(6).reshape(2, 3).to(getattr(lib, dtype))
        r = t.new(*make_args(lib, t))
        return tuple(r.shape), str(r.dtype).split(".")[1], r.tolist() if r.shape != (2, 3) else None
    same_kind(build)


def test_new_aliases_and_keywords():
    for lib in (torch, tessera):
        t = lib.arange(6.0).reshape(2, 3).requires_grad_()
        r = t.new(t)
        assert r.data_ptr() == t.data_ptr() and r.requires_grad and r.grad_fn is not None, lib.__name__
    same_kind(lambda lib: lib.ones(2).new(2, dtype=lib.float64))
    same_kind(lambda lib: lib.ones(2).new(requires_grad=True))
    same_kind(lambda lib: tuple(lib.ones(2).new(2, device="cpu").shape))
    same_kind(lambda lib: lib.ones(2).new(lib.FloatStorage([1, 2, 3])).tolist())


def test_new_tensor_matches_torch():
    same_kind(lambda lib: lib.ones(2).new_tensor([1, 2]).tolist())
    same_kind(lambda lib: str(lib.ones(2, dtype=lib.int64).new_tensor([1.5, 2.7]).dtype).split(".")[1])
    same_kind(lambda lib: lib.ones(2, dtype=lib.int64).new_tensor([1.5, 2.7]).tolist())
    same_kind(lambda lib: str(lib.ones(2).new_tensor([1, 2], dtype=lib.int32).dtype).split(".")[1])
    same_kind(lambda lib: lib.ones(2).new_tensor(3.0).shape == ())
    same_kind(lambda lib: lib.ones(2).new_tensor([1.0], requires_grad=True).requires_grad)
    for lib in (torch, tessera):
        src = lib.tensor([1, 2]).requires_grad_(False)
        with pytest.warns(UserWarning, match="To copy construct from a tensor, it is recommended to use "
                                             r"sourceTensor.clone\(\).detach\(\)"):
            r = lib.ones(2).new_tensor(src)
        assert str(r.dtype).endswith("float32") and r.tolist() == [1.0, 2.0] and r.data_ptr() != src.data_ptr()


def test_size_and_truth_queries_match_torch():
    same_kind(lambda lib: lib.ones(2, 3).is_same_size(lib.ones(2, 3)))
    same_kind(lambda lib: lib.ones(2, 3).is_same_size(lib.ones(3, 2)))
    assert same_kind(lambda lib: lib.ones(2).is_same_size(1)) == \
        outcome(lambda: torch.ones(2).is_same_size(1))
    for make in (lambda lib: lib.ones(1), lambda lib: lib.zeros(()), lambda lib: lib.ones(3), lambda lib: lib.ones(0)):
        assert outcome(lambda: make(tessera).is_nonzero()) == outcome(lambda: make(torch).is_nonzero())
    same_kind(lambda lib: (lib.ones(2).get_device(), lib.ones(2).is_inference()))


APPLY_CASES = [
    ("float32", lambda x: x * 2), ("int64", lambda x: x / 2), ("bool", lambda x: 0), ("float64", lambda x: "a"),
    ("float32", lambda x: None), ("float32", lambda x: 1 / 0), ("float32", 3), ("int32", lambda x: x - 7)]


@pytest.mark.parametrize("dtype,fn", APPLY_CASES)
def test_apply_matches_torch(dtype, fn):
    def run(lib):
        t = lib.arange(1, 7).reshape(2, 3).to(getattr(lib, dtype))
        view = t.t()
        r = view.apply_(fn)
        return r is view, t.tolist()
    same_kind(run)
    same_kind(lambda lib: lib.ones(2, requires_grad=True).apply_(lambda x: x))
    assert outcome(lambda: tessera.ones(2, requires_grad=True).apply_(abs)) == \
        outcome(lambda: torch.ones(2, requires_grad=True).apply_(abs))


MAP_CASES = [lambda lib: (lib.ones(2), lib.arange(2.0)), lambda lib: (lib.ones(2, 2), lib.arange(2.0)),
             lambda lib: (lib.ones(2), lib.arange(3.0)), lambda lib: (lib.ones(2), lib.arange(2)),
             lambda lib: (lib.ones(2), lib.arange(2.0).requires_grad_()),
             lambda lib: (lib.ones(2).requires_grad_(), lib.arange(2)), lambda lib: (lib.ones(2), [1, 2]),
             lambda lib: (lib.ones(1), lib.arange(3.0))]


@pytest.mark.parametrize("make", MAP_CASES)
def test_map_matches_torch(make):
    def run(lib):
        t, other = make(lib)
        return t.map_(other, lambda a, b: a + 10 * b).tolist()
    kind = same_kind(run)
    if kind[0] != "ok":
        assert outcome(lambda: run(tessera)) == outcome(lambda: run(torch))


MAP2_CASES = [lambda lib: (lib.ones(2), lib.arange(2.0), lib.full((2,), 3.0)),
              lambda lib: (lib.ones(2, 2), lib.arange(2.0), lib.full((2, 1), 3.0)),
              lambda lib: (lib.ones(2).requires_grad_(), lib.arange(2.0), lib.ones(2)),
              lambda lib: (lib.ones(2), lib.arange(2.0), lib.ones(2, dtype=lib.double)),
              lambda lib: (lib.ones(2), lib.arange(2), lib.ones(2)),
              lambda lib: (lib.ones(2, 1), lib.arange(2.0), lib.ones(2)),
              lambda lib: (lib.ones(2), lib.arange(2.0), 3)]


@pytest.mark.parametrize("make", MAP2_CASES)
def test_map2_matches_torch(make):
    def run(lib):
        t, x, y = make(lib)
        return t.map2_(x, y, lambda a, b, c: a + b * c).tolist()
    assert outcome(lambda: run(tessera)) == outcome(lambda: run(torch))


def test_as_subclass_matches_torch():
    class Mine(tessera.Tensor):
        pass

    class Theirs(torch.Tensor):
        pass

    t, u = tessera.arange(3.0), torch.arange(3.0)
    a, b = t.as_subclass(Mine), u.as_subclass(Theirs)
    assert type(a) is Mine and type(b) is Theirs
    assert a.data_ptr() == t.data_ptr() and b.data_ptr() == u.data_ptr()
    a[0] = 5
    assert t[0].item() == 5.0
    assert outcome(lambda: t.as_subclass(int)) == outcome(lambda: u.as_subclass(int))
    # the result is an alias of self (a view in its graph): the gradient reaches self
    grads = []
    for lib, cls in ((tessera, Mine), (torch, Theirs)):
        x = lib.ones(2, requires_grad=True)
        y = (x * 3).as_subclass(cls)
        assert y.requires_grad and y.grad_fn is not None
        y.sum().backward()
        view = x.as_subclass(cls)
        assert not view.is_leaf and view.requires_grad and view._base.data_ptr() == x.data_ptr()
        assert lib.ones(1).as_subclass(cls).is_leaf
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [3.0, 3.0]


def test_device_methods_raise_as_a_cpu_only_torch():
    t, u = tessera.ones(2), torch.ones(2)
    for call in (lambda x: x.cuda(), lambda x: x.cuda(0), lambda x: x.xpu(), lambda x: x.ipu(),
                 lambda x: x.pin_memory(), lambda x: x.record_stream(None)):
        assert outcome(lambda: call(t))[0] == outcome(lambda: call(u))[0]
    for kind in ("xpu", "ipu"):  # "PyTorch is not linked ..." there, "Tessera is not linked ..." here
        theirs, mine = outcome(getattr(u, kind)), outcome(getattr(t, kind))
        expected = f"is not linked with support for {kind} devices"
        assert mine[1].split(" ", 1)[1] == theirs[1].split(" ", 1)[1] == expected
    with pytest.raises(NotImplementedError, match="Could not run 'aten::_pin_memory' with arguments from the 'CUDA' "
                                                  "backend"):
        t.pin_memory()
    assert t.is_pinned() is u.is_pinned() is False


def test_layout_and_device_probes_match_torch():
    for make in (lambda lib: lib.ones(2), lambda lib: lib.ones(2, dtype=lib.complex64), lambda lib: lib.zeros(())):
        t, u = make(tessera), make(torch)
        for prop in ("is_ipu", "is_xpu", "is_mps", "is_vulkan", "is_mkldnn", "is_ort", "is_nested", "is_sparse_csr"):
            assert getattr(t, prop) is getattr(u, prop), prop
        for method in ("is_distributed", "is_conj", "is_neg"):
            assert getattr(t, method)() is getattr(u, method)(), method


def test_volatile_warns_and_is_false():
    for lib in (torch, tessera):
        t = lib.ones(2)
        with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always False\)"):
            assert t.volatile is False
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            t.volatile = True
        with pytest.warns(UserWarning):
            assert t.volatile is False
