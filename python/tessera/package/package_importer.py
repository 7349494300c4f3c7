"""PackageImporter: loads the code, pickles and resources of a package written by
PackageExporter (tessera's or torch's).

Modules come from the archive only, except those the package lists as extern, which are
imported normally. Each importer has a namespace of its own: the modules it creates live
in `importer.modules` (not sys.modules), under mangled names (`<torch_package_N>.name`),
and the code inside sees an `__import__` that resolves through the importer.
"""
import builtins
import importlib
import importlib.machinery
import importlib.util
import inspect
import io
import linecache
import os.path
import types
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, Iterable, List, Optional, Union
from weakref import WeakValueDictionary

import numpy

from .. import _C
from ..serialization import _restore_location
from ..storage import TypedStorage
from ._directory_reader import DirectoryReader
from ._importlib import _calc___package__, _normalize_line_endings, _normalize_path, _resolve_name, _sanity_check
from ._mangling import PackageMangler, demangle
from ._package_unpickler import PackageUnpickler
from .file_structure_representation import Directory, _create_directory_from_file_list
from .glob_group import GlobPattern
from .importer import Importer

__all__ = ["PackageImporter"]

# Modules a package may import without listing them as extern (tensor code needs numpy).
IMPLICIT_IMPORT_ALLOWLIST: Iterable[str] = ["numpy", "numpy.core", "numpy.core._multiarray_umath"]


class _ZipReader:
    """The records of a package archive (names relative to its top folder)."""

    def __init__(self, file):
        label = file if isinstance(file, str) else "<binary>"
        try:
            self._zip = zipfile.ZipFile(file)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {label}: {e}") from None
        names = self._zip.namelist()
        if not names or "/" not in names[0]:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {label}: records are not inside "
                               "a top-level folder")
        self._prefix = names[0].split("/", 1)[0] + "/"
        self._records = [n[len(self._prefix):] for n in names if n.startswith(self._prefix)]
        self._record_set = set(self._records)

    def _info(self, name):
        if name not in self._record_set:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        return self._zip.getinfo(self._prefix + name)

    def get_record(self, name):
        return self._zip.read(self._info(name))

    def get_storage_bytes(self, name, nbytes):
        info = self._info(name)
        if info.file_size < nbytes:
            raise RuntimeError(f"record {name} holds {info.file_size} bytes, but its storage needs {nbytes}")
        raw = numpy.empty(nbytes, dtype=numpy.uint8)
        with self._zip.open(info) as record:
            view, done = memoryview(raw), 0
            while done < nbytes:
                got = record.readinto(view[done:])
                if not got:
                    raise RuntimeError(f"record {name} ends early")
                done += got
        return raw

    def has_record(self, name):
        return name in self._record_set

    def get_all_records(self):
        return list(self._records)


