"""tessera.ao.nn.quantized.dynamic: modules whose weights are quantized ahead of time and whose
activations are quantized per call (Linear so far); float in, float out."""
from .linear import Linear  # noqa: F401

__all__ = ["Linear"]
