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
import collections.abc
import importlib.machinery
import io
import linecache
import pickletools
import platform
import types
import typing
import zipfile
from collections import OrderedDict
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Set, Union

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

# Signature of the callbacks given to register_{extern,mock,intern}_hook.
ActionHook = typing.Callable[["PackageExporter", str], None]


class _Disposition(Enum):
    """How a dependency ends up in (or out of) the archive."""

    INTERN = 1
    EXTERN = 2
    MOCK = 3
    DENY = 4
    # Re-exporting code from a package that itself mocked things: that package's `_mock`
    # helper is replaced by the one this exporter writes (once).
    REPACKAGED_MOCK_MODULE = 5
    # The pseudo-module `torch_package_importer` that loaded code can import: never written.
    SKIP = 6


class PackagingErrorReason(Enum):
    """Why a module could not be packaged; the value is the text PackagingError shows."""

    def __repr__(self):
        return f"<{type(self).__name__}.{self.name}>"

    IS_EXTENSION_MODULE = "Module is a C extension module. torch.package supports Python modules only."
    NO_DUNDER_FILE = "Module had no __file__ defined."
    SOURCE_FILE_NOT_FOUND = "Module had a __file__, but we could not find it in your filesystem."
    DEPENDENCY_RESOLUTION_FAILED = "Dependency resolution failed."
    NO_ACTION = "Module did not match against any action pattern. Extern, mock, or intern it."
    DENIED = "Module was denied by a pattern."
    MOCKED_BUT_STILL_USED = ("Module was mocked out, but is still being used in the package. Please intern or extern "
                             "the mocked modules if objects are supposed to be in the package.")


class _Rule:
    """One intern/extern/mock/deny call: what to do, whether matching nothing is fine, and
    whether anything has matched so far."""

    __slots__ = ("disposition", "may_be_unused", "hit")

    def __init__(self, disposition, may_be_unused):
        self.disposition = disposition
        self.may_be_unused = may_be_unused
        self.hit = False

    def __repr__(self):
        return f"_Rule({self.disposition}, may_be_unused={self.may_be_unused}, hit={self.hit})"


class EmptyMatchError(Exception):
    """An extern, mock or intern pattern given with allow_empty=False matched no module."""


class PackagingError(Exception):
    """Every problem found while exporting, grouped by reason. The dependency graph is kept
    as `dependency_graph`."""

    def __init__(self, dependency_graph: DiGraph):
        grouped: Dict[PackagingErrorReason, List[str]] = {}
        for name, info in dependency_graph.nodes.items():
            why = info.get("error")
            if why is None:
                continue
            assert why is not PackagingErrorReason.NO_ACTION or "action" not in info
            grouped.setdefault(why, []).append(name)

        text = "\n"
        for why, names in grouped.items():
            text += f"* {why.value}\n"
            for name in names:
                text += f"    {name}\n"
                extra = dependency_graph.nodes[name].get("error_context")
                if extra is not None:
                    text += f"      Context: {extra}\n"
        self.dependency_graph = dependency_graph
        super().__init__(text)


class _RecordSink:
    """The zip side of an export: every record goes under one top folder, stored (not
    compressed) and 64-byte aligned, which is how torch's stream writer lays records out."""

    def __init__(self, target):
        if isinstance(target, str):
            self._opened_here = open(target, "wb")
            stream, self.top = self._opened_here, _archive_name(target)
        else:
            self._opened_here = None
            stream, self.top = target, "archive"
        self._zip = zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED, allowZip64=True)

    def put(self, name, payload):
        _write_record(self._zip, f"{self.top}/{name}", payload)

    def finish(self):
        zf, self._zip = self._zip, None
        if zf is None:
            return
        try:
            zf.close()
        finally:
            if self._opened_here is not None:
                self._opened_here.close()


