"""PackageImporter: loads the code, pickles and resources of a package written by
PackageExporter (tessera's or torch's).

Modules come from the archive only, except those the package lists as extern, which are
imported normally. Each importer has a namespace of its own: the modules it creates live
in `importer.modules` (not sys.modules), under mangled names (`<torch_package_N>.name`),
and the code inside sees an `__import__` that resolves through the importer.
"""
import builtins
import functools
import importlib
import importlib.machinery
import importlib.util
import inspect
import io
import linecache
import os.path
import types
import zipfile
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
    """Loads modules, pickles and resources out of a package in isolation: code is taken
    from the archive only, and the loading environment supplies just the modules listed in
    `.data/extern_modules`.
    """

    modules: Dict[str, types.ModuleType]

    def __init__(self, file_or_buffer: Union[str, Path, BinaryIO],
                 module_allowed: Callable[[str], bool] = lambda module_name: True):
        """`file_or_buffer` is an archive path, the path of an unpacked archive directory, or
        a readable and seekable binary stream. `module_allowed(name)` is consulted for each
        extern module; refusing one raises ImportError."""
        if not isinstance(file_or_buffer, (Path, str)):
            self.filename = "<binary>"
            self.zip_reader = _ZipReader(file_or_buffer)
        else:
            self.filename = os.fspath(file_or_buffer)
            opener = DirectoryReader if os.path.isdir(self.filename) else _ZipReader
            self.zip_reader = opener(self.filename)

        self._tree = _Pkg(None)
        self.modules = {}
        listed = self.zip_reader.get_record(".data/extern_modules").decode("utf-8")
        self.extern_modules = listed.splitlines(keepends=False)
        for ext in self.extern_modules:
            if module_allowed(ext):
                self._mark_extern(ext)
                continue
            raise ImportError(f"package '{file_or_buffer}' needs the external module '{ext}' but that "
                              "module has been disallowed")
        for record in self.zip_reader.get_all_records():
            self._register_record(record)

        # Builtins for packaged code: identical, except that imports go through us.
        builtins_for_code = dict(builtins.__dict__)
        builtins_for_code["__import__"] = self.__import__
        self.patched_builtins = builtins_for_code
        # `import torch_package_importer` inside packaged code yields this importer.
        self.modules["torch_package_importer"] = self

        self._names = PackageMangler()
        # Only set while load_pickle runs (for __reduce_package__ callbacks).
        self.storage_context = None
        self.last_map_location = None
        self.Unpickler = functools.partial(PackageUnpickler, self)

    def import_module(self, name: str, package=None):
        """Module `name` of this package, loaded on first request into `self.modules`.
        `package` is ignored (it mirrors importlib.import_module). Names mangled by this
        importer are accepted as well."""
        return self._import_abs(self._names.demangle(name))

    def load_binary(self, package: str, resource: str) -> bytes:
        """Raw bytes of the resource `package/resource`."""
        return self.zip_reader.get_record(self._record_of(package, resource))

    def load_text(self, package: str, resource: str, encoding: str = "utf-8", errors: str = "strict") -> str:
        """The resource `package/resource`, decoded."""
        return self.load_binary(package, resource).decode(encoding, errors)

    def load_pickle(self, package: str, resource: str, map_location=None) -> Any:
        """Unpickles the resource `package/resource`. Classes and functions it names are
        taken from this package (see import_module); tensor data comes from the `.data/`
        records and is placed according to `map_location`, as tessera.load does."""
        record = self._record_of(package, resource)
        place = _restore_location(map_location)
        storages: Dict[Any, Any] = {}
        rebuilt: Dict[Any, Any] = {}

        def read_storage(kind, key, location, count):
            dtype = kind.dtype or _C.uint8
            data_dtype = kind.data_dtype or _C.uint8  # a quantized storage's records hold integers
            itemsize = _C.empty(0, dtype=data_dtype).element_size()
            raw = _C.from_numpy(self.zip_reader.get_storage_bytes(f".data/{key}.storage", count * itemsize))
            typed = raw if data_dtype == _C.uint8 else raw.view(data_dtype)
            return place(TypedStorage(typed, dtype), location)

        def resolve(pid):
            assert isinstance(pid, tuple)
            tag, *rest = pid
            tag = _as_text(tag)
            if tag == "storage":
                kind, key, location, count = rest
                if key not in storages:
                    storages[key] = read_storage(kind, key, _as_text(location), count)
                return storages[key]
            if tag == "reduce_package":
                if len(rest) == 2:  # older layout without an id: rebuilt every time
                    fn, fn_args = rest
                    return fn(self, *fn_args)
                ident, fn, fn_args = rest
                if ident not in rebuilt:
                    rebuilt[ident] = fn(self, *fn_args)
                return rebuilt[ident]
            raise RuntimeError("Unknown typename for persistent_load, expected 'storage' or 'reduce_package' but "
                               f"got '{tag}'")

        reader = self.Unpickler(io.BytesIO(self.zip_reader.get_record(record)))
        reader.persistent_load = resolve
        self.storage_context, self.last_map_location = {}, map_location
        try:
            return reader.load()
        finally:
            self.storage_context, self.last_map_location = None, None

    def id(self):
        """The prefix that sets this importer's modules apart, e.g. `<torch_package_0>`."""
        return self._names.parent_name()

    def file_structure(self, *, include: "GlobPattern" = "**", exclude: "GlobPattern" = ()) -> Directory:
        """A Directory tree of the archive's files matching `include` but not `exclude`
        (glob patterns over "/"-separated paths)."""
        return _create_directory_from_file_list(self.filename, self.zip_reader.get_all_records(), include, exclude)

    def python_version(self):
        """Python version that wrote the package (like '3.11.2'); None if not recorded."""
        record = ".data/python_version"
        if self.zip_reader.has_record(record):
            return self.zip_reader.get_record(record).decode("utf-8").strip()
        return None

    # ---------------------------------------------------------------- loading modules

    def _instantiate(self, name: str, source_record: Optional[str], is_package: bool, parent: str):
        fake_path = None if not source_record else self._names.mangle(source_record)
        spec = importlib.machinery.ModuleSpec(name, self, origin="<package_importer>", is_package=is_package)
        mod = importlib.util.module_from_spec(spec)
        self.modules[name] = mod
        mod.__name__ = self._names.mangle(name)
        ns = mod.__dict__
        ns.update(__spec__=spec, __loader__=self, __file__=fake_path, __cached__=None,
                  __builtins__=self.patched_builtins, __torch_package__=True)
        _live_modules[mod.__name__] = mod
        # Bind on the parent before running the body, so `from . import sub` works inside.
        self._bind_to_parent(parent, name, mod)
        if source_record is not None:
            # linecache lets tracebacks and inspect show the packaged source.
            linecache.lazycache(fake_path, ns)
            exec(self._compiled(source_record, fake_path), ns)
        return mod

    def _from_outside(self, name: str):
        mod = importlib.import_module(name)
        self.modules[name] = mod
        return mod

    def _locate_and_load(self, name: str, parent: str):
        where: _Node = self._tree
        for part in name.split("."):
            child = where.children.get(part) if isinstance(where, _Pkg) else None
            if child is None:
                if name in IMPLICIT_IMPORT_ALLOWLIST:  # allowed without being extern
                    return self._from_outside(name)
                raise ModuleNotFoundError(
                    f'No module named "{name}" in self-contained archive "{self.filename}" and the module is also '
                    f"not in the list of allowed external modules: {self.extern_modules}", name=name)
            if isinstance(child, _Extern):
                return self._from_outside(name)
            where = child
        return self._instantiate(name, where.source_file, isinstance(where, _Pkg), parent)

    def _compiled(self, record: str, shown_as: str):
        text = _normalize_line_endings(self.zip_reader.get_record(record))
        return compile(text, shown_as, "exec", dont_inherit=True)

    def get_source(self, module_name) -> str:
        """Source code of one of this package's modules (linecache passes mangled names)."""
        mod = self.import_module(demangle(module_name))
        raw = self.zip_reader.get_record(demangle(mod.__file__))
        return raw.decode("utf-8")

    def get_resource_reader(self, fullname):
        """Hook for importlib.resources: a reader over the resources of package `fullname`."""
        try:
            pkg = self._package_module(fullname)
        except ImportError:
            return None
        return _ResourceReader(self, fullname) if pkg.__loader__ is self else None

    def _bind_to_parent(self, parent: str, name: str, mod: types.ModuleType):
        if parent:
            owner = self.modules[parent]
            if owner.__loader__ is self:
                setattr(owner, name.rsplit(".", 1)[-1], mod)

    def _check_parent_can_hold(self, name, parent, child):
        owner = self.modules[parent]
        if hasattr(owner, "__path__"):
            return
        if not isinstance(owner.__loader__, importlib.machinery.ExtensionFileLoader):
            raise ModuleNotFoundError(_no_module(name) + f"; {parent!r} is not a package", name=name)
        if name not in self.extern_modules:
            raise ModuleNotFoundError(
                _no_module(name) + f"; {name!r} is a c extension module which was not externed. C "
                "extension modules need to be externed by the PackageExporter in order to be used as we "
                "do not support interning them.", name=name)
        if not isinstance(owner.__dict__.get(child), types.ModuleType):
            raise ModuleNotFoundError(
                _no_module(name) + f"; {parent!r} is a c extension package which does not contain "
                f"{name!r}.", name=name)

    def _load_new(self, name):
        parent, _dot, child = name.rpartition(".")
        if parent:
            if parent not in self.modules:
                self._import_abs(parent)
            if name in self.modules:  # the parent's own code may have imported it already
                return self.modules[name]
            self._check_parent_can_hold(name, parent, child)
        mod = self._locate_and_load(name, parent)
        self._bind_to_parent(parent, name, mod)
        return mod

    def _cached_or_load(self, name):
        if name not in self.modules:
            return self._load_new(name)
        mod = self.modules[name]
        if mod is None:
            raise ModuleNotFoundError(f"import of {name} halted; None in sys.modules", name=name)
        # os and typing expose submodules through sys.modules that have no file of their own.
        if name == "os":
            self.modules["os.path"] = mod.path
        elif name == "typing":
            for attr in ("io", "re"):
                if hasattr(mod, attr):
                    self.modules["typing." + attr] = getattr(mod, attr)
        return mod

    def _import_abs(self, name, package=None, level=0):
        _sanity_check(name, package, level)
        target = _resolve_name(name, package, level) if level > 0 else name
        return self._cached_or_load(target)

    def _import_from_list(self, mod, names, *, recursive=False):
        """Imports the submodules that `from mod import names...` asks for; one that does
        not exist is skipped, as the interpreter does."""
        if not hasattr(mod, "__path__"):
            return mod
        base = demangle(mod.__name__)
        for item in names:
            if not isinstance(item, str):
                source = f"{base}.__all__" if recursive else "``from list''"
                raise TypeError(f"Item in {source} must be str, not {type(item).__name__}")
            if item == "*":
                if not recursive and hasattr(mod, "__all__"):
                    self._import_from_list(mod, mod.__all__, recursive=True)
                continue
            if hasattr(mod, item):
                continue
            full = f"{base}.{item}"
            try:
                self._import_abs(full)
            except ModuleNotFoundError as err:
                missing_quietly = err.name == full and self.modules.get(full, _UNSET) is not None
                if not missing_quietly:
                    raise
        return mod

    def __import__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            anchor = _calc___package__({} if globals is None else globals)
            mod = self._import_abs(name, anchor, level)
        else:
            mod = self._import_abs(name)
        if fromlist:
            return self._import_from_list(mod, fromlist)
        head = name.split(".", 1)[0]
        # Plain `import a.b.c` evaluates to the top package `a`.
        if not level:
            return self._import_abs(head)
        if not name:
            return mod
        full = demangle(mod.__name__)
        drop = len(name) - len(head)
        return self.modules[full[:len(full) - drop]]

    def _package_module(self, package):
        """Module object of `package` (a name or a module); TypeError if it is no package."""
        if hasattr(package, "__spec__"):
            mod, label = package, package.__spec__.name
        else:
            mod, label = self.import_module(package), package
        if mod.__spec__.submodule_search_locations is None:
            raise TypeError(f"{label!r} is not a package")
        return mod

    def _record_of(self, package, resource=None):
        mod = self._package_module(package)
        assert mod.__loader__ is self
        folder = demangle(mod.__name__).replace(".", "/")
        return folder if resource is None else f"{folder}/{_normalize_path(resource)}"

    def _walk_to_package(self, parts: List[str]) -> "Union[_Pkg, _Extern]":
        here = self._tree
        for depth, part in enumerate(parts):
            nxt = here.children.get(part)
            if nxt is None:
                nxt = _Pkg(None)
                here.children[part] = nxt
            if isinstance(nxt, _Extern):
                return nxt
            if isinstance(nxt, _Mod):
                raise ImportError(f"inconsistent module structure. module {'.'.join(parts[:depth])} is not a package, "
                                  "but has submodules")
            here = nxt
        return here

    def _register_record(self, record: str):
        """Adds one archive file to the module tree; `.data/` holds no code."""
        folders = record.split("/")
        leaf = folders.pop()
        if folders[:1] == [".data"] and len(folders) > 1:
            return
        owner = self._walk_to_package(folders)
        if isinstance(owner, _Extern):
            raise ImportError(f"inconsistent module structure. package contains a module file {record} that is a "
                              "subpackage of a module marked external.")
        if leaf == "__init__.py":
            owner.source_file = record
        elif leaf.endswith(".py"):
            owner.children[leaf[:-3]] = _Mod(record)

    def _mark_extern(self, dotted: str):
        parts = dotted.split(".")
        owner = self._walk_to_package(parts[:-1])
        if not isinstance(owner, _Extern):  # otherwise an enclosing extern covers it
            owner.children[parts[-1]] = _Extern()


