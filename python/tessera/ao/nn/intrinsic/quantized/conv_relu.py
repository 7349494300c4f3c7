"""QuantizedConvReLU1d/2d/3d (torch.ao.nn.intrinsic.quantized): quantized::conv{1,2,3}d_relu,
the relu done in the convolution's epilogue."""
from ....nn.quantized import conv as nnq_conv
from .. import modules as fused

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]


def _conv_relu(base, dims):
    cls = type(f"ConvReLU{dims}d", (base,), {
        "__doc__": f"quantized::conv{dims}d_relu on a packed weight.",
        "_FLOAT_MODULE": getattr(fused, f"ConvReLU{dims}d"),
        "_RELU": True,
        "_get_name": lambda self: f"QuantizedConvReLU{dims}d",
        "__module__": __name__,
    })
    return cls


ConvReLU1d = _conv_relu(nnq_conv.Conv1d, 1)
ConvReLU2d = _conv_relu(nnq_conv.Conv2d, 2)
ConvReLU3d = _conv_relu(nnq_conv.Conv3d, 3)
