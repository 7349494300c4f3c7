"""tessera.utils: helpers under torch.utils' names (dlpack, ...)."""
from . import dlpack  # noqa: F401
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
from . import _pytree  # noqa: F401
from . import _python_dispatch  # noqa: F401
