"""The pickler PackageExporter.save_pickle uses: tessera's checkpoint pickler (tensors as
torch's rebuild calls over storage records, dtypes and devices under torch's names), whose
globals are looked up through the exporter's importer, so that objects loaded from another
package are pickled under their unmangled names."""
import pickle
import sys
from pickle import PicklingError
from struct import pack
from types import FunctionType

from .. import _torch_pickle
from .importer import Importer, ObjMismatchError, ObjNotFoundError, _lookup_dotted, sys_importer

_CheckpointPickler = _torch_pickle.make_pickler(pickle)


class PackagePickler(_CheckpointPickler):
    """A pickler that finds the modules and names of globals with `importer`."""

    dispatch = dict(_CheckpointPickler.dispatch)
    # The base class stores its own save_global for functions; route them to ours.
    dispatch[FunctionType] = lambda self, obj: self.save_global(obj)

    def __init__(self, importer: Importer, file, protocol=None, storage_table=None, **kwargs):
        self.importer = importer
        table = storage_table if storage_table is not None else _torch_pickle.StorageTable()
        super().__init__(file, protocol, table)

    def save_global(self, obj, name=None):
        if self.importer is sys_importer:
            self._check_global_like_c_pickler(obj, name)
            return super().save_global(obj, name)
        try:
            module_name, name = self.importer.get_name(obj, name)
        except (ObjNotFoundError, ObjMismatchError) as err:
            raise PicklingError(f"Can't pickle {obj}: {str(err)}") from None
        module = self.importer.import_module(module_name)
        _, parent = _lookup_dotted(module, name)

        if self.proto >= 2:
            code = pickle._extension_registry.get((module_name, name))
            if code:
                if code <= 0xFF:
                    self.write(pickle.EXT1 + pack("<B", code))
                elif code <= 0xFFFF:
                    self.write(pickle.EXT2 + pack("<H", code))
                else:
                    self.write(pickle.EXT4 + pack("<i", code))
                return
        lastname = name.rpartition(".")[2]
        if parent is module:
            name = lastname
        if self.proto >= 4:
            self.save(module_name)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        elif parent is not module:
            self.save_reduce(getattr, (parent, lastname))
        elif self.proto >= 3:
            self.write(pickle.GLOBAL + module_name.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        else:
            if self.fix_imports:
                import _compat_pickle
                if (module_name, name) in _compat_pickle.REVERSE_NAME_MAPPING:
                    module_name, name = _compat_pickle.REVERSE_NAME_MAPPING[(module_name, name)]
                elif module_name in _compat_pickle.REVERSE_IMPORT_MAPPING:
                    module_name = _compat_pickle.REVERSE_IMPORT_MAPPING[module_name]
            try:
                self.write(pickle.GLOBAL + module_name.encode("ascii") + b"\n" + name.encode("ascii") + b"\n")
            except UnicodeEncodeError:
                raise PicklingError("can't pickle global identifier '%s.%s' using pickle protocol %i"
                                    % (module, name, self.proto)) from None
        self.memoize(obj)


    def _check_global_like_c_pickler(self, obj, name):
        """With the plain import system torch pickles with the C pickler: its refusals (and
        their messages) for a global that cannot be found again are raised here."""
        if name is None:
            name = getattr(obj, "__qualname__", None)
            if name is None:
                name = obj.__name__
        if "<locals>" in name.split("."):
            raise AttributeError(f"Can't pickle local object {name!r}")
        module_name = pickle.whichmodule(obj, name)
        try:
            __import__(module_name)
            module = sys.modules[module_name]
        except Exception:
            raise PicklingError(f"Can't pickle {obj!r}: import of module {module_name!r} failed") from None
        try:
            found, _ = _lookup_dotted(module, name)
        except AttributeError:
            raise PicklingError(f"Can't pickle {obj!r}: attribute lookup {name} on {module_name} failed") from None
        if found is not obj:
            raise PicklingError(f"Can't pickle {obj!r}: it's not the same object as {module_name}.{name}")


def create_pickler(data_buf, importer, protocol=4, storage_table=None):
    """A PackagePickler writing to `data_buf`; tensors' storages are registered in
    `storage_table` (a fresh table when None)."""
    return PackagePickler(importer, data_buf, protocol=protocol, storage_table=storage_table)
