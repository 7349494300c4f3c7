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
            self._refuse_unfindable_global(obj, name)
            return super().save_global(obj, name)
        try:
            where, path = self.importer.get_name(obj, name)
        except (ObjMismatchError, ObjNotFoundError) as lookup_err:
            raise PicklingError("Can't pickle %s: %s" % (obj, lookup_err)) from None
        home = self.importer.import_module(where)
        holder = _lookup_dotted(home, path)[1]
        if self.proto >= 2 and self._write_extension_code(where, path):
            return
        self._write_global_reference(home, holder, where, path)
        self.memoize(obj)

    def _write_extension_code(self, where, path):
        """Writes the copyreg extension code registered for (where, path), if any."""
        code = pickle._extension_registry.get((where, path))
        if not code:
            return False
        for opcode, fmt, limit in ((pickle.EXT1, "<B", 0xFF), (pickle.EXT2, "<H", 0xFFFF)):
            if code <= limit:
                self.write(opcode + pack(fmt, code))
                return True
        self.write(pickle.EXT4 + pack("<i", code))
        return True

    def _write_global_reference(self, home, holder, where, path):
        """Writes the opcodes that make the unpickler fetch `path` from module `where`."""
        leaf = path.split(".")[-1]
        top_level = holder is home
        if top_level:
            path = leaf
        if self.proto >= 4:
            for piece in (where, path):
                self.save(piece)
            self.write(pickle.STACK_GLOBAL)
            return
        if not top_level:
            # Older protocols have no dotted names: fetch the attribute at load time.
            self.save_reduce(getattr, (holder, leaf))
            return
        if self.proto >= 3:
            self.write(b"".join((pickle.GLOBAL, where.encode("utf-8"), b"\n", path.encode("utf-8"), b"\n")))
            return
        if self.fix_imports:
            where, path = _python2_spelling(where, path)
        try:
            encoded = b"".join((where.encode("ascii"), b"\n", path.encode("ascii"), b"\n"))
        except UnicodeEncodeError:
            raise PicklingError("can't pickle global identifier '%s.%s' using pickle protocol %i"
                                % (home, path, self.proto)) from None
        self.write(pickle.GLOBAL + encoded)

    def _refuse_unfindable_global(self, obj, name):
        """With the plain import system torch pickles with the C pickler: its refusals (and
        their messages) for a global that cannot be found again are raised here."""
        path = name
        if path is None:
            path = getattr(obj, "__qualname__", None)
        if path is None:
            path = obj.__name__
        if "<locals>" in path.split("."):
            raise AttributeError(f"Can't pickle local object {path!r}")
        where = pickle.whichmodule(obj, path)
        try:
            __import__(where)
            home = sys.modules[where]
        except Exception:
            raise PicklingError(f"Can't pickle {obj!r}: import of module {where!r} failed") from None
        try:
            target = _lookup_dotted(home, path)[0]
        except AttributeError:
            raise PicklingError(f"Can't pickle {obj!r}: attribute lookup {path} on {where} failed") from None
        if target is not obj:
            raise PicklingError(f"Can't pickle {obj!r}: it's not the same object as {where}.{path}")


def _python2_spelling(where, path):
    """(module, attribute) as Python 2 named them, for protocols 0-2 with fix_imports."""
    import _compat_pickle
    renamed = _compat_pickle.REVERSE_NAME_MAPPING.get((where, path))
    if renamed is not None:
        return renamed
    return _compat_pickle.REVERSE_IMPORT_MAPPING.get(where, where), path


def create_pickler(data_buf, importer, protocol=4, storage_table=None):
    """A PackagePickler writing to `data_buf`; tensors' storages are registered in
    `storage_table` (a fresh table when None)."""
    return PackagePickler(importer, data_buf, protocol=protocol, storage_table=storage_table)
