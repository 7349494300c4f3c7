"""QuantizedLinearReLU (torch.ao.nn.intrinsic.quantized.LinearReLU): quantized::linear_relu,
the relu done in the GEMM's epilogue."""
from ..... import _C
from .....ops import ops
from ....nn.quantized.linear import Linear
from ..modules import LinearReLU as FloatLinearReLU

__all__ = ["LinearReLU"]


class LinearReLU(Linear):
    _FLOAT_MODULE = FloatLinearReLU

    def __init__(self, in_features, out_features, bias=True, dtype=_C.qint8):
        super().__init__(in_features, out_features, bias, dtype)

    def forward(self, x):
        return ops.quantized.linear_relu(x, self._packed_params._packed_params, self.scale, self.zero_point)

    def _get_name(self):
        return "QuantizedLinearReLU"

    @classmethod
    def from_float(cls, mod):
        return super(LinearReLU, cls).from_float(mod)

    @classmethod
    def from_reference(cls, ref_linear_relu, output_scale, output_zero_point):
        return super().from_reference(ref_linear_relu[0], output_scale, output_zero_point)
