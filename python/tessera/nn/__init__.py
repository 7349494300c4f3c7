"""tessera.nn: torch.nn's modules, parameters and functional interface
(``tessera.nn.functional``)."""
from . import common_types  # noqa: F401
from . import functional  # noqa: F401
from . import grad  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401


def factory_kwargs(kwargs):
    """The factory arguments (device, dtype, memory_format) in `kwargs`, merged with those
    in its optional "factory_kwargs" entry, as one dict for tessera.empty and friends;
    TypeError for any other key, or for a key given both ways. None gives {}."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    merged = dict(kwargs.get("factory_kwargs", {}))
    for key in simple & kwargs.keys():
        if key in merged:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        merged[key] = kwargs[key]
    return merged


__all__ = ["functional", "init", "utils", "parallel", "Parameter", "UninitializedParameter", "UninitializedBuffer",
           "DataParallel", "factory_kwargs"] + list(_modules_all)
