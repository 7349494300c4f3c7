"""torch.utils.cpp_extension: C++ sources compiled just in time with Ninja against tessera's
headers into a shared library, kept in a build directory keyed by the sources and flags (a
second load of the same code builds nothing), and either imported as a Python module whose
pybind11 functions take and return tensors (is_python_module=True, the default; the sources
include <csrc/extension.h>, torch's <torch/extension.h>) or loaded with
tessera.ops.load_library so that its TORCH_LIBRARY blocks register their operators:

    m = tessera.utils.cpp_extension.load_inline("my_ext", source, functions=["axpy"])
    m.axpy(x, y, 2.0)
    tessera.utils.cpp_extension.load_inline("my_ops", source, is_python_module=False)
    tessera.ops.my_ops.axpy(x, y, 2.0)

CppExtension and BuildExtension build the same modules from a setup.py. CUDA sources need
the CUDA backend, which tessera does not have yet: they raise NotImplementedError, as does
is_standalone=True."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pathlib
import shlex
import shutil
import importlib.util
import subprocess
import sys
import sysconfig
from typing import Iterable, Optional, Sequence, Union

# (not resolved: in a build tree the .py files are links into the checkout, and the package
# directory is the one beside the compiled module)
_PACKAGE = pathlib.Path(os.path.abspath(__file__)).parents[1]
# The shared libraries an operator library links: tessera's ops and autograd (its
# TORCH_LIBRARY_IMPL(..., Autograd, ...) blocks) over c10.
_LIBRARIES = ("libtessera_autograd.so", "libaten.so", "libtessera_c10.so")
_NO_CUDA = "cpp_extension: CUDA extensions are not available yet"


def _source_root() -> Optional[pathlib.Path]:
    """The checkout a build-tree package links its .py files from (its headers)."""
    real = pathlib.Path(os.path.realpath(_PACKAGE / "__init__.py"))
    root = real.parents[2]
    return root if (root / "aten" / "aten.h").is_file() else None


def include_paths(cuda: bool = False) -> list[str]:
    """The directories an extension's sources include tessera's headers from: an installed
    package's include/, or a build tree's checkout and generated headers."""
    if cuda:
        raise NotImplementedError(_NO_CUDA)
    installed = _PACKAGE / "include"
    if (installed / "aten" / "aten.h").is_file():
        return [str(installed)]
    root = _source_root()
    generated = _PACKAGE.parents[1] / "generated"
    if root is None or not (generated / "aten").is_dir():
        raise RuntimeError(f"cpp_extension: tessera's headers are not beside this package ({_PACKAGE}); "
                           "build from a tessera build tree or an installed package with include/")
    return [str(generated), str(root)]


def _loaded_libraries() -> dict[str, str]:
    """Where the process mapped tessera's shared libraries from (basename -> path)."""
    found: dict[str, str] = {}
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            path = fields[5].strip().removesuffix(" (deleted)") if len(fields) == 6 else ""
            base = os.path.basename(path)
            for lib in _LIBRARIES:
                if base.startswith(lib) and lib not in found:
                    found[lib] = path
    missing = [lib for lib in _LIBRARIES if lib not in found]
    if missing:
        raise RuntimeError(f"cpp_extension: {', '.join(missing)} not loaded in this process")
    return found


def library_paths(cuda: bool = False) -> list[str]:
    """The directories holding the libraries an extension links against."""
    if cuda:
        raise NotImplementedError(_NO_CUDA)
    return sorted({os.path.dirname(p) for p in _loaded_libraries().values()})


