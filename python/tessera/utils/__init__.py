"""tessera.utils: helpers under torch.utils' names (dlpack, ...)."""
from . import dlpack  # noqa: F401
