"""tessera.ao.nn.quantized: the modules quantization-ready models build in float mode.
FloatFunctional (and FXFloatFunctional) stand in for the tensor operations a quantized
model observes (add, mul, cat, add_relu, ...), running them in float until convert()
swaps in a quantized version. The quantized modules themselves (Conv2d, Linear, ... on
quantized tensors) belong to the quantized backend, which tessera does not have yet."""
from .functional_modules import FloatFunctional, FXFloatFunctional  # noqa: F401

__all__ = ["FloatFunctional", "FXFloatFunctional"]
