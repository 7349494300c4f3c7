"""tessera.utils.cpp_extension: operator libraries compiled just in time (load, load_inline)
against the build's headers, their operators checked against the same expression in
torch 1.13, the build cache, build errors, and the forms that are not available yet."""
import os
import pathlib

import pytest
import torch

import tessera
from opinfo import to_tessera, to_torch
from tessera.utils import cpp_extension

AXPY = """
namespace {
at::Tensor axpy(const at::Tensor& x, const at::Tensor& y, double a) { return at::add(y, x, a); }
}  // namespace
TORCH_LIBRARY(NAMESPACE, m) { m.def("axpy(Tensor x, Tensor y, float a) -> Tensor"); }
TORCH_LIBRARY_IMPL(NAMESPACE, CPU, m) { m.impl("axpy", TORCH_FN(axpy)); }
"""


def axpy_source(namespace):
    return AXPY.replace("NAMESPACE", namespace)


def libraries(build_dir):
    return sorted(p.name for p in pathlib.Path(build_dir).glob("*.so"))


def test_include_and_library_paths_hold_the_headers_and_libraries():
    assert any(os.path.isfile(os.path.join(p, "aten", "aten.h")) for p in cpp_extension.include_paths())
    found = {f for d in cpp_extension.library_paths() for f in os.listdir(d)}
    assert any(f.startswith("libaten.so") for f in found) and any(f.startswith("libtessera_c10.so") for f in found)


def test_load_inline_registers_operators_like_a_native_library(tmp_path):
    assert cpp_extension.load_inline("jit_axpy", axpy_source("jit_axpy"), is_python_module=False,
                                     build_directory=str(tmp_path)) is None
    x, y = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)
    got = tessera.ops.jit_axpy.axpy(to_tessera(x), to_tessera(y), 2.5)
    assert torch.allclose(to_torch(got), torch.add(y, x, alpha=2.5))
    # a second load of the same code builds nothing and loads the same library again
    built = {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.[os]*")}
    cpp_extension.load_inline("jit_axpy", axpy_source("jit_axpy"), is_python_module=False,
                              build_directory=str(tmp_path))
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.[os]*")} == built


def test_changed_code_replaces_the_loaded_library(tmp_path):
    # the same namespace, new code: its library is built beside the old one and takes its
    # place in this process (a namespace is defined by one library at a time)
    cpp_extension.load_inline("jit_v", axpy_source("jit_v"), is_python_module=False, build_directory=str(tmp_path))
    assert torch.equal(to_torch(tessera.ops.jit_v.axpy(tessera.ones(2), tessera.ones(2), 3.0)), torch.full((2,), 4.0))
    changed = axpy_source("jit_v").replace("at::add(y, x, a)", "at::sub(y, x, a)")
    cpp_extension.load_inline("jit_v", changed, is_python_module=False, build_directory=str(tmp_path))
    assert len(libraries(tmp_path)) == 2
    assert torch.equal(to_torch(tessera.ops.jit_v.axpy(tessera.ones(2), tessera.ones(2), 3.0)), torch.full((2,), -2.0))


def test_load_compiles_source_files_with_extra_flags(tmp_path):
    (tmp_path / "with space").mkdir()
    (tmp_path / "with space" / "factor.h").write_text("#define FACTOR_FROM_HEADER 1\n")
    source = tmp_path / "scale.cpp"
    source.write_text("""#include <aten/aten.h>
#include "factor.h"
#if !defined(FACTOR) || !defined(FACTOR_FROM_HEADER)
#error FACTOR and factor.h are needed
#endif
namespace { at::Tensor scale(const at::Tensor& x) { return at::mul(x, at::scalar_tensor(FACTOR, x.options())); } }
TORCH_LIBRARY(jit_scale, m) { m.def("scale(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(jit_scale, CPU, m) { m.impl("scale", TORCH_FN(scale)); }
""")
    cpp_extension.load("jit_scale", [str(source)], extra_cflags=["-DFACTOR=3.0"], is_python_module=False,
                       extra_include_paths=[str(tmp_path / "with space")], build_directory=str(tmp_path / "build"))
    x = torch.arange(5.0)
    assert torch.equal(to_torch(tessera.ops.jit_scale.scale(to_tessera(x))), x * 3)


def test_a_build_error_names_the_extension_and_shows_the_compiler(tmp_path):
    with pytest.raises(RuntimeError, match="Error building extension 'jit_bad'") as info:
        cpp_extension.load_inline("jit_bad", "this is not C++;", is_python_module=False,
                                  build_directory=str(tmp_path))
    assert "error" in str(info.value)
    with pytest.raises(FileNotFoundError):
        cpp_extension.load("jit_missing", [str(tmp_path / "missing.cpp")], is_python_module=False)


def test_builds_go_under_torch_extensions_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    cpp_extension.load_inline("jit_rooted", axpy_source("jit_rooted"), is_python_module=False)
    assert len(libraries(tmp_path / "jit_rooted")) == 1
    # the default root is the user's cache (XDG_CACHE_HOME, else ~/.cache), as torch's
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert cpp_extension.get_default_build_root() == os.path.realpath(tmp_path / "cache" / "tessera_extensions")


def test_forms_not_available_yet_say_so(tmp_path):
    for call in (lambda: cpp_extension.load_inline("jit_mod", axpy_source("jit_mod"), build_directory=str(tmp_path)),
                 lambda: cpp_extension.load_inline("jit_fn", "int f() { return 1; }", functions=["f"],
                                                   is_python_module=False, build_directory=str(tmp_path)),
                 lambda: cpp_extension.load("jit_cu", ["k.cu"], is_python_module=False),
                 lambda: cpp_extension.CppExtension("x", ["x.cpp"]),
                 lambda: cpp_extension.include_paths(cuda=True)):
        with pytest.raises(NotImplementedError):
            call()
    with pytest.raises(ValueError, match="valid identifier"):
        cpp_extension.load_inline("not a name", "", is_python_module=False, build_directory=str(tmp_path))