class PackageImporter(Importer):
    """Loads a package's modules, pickles and resources hermetically: code comes from the
    archive, and only the modules the archive lists as extern (in `.data/extern_modules`)
    come from the loading environment.
    """

    modules: Dict[str, types.ModuleType]

    def __init__(self, file_or_buffer: Union[str, Path, BinaryIO],
                 module_allowed: Callable[[str], bool] = lambda module_name: True):
        """`file_or_buffer`: a path (to an archive, or to the directory of an unzipped one) or
        a readable, seekable binary file object. `module_allowed(name)` is asked about each
        extern module; a refused one raises ImportError."""
        if isinstance(file_or_buffer, (Path, str)):
            self.filename = str(file_or_buffer)
            if os.path.isdir(self.filename):
                self.zip_reader = DirectoryReader(self.filename)
            else:
                self.zip_reader = _ZipReader(self.filename)
        else:
            self.filename = "<binary>"
            self.zip_reader = _ZipReader(file_or_buffer)

        self.root = _PackageNode(None)
        self.modules = {}
        self.extern_modules = self._read_extern()
        for extern_module in self.extern_modules:
            if not module_allowed(extern_module):
                raise ImportError(f"package '{file_or_buffer}' needs the external module '{extern_module}' but that "
                                  "module has been disallowed")
            self._add_extern(extern_module)
        for fname in self.zip_reader.get_all_records():
            self._add_file(fname)

        self.patched_builtins = builtins.__dict__.copy()
        self.patched_builtins["__import__"] = self.__import__
        # Packaged code may `import torch_package_importer` to reach its importer.
        self.modules["torch_package_importer"] = self

        self._mangler = PackageMangler()
        # Set while load_pickle runs, for __reduce_package__ functions.
        self.storage_context: Any = None
        self.last_map_location = None
        self.Unpickler = lambda *args, **kwargs: PackageUnpickler(self, *args, **kwargs)

    def import_module(self, name: str, package=None):
        """The package's module `name` (loaded on first use, into `self.modules`). `package`
        is unused (importlib.import_module's signature). A name mangled by this importer is
        accepted too."""
        return self._gcd_import(self._mangler.demangle(name))

    def load_binary(self, package: str, resource: str) -> bytes:
        """The bytes of the resource `package/resource`."""
        return self.zip_reader.get_record(self._zipfile_path(package, resource))

    def load_text(self, package: str, resource: str, encoding: str = "utf-8", errors: str = "strict") -> str:
        """The resource `package/resource` decoded as text."""
        return self.load_binary(package, resource).decode(encoding, errors)

    def load_pickle(self, package: str, resource: str, map_location=None) -> Any:
        """Unpickles the resource `package/resource`; the classes and functions it names come
        from this package (import_module). Tensors get their storages from the package's
        `.data/` records, placed by `map_location` as in tessera.load."""
        pickle_file = self._zipfile_path(package, resource)
        restore_location = _restore_location(map_location)
        loaded_storages = {}
        loaded_reduces = {}

        def load_storage(storage_type, key, location, size):
            dtype = storage_type.dtype or _C.uint8
            nbytes = size * _C.empty(0, dtype=dtype).element_size()
            raw = self.zip_reader.get_storage_bytes(f".data/{key}.storage", nbytes)
            flat = _C.from_numpy(raw)
            storage = TypedStorage(flat.view(dtype) if dtype != _C.uint8 else flat, dtype)
            return restore_location(storage, location)

        def persistent_load(saved_id):
            assert isinstance(saved_id, tuple)
            typename = _maybe_decode_ascii(saved_id[0])
            data = saved_id[1:]
            if typename == "storage":
                storage_type, key, location, size = data
                if key not in loaded_storages:
                    loaded_storages[key] = load_storage(storage_type, key, _maybe_decode_ascii(location), size)
                return loaded_storages[key]
            if typename == "reduce_package":
                if len(data) == 2:  # the old form: rebuilt at every reference
                    func, args = data
                    return func(self, *args)
                reduce_id, func, args = data
                if reduce_id not in loaded_reduces:
                    loaded_reduces[reduce_id] = func(self, *args)
                return loaded_reduces[reduce_id]
            raise RuntimeError("Unknown typename for persistent_load, expected 'storage' or 'reduce_package' but "
                               f"got '{typename}'")

        unpickler = self.Unpickler(io.BytesIO(self.zip_reader.get_record(pickle_file)))
        unpickler.persistent_load = persistent_load
        with self._deserialization_context(map_location):
            return unpickler.load()

    @contextmanager
    def _deserialization_context(self, map_location):
        self.storage_context = {}
        self.last_map_location = map_location
        try:
            yield
        finally:
            self.storage_context = None
            self.last_map_location = None

    def id(self):
        """The name that tells this importer's modules apart, like `<torch_package_0>`."""
        return self._mangler.parent_name()

    def file_structure(self, *, include: "GlobPattern" = "**", exclude: "GlobPattern" = ()) -> Directory:
        """The archive's files (those matching `include` and not `exclude`, glob patterns over
        "/"-separated paths) as a Directory tree."""
        return _create_directory_from_file_list(self.filename, self.zip_reader.get_all_records(), include, exclude)

    def python_version(self):
        """The Python version the package was written with (e.g. '3.11.2'), or None when not
        recorded."""
        path = ".data/python_version"
        if not self.zip_reader.has_record(path):
            return None
        return self.zip_reader.get_record(path).decode("utf-8").strip()

    def _read_extern(self):
        return self.zip_reader.get_record(".data/extern_modules").decode("utf-8").splitlines(keepends=False)

    # ------------------------------------------------------------------ module loading

    def _make_module(self, name: str, filename: Optional[str], is_package: bool, parent: str):
        mangled_filename = self._mangler.mangle(filename) if filename else None
        spec = importlib.machinery.ModuleSpec(name, self, origin="<package_importer>", is_package=is_package)
        module = importlib.util.module_from_spec(spec)
        self.modules[name] = module
        module.__name__ = self._mangler.mangle(name)
        ns = module.__dict__
        ns.update(__spec__=spec, __loader__=self, __file__=mangled_filename, __cached__=None,
                  __builtins__=self.patched_builtins, __torch_package__=True)
        _package_imported_modules[module.__name__] = module
        # On the parent before the code runs, so `from . import sub` inside it works.
        self._install_on_parent(parent, name, module)
        if filename is not None:
            # Tracebacks and inspect find the source through linecache.
            linecache.lazycache(mangled_filename, ns)
            exec(self._compile_source(filename, mangled_filename), ns)
        return module

    def _load_module(self, name: str, parent: str):
        node: _PathNode = self.root
        for atom in name.split("."):
            if not isinstance(node, _PackageNode) or atom not in node.children:
                if name in IMPLICIT_IMPORT_ALLOWLIST:
                    module = self.modules[name] = importlib.import_module(name)
                    return module
                raise ModuleNotFoundError(
                    f'No module named "{name}" in self-contained archive "{self.filename}" and the module is also '
                    f"not in the list of allowed external modules: {self.extern_modules}", name=name)
            node = node.children[atom]
            if isinstance(node, _ExternNode):
                module = self.modules[name] = importlib.import_module(name)
                return module
        return self._make_module(name, node.source_file, isinstance(node, _PackageNode), parent)

    def _compile_source(self, fullpath: str, mangled_filename: str):
        source = _normalize_line_endings(self.zip_reader.get_record(fullpath))
        return compile(source, mangled_filename, "exec", dont_inherit=True)

    def get_source(self, module_name) -> str:
        """The source of a module of this package (linecache asks with its mangled name)."""
        module = self.import_module(demangle(module_name))
        return self.zip_reader.get_record(demangle(module.__file__)).decode("utf-8")

    def get_resource_reader(self, fullname):
        """importlib.resources' hook: a reader for the resources of package `fullname`."""
        try:
            package = self._get_package(fullname)
        except ImportError:
            return None
        if package.__loader__ is not self:
            return None
        return _PackageResourceReader(self, fullname)

    def _install_on_parent(self, parent: str, name: str, module: types.ModuleType):
        if not parent:
            return
        parent_module = self.modules[parent]
        if parent_module.__loader__ is self:
            setattr(parent_module, name.rpartition(".")[2], module)

    def _do_find_and_load(self, name):
        parent, _, child = name.rpartition(".")
        if parent:
            if parent not in self.modules:
                self._gcd_import(parent)
            if name in self.modules:  # importing the parent may have loaded it
                return self.modules[name]
            parent_module = self.modules[parent]
            if not hasattr(parent_module, "__path__"):
                if isinstance(parent_module.__loader__, importlib.machinery.ExtensionFileLoader):
                    if name not in self.extern_modules:
                        raise ModuleNotFoundError(
                            _ERR_MSG.format(name) + f"; {name!r} is a c extension module which was not externed. C "
                            "extension modules need to be externed by the PackageExporter in order to be used as we "
                            "do not support interning them.", name=name)
                    if not isinstance(parent_module.__dict__.get(child), types.ModuleType):
                        raise ModuleNotFoundError(
                            _ERR_MSG.format(name) + f"; {parent!r} is a c extension package which does not contain "
                            f"{name!r}.", name=name)
                else:
                    raise ModuleNotFoundError(_ERR_MSG.format(name) + f"; {parent!r} is not a package", name=name)
        module = self._load_module(name, parent)
        self._install_on_parent(parent, name, module)
        return module

    def _find_and_load(self, name):
        module = self.modules.get(name, _NEEDS_LOADING)
        if module is _NEEDS_LOADING:
            return self._do_find_and_load(name)
        if module is None:
            raise ModuleNotFoundError(f"import of {name} halted; None in sys.modules", name=name)
        # os and typing plant submodules in sys.modules that are not real importable files.
        if name == "os":
            self.modules["os.path"] = module.path
        elif name == "typing":
            for sub in ("io", "re"):
                if hasattr(module, sub):
                    self.modules[f"typing.{sub}"] = getattr(module, sub)
        return module

    def _gcd_import(self, name, package=None, level=0):
        _sanity_check(name, package, level)
        if level > 0:
            name = _resolve_name(name, package, level)
        return self._find_and_load(name)

    def _handle_fromlist(self, module, fromlist, *, recursive=False):
        """What `from module import fromlist...` needs: submodules named in the fromlist are
        imported (a missing one is ignored, as Python does)."""
        module_name = demangle(module.__name__)
        if not hasattr(module, "__path__"):
            return module
        for x in fromlist:
            if not isinstance(x, str):
                where = module_name + ".__all__" if recursive else "``from list''"
                raise TypeError(f"Item in {where} must be str, not {type(x).__name__}")
            if x == "*":
                if not recursive and hasattr(module, "__all__"):
                    self._handle_fromlist(module, module.__all__, recursive=True)
            elif not hasattr(module, x):
                from_name = f"{module_name}.{x}"
                try:
                    self._gcd_import(from_name)
                except ModuleNotFoundError as exc:
                    if exc.name == from_name and self.modules.get(from_name, _NEEDS_LOADING) is not None:
                        continue
                    raise
        return module

    def __import__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            module = self._gcd_import(name)
        else:
            package = _calc___package__(globals if globals is not None else {})
            module = self._gcd_import(name, package, level)
        if fromlist:
            return self._handle_fromlist(module, fromlist)
        # `import a.b.c` binds `a`: the module up to the first dot of `name`.
        if level == 0:
            return self._gcd_import(name.partition(".")[0])
        if not name:
            return module
        cut_off = len(name) - len(name.partition(".")[0])
        module_name = demangle(module.__name__)
        return self.modules[module_name[: len(module_name) - cut_off]]

    def _get_package(self, package):
        """The package module `package` (a name or a module); a non-package is a TypeError."""
        if hasattr(package, "__spec__"):
            if package.__spec__.submodule_search_locations is None:
                raise TypeError("{!r} is not a package".format(package.__spec__.name))
            return package
        module = self.import_module(package)
        if module.__spec__.submodule_search_locations is None:
            raise TypeError("{!r} is not a package".format(package))
        return module

    def _zipfile_path(self, package, resource=None):
        package = self._get_package(package)
        assert package.__loader__ is self
        path = demangle(package.__name__).replace(".", "/")
        if resource is None:
            return path
        return f"{path}/{_normalize_path(resource)}"

    def _get_or_create_package(self, atoms: List[str]) -> "Union[_PackageNode, _ExternNode]":
        node = self.root
        for i, atom in enumerate(atoms):
            child = node.children.get(atom)
            if child is None:
                child = node.children[atom] = _PackageNode(None)
            if isinstance(child, _ExternNode):
                return child
            if isinstance(child, _ModuleNode):
                raise ImportError(f"inconsistent module structure. module {'.'.join(atoms[:i])} is not a package, but "
                                  "has submodules")
            node = child
        return node

    def _add_file(self, filename: str):
        """Registers an archive file in the module tree (files under .data/ are not code)."""
        *prefix, last = filename.split("/")
        if len(prefix) > 1 and prefix[0] == ".data":
            return
        package = self._get_or_create_package(prefix)
        if isinstance(package, _ExternNode):
            raise ImportError(f"inconsistent module structure. package contains a module file {filename} that is a "
                              "subpackage of a module marked external.")
        if last == "__init__.py":
            package.source_file = filename
        elif last.endswith(".py"):
            package.children[last[: -len(".py")]] = _ModuleNode(filename)

    def _add_extern(self, extern_name: str):
        *prefix, last = extern_name.split(".")
        package = self._get_or_create_package(prefix)
        if isinstance(package, _ExternNode):
            return  # a shorter extern already covers it
        package.children[last] = _ExternNode()