class PackageExporter:
    """Builds a package archive: Python source, pickled objects (tensors included) and raw
    resources, which a PackageImporter (tessera's or torch's) can load in isolation.

    Source is taken file by file. Whenever code or a pickle is added, the modules it needs
    (the imports in the source; the globals a pickle refers to) are collected and sorted by
    the rules given through :meth:`intern`, :meth:`extern`, :meth:`mock` and :meth:`deny`.
    The record `.data/extern_modules` names what the loading side has to supply itself.

    Use it in a `with` block, or call :meth:`close` when done.
    """

    importer: Importer

    def __init__(self, f: Union[str, Path, BinaryIO], importer: Union[Importer, Sequence[Importer]] = sys_importer):
        """`f` is a file name or a writable binary stream. `importer` resolves modules and the
        objects a pickle names; give several to have them tried one after another."""
        target = str(f) if isinstance(f, (str, Path)) else f
        self._caller_stream = None if isinstance(f, (str, Path)) else f
        self._sink = _RecordSink(target)
        self._names_taken: Set[str] = set()

        # id(obj) -> the persistent id already produced for its __reduce_package__.
        self._reduce_memo: Dict[int, Any] = {}
        # Graph of module names (and '<package.resource>' for each pickle); u -> v reads
        # "u needs v". Node attributes drive what close() writes.
        self.dependency_graph = DiGraph()
        # Tensor storages met by any pickle of this package, and those already written.
        self._storages = _torch_pickle.StorageTable()
        self._storage_keys_done: Set[str] = set()

        # Per disposition, hook id -> hook. (OrderedDicts, as RemovableHandle holds a weak
        # reference to its table, which a plain dict does not allow.)
        self._hooks: Dict[_Disposition, "OrderedDict[int, ActionHook]"] = {
            kind: OrderedDict() for kind in (_Disposition.EXTERN, _Disposition.MOCK, _Disposition.INTERN)}

        if isinstance(importer, Importer):
            self.importer = importer
        elif isinstance(importer, collections.abc.Sequence):
            self.importer = OrderedImporter(*importer)
        else:
            raise TypeError("importer arg should be an Importer or a sequence of Importers, "
                            f"got {type(importer)} instead.")

        self._rules: Dict[GlobGroup, _Rule] = {}
        self._next_id = 0

    # ---------------------------------------------------------------- source code

    def save_source_file(self, module_name: str, file_or_directory: str, dependencies=True):
        """Adds the file `file_or_directory` as the code of `module_name`. A directory adds
        each .py file below it as a submodule of `module_name`."""
        root = Path(file_or_directory)
        if not root.is_dir():
            text = _slurp(file_or_directory)
            self.save_source_string(module_name, text, root.name == "__init__.py", dependencies)
            return
        base = module_name.replace(".", "/")
        # Register every file first, so that none of them gets resolved from outside while
        # the dependencies of an earlier one are followed.
        batch = []
        for py in root.glob("**/*.py"):
            rel = f"{base}/{py.relative_to(root).as_posix()}"
            pkg_init = py.name == "__init__.py"
            dotted = (rel.rsplit("/", 1)[0] if pkg_init else rel[:-3]).replace("/", ".")
            batch.append((dotted, _slurp(str(py)), pkg_init))
        for dotted, text, pkg_init in batch:
            self.save_source_string(dotted, text, pkg_init, dependencies)

    def get_unique_id(self) -> str:
        """Returns an id never returned before by this exporter."""
        issued = self._next_id
        self._next_id = issued + 1
        return str(issued)

    def _imports_of(self, src: str, module_name: str, is_package: bool) -> List[str]:
        """Existing modules imported by `src`, deduplicated, first-seen order. For
        `from pkg import item`, `pkg.item` is the dependency if it is a module; otherwise
        it is `pkg`."""
        anchor = module_name if is_package else module_name.rsplit(".", 1)[0]
        try:
            found = find_files_source_depends_on(src, anchor)
        except Exception as exc:
            self.dependency_graph.add_node(module_name, error=PackagingErrorReason.DEPENDENCY_RESOLUTION_FAILED,
                                           error_context=str(exc))
            return []

        ordered: Dict[str, None] = {}
        for base, item in found:
            candidates = [base] if item is None else [f"{base}.{item}", base]
            for candidate in candidates:
                if self._importable(candidate):
                    ordered.setdefault(candidate)
                    break
        return list(ordered)

    def save_source_string(self, module_name: str, src: str, is_package: bool = False, dependencies: bool = True):
        """Adds `src` as the code of `module_name` (a package if `is_package`, which lets it
        have submodules and resources). With `dependencies`, its imports are sorted by the
        rules."""
        self.dependency_graph.add_node(module_name, source=src, is_package=is_package, provided=True,
                                       action=_Disposition.INTERN)
        if dependencies:
            self._follow_imports(module_name, src, is_package)

    def _follow_imports(self, module_name, src, is_package):
        for needed in self._imports_of(src, module_name, is_package):
            self.dependency_graph.add_edge(module_name, needed)
            self.add_dependency(needed)

    def _emit_module(self, module_name: str, text: str, is_package: bool = False):
        tail = "/__init__.py" if is_package else ".py"
        self._emit(module_name.replace(".", "/") + tail, text)

    def _load(self, module_name: str):
        lookup = self.importer.import_module
        try:
            return lookup(module_name)
        except ModuleNotFoundError:
            if is_mangled(module_name):  # came from a PackageImporter that we do not know
                raise ModuleNotFoundError(f"Module not found: '{module_name}'. Make sure the PackageImporter that "
                                          "created this module is present in `self.importer`") from None
            raise

    def _importable(self, module_name: str) -> bool:
        try:
            self._load(module_name)
            return True
        except Exception:
            return False

    @staticmethod
    def _code_of(module: types.ModuleType) -> Optional[str]:
        ns = module.__dict__
        path = ns.get("__file__")
        if not isinstance(path, str) or not path.endswith(".py"):
            return None
        if ns.get("__torch_package__") and hasattr(ns.get("__loader__"), "get_source"):
            # Code that came out of a package: ask the importer that loaded it, rather than
            # linecache (whose keys may collide with other importers' file names).
            return ns["__loader__"].get_source(module.__name__)
        text = linecache.getlines(path, ns)
        return None if text is None else "".join(text)

    def _matching_rule(self, module_name: str) -> Optional[_Rule]:
        """The earliest-registered rule whose pattern covers `module_name`, if any."""
        return next((rule for group, rule in self._rules.items() if group.matches(module_name)), None)

    def add_dependency(self, module_name: str, dependencies=True):
        """Records `module_name` in the dependency graph, with the disposition of the first
        rule that covers it (implicit extern, or a NO_ACTION error, if none does). Interned
        modules have their own imports followed."""
        graph = self.dependency_graph
        existing = graph.nodes.get(module_name)
        if existing is not None and existing.get("provided") is True:
            return
        fixed = {"torch_package_importer": _Disposition.SKIP, "_mock": _Disposition.REPACKAGED_MOCK_MODULE}
        if module_name in fixed:
            graph.add_node(module_name, action=fixed[module_name], provided=True)
            return
        if self._implicitly_external(module_name):
            graph.add_node(module_name, action=_Disposition.EXTERN, provided=True)
            return
        rule = self._matching_rule(module_name)
        if rule is None:
            graph.add_node(module_name, error=PackagingErrorReason.NO_ACTION)
            return
        rule.hit = True
        graph.add_node(module_name, action=rule.disposition, provided=True)
        if rule.disposition is _Disposition.DENY:
            graph.add_node(module_name, error=PackagingErrorReason.DENIED)
        elif rule.disposition is _Disposition.INTERN:
            self._take_in(module_name, dependencies)

    def save_module(self, module_name: str, dependencies=True):
        """Adds the code of module `module_name` (located through the importer, from its
        `__file__`); with `dependencies`, what it imports is followed too."""
        if isinstance(module_name, str):
            self._take_in(module_name, dependencies)
            return
        raise TypeError("save_module() expects a string input, did you perhaps mean to pass `__name__`?")

    def _take_in(self, module_name: str, dependencies: bool):
        mod = self._load(module_name)
        # Loading succeeded, so whichever importer owns a mangled name understood it; the
        # archive keeps the plain name.
        plain = demangle(module_name)
        pkg = hasattr(mod, "__path__")
        code = self._code_of(mod)
        if code is not None:
            self.dependency_graph.add_node(plain, action=_Disposition.INTERN, is_package=pkg, source=code,
                                           provided=True)
            if dependencies:
                self._follow_imports(plain, code, pkg)
            return
        where = getattr(mod, "__file__", None)
        detail = None
        if where is None:
            why = PackagingErrorReason.NO_DUNDER_FILE
        elif any(where.endswith(ext) for ext in importlib.machinery.EXTENSION_SUFFIXES):
            why = PackagingErrorReason.IS_EXTENSION_MODULE
        else:
            why = PackagingErrorReason.SOURCE_FILE_NOT_FOUND
            detail = f"filename: {where}"
        self.dependency_graph.add_node(plain, action=_Disposition.INTERN, is_package=pkg, error=why,
                                       error_context=detail, provided=True)

    # ---------------------------------------------------------------- pickles, resources

    def save_pickle(self, package: str, resource: str, obj: Any, dependencies: bool = True,
                    pickle_protocol: int = 3):
        """Stores `obj`, pickled, as the resource `package/resource` (like torch.save, but into
        the archive); tensor storages become `.data/` records. With `dependencies`, the
        modules of the classes and functions it refers to are sorted by the rules. Pickle
        protocols 3 and 4 only."""
        assert pickle_protocol in (3, 4), "torch.package only supports pickle protocols 3 and 4"

        record = self._resource_record(package, resource)
        out = io.BytesIO()
        p = create_pickler(out, self.importer, protocol=pickle_protocol, storage_table=self._storages)
        p.persistent_id = self._persistent_ref
        p.dump(obj)
        blob = out.getvalue()

        node = f"<{package}.{resource}>"
        self.dependency_graph.add_node(node, action=_Disposition.INTERN, provided=True, is_pickle=True)
        if dependencies:
            refs = _pickle_globals(blob)
            # Names taken from modules that a mock rule covers: using them is an error.
            from_mocked: Dict[str, List[str]] = {}
            for mod, attr in refs:
                if self._implicitly_external(mod):
                    continue
                rule = self._matching_rule(mod)
                if rule is not None and rule.disposition is _Disposition.MOCK:
                    from_mocked.setdefault(mod, []).append(attr)
            for mod in dict.fromkeys(m for m, _ in refs):
                self.dependency_graph.add_edge(node, mod)
                if mod not in from_mocked:
                    self.add_dependency(mod)
                    continue
                self.dependency_graph.add_node(
                    mod, action=_Disposition.MOCK, error=PackagingErrorReason.MOCKED_BUT_STILL_USED,
                    error_context=f"Object(s) '{from_mocked[mod]}' from module `{mod}` was mocked out during "
                                  f"packaging but is being used in resource - `{resource}` in package "
                                  f"`{package}`. ",
                    provided=True)

        self._emit(record, blob)

    def save_text(self, package: str, resource: str, text: str):
        """Stores the string `text`, utf-8 encoded, as the resource `package/resource`."""
        return self.save_binary(package, resource, text.encode("utf-8"))

    def save_binary(self, package, resource, binary: bytes):
        """Stores `binary` as the resource `package/resource`."""
        self._emit(self._resource_record(package, resource), binary)

    def _persistent_ref(self, obj):
        if isinstance(obj, TypedStorage):
            quantized_class = _torch_pickle.QUANTIZED_STORAGE_CLASS_OF.get(_torch_pickle.dtype_name(obj.dtype))
            ref = self._storages.ref_for(obj._tensor, storage_class=quantized_class)
        elif type(obj) is _torch_pickle.StorageRef:
            ref = obj
        elif hasattr(obj, "__reduce_package__"):
            key = id(obj)
            cached = self._reduce_memo.get(key)
            if cached is None:
                cached = ("reduce_package", key, *obj.__reduce_package__(self))
                self._reduce_memo[key] = cached
            return cached
        else:
            return None
        if ref.key not in self._storage_keys_done:
            self._storage_keys_done.add(ref.key)
            cpu = ref.flat.to("cpu") if ref.flat.device.type != "cpu" else ref.flat
            payload = cpu.contiguous().view(_torch_pickle._C.uint8).numpy() if cpu.numel() else b""
            self._sink.put(f".data/{ref.key}.storage", payload)
        return ("storage", ref.storage_class, int(ref.key), ref.location, ref.numel)

    # ---------------------------------------------------------------- rules and hooks

    def _add_hook(self, kind, hook):
        table = self._hooks[kind]
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

    def register_extern_hook(self, hook: ActionHook) -> RemovableHandle:
        """`hook(exporter, module_name)` runs for every externed module during close(). The
        returned handle's remove() takes it away again."""
        return self._add_hook(_Disposition.EXTERN, hook)

    def register_mock_hook(self, hook: ActionHook) -> RemovableHandle:
        """`hook(exporter, module_name)` runs for every mocked module during close()."""
        return self._add_hook(_Disposition.MOCK, hook)

    def register_intern_hook(self, hook: ActionHook) -> RemovableHandle:
        """`hook(exporter, module_name)` runs for every interned module during close()."""
        return self._add_hook(_Disposition.INTERN, hook)

    def _add_rule(self, disposition, include, exclude, allow_empty):
        self._rules[GlobGroup(include, exclude=exclude)] = _Rule(disposition, allow_empty)

    def intern(self, include: "GlobPattern", *, exclude: "GlobPattern" = (), allow_empty: bool = True):
        """Modules covered by `include` but not `exclude` get their code copied in, and their
        imports followed. allow_empty=False makes close() fail if nothing was covered."""
        self._add_rule(_Disposition.INTERN, include, exclude, allow_empty)

    def mock(self, include: "GlobPattern", *, exclude: "GlobPattern" = (), allow_empty: bool = True):
        """Modules covered by `include` but not `exclude` are written as stubs: any attribute
        of them is a MockedObject that raises when actually used. Patterns match dotted
        names; `*` stands for part of one segment and `**` for any run of segments
        ('torch.**' covers torch and everything below it, 'torch.*' only its children).
        allow_empty=False makes close() fail if nothing was covered."""
        self._add_rule(_Disposition.MOCK, include, exclude, allow_empty)

    def extern(self, include: "GlobPattern", *, exclude: "GlobPattern" = (), allow_empty: bool = True):
        """Modules covered by `include` but not `exclude` stay out of the archive; the
        environment that loads it must provide them. allow_empty=False makes close() fail
        if nothing was covered."""
        self._add_rule(_Disposition.EXTERN, include, exclude, allow_empty)

    def deny(self, include: "GlobPattern", *, exclude: "GlobPattern" = ()):
        """Depending on a module covered by `include` but not `exclude` is an error."""
        self._add_rule(_Disposition.DENY, include, exclude, True)

    # ---------------------------------------------------------------- finishing

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is None:
            self.close()
        else:
            # Still leave a readable (partial) archive; the exception propagates.
            self._shut()

    def _emit(self, name, content):
        if name in self._names_taken:
            raise AssertionError(f"Tried to write file '{name}', but it already exists in this archive. "
                                 "Please file a bug.")
        self._names_taken.add(name)
        if is_mangled(name):
            raise AssertionError(f"Tried to save a torch.package'd module as '{name}'. "
                                 "Directly saving torch.package'd modules is not allowed.")
        payload = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        self._sink.put(name, payload)

    def _check_graph(self):
        graph = self.dependency_graph
        if any("error" in info for info in graph.nodes.values()):
            raise PackagingError(graph)
        for group, rule in self._rules.items():
            if rule.hit or rule.may_be_unused:
                continue
            raise EmptyMatchError(f"Exporter did not match any modules to {group}, which was marked as "
                                  "allow_empty=False")

    def _ensure_mock_helper(self):
        if "_mock.py" in self._names_taken:
            return
        helper = Path(__file__).with_name("_mock.py")
        self._emit_module("_mock", _slurp(str(helper)), is_package=False)

    def _run_hooks(self, kind, module_name):
        for hook in self._hooks[kind].values():
            hook(self, module_name)

    def _write_graph(self):
        """Validates the dependency graph, then writes out what each node calls for."""
        self._check_graph()

        externs = []
        for name, info in self.dependency_graph.nodes.items():
            kind = info["action"]
            if kind is _Disposition.SKIP:
                continue
            if kind is _Disposition.REPACKAGED_MOCK_MODULE:
                self._ensure_mock_helper()
            elif kind is _Disposition.EXTERN:
                self._run_hooks(kind, name)
                externs.append(name)
            elif kind is _Disposition.MOCK:
                self._run_hooks(kind, name)
                self._ensure_mock_helper()
                self._emit_module(name, _STUB_SOURCE, hasattr(self._load(name), "__path__"))
            elif kind is _Disposition.INTERN:
                self._run_hooks(kind, name)
                if "provided" not in info:
                    raise AssertionError(f"Module was marked `intern` but not provided: {name}")
                if info.get("is_pickle") is not True:  # pickles were written by save_pickle
                    self._emit_module(name, info["source"], info["is_package"])
            else:
                raise AssertionError(f"Invalid action: {name}, {kind}. Please report a bug to PyTorch.")

        self._emit(".data/extern_modules", "".join(f"{name}\n" for name in externs) or "\n")

    def close(self):
        """Finishes the archive: validates the dependencies (PackagingError or
        EmptyMatchError on failure), writes the modules, and closes the file. No further
        use of the exporter is possible."""
        try:
            self._write_graph()
            self._emit(".data/python_version", platform.python_version())
            self._sink.put(".data/version", b"6\n")
        finally:
            self._shut()

    def _shut(self):
        self._sink.finish()
        if self._caller_stream:
            self._caller_stream.flush()

    @staticmethod
    def _resource_record(package, resource):
        return package.replace(".", "/") + "/" + _normalize_path(resource)

    @staticmethod
    def _implicitly_external(module_name: str):
        head = module_name.split(".", 1)[0]
        if head in _ALWAYS_EXTERN:
            return True
        return head not in _NEVER_IMPLICIT and is_stdlib_module(head)

    def dependency_graph_string(self) -> str:
        """The dependency graph, as Graphviz dot text."""
        return self.dependency_graph.to_dot()

    def _modules_marked(self, kind: Optional[_Disposition]) -> List[str]:
        return sorted(name for name, info in self.dependency_graph.nodes.items()
                      if "is_pickle" not in info and info.get("action") == kind)

    def externed_modules(self) -> List[str]:
        """Sorted names of the modules that will be externed."""
        return self._modules_marked(_Disposition.EXTERN)

    def interned_modules(self) -> List[str]:
        """Sorted names of the modules that will be interned."""
        return self._modules_marked(_Disposition.INTERN)

    def mocked_modules(self) -> List[str]:
        """Sorted names of the modules that will be mocked."""
        return self._modules_marked(_Disposition.MOCK)

    def denied_modules(self) -> List[str]:
        """Sorted names of the modules that were denied."""
        return self._modules_marked(_Disposition.DENY)

    def get_rdeps(self, module_name: str) -> List[str]:
        """Names of the modules that depend on `module_name`."""
        return list(self.dependency_graph._pred.get(module_name, {}))

    def all_paths(self, src: str, dst: str) -> str:
        """Dot text for the subgraph made of every dependency path from `src` to `dst`."""
        return self.dependency_graph.all_paths(src, dst)


