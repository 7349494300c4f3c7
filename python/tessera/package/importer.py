"""Importers: where PackageExporter looks up modules and the names of objects it pickles.
`sys_importer` is Python's own import system; a PackageImporter is one package's
namespace; OrderedImporter tries several in turn."""
import importlib
import pickle
from abc import ABC, abstractmethod
from types import ModuleType
from typing import Any, Dict, List, Optional, Tuple

from ._mangling import demangle, get_mangle_prefix, is_mangled

__all__ = ["ObjNotFoundError", "ObjMismatchError", "Importer", "OrderedImporter"]

_MAIN_NAMES = ("__main__", "__mp_main__")


class ObjNotFoundError(Exception):
    """An importer cannot find an object under the name it should have."""


class ObjMismatchError(Exception):
    """An importer finds a different object under the name of the given one."""


def _lookup_dotted(module, qualname):
    """(object, its parent) for the dotted `qualname` inside `module`."""
    holder, target = None, module
    for piece in qualname.split("."):
        if piece == "<locals>":
            raise AttributeError(f"Can't get local attribute {qualname!r} on {module!r}")
        holder, target = target, getattr(target, piece)
    return target, holder


def _reduced_global_name(thing):
    """The string an object's __reduce__ gives back (the global it pickles as), or None."""
    if not thing or type(thing) in pickle._Pickler.dispatch:
        return None
    reducer = getattr(thing, "__reduce__", None)
    if reducer is None:
        return None
    try:
        outcome = reducer()
    except Exception:
        return None
    return outcome if isinstance(outcome, str) else None


class Importer(ABC):
    """An environment of modules. `import_module(name)` gives a module, and
    `get_name(obj)` the (module name, attribute path) under which `obj` can be found again
    in this environment, so that

        module_name, obj_name = importer.get_name(obj)
        obj is <attribute obj_name of importer.import_module(module_name)>

    holds, or ObjNotFoundError / ObjMismatchError is raised.
    """

    modules: Dict[str, ModuleType]

    @abstractmethod
    def import_module(self, module_name: str) -> ModuleType:
        """The module `module_name` of this environment (as importlib.import_module)."""

    def _describe_origin(self, thing, attr_path):
        """(owning module, where it comes from, which importer to list) for `thing`."""
        owner = self.whichmodule(thing, attr_path)
        if not is_mangled(owner):
            return owner, "the current Python environment", "'sys_importer'"
        prefix = get_mangle_prefix(owner)
        return owner, prefix, f"the importer for {prefix}"

    def get_name(self, obj: Any, name: Optional[str] = None) -> Tuple[str, str]:
        """(parent module name, attribute path) of `obj` in this environment. `name`, when
        given, replaces the object's own qualified name."""
        attr_path = name
        if attr_path is None:
            # An object whose __reduce__ returns a string is pickled as that global.
            attr_path = _reduced_global_name(obj)
        if attr_path is None:
            attr_path = getattr(obj, "__qualname__", None)
        if attr_path is None:
            attr_path = obj.__name__

        # Modules loaded from a package carry mangled names; look them up demangled.
        home = demangle(self.whichmodule(obj, attr_path))
        try:
            located = _lookup_dotted(self.import_module(home), attr_path)[0]
        except (AttributeError, ImportError, KeyError):
            raise ObjNotFoundError(f"{obj} was not found as {home}.{attr_path}") from None
        if located is obj:
            return home, attr_path

        ours = self._describe_origin(obj, attr_path)
        theirs = self._describe_origin(located, attr_path)
        raise ObjMismatchError(
            f"\n\nThe object provided is from '{ours[0]}', which is coming from {ours[1]}."
            f"\nHowever, when we import '{theirs[0]}', it's coming from {theirs[1]}."
            f"\nTo fix this, make sure this 'PackageExporter's importer lists {ours[2]} before "
            f"{theirs[2]}.")

    def whichmodule(self, obj: Any, name: str) -> str:
        """The name of the module `obj` belongs to: its `__module__`, else the first of this
        environment's modules holding it under `name`, else '__main__'."""
        declared = getattr(obj, "__module__", None)
        if declared is not None:
            return declared
        for candidate, mod in list(self.modules.items()):
            if mod is None or candidate in _MAIN_NAMES:
                continue
            try:
                hit = _lookup_dotted(mod, name)[0]
            except AttributeError:
                continue
            if hit is obj:
                return candidate
        return "__main__"


class _SysImporter(Importer):
    """Python's own import system."""

    def import_module(self, module_name: str):
        return importlib.import_module(name=module_name)

    def whichmodule(self, obj: Any, name: str) -> str:
        return pickle.whichmodule(obj, name)


sys_importer = _SysImporter()


def _is_placeholder_package(mod):
    """Whether `mod` is a package a PackageImporter made up without source (an interned
    `a.b` whose parent `a` was never saved): it must not hide a real `a`."""
    return (bool(getattr(mod, "__torch_package__", False)) and hasattr(mod, "__path__")
            and getattr(mod, "__file__", None) is None)


class OrderedImporter(Importer):
    """Tries each of its importers in turn; the first that has the module wins."""

    def __init__(self, *args):
        self._chain: List[Importer] = [*args]

    def import_module(self, module_name: str) -> ModuleType:
        failure = None
        for source in self._chain:
            if not isinstance(source, Importer):
                raise TypeError(f"{source} is not a Importer. All importers in OrderedImporter must inherit from "
                                "Importer.")
            try:
                found = source.import_module(module_name)
            except ModuleNotFoundError as missing:
                failure = missing
                continue
            if not _is_placeholder_package(found):
                return found
        if failure is None:
            failure = ModuleNotFoundError(module_name)
        raise failure

    def whichmodule(self, obj: Any, name: str) -> str:
        answers = (source.whichmodule(obj, name) for source in self._chain)
        return next((ans for ans in answers if ans != "__main__"), "__main__")
