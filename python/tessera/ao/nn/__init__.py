"""tessera.ao.nn: torch.ao.nn's namespace: the quantized modules (static and dynamic) and the
fused (intrinsic) modules that quantization converts from."""
from . import quantized  # noqa: F401
from . import intrinsic  # noqa: F401

__all__ = ["quantized", "intrinsic"]
