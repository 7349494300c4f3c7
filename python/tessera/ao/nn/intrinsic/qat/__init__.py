"""tessera.ao.nn.intrinsic.qat: the fused quantization-aware-training modules (torch 1.13's
torch.nn.intrinsic.qat): conv + batch norm (+ relu) with the batch norm folded into the
fake-quantized weight, ConvReLU*d, LinearReLU, LinearBn1d, and update_bn_stats /
freeze_bn_stats for model.apply."""
from .conv_fused import (ConvBn1d, ConvBn2d, ConvBn3d, ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d,  # noqa: F401
                         freeze_bn_stats, update_bn_stats)
from .conv_relu import ConvReLU1d, ConvReLU2d, ConvReLU3d  # noqa: F401
from .linear_fused import LinearBn1d  # noqa: F401
from .linear_relu import LinearReLU  # noqa: F401

__all__ = ["LinearReLU", "LinearBn1d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvBn1d", "ConvBn2d", "ConvBn3d",
           "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "update_bn_stats", "freeze_bn_stats"]
