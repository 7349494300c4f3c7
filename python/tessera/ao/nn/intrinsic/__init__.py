"""tessera.ao.nn.intrinsic: the fused float modules of torch.ao.nn.intrinsic that fuse_modules
produces and the quantized modules convert from (LinearReLU so far); `quantized` holds their
quantized forms."""
from .modules import LinearReLU, _FusedModule  # noqa: F401
from . import quantized  # noqa: F401,E402

__all__ = ["LinearReLU", "quantized"]
