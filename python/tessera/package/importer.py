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


class ObjNotFoundError(Exception):
    """An importer cannot find an object under the name it should have."""
    pass


class ObjMismatchError(Exception):
    """An importer finds a different object under the name of the given one."""
    pass


def _lookup_dotted(module, qualname):
    """(object, its parent) for the dotted `qualname` inside `module`."""
    parent, obj = None, module
    for part in qualname.split("."):
        if part == "<locals>":
            raise AttributeError(f"Can't get local attribute {qualname!r} on {module!r}")
        parent, obj = obj, getattr(obj, part)
    return obj, parent


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
        pass

    def get_name(self, obj: Any, name: Optional[str] = None) -> Tuple[str, str]:
        """(parent module name, attribute path) of `obj` in this environment. `name`, when
        given, replaces the object's own qualified name."""
        if name is None and obj and pickle._Pickler.dispatch.get(type(obj)) is None:
            # An object whose __reduce__ returns a string is pickled as that global.
            reduce = getattr(obj, "__reduce__", None)
            if reduce is not None:
                try:
                    reduced = reduce()
                except Exception:
                    reduced = None
                if isinstance(reduced, str):
                    name = reduced
        if name is None:
            name = getattr(obj, "__qualname__", None)
        if name is None:
            name = obj.__name__

        # Modules loaded from a package carry mangled names; look them up demangled.
        module_name = demangle(self.whichmodule(obj, name))
        try:
            found, _ = _lookup_dotted(self.import_module(module_name), name)
        except (ImportError, KeyError, AttributeError):
            raise ObjNotFoundError(f"{obj} was not found as {module_name}.{name}") from None
        if found is obj:
            return module_name, name

        def origin(thing):
            owner = self.whichmodule(thing, name)
            if is_mangled(owner):
                prefix = get_mangle_prefix(owner)
                return owner, prefix, f"the importer for {prefix}"
            return owner, "the current Python environment", "'sys_importer'"

        obj_module, obj_location, obj_importer = origin(obj)
        found_module, found_location, found_importer = origin(found)
        raise ObjMismatchError(
            f"\n\nThe object provided is from '{obj_module}', which is coming from {obj_location}."
            f"\nHowever, when we import '{found_module}', it's coming from {found_location}."
            f"\nTo fix this, make sure this 'PackageExporter's importer lists {obj_importer} before "
            f"{found_importer}.")

    def whichmodule(self, obj: Any, name: str) -> str:
        """The name of the module `obj` belongs to: its `__module__`, else the first of this
        environment's modules holding it under `name`, else '__main__'."""
        module_name = getattr(obj, "__module__", None)
        if module_name is not None:
            return module_name
        for module_name, module in list(self.modules.items()):
            if module is None or module_name in ("__main__", "__mp_main__"):
                continue
            try:
                if _lookup_dotted(module, name)[0] is obj:
                    return module_name
            except AttributeError:
                pass
        return "__main__"


class _SysImporter(Importer):
    """Python's own import system."""

    def import_module(self, module_name: str):
        return importlib.import_module(module_name)

    def whichmodule(self, obj: Any, name: str) -> str:
        return pickle.whichmodule(obj, name)


sys_importer = _SysImporter()


class OrderedImporter(Importer):
    """Tries each of its importers in turn; the first that has the module wins."""

    def __init__(self, *args):
        self._importers: List[Importer] = list(args)

    def _is_torchpackage_dummy(self, module):
        """Whether `module` is a package a PackageImporter made up without source (an
        interned `a.b` whose parent `a` was never saved): it must not hide a real `a`."""
        if not getattr(module, "__torch_package__", False) or not hasattr(module, "__path__"):
            return False
        return getattr(module, "__file__", None) is None

    def import_module(self, module_name: str) -> ModuleType:
        last_err = None
        for importer in self._importers:
            if not isinstance(importer, Importer):
                raise TypeError(f"{importer} is not a Importer. All importers in OrderedImporter must inherit from "
                                "Importer.")
            try:
                module = importer.import_module(module_name)
            except ModuleNotFoundError as err:
                last_err = err
                continue
            if not self._is_torchpackage_dummy(module):
                return module
        if last_err is not None:
            raise last_err
        raise ModuleNotFoundError(module_name)

    def whichmodule(self, obj: Any, name: str) -> str:
        for importer in self._importers:
            module_name = importer.whichmodule(obj, name)
            if module_name != "__main__":
                return module_name
        return "__main__"
