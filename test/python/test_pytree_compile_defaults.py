"""Issue 28 point 7's small pieces: tessera.utils._pytree against torch 1.13's
torch.utils._pytree (the same trees through both: leaves, specs and their reprs,
unflatten, map/all/any, registration, errors), tessera.compile (absent from torch 1.13:
checked against current PyTorch's documented torch.compile signature and errors, with
eager execution), tessera.backends.cpu.get_cpu_capability and set_default_device /
get_default_device (current PyTorch's names and behaviour: factories only).
"""
from collections import OrderedDict, namedtuple

import pytest
import torch
import torch.utils._pytree as theirs

import tessera
import tessera.utils._pytree as ours

Point = namedtuple("Point", ["x", "y"])

TREES = [
    3,
    None,
    [1, 2, 3],
    (1, (2, 3), [4, {"a": 5, "b": (6,)}]),
    {"z": 1, "a": [2, 3], "m": None},
    OrderedDict([("k", 1), ("j", (2, 3))]),
    Point(1, [2, 3]),
    [],
    {},
    ((), [[]], {"e": []}),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_and_unflatten_as_torch(tree):
    leaves, spec = ours.tree_flatten(tree)
    want_leaves, want_spec = theirs.tree_flatten(tree)
    assert leaves == want_leaves
    assert repr(spec) == repr(want_spec)
    assert spec.num_leaves == want_spec.num_leaves
    rebuilt = ours.tree_unflatten([f"v{i}" for i in range(len(leaves))], spec)
    want = theirs.tree_unflatten([f"v{i}" for i in range(len(leaves))], want_spec)
    assert rebuilt == want and type(rebuilt) is type(want)
    assert ours.tree_unflatten(leaves, spec) == tree
    assert ours.tree_leaves(tree) == leaves and ours.tree_structure(tree) == spec


def test_specs_compare_by_structure():
    assert ours.tree_structure([1, (2, 3)]) == ours.tree_structure(["a", ("b", "c")])
    assert ours.tree_structure([1, (2, 3)]) != ours.tree_structure([1, [2, 3]])
    assert ours.tree_structure({"a": 1}) != ours.tree_structure({"b": 1})
    assert ours.tree_structure(Point(1, 2)) != ours.tree_structure((1, 2))
    assert repr(ours.LeafSpec()) == "*"


def test_map_all_any_as_torch():
    tree = {"a": [1, 2.5, "s"], "b": (torch.ones(1), 4)}
    assert ours.tree_map(lambda v: v * 2, [1, (2, 3)]) == theirs.tree_map(lambda v: v * 2, [1, (2, 3)])
    got = ours.tree_map_only(int, lambda v: -v, tree)
    want = theirs.tree_map_only(int, lambda v: -v, tree)
    assert got["a"] == want["a"] and got["b"][1] == want["b"][1] and got["b"][0] is tree["b"][0]
    got = ours.tree_map_only((int, float), lambda v: 0, tree)
    assert got["a"] == theirs.tree_map_only((int, float), lambda v: 0, tree)["a"]
    for pred in (lambda v: isinstance(v, int), lambda v: v is not None):
        assert ours.tree_all(pred, tree) == theirs.tree_all(pred, tree)
        assert ours.tree_any(pred, tree) == theirs.tree_any(pred, tree)
    assert ours.tree_all_only(int, lambda v: v > 0, tree) == theirs.tree_all_only(int, lambda v: v > 0, tree)
    assert ours.tree_any_only(str, lambda v: v == "s", tree) == theirs.tree_any_only(str, lambda v: v == "s", tree)


def test_registered_containers_and_tensor_leaves():
    class Box:
        def __init__(self, items, label):
            self.items, self.label = items, label

    ours.register_pytree_node(Box, lambda b: (list(b.items), b.label), lambda children, label: Box(children, label))
    try:
        t = tessera.ones(2)
        leaves, spec = ours.tree_flatten({"box": Box([1, t], "L")})
        assert leaves[0] == 1 and leaves[1] is t
        assert repr(spec) == "TreeSpec(dict, ['box'], [TreeSpec(Box, L, [*, *])])"
        back = ours.tree_unflatten([5, 6], spec)
        assert isinstance(back["box"], Box) and back["box"].items == [5, 6] and back["box"].label == "L"
    finally:
        del ours.SUPPORTED_NODES[Box]
    assert callable(ours._register_pytree_node)  # torch 1.13's private name


def test_unflatten_errors_as_torch():
    spec, want_spec = ours.tree_structure([1, 2]), theirs.tree_flatten([1, 2])[1]
    for values in ([1], [1, 2, 3]):
        with pytest.raises(ValueError) as want:
            theirs.tree_unflatten(values, want_spec)
        with pytest.raises(ValueError) as got:
            ours.tree_unflatten(values, spec)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="Expected `spec` to be instance of TreeSpec"):
        ours.tree_unflatten([1], "spec")


