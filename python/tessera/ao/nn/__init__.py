"""tessera.ao.nn: torch.ao.nn's namespace; only quantized's float-mode modules exist yet."""
from . import quantized  # noqa: F401

__all__ = ["quantized"]
