"""tessera.nn: torch.nn's modules, parameters and functional interface
(``tessera.nn.functional``)."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401

__all__ = ["functional", "init", "utils", "parallel", "Parameter", "DataParallel"] + list(_modules_all)
