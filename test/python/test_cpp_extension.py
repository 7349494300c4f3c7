"""tessera.utils.cpp_extension: operator libraries and Python modules compiled just in time
(load, load_inline) or by a setup.py (CppExtension, BuildExtension) against the build's
headers, their functions checked against the same expression in torch 1.13, the build
cache, build errors, and the forms that are not available yet (CUDA, standalone)."""
import os
import pathlib
import subprocess
import sys
import textwrap

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


MODULE = r"""
torch::Tensor scaled_sigmoid(const torch::Tensor& x, double s) { return torch::sigmoid(x) * s; }
std::vector<at::Tensor> halves(const at::Tensor& x) {
  const int64_t h = x.size(0) / 2;
  return {x.narrow(0, 0, h), x.narrow(0, h, x.size(0) - h)};
}
std::tuple<at::Tensor, int64_t> plus_one(std::optional<at::Tensor> x) {
  if (!x) return {at::zeros({1}), 0};
  return {*x + 1, x->numel()};
}
at::Tensor checked_dim(const at::Tensor& x, int64_t d) {
  TORCH_CHECK_INDEX(d < x.dim(), "dim ", d, " is past the last");
  TORCH_CHECK(d >= 0, "dim must not be negative");
  return x;
}
"""
FUNCTIONS = {"scaled_sigmoid": "sigmoid(x) times s", "halves": "the two halves\r\n\t(\"quoted\", \\, \u00e9)",
             "plus_one": "x + 1 and its numel", "checked_dim": "x, if d is one of its dims"}


def test_load_inline_imports_a_python_module_whose_functions_take_and_give_tensors(tmp_path):
    m = cpp_extension.load_inline("jit_module", MODULE, functions=FUNCTIONS, build_directory=str(tmp_path))
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    mx = to_tessera(x.detach()).requires_grad_()
    got = m.scaled_sigmoid(mx, 2.5)
    want = torch.sigmoid(x) * 2.5
    assert type(got) is tessera.Tensor and torch.allclose(to_torch(got.detach()), want.detach())
    # the module's at:: calls record autograd history as any tessera op does
    got.sum().backward()
    want.sum().backward()
    assert torch.allclose(to_torch(mx.grad), x.grad)
    # a Parameter (a Tensor subclass) passes as a tensor
    assert torch.allclose(to_torch(m.scaled_sigmoid(tessera.nn.Parameter(mx.detach()), 1.0).detach()),
                          torch.sigmoid(x.detach()))
    # lists, optionals and tuples of tensors; the results are views of the argument
    a = tessera.arange(5)
    first, second = m.halves(a)
    assert first.tolist() == [0, 1] and second.tolist() == [2, 3, 4]
    second[0] = 7
    assert a.tolist() == [0, 1, 7, 3, 4]
    assert m.plus_one(None)[1] == 0 and m.plus_one(tessera.ones(3))[0].tolist() == [2.0, 2.0, 2.0]
    # C++ errors reach Python as tessera's own do; a wrong argument is pybind11's TypeError
    with pytest.raises(IndexError, match="dim 3 is past the last"):
        m.checked_dim(a, 3)
    with pytest.raises(RuntimeError, match="must not be negative"):
        m.checked_dim(a, -1)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        m.scaled_sigmoid(torch.ones(2), 1.0)
    assert "sigmoid(x) times s" in m.scaled_sigmoid.__doc__ and "tessera.Tensor" in m.scaled_sigmoid.__doc__
    assert FUNCTIONS["halves"] in m.halves.__doc__  # (control characters, quotes, UTF-8 survive)
    # a second load of the same code builds nothing and returns the same module
    assert cpp_extension.load_inline("jit_module", MODULE, functions=FUNCTIONS, build_directory=str(tmp_path)) is m


def test_load_imports_a_module_with_its_own_pybind11_block_and_operators(tmp_path):
    source = tmp_path / "mixed.cpp"
    source.write_text("""#include <csrc/extension.h>
namespace { at::Tensor twice(const at::Tensor& x) { return x * 2; } }
TORCH_LIBRARY(jit_mixed, m) { m.def("twice(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(jit_mixed, CPU, m) { m.impl("twice", TORCH_FN(twice)); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("twice", &twice);
  m.attr("name") = "jit_mixed";
}
""")
    m = cpp_extension.load("jit_mixed", [str(source)], build_directory=str(tmp_path / "build"))
    assert m.__name__ == "jit_mixed" and m.name == "jit_mixed"
    x = torch.arange(4.0)
    assert torch.equal(to_torch(m.twice(to_tessera(x))), x * 2)
    # importing the module ran its TORCH_LIBRARY blocks, as in torch
    assert torch.equal(to_torch(tessera.ops.jit_mixed.twice(to_tessera(x))), x * 2)


def test_setup_py_builds_a_module_with_cpp_extension_and_build_extension(tmp_path):
    (tmp_path / "sig.cpp").write_text("#include <csrc/extension.h>\n" + MODULE + textwrap.dedent("""
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scaled_sigmoid", &scaled_sigmoid); }
        """))
    (tmp_path / "setup.py").write_text(textwrap.dedent("""
        from setuptools import setup
        from tessera.utils.cpp_extension import BuildExtension, CppExtension
        setup(name="sig_ext", ext_modules=[CppExtension("sig_ext", ["sig.cpp"], extra_compile_args={"cxx": ["-O1"]})],
              cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)})
        """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(tessera.__file__)),
                                                         str(tmp_path)]))
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert build.returncode == 0, build.stdout
    assert (tmp_path / "sig_ext.so").is_file()  # (no_python_abi_suffix)
    run = subprocess.run([sys.executable, "-c", "import tessera, sig_ext; "
                          "print(sig_ext.scaled_sigmoid(tessera.tensor([0.0, 2.0], dtype=tessera.float64), 3.0)"
                          ".tolist())"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout
    want = (torch.sigmoid(torch.tensor([0.0, 2.0], dtype=torch.float64)) * 3.0).tolist()
    assert torch.allclose(torch.tensor(eval(run.stdout)), torch.tensor(want))
    assert "BuildExtension" in dir(cpp_extension)


def test_forms_not_available_yet_say_so(tmp_path):
    for call in (lambda: cpp_extension.load("jit_cu", ["k.cu"], is_python_module=False),
                 lambda: cpp_extension.load_inline("jit_cuda", "", cuda_sources="__global__ void k() {}",
                                                   build_directory=str(tmp_path)),
                 lambda: cpp_extension.load("jit_exe", ["main.cpp"], is_standalone=True),
                 lambda: cpp_extension.CppExtension("x", ["x.cu"]),
                 lambda: cpp_extension.CUDAExtension("x", ["x.cu"]),
                 lambda: cpp_extension.include_paths(cuda=True)):
        with pytest.raises(NotImplementedError):
            call()
    with pytest.raises(ValueError, match="valid identifier"):
        cpp_extension.load_inline("not a name", "", is_python_module=False, build_directory=str(tmp_path))
    with pytest.raises(ValueError, match="needs is_python_module=True"):
        cpp_extension.load_inline("jit_fn", "int f() { return 1; }", functions=["f"], is_python_module=False,
                                  build_directory=str(tmp_path))
