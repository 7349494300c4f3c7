"""PackageExporter: writes a self-contained package (a zip archive in torch.package's
layout) of Python source, pickled objects and resources.

Layout, under the archive's top folder (the file's name without extension, or "archive"
for a file object): the modules' source as `a/b.py` or `a/b/__init__.py`, resources as
`package/path/resource`, each storage of the pickled tensors as `.data/<id>.storage`
(raw bytes, like torch.package), and `.data/extern_modules`, `.data/python_version`,
`.data/version`. Records are stored uncompressed and 64-byte aligned, as torch's writer
does, so torch.package can read archives of plain Python objects, and of tensors too.

Every module the saved code or pickles need is classified by the patterns given with
intern / extern / mock / deny (the first matching pattern, in the order they were given,
wins): interned modules are copied into the package (and their own imports followed),
externed ones are imported from the loading environment, mocked ones are replaced by a
stub, denied ones are an error. Standard-library modules (but `sys` and `io`), tessera
itself, and torch (whose names tessera's tensor format uses) are externed implicitly.
Problems are collected and raised together at close() as a PackagingError.
"""
import collections
import importlib.machinery
import io
import linecache
import pickletools
import platform
import types
import zipfile
from collections import OrderedDict, defaultdict
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, List, Optional, Sequence, Set, Union

from .. import _torch_pickle
from ..nn.modules.module import RemovableHandle
from ..serialization import _archive_name, _write_record
from ..storage import TypedStorage
from ._digraph import DiGraph
from ._importlib import _normalize_path
from ._mangling import demangle, is_mangled
from ._package_pickler import create_pickler
from ._stdlib import is_stdlib_module
from .find_file_dependencies import find_files_source_depends_on
from .glob_group import GlobGroup, GlobPattern
from .importer import Importer, OrderedImporter, sys_importer

__all__ = ["PackagingErrorReason", "EmptyMatchError", "PackagingError", "PackageExporter"]

ActionHook = Callable[["PackageExporter", str], None]


class _ModuleProviderAction(Enum):
    """What the exporter does with a module (see PackageExporter.intern and friends)."""

    INTERN = 1
    EXTERN = 2
    MOCK = 3
    DENY = 4
    # A `_mock` module met while re-packaging a package that mocked something: the exporter
    # writes its own `_mock` once instead.
    REPACKAGED_MOCK_MODULE = 5
    # `torch_package_importer`, the module a PackageImporter gives its code: never exported.
    SKIP = 6


class PackagingErrorReason(Enum):
    """Why a module could not be packaged; the value is the text PackagingError shows."""

    def __repr__(self):
        return "<%s.%s>" % (self.__class__.__name__, self.name)

    IS_EXTENSION_MODULE = "Module is a C extension module. torch.package supports Python modules only."
    NO_DUNDER_FILE = "Module had no __file__ defined."
    SOURCE_FILE_NOT_FOUND = "Module had a __file__, but we could not find it in your filesystem."
    DEPENDENCY_RESOLUTION_FAILED = "Dependency resolution failed."
    NO_ACTION = "Module did not match against any action pattern. Extern, mock, or intern it."
    DENIED = "Module was denied by a pattern."
    MOCKED_BUT_STILL_USED = ("Module was mocked out, but is still being used in the package. Please intern or extern "
                             "the mocked modules if objects are supposed to be in the package.")


class _PatternInfo:
    """A pattern's action, its allow_empty flag, and whether it has matched a module yet."""

    def __init__(self, action, allow_empty):
        self.action = action
        self.allow_empty = allow_empty
        self.was_matched = False

    def __repr__(self):
        return (f"_PatternInfo(action={self.action}, allow_empty={self.allow_empty}, "
                f"was_matched={self.was_matched})")

    def __eq__(self, other):
        if not isinstance(other, _PatternInfo):
            return NotImplemented
        return (self.action, self.allow_empty, self.was_matched) == (other.action, other.allow_empty,
                                                                      other.was_matched)


class EmptyMatchError(Exception):
    """An extern, mock or intern pattern given with allow_empty=False matched no module."""
    pass


