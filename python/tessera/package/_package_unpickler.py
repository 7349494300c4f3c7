"""The unpickler PackageImporter.load_pickle uses: globals come from the package's modules
(through the importer). The names of tessera's tensor format (torch._utils rebuild
functions, torch.*Storage, torch.device, dtypes, ...) resolve to tessera's objects, as in
tessera.load, and other torch.X.y names to tessera.X.y: a package written by torch or by
tessera loads without torch."""
import _compat_pickle
import pickle

from .. import _torch_pickle
from .importer import Importer, _lookup_dotted


class PackageUnpickler(pickle._Unpickler):
    def __init__(self, importer: Importer, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._importer = importer

    def find_class(self, module, name):
        if self.proto < 3 and self.fix_imports:
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        if module == "torch" or module.startswith("torch.") or module in ("tessera._utils", "tessera.storage"):
            obj = _torch_pickle.resolve_safe(module, name)
            if obj is not None:
                return obj
            if module != "tessera._utils" and module != "tessera.storage":
                return _torch_pickle._tessera_equivalent(module, name)
        mod = self._importer.import_module(module)
        if self.proto >= 4 and "." in name:
            return _lookup_dotted(mod, name)[0]
        return getattr(mod, name)