# stdlib modules giving access to the interpreter/process: these are never implicit externs.
_NEVER_IMPLICIT = frozenset({"sys", "io"})
# Always present where a package is loaded. torch is here because tessera's pickles name
# tensors through torch's rebuild functions and storage classes.
_ALWAYS_EXTERN = frozenset({"tessera", "torch"})

# Code written for a mocked module: any attribute looked up is a MockedObject.
_STUB_SOURCE = """\
from _mock import MockedObject
def __getattr__(attr: str):
    return MockedObject(f"{__name__}.{attr}", _suppress_err=True)
"""

# Opcode groups followed by _pickle_globals.
_TEXT_OPS = frozenset({"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING",
                       "BINSTRING", "STRING"})
_MEMO_READ_OPS = frozenset({"GET", "BINGET", "LONG_BINGET"})
_MEMO_WRITE_OPS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})


def _pickle_globals(data):
    """(module, attribute) for each global a pickle names, in stream order: the argument of
    a GLOBAL opcode, or the two strings pushed before a STACK_GLOBAL (followed through the
    memo when they were fetched from it)."""
    result = []
    memo: Dict[Any, Any] = {}
    prev = last = None  # the two most recent pushes, when they were strings
    for op, arg, _pos in pickletools.genops(data):
        kind = op.name
        if kind == "FRAME":
            continue
        pushed = None
        if kind == "GLOBAL":
            mod, _sep, attr = arg.partition(" ")
            result.append((mod, attr))
        elif kind == "STACK_GLOBAL":
            if isinstance(prev, str) and isinstance(last, str):
                result.append((prev, last))
        elif kind in _TEXT_OPS:
            pushed = arg if isinstance(arg, str) else None
        elif kind in _MEMO_READ_OPS:
            pushed = memo.get(arg)
        elif kind == "MEMOIZE" or kind in _MEMO_WRITE_OPS:
            memo[len(memo) if kind == "MEMOIZE" else arg] = last
            continue
        prev, last = last, pushed
    return result


def _slurp(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8")