class PackagingError(Exception):
    """The problems found while exporting, all at once, grouped by reason. The dependency
    graph is kept as `dependency_graph`."""

    def __init__(self, dependency_graph: DiGraph):
        by_reason: Dict[PackagingErrorReason, List[str]] = defaultdict(list)
        for module_name, attrs in dependency_graph.nodes.items():
            error = attrs.get("error")
            if error is None:
                continue
            if error == PackagingErrorReason.NO_ACTION:
                assert "action" not in attrs
            by_reason[error].append(module_name)

        lines = [""]
        for reason, module_names in by_reason.items():
            lines.append(f"* {reason.value}")
            for module_name in module_names:
                lines.append(f"    {module_name}")
                context = dependency_graph.nodes[module_name].get("error_context")
                if context is not None:
                    lines.append(f"      Context: {context}")
        self.dependency_graph = dependency_graph
        super().__init__("\n".join(lines) + "\n")


class _ArchiveWriter:
    """Writes the records of one archive into a zip, the way torch's file writer lays them
    out (all under one top folder, uncompressed, 64-byte aligned)."""

    def __init__(self, f):
        if isinstance(f, str):
            self._own_file = open(f, "wb")
            fileobj, self.archive = self._own_file, _archive_name(f)
        else:
            self._own_file = None
            fileobj, self.archive = f, "archive"
        self.zip = zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True)

    def write_record(self, name, data):
        _write_record(self.zip, f"{self.archive}/{name}", data)

    def close(self):
        if self.zip is None:
            return
        try:
            self.zip.close()
        finally:
            self.zip = None
            if self._own_file is not None:
                self._own_file.close()


