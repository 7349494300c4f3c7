"""A custom-operator library built against Tessera (test/cpp/custom_ops/myops.cpp), loaded
from Python, called through tessera.ops, and unloaded again."""
import os
import pathlib
import subprocess
import sys

import pytest

import tessera


def myops_path():
    path = pathlib.Path(os.environ["TESSERA_BUILD_DIR"]) / "test" / "cpp" / "libtessera_test_myops.so"
    if not path.exists():
        pytest.fail(f"{path} was not built")
    return path


def test_load_call_unload():
    with pytest.raises(AttributeError, match="No such operator myops::scale"):
        tessera.ops.myops.scale
    tessera.ops.load_library(myops_path())
    try:
        x = tessera.tensor([1.0, -2.0, 3.0])
        assert tessera.ops.myops.scale(x, 2.0).tolist() == [2.0, -4.0, 6.0]
        assert tessera.ops.myops.scale(x, factor=0.5).tolist() == [0.5, -1.0, 1.5]
        assert tessera.ops.myops.scale.default(x, 1.0).tolist() == [1.0, -2.0, 3.0]
        assert tessera.ops.myops.total(x) == pytest.approx(2.0)
        pos, neg = tessera.ops.myops.split_sign(x)
        assert pos.tolist() == [1.0, 0.0, 3.0] and neg.tolist() == [0.0, -2.0, 0.0]
        pos, neg = tessera.ops.myops.split_sign(x, threshold=1.5)
        assert pos.tolist() == [0.0, 0.0, 3.0]
        with pytest.raises(TypeError, match=r"scale\(\): argument 'factor' \(position 2\) must be float, not str"):
            tessera.ops.myops.scale(x, "two")
        with pytest.raises(TypeError, match="split_sign\\(\\) takes 1 positional argument but 2 were given"):
            tessera.ops.myops.split_sign(x, 1.5)
        with pytest.raises(RuntimeError, match="expected a float tensor, got Long"):
            tessera.ops.myops.total(tessera.tensor([1, 2]))
        assert "myops.cpp" in tessera._C._dispatch_dump("myops::scale")
        # defaults torch writes as numbers (`ScalarType dtype=6`, `Layout layout=0`,
        # `MemoryFormat memory_format=0`, `MemoryFormat? maybe_format=2`) arrive as enums:
        # one digit each of dtype (Float=6), layout (strided=0), memory format (contiguous=0),
        # optional memory format (channels_last=2, 9 for None)
        assert tessera.ops.myops.enum_args(x) == 6002
        assert tessera.ops.myops.enum_args(x, dtype=tessera.float64, memory_format=tessera.channels_last,
                                           maybe_format=None) == 7029
        assert tessera.ops.myops.enum_args(x, layout=tessera.strided, maybe_format=tessera.preserve_format) == 6001
    finally:
        tessera.ops.unload_library(myops_path())
    with pytest.raises(AttributeError, match="No such operator myops::scale"):
        tessera.ops.myops.scale


def test_custom_class_objects():
    import copy
    import pickle
    tessera.ops.load_library(myops_path())
    try:
        counter = tessera.ops.myops.make_counter(5)
        assert isinstance(counter, tessera.ScriptObject)
        assert counter._type().qualified_name() == "__torch__.torch.classes.myops.Counter"
        assert counter._type().name() == "Counter"
        assert counter.get() == 5 and counter.doubled().get() == 10
        assert tessera.ops.myops.counter_add(counter, tessera.tensor([1.0, 2.0])).tolist() == [6.0, 7.0]
        assert counter == counter and counter != counter.doubled()
        assert pickle.loads(pickle.dumps(counter)).get() == 5
        assert copy.deepcopy(counter).get() == 5
        with pytest.raises(TypeError,
                           match="expected an object of __torch__.torch.classes.myops.Counter but got tessera.Tensor"):
            tessera.ops.myops.counter_add(tessera.ones(1), tessera.ones(1))
        with pytest.raises(AttributeError, match="has no attribute 'missing'"):
            counter.missing()
    finally:
        tessera.ops.unload_library(myops_path())
    # the object outlives the library's unloading (which keeps the code its destructor needs
    # mapped), its methods went with it and come back with the library
    with pytest.raises(AttributeError, match="has no attribute 'get'"):
        counter.get()
    tessera.ops.load_library(myops_path())
    try:
        assert counter.get() == 5
    finally:
        tessera.ops.unload_library(myops_path())
    del counter


