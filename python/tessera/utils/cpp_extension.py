"""torch.utils.cpp_extension for operator libraries: C++ sources compiled just in time with
Ninja against tessera's headers into a shared library, kept in a build directory keyed by
the sources and flags (a second load of the same code builds nothing), and loaded with
tessera.ops.load_library so that its TORCH_LIBRARY blocks register their operators.

    tessera.utils.cpp_extension.load_inline("my_ops", source, is_python_module=False)
    tessera.ops.my_ops.axpy(x, y, 2.0)

Python-module extensions (pybind11 functions over tensors, `functions=` of load_inline),
CUDA sources and setup.py's CppExtension are not available yet: they raise
NotImplementedError."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
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
    if is_python_module:
        raise NotImplementedError(
            "cpp_extension: Python-module extensions (pybind11 functions over tensors) are not available yet; "
            "register operators with TORCH_LIBRARY and pass is_python_module=False, then call them as "
            "tessera.ops.<namespace>.<op>")
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


def _build(name: str, sources: list[str], extra_cflags: list[str], extra_ldflags: list[str],
           extra_include_paths: list[str], build_dir: pathlib.Path, verbose: bool) -> str:
    """Compiles and links under the caller's _locked(build_dir); returns the library's path."""
    includes = [os.path.abspath(p) for p in extra_include_paths] + include_paths()
    # (paths tessera generates are quoted for the shell; extra flags are taken as written)
    cflags = (["-O2", "-fPIC", "-std=c++20", f"-DTORCH_EXTENSION_NAME={name}"]
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
    """Compiles `sources` into a shared library (once per content) and loads it, so its
    TORCH_LIBRARY blocks register their operators (is_python_module=False; returns None,
    as torch does)."""
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
                      build_dir, verbose)
    _load_built(build_dir, name, path)
    return None


def load_inline(name: str, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_ldflags=None, extra_include_paths=None, build_directory=None,
                verbose=False, with_cuda=None, is_python_module=True, with_pytorch_error_handling=True,
                keep_intermediates=True):
    """load() of source text: `cpp_sources` (a string or a list, joined by newlines) is
    written to main.cpp in the build directory after `#include <aten/aten.h>`."""
    if functions is not None:
        raise NotImplementedError("cpp_extension: functions= (pybind11 bindings) needs Python-module "
                                  "extensions, which are not available yet")
    if cuda_sources or extra_cuda_cflags:
        raise NotImplementedError(_NO_CUDA)
    _check_supported(name, [], is_python_module, False, with_cuda)
    build_dir = _build_dir(name, build_directory)
    text = "#include <aten/aten.h>\n" + "\n".join(_as_list(cpp_sources)) + "\n"
    with _locked(build_dir):  # (another process's text never lands in this build)
        main = build_dir / "main.cpp"
        if not main.exists() or main.read_text() != text:  # (unchanged text keeps its mtime: no rebuild)
            main.write_text(text)
        path = _build(name, [str(main)], _as_list(extra_cflags), _as_list(extra_ldflags),
                      _as_list(extra_include_paths), build_dir, verbose)
    _load_built(build_dir, name, path)
    return None


def CppExtension(*args, **kwargs):  # noqa: N802 (torch's name)
    raise NotImplementedError("cpp_extension.CppExtension (setup.py builds) is not available yet; use load() or "
                              "load_inline() with is_python_module=False")


def BuildExtension(*args, **kwargs):  # noqa: N802 (torch's name)
    raise NotImplementedError("cpp_extension.BuildExtension (setup.py builds) is not available yet; use load() or "
                              "load_inline() with is_python_module=False")
