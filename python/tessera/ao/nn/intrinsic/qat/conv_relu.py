"""The quantization-aware-training ConvReLU1d/2d/3d of torch.nn.intrinsic.qat: the QAT
convolution (weight fake-quantized on every forward) followed by relu, converted later to
the quantized ConvReLU*d that runs the relu in the convolution's epilogue."""
from .....nn import functional as F
from .....nn.modules import conv as float_conv
from .....nn.modules.activation import ReLU
from ...qat import conv as qat_conv
from .. import modules as nni

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]


def _qat_conv_relu(base, dims):
    class ConvReLU(base, nni._FusedModule):
        __doc__ = f"relu(conv{dims}d(x, fq(W), b)) for quantization-aware training."
        _FLOAT_MODULE = getattr(nni, f"ConvReLU{dims}d")
        _FLOAT_CONV_MODULE = getattr(float_conv, f"Conv{dims}d")
        _FLOAT_BN_MODULE = None
        _FLOAT_RELU_MODULE = ReLU

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", qconfig=None):
            base.__init__(self, in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                          dilation=dilation, groups=groups, bias=bias, padding_mode=padding_mode, qconfig=qconfig)

        def forward(self, input):
            return F.relu(self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias))

    ConvReLU.__name__ = ConvReLU.__qualname__ = f"ConvReLU{dims}d"
    return ConvReLU


ConvReLU1d = _qat_conv_relu(qat_conv.Conv1d, 1)
ConvReLU2d = _qat_conv_relu(qat_conv.Conv2d, 2)
ConvReLU3d = _qat_conv_relu(qat_conv.Conv3d, 3)
