"""tessera.ao.nn.intrinsic.quantized: the quantized fused modules (relu in the GEMM's or the
convolution's epilogue)."""
from .conv_relu import ConvReLU1d, ConvReLU2d, ConvReLU3d  # noqa: F401
from .linear_relu import LinearReLU  # noqa: F401

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU"]
