"""tessera.ao.nn.intrinsic.quantized: the quantized fused modules (LinearReLU so far)."""
from .linear_relu import LinearReLU  # noqa: F401

__all__ = ["LinearReLU"]
