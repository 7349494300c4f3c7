"""The build checks in test/tools must be able to fail: feed them what they must catch."""
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import check_no_pytorch  # noqa: E402
import check_symbols  # noqa: E402

ROOTS = ["/src/tessera", "/src/tessera/build"]

DEPS = """\
c10/CMakeFiles/c10.dir/core/Device.cpp.o: #deps 3, deps mtime 1 (VALID)
    /src/tessera/c10/core/Device.cpp
    /src/tessera/c10/core/Device.h
    /usr/include/c++/12/string

aten/CMakeFiles/aten.dir/native/Add.cpp.o: #deps 2, deps mtime 1 (VALID)
    /usr/include/ATen/core/Tensor.h
    /usr/lib/python3/dist-packages/torch/include/c10/core/Device.h
"""


def test_pytorch_headers_are_flagged_and_ours_are_not():
    bad = check_no_pytorch.bad_headers(DEPS, ROOTS)
    assert [h for _, h in bad] == ["/usr/include/ATen/core/Tensor.h",
                                   "/usr/lib/python3/dist-packages/torch/include/c10/core/Device.h"]
    assert all(obj.endswith("Add.cpp.o") for obj, _ in bad)


def test_pytorch_library_names():
    for name in ["libc10.so", "libc10.so.1.13", "libtorch_cpu.so.1.13", "libtorch.so", "libc10_cuda.so", "libshm.so"]:
        assert check_no_pytorch.PYTORCH_LIBS.match(name), name
    for name in ["libtessera_c10.so.0", "libaten.so", "libtessera_autograd.so", "libfmt.so.9"]:
        assert not check_no_pytorch.PYTORCH_LIBS.match(name), name


def test_readelf_finds_libc10_in_torchs_own_library():
    import torch  # noqa: F401  (Debian's libtorch_cpu is what links libc10)
    candidates = list(pathlib.Path("/usr/lib/x86_64-linux-gnu").glob("libtorch_cpu.so*"))
    if not candidates:
        pytest.skip("torch's libtorch_cpu is not at Debian's path")
    needed = check_no_pytorch.needed_libraries(candidates[0])
    assert any(check_no_pytorch.PYTORCH_LIBS.match(n) and n.startswith("libc10") for n in needed)


@pytest.mark.parametrize("symbol,bad", [
    ("c10::Device::str[abi:cxx11]() const", True),
    ("typeinfo for c10::Error", True),
    ("at::native::add_out(at::Tensor const&)", True),
    ("torch::Library::def(char const*)", True),
    ("c10::tessera::Device::str[abi:cxx11]() const", False),
    ("typeinfo for c10::tessera::Error", False),
    ("vtable for at::tessera::TensorImpl", False),
    ("tessera_test_error_roundtrip", False),
    ("std::vector<c10::Device>::~vector()", False),
])
def test_symbol_namespace_rule(symbol, bad):
    assert check_symbols.unversioned(symbol) == bad


def test_symbol_check_fails_on_unversioned_library(tmp_path):
    src = tmp_path / "bad.cpp"
    src.write_text("namespace c10 { int leaked() { return 1; } }\n")
    lib = tmp_path / "libbad.so"
    subprocess.run(["g++", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    proc = subprocess.run([sys.executable, check_symbols.__file__, str(lib)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "c10::leaked()" in proc.stdout
