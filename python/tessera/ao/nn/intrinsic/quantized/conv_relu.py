"""QuantizedConvReLU1d/2d/3d (torch.ao.nn.intrinsic.quantized): quantized::conv{1,2,3}d_relu,
the relu done in the convolution's epilogue."""
from .....ops import ops
from ....nn.quantized import conv as nnq_conv
from .. import modules as fused

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d"]


class ConvReLU1d(nnq_conv.Conv1d):
    _FLOAT_MODULE = fused.ConvReLU1d

    def _run(self, input):
        return ops.quantized.conv1d_relu(input, self._packed_params, self.scale, self.zero_point)

    def _get_name(self):
        return "QuantizedConvReLU1d"


class ConvReLU2d(nnq_conv.Conv2d):
    _FLOAT_MODULE = fused.ConvReLU2d

    def _run(self, input):
        return ops.quantized.conv2d_relu(input, self._packed_params, self.scale, self.zero_point)

    def _get_name(self):
        return "QuantizedConvReLU2d"


class ConvReLU3d(nnq_conv.Conv3d):
    _FLOAT_MODULE = fused.ConvReLU3d

    def _run(self, input):
        return ops.quantized.conv3d_relu(input, self._packed_params, self.scale, self.zero_point)

    def _get_name(self):
        return "QuantizedConvReLU3d"
