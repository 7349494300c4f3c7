"""The unpickler PackageImporter.load_pickle uses: globals come from the package's modules
(through the importer). The names of tessera's tensor format (torch._utils rebuild
functions, torch.*Storage, torch.device, dtypes, ...) resolve to tessera's objects, as in
tessera.load, and other torch.X.y names to tessera.X.y: a package written by torch or by
tessera loads without torch."""
import _compat_pickle
import pickle

from .. import _torch_pickle
from .importer import Importer, _lookup_dotted


_TENSOR_FORMAT_MODULES = ("tessera._utils", "tessera.storage")


def _python2_name(mod_name, attr):
    """(module, attribute) as Python 3 names them, for a global pickled by Python 2."""
    renamed = _compat_pickle.NAME_MAPPING.get((mod_name, attr))
    if renamed is not None:
        return renamed
    return _compat_pickle.IMPORT_MAPPING.get(mod_name, mod_name), attr


def _is_torch_name(mod_name):
    return mod_name == "torch" or mod_name.startswith("torch.")


class PackageUnpickler(pickle._Unpickler):
    def __init__(self, importer: Importer, *args, **kwargs):
        self._importer = importer
        pickle._Unpickler.__init__(self, *args, **kwargs)

    def find_class(self, module, name):
        if self.fix_imports and self.proto < 3:
            module, name = _python2_name(module, name)
        is_torch = _is_torch_name(module)
        if is_torch or module in _TENSOR_FORMAT_MODULES:
            known = _torch_pickle.resolve_safe(module, name)
            if known is not None:
                return known
            if is_torch:
                return _torch_pickle._tessera_equivalent(module, name)
        owner = self._importer.import_module(module)
        if "." in name and self.proto >= 4:
            return _lookup_dotted(owner, name)[0]
        return getattr(owner, name)