class PackageExporter:
    """Writes a package: source code, pickled objects (with their tensors) and resources,
    in a zip archive that PackageImporter (tessera's or torch's) loads hermetically.

    Code is copied file by file from its source. When code or pickles are added, the
    modules they depend on are found (import statements of the source; the globals of the
    pickles) and handled by the patterns given with :meth:`intern`, :meth:`extern`,
    :meth:`mock` and :meth:`deny`. The file `.data/extern_modules` lists the modules the
    package expects the loading environment to provide.

    Use it as a context manager, or call :meth:`close` to finish the archive.
    """

    importer: Importer

    def __init__(self, f: Union[str, Path, BinaryIO], importer: Union[Importer, Sequence[Importer]] = sys_importer):
        """`f`: the path to write, or a writable binary file object. `importer`: where modules
        and the names of pickled objects are looked up; a sequence of importers is tried in
        order (an OrderedImporter)."""
        if isinstance(f, (Path, str)):
            f = str(f)
            self.buffer: Optional[BinaryIO] = None
        else:
            self.buffer = f
        self.zip_file = _ArchiveWriter(f)
        self._written_files: Set[str] = set()

        self.serialized_reduces: Dict[int, Any] = {}
        # Nodes are module names (and '<package.resource>' for pickles); an edge u -> v means
        # u depends on v; the attributes say how to write each node.
        self.dependency_graph = DiGraph()
        # The storages of the pickled tensors, shared by all pickles of this package.
        self.storage_context = _torch_pickle.StorageTable()
        self._storages_written: Set[str] = set()

        self._extern_hooks: OrderedDict = OrderedDict()
        self._mock_hooks: OrderedDict = OrderedDict()
        self._intern_hooks: OrderedDict = OrderedDict()

        if isinstance(importer, Importer):
            self.importer = importer
        else:
            if not isinstance(importer, collections.abc.Sequence):
                raise TypeError("importer arg should be an Importer or a sequence of Importers, "
                                f"got {type(importer)} instead.")
            self.importer = OrderedImporter(*importer)

        self.patterns: Dict[GlobGroup, _PatternInfo] = {}
        self._unique_id = 0

    # ------------------------------------------------------------------ adding source

    def save_source_file(self, module_name: str, file_or_directory: str, dependencies=True):
        """Saves the file `file_or_directory` as the source of `module_name`; for a
        directory, every .py file under it, as submodules of `module_name` (an `__init__.py`
        making a package)."""
        path = Path(file_or_directory)
        if not path.is_dir():
            self.save_source_string(module_name, _read_file(file_or_directory), path.name == "__init__.py",
                                    dependencies)
            return
        prefix = module_name.replace(".", "/")
        # All files are registered before any dependency is resolved, so none of them is
        # looked up elsewhere.
        pending = []
        for filename in path.glob("**/*.py"):
            archivename = prefix + "/" + filename.relative_to(path).as_posix()
            is_package = filename.name == "__init__.py"
            stem = archivename[: -len("/__init__.py")] if is_package else archivename[: -len(".py")]
            pending.append((stem.replace("/", "."), _read_file(str(filename)), is_package, dependencies))
        for args in pending:
            self.save_source_string(*args)

    def get_unique_id(self) -> str:
        """An id this exporter never hands out again."""
        uid = str(self._unique_id)
        self._unique_id += 1
        return uid

    def _get_dependencies(self, src: str, module_name: str, is_package: bool) -> List[str]:
        """The modules `src` (the source of `module_name`) imports that exist, unique, in
        order. `from pack import sub` counts as a dependency on `pack.sub` alone when `sub`
        is a submodule, else on `pack`."""
        package_name = module_name if is_package else module_name.rsplit(".", maxsplit=1)[0]
        try:
            dep_pairs = find_files_source_depends_on(src, package_name)
        except Exception as e:
            self.dependency_graph.add_node(module_name, error=PackagingErrorReason.DEPENDENCY_RESOLUTION_FAILED,
                                           error_context=str(e))
            return []

        dependencies = {}
        for dep_module_name, dep_module_obj in dep_pairs:
            if dep_module_obj is not None:
                possible_submodule = f"{dep_module_name}.{dep_module_obj}"
                if self._module_exists(possible_submodule):
                    dependencies[possible_submodule] = True
                    continue
            if self._module_exists(dep_module_name):
                dependencies[dep_module_name] = True
        return list(dependencies)

    def save_source_string(self, module_name: str, src: str, is_package: bool = False, dependencies: bool = True):
        """Saves `src` as the source of `module_name` (a package when `is_package`, so it may
        hold submodules and resources); with `dependencies`, the modules it imports are
        handled by the patterns."""
        self.dependency_graph.add_node(module_name, source=src, is_package=is_package, provided=True,
                                       action=_ModuleProviderAction.INTERN)
        if dependencies:
            self._add_dependencies_of(module_name, src, is_package)

    def _add_dependencies_of(self, module_name, src, is_package):
        for dep in self._get_dependencies(src, module_name, is_package):
            self.dependency_graph.add_edge(module_name, dep)
            self.add_dependency(dep)

    def _write_source_string(self, module_name: str, src: str, is_package: bool = False):
        suffix = "/__init__.py" if is_package else ".py"
        self._write(module_name.replace(".", "/") + suffix, src)

    def _import_module(self, module_name: str):
        try:
            return self.importer.import_module(module_name)
        except ModuleNotFoundError:
            if not is_mangled(module_name):
                raise
            raise ModuleNotFoundError(f"Module not found: '{module_name}'. Make sure the PackageImporter that "
                                      "created this module is present in `self.importer`") from None

    def _module_exists(self, module_name: str) -> bool:
        try:
            self._import_module(module_name)
        except Exception:
            return False
        return True

    def _get_source_of_module(self, module: types.ModuleType) -> Optional[str]:
        filename = getattr(module, "__file__", None)
        if filename is None or not filename.endswith(".py"):
            return None
        loader = module.__dict__.get("__loader__")
        if module.__dict__.get("__torch_package__") and hasattr(loader, "get_source"):
            # A module of a loaded package: from its importer (linecache is keyed by file
            # name, which torch.package's importers may also use for their own modules).
            return loader.get_source(module.__name__)
        lines = linecache.getlines(filename, module.__dict__)
        return "".join(lines) if lines is not None else None

    def add_dependency(self, module_name: str, dependencies=True):
        """Puts `module_name` in the dependency graph with the action of the first pattern it
        matches (or implicitly extern, or a NO_ACTION error); an interned module brings its
        own dependencies."""
        node = self.dependency_graph.nodes.get(module_name)
        if node is not None and node.get("provided") is True:
            return
        if module_name == "torch_package_importer":
            self.dependency_graph.add_node(module_name, action=_ModuleProviderAction.SKIP, provided=True)
            return
        if module_name == "_mock":
            self.dependency_graph.add_node(module_name, action=_ModuleProviderAction.REPACKAGED_MOCK_MODULE,
                                           provided=True)
            return
        if self._can_implicitly_extern(module_name):
            self.dependency_graph.add_node(module_name, action=_ModuleProviderAction.EXTERN, provided=True)
            return
        for pattern, info in self.patterns.items():
            if not pattern.matches(module_name):
                continue
            info.was_matched = True
            self.dependency_graph.add_node(module_name, action=info.action, provided=True)
            if info.action == _ModuleProviderAction.DENY:
                self.dependency_graph.add_node(module_name, error=PackagingErrorReason.DENIED)
            elif info.action == _ModuleProviderAction.INTERN:
                self._intern_module(module_name, dependencies)
            return
        self.dependency_graph.add_node(module_name, error=PackagingErrorReason.NO_ACTION)

    def save_module(self, module_name: str, dependencies=True):
        """Saves the source of the module `module_name`, found with the importer (from its
        `__file__`), into the package; with `dependencies`, its imports are followed."""
        if not isinstance(module_name, str):
            raise TypeError("save_module() expects a string input, did you perhaps mean to pass `__name__`?")
        self._intern_module(module_name, dependencies)

    def _intern_module(self, module_name: str, dependencies: bool):
        module_obj = self._import_module(module_name)
        # The import worked, so a mangled name was understood by some importer: the package
        # stores the real name.
        module_name = demangle(module_name)
        is_package = hasattr(module_obj, "__path__")
        source = self._get_source_of_module(module_obj)
        if source is None:
            filename = getattr(module_obj, "__file__", None)
            context = None
            if filename is None:
                reason = PackagingErrorReason.NO_DUNDER_FILE
            elif filename.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                reason = PackagingErrorReason.IS_EXTENSION_MODULE
            else:
                reason = PackagingErrorReason.SOURCE_FILE_NOT_FOUND
                context = f"filename: {filename}"
            self.dependency_graph.add_node(module_name, action=_ModuleProviderAction.INTERN, is_package=is_package,
                                           error=reason, error_context=context, provided=True)
            return
        self.dependency_graph.add_node(module_name, action=_ModuleProviderAction.INTERN, is_package=is_package,
                                       source=source, provided=True)
        if dependencies:
            self._add_dependencies_of(module_name, source, is_package)

    # ------------------------------------------------------------------ pickles and resources

    def save_pickle(self, package: str, resource: str, obj: Any, dependencies: bool = True,
                    pickle_protocol: int = 3):
        """Pickles `obj` into the package as `package/resource` (what torch.save does, but
        inside the archive); its tensors' storages become `.data/` records. With
        `dependencies`, the modules of the pickled objects' classes and functions are
        handled by the patterns. Only pickle protocols 3 and 4 are supported."""
        assert pickle_protocol in (3, 4), "torch.package only supports pickle protocols 3 and 4"

        filename = self._filename(package, resource)
        data_buf = io.BytesIO()
        pickler = create_pickler(data_buf, self.importer, protocol=pickle_protocol,
                                 storage_table=self.storage_context)
        pickler.persistent_id = self._persistent_id
        pickler.dump(obj)
        data_value = data_buf.getvalue()

        name_in_dependency_graph = f"<{package}.{resource}>"
        self.dependency_graph.add_node(name_in_dependency_graph, action=_ModuleProviderAction.INTERN,
                                       provided=True, is_pickle=True)
        if dependencies:
            globals_used = _globals_of_pickle(data_value)
            mocked_modules = defaultdict(list)  # module -> names the pickle takes from it
            for module, field in globals_used:
                if self._can_implicitly_extern(module):
                    continue
                for pattern, info in self.patterns.items():
                    if pattern.matches(module):  # the first matching pattern decides
                        if info.action == _ModuleProviderAction.MOCK:
                            mocked_modules[module].append(field)
                        break
            for module_name in dict.fromkeys(module for module, _ in globals_used):
                self.dependency_graph.add_edge(name_in_dependency_graph, module_name)
                if module_name in mocked_modules:
                    fields = mocked_modules[module_name]
                    self.dependency_graph.add_node(
                        module_name, action=_ModuleProviderAction.MOCK,
                        error=PackagingErrorReason.MOCKED_BUT_STILL_USED,
                        error_context=f"Object(s) '{fields}' from module `{module_name}` was mocked out during "
                                      f"packaging but is being used in resource - `{resource}` in package "
                                      f"`{package}`. ",
                        provided=True)
                else:
                    self.add_dependency(module_name)

        self._write(filename, data_value)

    def save_text(self, package: str, resource: str, text: str):
        """Saves `text` (utf-8) into the package as `package/resource`."""
        return self.save_binary(package, resource, text.encode("utf-8"))

    def save_binary(self, package, resource, binary: bytes):
        """Saves the bytes `binary` into the package as `package/resource`."""
        self._write(self._filename(package, resource), binary)

    def _persistent_id(self, obj):
        ref = None
        if isinstance(obj, TypedStorage):
            ref = self.storage_context.ref_for(obj._tensor)
        elif type(obj) is _torch_pickle.StorageRef:
            ref = obj
        if ref is not None:
            if ref.key not in self._storages_written:
                self._storages_written.add(ref.key)
                flat = ref.flat if ref.flat.device.type == "cpu" else ref.flat.to("cpu")
                raw = flat.contiguous().view(_torch_pickle._C.uint8).numpy() if flat.numel() else b""
                self.zip_file.write_record(f".data/{ref.key}.storage", raw)
            return ("storage", ref.storage_class, int(ref.key), ref.location, ref.numel)

        if hasattr(obj, "__reduce_package__"):
            if self.serialized_reduces.get(id(obj)) is None:
                self.serialized_reduces[id(obj)] = ("reduce_package", id(obj), *obj.__reduce_package__(self))
            return self.serialized_reduces[id(obj)]
        return None

    # ------------------------------------------------------------------ hooks and patterns

    def _register_hook(self, hooks, hook):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_extern_hook(self, hook: ActionHook) -> RemovableHandle:
        """Calls `hook(exporter, module_name)` for each externed module, at close(); returns
        a handle whose remove() unregisters it."""
        return self._register_hook(self._extern_hooks, hook)

    def register_mock_hook(self, hook: ActionHook) -> RemovableHandle:
        """Calls `hook(exporter, module_name)` for each mocked module, at close()."""
        return self._register_hook(self._mock_hooks, hook)

    def register_intern_hook(self, hook: ActionHook) -> RemovableHandle:
        """Calls `hook(exporter, module_name)` for each interned module, at close()."""
        return self._register_hook(self._intern_hooks, hook)

    def intern(self, include: "GlobPattern", *, exclude: "GlobPattern" = (), allow_empty: bool = True):
        """Modules matching `include` (and not `exclude`) are copied into the package, and
        their dependencies followed. With allow_empty=False, close() fails unless some
        module matched."""
        self.patterns[GlobGroup(include, exclude=exclude)] = _PatternInfo(_ModuleProviderAction.INTERN,
                                                                          allow_empty)

    def mock(self, include: "GlobPattern", *, exclude: "GlobPattern" = (), allow_empty: bool = True):
        """Modules matching `include` (and not `exclude`) are replaced by a stub module whose
        every attribute is a MockedObject, which fails when used. Patterns are glob-like over
        dotted names: `*` matches within one name segment, `**` any number of segments (so
        'torch.**' is torch and all its submodules, 'torch.*' only its direct children).
        With allow_empty=False, close() fails unless some module matched."""
        self.patterns[GlobGroup(include, exclude=exclude)] = _PatternInfo(_ModuleProviderAction.MOCK, allow_empty)

    def extern(self, include: "GlobPattern", *, exclude: "GlobPattern" = (), allow_empty: bool = True):
        """Modules matching `include` (and not `exclude`) are not packaged: the loading
        environment imports them. With allow_empty=False, close() fails unless some module
        matched."""
        self.patterns[GlobGroup(include, exclude=exclude)] = _PatternInfo(_ModuleProviderAction.EXTERN,
                                                                          allow_empty)

    def deny(self, include: "GlobPattern", *, exclude: "GlobPattern" = ()):
        """A dependency on a module matching `include` (and not `exclude`) is an error."""
        self.patterns[GlobGroup(include, exclude=exclude)] = _PatternInfo(_ModuleProviderAction.DENY,
                                                                          allow_empty=True)

    # ------------------------------------------------------------------ finishing

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None:
            # Leave a valid (if incomplete) archive and let the exception go on.
            self._finalize_zip()
            return
        self.close()

    def _write(self, filename, str_or_bytes):
        if filename in self._written_files:
            raise AssertionError(f"Tried to write file '{filename}', but it already exists in this archive. "
                                 "Please file a bug.")
        self._written_files.add(filename)
        if is_mangled(filename):
            raise AssertionError(f"Tried to save a torch.package'd module as '{filename}'. "
                                 "Directly saving torch.package'd modules is not allowed.")
        if isinstance(str_or_bytes, str):
            str_or_bytes = str_or_bytes.encode("utf-8")
        self.zip_file.write_record(filename, bytes(str_or_bytes))

    def _validate_dependency_graph(self):
        if any("error" in attrs for attrs in self.dependency_graph.nodes.values()):
            raise PackagingError(self.dependency_graph)
        for pattern, info in self.patterns.items():
            if not info.allow_empty and not info.was_matched:
                raise EmptyMatchError(f"Exporter did not match any modules to {pattern}, which was marked as "
                                      "allow_empty=False")

    def _write_mock_file(self):
        if "_mock.py" not in self._written_files:
            mock_file = str(Path(__file__).parent / "_mock.py")
            self._write_source_string("_mock", _read_file(mock_file), is_package=False)

    def _execute_dependency_graph(self):
        """Writes the modules of the (validated) dependency graph into the archive."""
        self._validate_dependency_graph()

        extern_modules = []
        for module_name, attrs in self.dependency_graph.nodes.items():
            action = attrs["action"]
            if action == _ModuleProviderAction.EXTERN:
                for hook in self._extern_hooks.values():
                    hook(self, module_name)
                extern_modules.append(module_name)
            elif action == _ModuleProviderAction.MOCK:
                for hook in self._mock_hooks.values():
                    hook(self, module_name)
                self._write_mock_file()
                is_package = hasattr(self._import_module(module_name), "__path__")
                self._write_source_string(module_name, _MOCK_IMPL, is_package)
            elif action == _ModuleProviderAction.INTERN:
                for hook in self._intern_hooks.values():
                    hook(self, module_name)
                if "provided" not in attrs:
                    raise AssertionError(f"Module was marked `intern` but not provided: {module_name}")
                if attrs.get("is_pickle") is True:
                    continue  # a pickle: written when it was saved
                self._write_source_string(module_name, attrs["source"], attrs["is_package"])
            elif action == _ModuleProviderAction.REPACKAGED_MOCK_MODULE:
                self._write_mock_file()
            elif action == _ModuleProviderAction.SKIP:
                continue
            else:
                raise AssertionError(f"Invalid action: {module_name}, {action}. Please report a bug to PyTorch.")

        self._write(".data/extern_modules", "\n".join(extern_modules) + "\n")

    def _write_python_version(self):
        self._write(".data/python_version", platform.python_version())

    def close(self):
        """Finishes the package: checks the dependencies (raising PackagingError or
        EmptyMatchError), writes the modules, and closes the archive. The exporter cannot be
        used afterwards."""
        try:
            self._execute_dependency_graph()
            self._write_python_version()
            self.zip_file.write_record(".data/version", b"6\n")
        except BaseException:
            self._finalize_zip()
            raise
        self._finalize_zip()

    def _finalize_zip(self):
        self.zip_file.close()
        if self.buffer:
            self.buffer.flush()

    def _filename(self, package, resource):
        return f"{package.replace('.', '/')}/{_normalize_path(resource)}"

    def _can_implicitly_extern(self, module_name: str):
        top = module_name.partition(".")[0]
        return top in _IMPLICIT_EXTERN or (top not in _DISALLOWED_MODULES and is_stdlib_module(top))

    def dependency_graph_string(self) -> str:
        """The dependency graph in Graphviz's dot language."""
        return self.dependency_graph.to_dot()

    def _nodes_with_action_type(self, action: Optional[_ModuleProviderAction]) -> List[str]:
        return sorted(name for name, attrs in self.dependency_graph.nodes.items()
                      if attrs.get("action", None) == action and "is_pickle" not in attrs)

    def externed_modules(self) -> List[str]:
        """The modules (sorted) this package will extern."""
        return self._nodes_with_action_type(_ModuleProviderAction.EXTERN)

    def interned_modules(self) -> List[str]:
        """The modules (sorted) this package will intern."""
        return self._nodes_with_action_type(_ModuleProviderAction.INTERN)

    def mocked_modules(self) -> List[str]:
        """The modules (sorted) this package will mock."""
        return self._nodes_with_action_type(_ModuleProviderAction.MOCK)

    def denied_modules(self) -> List[str]:
        """The modules (sorted) this package has denied."""
        return self._nodes_with_action_type(_ModuleProviderAction.DENY)

    def get_rdeps(self, module_name: str) -> List[str]:
        """The modules that depend on `module_name`."""
        return list(self.dependency_graph._pred.get(module_name, {}))

    def all_paths(self, src: str, dst: str) -> str:
        """The dot text of the subgraph of every dependency path from `src` to `dst`."""
        return self.dependency_graph.all_paths(src, dst)