def get_default_build_root() -> str:
    """The user's cache directory for extensions (XDG_CACHE_HOME, else ~/.cache), as torch's."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.realpath(os.path.join(cache, "tessera_extensions"))


def _build_root() -> str:
    """Where an extension builds without build_directory=: TORCH_EXTENSIONS_DIR where set
    (torch's variable), else a directory per Python version under the default root."""
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if root:
        return root
    return os.path.join(get_default_build_root(), f"py{sys.version_info.major}{sys.version_info.minor}_cpu")


def _as_list(value: Union[None, str, Iterable[str]]) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _check_supported(name: str, sources: Sequence[str], is_python_module: bool, is_standalone: bool,
                     with_cuda: Optional[bool]) -> None:
    if not name.isidentifier():
        raise ValueError(f"cpp_extension: the extension's name must be a valid identifier, got {name!r}")
    if is_standalone:
        raise NotImplementedError("cpp_extension: is_standalone=True (an executable) is not available yet")
    if with_cuda or any(s.endswith((".cu", ".cuh")) for s in sources):
        raise NotImplementedError(_NO_CUDA)


def _ninja() -> str:
    ninja = shutil.which("ninja")
    if ninja is None:
        raise RuntimeError("Ninja is required to load C++ extensions")
    return ninja


def _write_build_file(build_dir: pathlib.Path, name: str, sources: list[str], cflags: list[str],
                      ldflags: list[str], output: str) -> None:
    def quote(s: str) -> str:  # a path or flag in a Ninja file
        return s.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")

    cxx = os.environ.get("CXX", "c++")
    lines = [f"cxx = {cxx}", f"cflags = {' '.join(cflags).replace('$', '$$')}",
             f"ldflags = {' '.join(ldflags).replace('$', '$$')}", "",
             "rule compile", "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out", "  depfile = $out.d",
             "  deps = gcc", "", "rule link", "  command = $cxx $in $ldflags -o $out", ""]
    objects = []
    for i, source in enumerate(sources):
        obj = f"{i}_{pathlib.Path(source).stem}.o"
        objects.append(obj)
        lines.append(f"build {quote(obj)}: compile {quote(os.path.abspath(source))}")
    lines += [f"build {quote(output)}: link {' '.join(quote(o) for o in objects)}", f"default {quote(output)}", ""]
    text = "\n".join(lines)
    path = build_dir / "build.ninja"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


@contextlib.contextmanager
def _locked(build_dir: pathlib.Path):
    """One writer and builder at a time per build directory (processes included)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _python_include_paths() -> list[str]:
    """Python's headers (pybind11's come from the system include directory)."""
    return sorted({sysconfig.get_paths()["include"], sysconfig.get_paths()["platinclude"]})


def _build(name: str, sources: list[str], extra_cflags: list[str], extra_ldflags: list[str],
           extra_include_paths: list[str], build_dir: pathlib.Path, verbose: bool, python_module: bool) -> str:
    """Compiles and links under the caller's _locked(build_dir); returns the library's path."""
    includes = [os.path.abspath(p) for p in extra_include_paths] + include_paths()
    if python_module:
        includes += _python_include_paths()
    # (paths tessera generates are quoted for the shell; extra flags are taken as written; a
    # module hides its symbols, as pybind11 asks, so two modules' helpers never collide)
    cflags = (["-O2", "-fPIC", "-std=c++20", f"-DTORCH_EXTENSION_NAME={name}"]
              + (["-fvisibility=hidden"] if python_module else [])
              + [shlex.quote(f"-I{p}") for p in includes] + extra_cflags)
    libs = _loaded_libraries()
    ldflags = (["-shared"] + [shlex.quote(f"-Wl,-rpath,{d}") for d in library_paths()]
               + [shlex.quote(libs[lib]) for lib in _LIBRARIES] + extra_ldflags)
    # The library's file is named for its content (sources, flags, compiler), so changed
    # code gets a new file, which load() puts in the old one's place in this process. A
    # changed header rebuilds the same file: a new process loads it (as with torch).
    digest = hashlib.sha256()
    for part in (os.environ.get("CXX", "c++"), *cflags, *ldflags):
        digest.update(part.encode() + b"\0")
    for source in sources:
        digest.update(pathlib.Path(source).read_bytes() + b"\0")
    output = f"{name}_{digest.hexdigest()[:16]}.so"
    _write_build_file(build_dir, name, sources, cflags, ldflags, output)
    if verbose:
        print(f"Building extension module {name}...", file=sys.stderr)
    run = subprocess.run([_ninja(), "-C", str(build_dir)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"Error building extension '{name}': {run.stdout}")
    if verbose:
        print(run.stdout, file=sys.stderr)
    return str(build_dir / output)


# (build directory, name) -> the library this process loaded from there: changed code's
# new library replaces it (its TORCH_LIBRARY namespace can be defined once at a time).
_LOADED: dict[tuple[str, str], str] = {}


# library path -> the Python module imported from it (a second load returns it again).
_MODULES: dict[str, object] = {}


def _import_module(name: str, path: str):
    """Imports the module built at `path` under `name` (its PyInit_<name>); a changed build
    has a new path, so its new code is imported beside the old (except that a module with
    TORCH_LIBRARY blocks cannot define its namespace twice in one process). Tensors come
    back as new tessera.Tensor objects: a function that returns its argument gives an
    equal tensor, not the same object (nor its subclass)."""
    module = _MODULES.get(path)
    if module is None:
        import tessera  # noqa: F401 (the module's tensors are tessera's: its libraries come first)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[path] = module
    return module


def _load_built(build_dir: pathlib.Path, name: str, path: str) -> None:
    from tessera import ops
    key = (str(build_dir.resolve()), name)
    previous = _LOADED.get(key)
    if previous == path:
        return
    if previous is not None:
        ops.unload_library(previous)
        del _LOADED[key]
    ops.load_library(path)
    _LOADED[key] = path


def _build_dir(name: str, build_directory: Optional[str]) -> pathlib.Path:
    return pathlib.Path(build_directory or os.path.join(_build_root(), name))


def load(name: str, sources: Union[str, Sequence[str]], extra_cflags=None, extra_cuda_cflags=None,
         extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False, with_cuda=None,
         is_python_module=True, is_standalone=False, keep_intermediates=True):
    """Compiles `sources` into a shared library (once per content) and imports it as the
    Python module `name` (returned), or with is_python_module=False loads it so that its
    TORCH_LIBRARY blocks register their operators (returns None, as torch does)."""
    sources = _as_list(sources)
    _check_supported(name, sources, is_python_module, is_standalone, with_cuda)
    if extra_cuda_cflags:
        raise NotImplementedError(_NO_CUDA)
    for source in sources:  # (before anything is created)
        if not os.path.isfile(source):
            raise FileNotFoundError(f"cpp_extension: no source file {source}")
    build_dir = _build_dir(name, build_directory)
    with _locked(build_dir):
        path = _build(name, sources, _as_list(extra_cflags), _as_list(extra_ldflags), _as_list(extra_include_paths),
                      build_dir, verbose, is_python_module)
    if is_python_module:
        return _import_module(name, path)
    _load_built(build_dir, name, path)
    return None


def load_inline(name: str, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_ldflags=None, extra_include_paths=None, build_directory=None,
                verbose=False, with_cuda=None, is_python_module=True, with_pytorch_error_handling=True,
                keep_intermediates=True):
    """load() of source text: `cpp_sources` (a string or a list, joined by newlines) is
    written to main.cpp in the build directory after `#include <csrc/extension.h>` (for a
    Python module) or `#include <aten/aten.h>` (for an operator library). `functions` (a
    name, a list of names or a dict of name -> docstring) are bound into the module with
    pybind11, as torch generates the PYBIND11_MODULE block."""
    if cuda_sources or extra_cuda_cflags:
        raise NotImplementedError(_NO_CUDA)
    _check_supported(name, [], is_python_module, False, with_cuda)
    if functions is not None and not is_python_module:
        raise ValueError("cpp_extension: functions= binds functions into a Python module; "
                         "it needs is_python_module=True")
    build_dir = _build_dir(name, build_directory)
    header = "#include <csrc/extension.h>" if is_python_module else "#include <aten/aten.h>"
    text = header + "\n" + "\n".join(_as_list(cpp_sources)) + "\n" + _bindings(functions)
    with _locked(build_dir):  # (another process's text never lands in this build)
        main = build_dir / "main.cpp"
        if not main.exists() or main.read_text(encoding="utf-8") != text:  # (unchanged text: no rebuild)
            main.write_text(text, encoding="utf-8")
        path = _build(name, [str(main)], _as_list(extra_cflags), _as_list(extra_ldflags),
                      _as_list(extra_include_paths), build_dir, verbose, is_python_module)
    if is_python_module:
        return _import_module(name, path)
    _load_built(build_dir, name, path)
    return None


def _c_string(text: str) -> str:
    """text's UTF-8 bytes as the body of a C++ string literal: printable ASCII as it is
    (quote and backslash escaped), every other byte as an octal escape."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def _bindings(functions) -> str:
    """The PYBIND11_MODULE block that binds `functions` (None: none, the sources have theirs)."""
    if functions is None:
        return ""
    docs = dict(functions) if isinstance(functions, dict) else {f: f for f in _as_list(functions)}
    lines = ["PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"]
    for fn, doc in docs.items():
        if not fn.isidentifier():
            raise ValueError(f"cpp_extension: functions= names C++ functions, got {fn!r}")
        lines.append(f'  m.def("{fn}", {fn}, "{_c_string(doc)}");')
    return "\n".join(lines + ["}", ""])


