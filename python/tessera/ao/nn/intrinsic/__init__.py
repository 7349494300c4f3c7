"""tessera.ao.nn.intrinsic: the fused float modules of torch.ao.nn.intrinsic that fuse_modules
produces and the quantized modules convert from (ConvReLU1d/2d/3d, LinearReLU); `quantized`
holds their quantized forms."""
from .modules import ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU, _FusedModule  # noqa: F401
from . import quantized  # noqa: F401,E402

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "quantized"]
