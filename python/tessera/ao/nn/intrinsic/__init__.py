"""tessera.ao.nn.intrinsic: the fused float modules of torch.ao.nn.intrinsic that fuse_modules
produces and the quantized modules convert from (ConvReLU1d/2d/3d, ConvBn1d/2d/3d,
ConvBnReLU1d/2d/3d, LinearReLU, LinearBn1d, BNReLU2d/3d); `qat` holds their
quantization-aware-training forms and `quantized` their quantized ones."""
from . import modules as _modules
from .modules import (BNReLU2d, BNReLU3d, ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d,  # noqa: F401
                      ConvBnReLU3d, ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearBn1d, LinearReLU)
from . import quantized  # noqa: F401,E402
from . import qat  # noqa: F401,E402

_FusedModule = _modules._FusedModule  # torch exports it here too, outside __all__

__all__ = ["ConvBn1d", "ConvBn2d", "ConvBn3d", "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "ConvReLU1d",
           "ConvReLU2d", "ConvReLU3d", "LinearReLU", "BNReLU2d", "BNReLU3d", "LinearBn1d", "qat", "quantized"]