_LINKED = ("aten", "tessera_c10", "tessera_autograd")  # (_LIBRARIES by their -l names)


def CppExtension(name: str, sources, *args, **kwargs):  # noqa: N802 (torch's name)
    """A setuptools.Extension for a C++ module built against tessera: its include paths,
    library paths (also as the run-time search path) and libraries added to those given."""
    import setuptools
    kwargs["include_dirs"] = _as_list(kwargs.get("include_dirs")) + include_paths() + _python_include_paths()
    paths = library_paths()
    kwargs["library_dirs"] = _as_list(kwargs.get("library_dirs")) + paths
    kwargs["runtime_library_dirs"] = _as_list(kwargs.get("runtime_library_dirs")) + paths
    kwargs["libraries"] = _as_list(kwargs.get("libraries")) + list(_LINKED)
    kwargs["language"] = "c++"
    sources = _as_list(sources)
    if any(s.endswith((".cu", ".cuh")) for s in sources):
        raise NotImplementedError(_NO_CUDA)
    return setuptools.Extension(name, sources, *args, **kwargs)


def CUDAExtension(*args, **kwargs):  # noqa: N802 (torch's name)
    """torch's setuptools.Extension for CUDA sources: needs the CUDA backend."""
    raise NotImplementedError(_NO_CUDA)


