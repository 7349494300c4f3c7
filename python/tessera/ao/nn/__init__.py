"""tessera.ao.nn: torch.ao.nn's namespace: the quantized modules (static and dynamic), the
fused (intrinsic) modules that quantization converts from, and the quantization-aware-training
modules (qat) that prepare_qat swaps in."""
from . import quantized  # noqa: F401
from . import intrinsic  # noqa: F401
from . import qat  # noqa: F401

__all__ = ["quantized", "intrinsic", "qat"]