# Standard-library modules that give system-level access: never externed implicitly.
_DISALLOWED_MODULES = ["sys", "io"]
# The framework itself is always available where a package is loaded. torch is among them
# because tessera's pickles spell tensors with torch's rebuild functions and storage names.
_IMPLICIT_EXTERN = ("tessera", "torch")

# The source of a mocked module: every attribute is a MockedObject.
_MOCK_IMPL = """\
from _mock import MockedObject
def __getattr__(attr: str):
    return MockedObject(__name__ + '.' + attr, _suppress_err=True)
"""

_STRING_OPS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING",
               "STRING"}
_GET_OPS = {"GET", "BINGET", "LONG_BINGET"}
_PUT_OPS = {"PUT", "BINPUT", "LONG_BINPUT"}


def _globals_of_pickle(data):
    """The (module, name) of every global a pickle refers to, in order: GLOBAL opcodes, and
    STACK_GLOBAL with its two strings (tracked through the memo)."""
    found = []
    memo = {}
    recent = [None, None]  # the last two values pushed: strings, or None for anything else
    for opcode, arg, _ in pickletools.genops(data):
        name = opcode.name
        if name == "GLOBAL":
            module, _, field = arg.partition(" ")
            found.append((module, field))
            recent.append(None)
        elif name == "STACK_GLOBAL":
            module, field = recent[-2], recent[-1]
            if isinstance(module, str) and isinstance(field, str):
                found.append((module, field))
            recent.append(None)
        elif name in _STRING_OPS:
            recent.append(arg if isinstance(arg, str) else None)
        elif name in _GET_OPS:
            recent.append(memo.get(arg))
        elif name == "MEMOIZE":
            memo[len(memo)] = recent[-1]
        elif name in _PUT_OPS:
            memo[arg] = recent[-1]
        elif name != "FRAME":
            recent.append(None)
        del recent[:-2]
    return found


def _read_file(filename: str) -> str:
    with open(filename, "rb") as f:
        return f.read().decode("utf-8")