def _maybe_decode_ascii(bytes_str):
    # Pickles from Python 2 may hold byte strings where text is expected.
    return bytes_str.decode("ascii") if isinstance(bytes_str, bytes) else bytes_str


_NEEDS_LOADING = object()
_ERR_MSG_PREFIX = "No module named "
_ERR_MSG = _ERR_MSG_PREFIX + "{!r}"


class _PathNode:
    pass


class _PackageNode(_PathNode):
    def __init__(self, source_file: Optional[str]):
        self.source_file = source_file
        self.children: Dict[str, _PathNode] = {}


class _ModuleNode(_PathNode):
    __slots__ = ["source_file"]

    def __init__(self, source_file: str):
        self.source_file = source_file


class _ExternNode(_PathNode):
    pass


# Every module any PackageImporter created, by mangled name.
_package_imported_modules: WeakValueDictionary = WeakValueDictionary()

# inspect.getfile looks classes' modules up in sys.modules only; teach it the packaged ones.
_orig_getfile = inspect.getfile


def _patched_getfile(object):
    if inspect.isclass(object) and object.__module__ in _package_imported_modules:
        return _package_imported_modules[object.__module__].__file__
    return _orig_getfile(object)


inspect.getfile = _patched_getfile


class _PackageResourceReader:
    """importlib.resources' view of one package's resources."""

    def __init__(self, importer, fullname):
        self.importer = importer
        self.fullname = fullname

    def open_resource(self, resource):
        return io.BytesIO(self.importer.load_binary(self.fullname, resource))

    def resource_path(self, resource):
        # Only an unzipped package has real files to point at.
        reader = self.importer.zip_reader
        relative = os.path.join(self.fullname, resource)
        if isinstance(reader, DirectoryReader) and reader.has_record(relative):
            return os.path.join(reader.directory, self.fullname, resource)
        raise FileNotFoundError

    def is_resource(self, name):
        return self.importer.zip_reader.has_record(self.importer._zipfile_path(self.fullname, name))

    def contents(self):
        base = Path(self.importer._zipfile_path(self.fullname))
        seen_dirs = set()
        for filename in self.importer.zip_reader.get_all_records():
            try:
                relative = Path(filename).relative_to(base)
            except ValueError:
                continue
            parent_name = relative.parent.name
            if not parent_name:
                yield relative.name
            elif parent_name not in seen_dirs:
                seen_dirs.add(parent_name)
                yield parent_name