@pytest.mark.parametrize("tree,spec_of", [
    (0, [1, 2]), ([0, 1], [5, 6]), ([0, (1, 2)], [5, (6, 7)]), ([0, 1], [5, (6, 7)]), ({"a": 1}, {"b": 2}),
    ([0, 1, 2], [5, 6]), ((0, 1), [5, 6]), (None, (1, {"x": 2})),
])
def test_broadcast_to_and_flatten_as_torch(tree, spec_of):
    assert ours._broadcast_to_and_flatten(tree, ours.tree_structure(spec_of)) == \
        theirs._broadcast_to_and_flatten(tree, theirs.tree_flatten(spec_of)[1])


# ---- tessera.compile (current PyTorch's torch.compile; torch 1.13 has none)

def test_compile_runs_functions_and_modules_eagerly():
    def f(x, scale=2.0):
        return x * scale + 1

    compiled = tessera.compile(f)
    x = tessera.arange(4.0)
    assert compiled(x, scale=3.0).tolist() == f(x, scale=3.0).tolist()
    assert compiled.__name__ == "f" and compiled._torchdynamo_orig_callable is f

    @tessera.compile(backend="eager", mode="reduce-overhead", dynamic=True)
    def g(x):
        return x.sin()

    assert g(x).tolist() == x.sin().tolist()
    model = tessera.nn.Linear(4, 2)
    assert tessera.compile(model) is model  # its state_dict keys stay the module's own
    assert tessera.compile(f, disable=True) is f


def test_compile_argument_errors_as_current_torch():
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        tessera.compile(lambda x: x, mode="default", options={"trace.enabled": True})
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest"):
        tessera.compile(lambda x: x, mode="fastest")
    with pytest.raises(RuntimeError, match="Invalid backend"):
        tessera.compile(lambda x: x, backend="nope")
    with pytest.raises(NotImplementedError, match="TorchDynamo"):
        tessera.compile(lambda x: x, backend=lambda gm, inputs: gm)


def test_backends_cpu_capability():
    import tessera.backends.cpu as cpu  # importable as a module, as torch.backends.cpu
    capability = cpu.get_cpu_capability()
    assert capability in ("DEFAULT", "AVX2")
    assert capability == tessera._C._cpu_capability().upper()


# ---- set_default_device (current PyTorch; torch 1.13 has none)