def _make_build_extension():
    from setuptools.command.build_ext import build_ext

    class BuildExtension(build_ext):
        """setup.py's cmdclass={"build_ext": BuildExtension}: setuptools' build_ext that
        compiles each extension as C++20 with TORCH_EXTENSION_NAME set to its module's name
        and its symbols hidden, as load() does. Its options, as torch's: use_ninja (accepted;
        setuptools' compiler builds either way) and no_python_abi_suffix (drops the
        cpython-311-... part of the file name); others go to setuptools' Command."""

        @classmethod
        def with_options(cls, **options):
            """A BuildExtension class that passes `options` to every instance."""
            class WithOptions(cls):
                def __init__(self, *args, **kwargs):
                    super().__init__(*args, **{**options, **kwargs})
            WithOptions.__name__ = cls.__name__
            return WithOptions

        def __init__(self, *args, **kwargs):
            self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
            self.use_ninja = kwargs.pop("use_ninja", True)
            super().__init__(*args, **kwargs)

        def build_extensions(self):
            for ext in self.extensions:
                if any(s.endswith((".cu", ".cuh")) for s in ext.sources):
                    raise NotImplementedError(_NO_CUDA)
                # (torch's form {"cxx": [...], "nvcc": [...]} or a plain list)
                args = ext.extra_compile_args or []
                flags = list(args.get("cxx", []) if isinstance(args, dict) else args)
                if not any(f.startswith("-std=") for f in flags):
                    flags.append("-std=c++20")
                flags += [f"-DTORCH_EXTENSION_NAME={ext.name.split('.')[-1]}", "-fvisibility=hidden"]
                ext.extra_compile_args = flags
            # (setuptools compiles C++ with the C compiler's flags; -Wstrict-prototypes is C-only)
            compiler_so = getattr(self.compiler, "compiler_so", None)
            if compiler_so and "-Wstrict-prototypes" in compiler_so:
                compiler_so.remove("-Wstrict-prototypes")
            super().build_extensions()

        def get_ext_filename(self, ext_name):
            name = super().get_ext_filename(ext_name)
            suffix = sysconfig.get_config_var("EXT_SUFFIX")
            if self.no_python_abi_suffix and name.endswith(suffix):
                name = name[:-len(suffix)] + ".so"
            return name

    return BuildExtension


def __getattr__(name: str):
    # BuildExtension subclasses setuptools' build_ext: made when first asked for, so that
    # importing this module does not import setuptools
    if name == "BuildExtension":
        cls = _make_build_extension()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"BuildExtension"})
