"""tessera.ao: torch.ao's namespace (architecture optimisation). Only the float-mode
pieces of quantization exist yet; see tessera.ao.quantization and tessera.ao.nn.quantized."""
from . import nn, quantization  # noqa: F401

__all__ = ["nn", "quantization"]
