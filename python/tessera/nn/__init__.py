"""tessera.nn: torch.nn's functional interface (``tessera.nn.functional``). Modules,
parameters and initialisation belong to the training stack and are not here yet."""
from . import functional  # noqa: F401

__all__ = ["functional"]