def test_default_device_moves_factories_only():
    cpu_tensor = tessera.ones(2)
    assert tessera.get_default_device() == tessera.device("cpu")
    tessera.set_default_device("meta")
    try:
        assert tessera.get_default_device() == tessera.device("meta")
        made = [tessera.zeros(2, 3), tessera.empty(4), tessera.rand(2), tessera.randn(2, 2), tessera.arange(5),
                tessera.full((2,), 1.5), tessera.eye(3), tessera.linspace(0, 1, 4), tessera.tensor([1.0, 2.0]),
                tessera.randint(0, 5, (3,))]
        assert all(t.is_meta for t in made), [t.device for t in made]
        assert tessera.zeros(2, device="cpu").device.type == "cpu"  # an explicit device wins
        # ops given a tensor follow it
        assert tessera.zeros_like(cpu_tensor).device.type == "cpu"
        assert cpu_tensor.new_zeros(3).device.type == "cpu"
        assert (cpu_tensor + 1).device.type == "cpu"
    finally:
        tessera.set_default_device(None)
    assert tessera.get_default_device() == tessera.device("cpu")
    assert tessera.zeros(2).device.type == "cpu"
    tessera.set_default_device(tessera.device("meta"))
    try:
        assert tessera.ones(1).is_meta
    finally:
        tessera.set_default_device("cpu")
    assert tessera.ones(1).device.type == "cpu"
    with pytest.raises(TypeError):
        tessera.set_default_device(1.5)


def test_return_types_are_containers_as_torch_s():
    x = [[3.0, 1.0], [2.0, 5.0]]
    for op in ("max", "sort"):
        args = (0,) if op == "max" else ()
        ours_result = getattr(tessera, op)(tessera.tensor(x), *args)
        theirs_result = getattr(torch, op)(torch.tensor(x), *args)
        assert repr(ours.tree_structure(ours_result)) == repr(theirs.tree_flatten(theirs_result)[1])
        mapped = ours.tree_map(lambda t: t + 1, ours_result)
        assert type(mapped) is type(ours_result) and mapped.values.tolist() == (theirs_result.values + 1).tolist()


def test_register_pytree_node_refuses_a_second_registration():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    ours.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
    try:
        with pytest.raises(ValueError, match="already registered"):
            ours.register_pytree_node(Pair, lambda p: ([p.a], None), lambda c, _: Pair(c[0], None))
        ours._register_pytree_node(Pair, lambda p: ([p.b], None), lambda c, _: Pair(None, c[0]))  # 1.13: replaces
        assert ours.tree_leaves(Pair(1, 2)) == [2]
    finally:
        del ours.SUPPORTED_NODES[Pair]


def test_compile_backend_and_mode_rules_as_current_torch():
    custom = lambda gm, inputs: gm  # noqa: E731
    f = lambda x: x + 1  # noqa: E731
    assert tessera.compile(f, backend=custom, disable=True) is f
    assert tessera.compile(f, backend="eager", mode="anything")(tessera.ones(1)).tolist() == [2.0]  # inductor's


def test_default_device_is_per_thread_and_reaches_python_factories():
    import threading

    import numpy as np

    tessera.set_default_device("meta")
    try:
        seen = []
        worker = threading.Thread(target=lambda: seen.append(tessera.zeros(1).device.type))
        worker.start()
        worker.join()
        assert seen == ["cpu"]  # a new thread starts on the CPU, as torch 2's
        with pytest.warns(UserWarning):
            assert tessera.range(0, 3).is_meta
        assert tessera.as_tensor(np.ones(2)).is_meta and tessera.as_tensor(tessera.ones(2, device="cpu")).is_meta
        assert tessera.asarray(np.ones(2)).is_meta and tessera.asarray([1, 2]).is_meta
        # the data utilities' seeds and index permutations stay on the CPU; collated batches
        # are new tensors, on the default device (as torch 2's default_collate makes them)
        for sampler_kwargs in ({"shuffle": True}, {"sampler": tessera.utils.data.RandomSampler(range(6), True, 7)}):
            loader = tessera.utils.data.DataLoader(list(range(6)), batch_size=3, **sampler_kwargs)
            batches = list(loader)
            assert sum(b.shape[0] for b in batches) in (6, 7) and all(b.is_meta for b in batches)
    finally:
        tessera.set_default_device(None)
    with pytest.raises(RuntimeError, match="without CUDA"):
        tessera.set_default_device("cuda")
