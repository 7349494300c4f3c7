"""tessera.nn.quantized: torch.nn.quantized's older name for tessera.ao.nn.quantized (the same
modules; `import tessera.nn.quantized.dynamic` finds tessera.ao.nn.quantized.dynamic)."""
import sys as _sys

from ...ao.nn import quantized as _ao_quantized
from ...ao.nn.quantized import *  # noqa: F401,F403
from ...ao.nn.quantized import dynamic, functional  # noqa: F401

__all__ = list(_ao_quantized.__all__)
for _name in ("dynamic", "functional"):
    _sys.modules.setdefault(f"{__name__}.{_name}", getattr(_ao_quantized, _name))
