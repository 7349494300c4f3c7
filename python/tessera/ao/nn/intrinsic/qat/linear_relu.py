"""The quantization-aware-training LinearReLU of torch.nn.intrinsic.qat: the QAT Linear
(weight fake-quantized on every forward) followed by relu."""
from .....nn import functional as F
from .....nn.modules.activation import ReLU
from .....nn.modules.linear import Linear as FloatLinear
from .....nn.parameter import Parameter
from ...qat.linear import Linear as QATLinear
from .. import modules as nni

__all__ = ["LinearReLU"]


class LinearReLU(QATLinear, nni._FusedModule):
    """relu(x fq(W)^T + b); from_float takes a fused float LinearReLU."""

    _FLOAT_MODULE = nni.LinearReLU

    def __init__(self, in_features, out_features, bias=True, qconfig=None):
        super().__init__(in_features, out_features, bias, qconfig)

    def forward(self, input):
        return F.relu(F.linear(input, self.weight_fake_quant(self.weight), self.bias))

    @classmethod
    def from_float(cls, mod):
        return super().from_float(mod)

    def to_float(self):
        linear = FloatLinear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = Parameter(self.bias.detach())
        return nni.LinearReLU(linear, ReLU())
