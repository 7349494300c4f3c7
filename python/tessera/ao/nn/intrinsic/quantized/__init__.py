"""tessera.ao.nn.intrinsic.quantized: the quantized fused modules (relu in the GEMM's, the
convolution's or the batch norm's epilogue)."""
from .bn_relu import BNReLU2d, BNReLU3d  # noqa: F401
from .conv_relu import ConvReLU1d, ConvReLU2d, ConvReLU3d  # noqa: F401
from .linear_relu import LinearReLU  # noqa: F401

__all__ = ["BNReLU2d", "BNReLU3d", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU"]
