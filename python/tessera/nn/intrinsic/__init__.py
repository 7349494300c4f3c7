"""tessera.nn.intrinsic: torch.nn.intrinsic's older name for tessera.ao.nn.intrinsic (the fused
modules; `import tessera.nn.intrinsic.quantized` finds the quantized ones and
`tessera.nn.intrinsic.qat` the quantization-aware-training ones)."""
import sys as _sys

from ...ao.nn import intrinsic as _ao_intrinsic
from ...ao.nn.intrinsic import *  # noqa: F401,F403
from ...ao.nn.intrinsic import qat, quantized  # noqa: F401

__all__ = list(_ao_intrinsic.__all__)
_sys.modules.setdefault(f"{__name__}.quantized", quantized)
_sys.modules.setdefault(f"{__name__}.qat", qat)
