"""tessera.ao: torch.ao's namespace (architecture optimisation): quantization's eager
workflow (tessera.ao.quantization) and its modules (tessera.ao.nn)."""
from . import nn, quantization  # noqa: F401

__all__ = ["nn", "quantization"]