def test_unload_when_the_library_stays_mapped():
    # ctypes holds a second reference, so dlclose cannot unmap the library (a GNU_UNIQUE
    # symbol in a Release build does the same): unload must still remove its operators,
    # and loading it again must bring them back.
    import ctypes
    tessera.ops.load_library(myops_path())
    pin = ctypes.CDLL(str(myops_path()))
    try:
        tessera.ops.unload_library(myops_path())
        with pytest.raises(AttributeError, match="No such operator myops::scale"):
            tessera.ops.myops.scale
        tessera.ops.load_library(myops_path())
        assert tessera.ops.myops.scale(tessera.tensor([1.5]), 2.0).tolist() == [3.0]
        tessera.ops.unload_library(myops_path())
        with pytest.raises(AttributeError, match="No such operator myops::scale"):
            tessera.ops.myops.scale
    finally:
        del pin


def test_load_library_errors_match_torch(tmp_path):
    import torch
    missing = tmp_path / "libmissing.so"
    for lib in (torch, tessera):
        with pytest.raises(OSError, match="libmissing.so"):
            lib.ops.load_library(missing)
    not_a_library = tmp_path / "libjunk.so"
    not_a_library.write_bytes(b"not an ELF file")
    for lib in (torch, tessera):
        with pytest.raises(OSError):
            lib.ops.load_library(not_a_library)
    with pytest.raises(RuntimeError, match="was not loaded with load_library"):
        tessera.ops.unload_library(missing)


def test_ops_return_the_object_they_wrote_to():
    # as torch.ops: in-place and out= overloads give back the caller's own tensor object
    x = tessera.zeros(3)
    o = tessera.empty(0)
    assert tessera.ops.aten.fill_.Scalar(x, 2) is x
    assert tessera.ops.aten.add.out(x, x, out=o) is o and o.tolist() == [4.0, 4.0, 4.0]
    assert tessera.ops.aten.add(x, x, out=o) is o
    r = tessera.ops.aten.add.Tensor(x, x)
    assert r is not x and r.tolist() == [4.0, 4.0, 4.0]
    v = tessera.ops.aten.view(x, [3])
    assert v is not x  # a view aliases but is written to by nobody: a new object


def test_load_library_refuses_a_library_built_for_pytorch_and_maps_none_of_it():
    # torch's own extension module links libtorch_python, libtorch and libc10: what a
    # torchvision or cpp_extension build looks like. torch.ops.load_library would load it
    # (into PyTorch); tessera refuses before dlopen, with an OSError (torchvision catches
    # it and keeps to its Python paths), and no PyTorch library is mapped afterwards. In a
    # fresh interpreter that never imported torch.
    code = r"""
import glob, importlib.util, os, sys
import tessera
lib = glob.glob(os.path.join(os.path.dirname(importlib.util.find_spec("torch").origin), "_C.cpython-*.so"))[0]
try:
    tessera.ops.load_library(lib)
    print("loaded")
except OSError as e:
    print("OSError:", e)
maps = open("/proc/self/maps").read()
print("pytorch mapped:", any(name in maps for name in ("libtorch", "libc10.so", "torch/_C")))
print("torch imported:", "torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert "OSError: Could not load library" in out, out
    assert "linked against PyTorch's libtorch_python.so" in out, out
    assert "built for PyTorch, not tessera" in out, out
    assert "pytorch mapped: False" in out and "torch imported: False" in out, out


def test_load_library_refuses_a_library_that_registers_nothing(tmp_path):
    # Tessera's rule (torch would load any library): one that registers no operator with
    # tessera is unloaded again and reported, so a wrong library cannot pass silently. A
    # fresh copy of c10's test hooks (no TORCH_LIBRARY block), so nothing mapped it before.
    hooks = pathlib.Path(os.environ["TESSERA_BUILD_DIR"]) / "test" / "cpp" / "libtessera_c10_testhooks.so"
    nothing = tmp_path / "libnothing.so"
    nothing.write_bytes(hooks.read_bytes())
    for _ in range(2):  # and again, if the loader kept it mapped
        with pytest.raises(OSError, match="registers nothing with tessera"):
            tessera.ops.load_library(nothing)
    # a library the interpreter mapped long ago (libm) registers nothing either
    libm = next(line.split()[-1] for line in pathlib.Path("/proc/self/maps").read_text().splitlines()
                if "/libm.so" in line)
    with pytest.raises(OSError, match="registers nothing with tessera"):
        tessera.ops.load_library(libm)
    with pytest.raises(RuntimeError, match="was not loaded with load_library"):
        tessera.ops.unload_library(nothing)
