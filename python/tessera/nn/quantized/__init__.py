"""tessera.nn.quantized: torch.nn.quantized's older name for tessera.ao.nn.quantized
(FloatFunctional and FXFloatFunctional; the quantized modules are not implemented yet)."""
from ...ao.nn.quantized import FloatFunctional, FXFloatFunctional  # noqa: F401

__all__ = ["FloatFunctional", "FXFloatFunctional"]