def _as_text(value):
    # Python 2 pickles can carry bytes where str is expected.
    return value.decode("ascii") if isinstance(value, bytes) else value


_UNSET = object()


def _no_module(name):
    return f"No module named {name!r}"


class _Node:
    """A position in the archive's module tree."""


class _Pkg(_Node):
    """A package: its `__init__.py` record (if any) and the nodes below it."""

    def __init__(self, init_record: Optional[str]):
        self.source_file = init_record
        self.children: Dict[str, _Node] = {}


class _Mod(_Node):
    """A plain module, backed by one .py record."""

    __slots__ = ("source_file",)

    def __init__(self, record: str):
        self.source_file = record


class _Extern(_Node):
    """A module the loading environment provides."""


# Mangled name -> module, over all PackageImporters (entries vanish with the module).
_live_modules: "WeakValueDictionary[str, types.ModuleType]" = WeakValueDictionary()

# inspect.getfile only consults sys.modules for a class's module; extend it to ours.
_stock_getfile = inspect.getfile


def _getfile_with_packages(object):
    if inspect.isclass(object):
        owner = _live_modules.get(object.__module__)
        if owner is not None:
            return owner.__file__
    return _stock_getfile(object)


inspect.getfile = _getfile_with_packages


class _ResourceReader:
    """What importlib.resources sees of one package's resources."""

    def __init__(self, loader, package_name):
        self._loader = loader
        self._package_name = package_name

    def open_resource(self, resource):
        return io.BytesIO(self._loader.load_binary(self._package_name, resource))

    def resource_path(self, resource):
        # Real files exist only when the package was unpacked into a directory.
        store = self._loader.zip_reader
        if isinstance(store, DirectoryReader) and store.has_record(os.path.join(self._package_name, resource)):
            return os.path.join(store.directory, self._package_name, resource)
        raise FileNotFoundError

    def is_resource(self, name):
        return self._loader.zip_reader.has_record(self._loader._record_of(self._package_name, name))

    def contents(self):
        top = Path(self._loader._record_of(self._package_name))
        dirs_seen = set()
        for record in self._loader.zip_reader.get_all_records():
            try:
                rel = Path(record).relative_to(top)
            except ValueError:
                continue
            folder = rel.parent.name
            if not folder:
                yield rel.name
            elif folder not in dirs_seen:
                dirs_seen.add(folder)
                yield folder
