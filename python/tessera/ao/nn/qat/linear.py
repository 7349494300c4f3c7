"""The quantization-aware-training Linear (torch.ao.nn.qat.Linear): a float Linear whose
weight passes through a fake quantizer (qconfig.weight()) on every forward, so that training
sees the rounding the quantized model will have."""
from ....nn import functional as F
from ....nn.modules import linear as float_linear
from ....nn.parameter import Parameter
from ....nn.utils.parametrize import is_parametrized, transfer_parametrizations_and_params, \
    type_before_parametrizations
from ..intrinsic.modules import LinearReLU

__all__ = ["Linear"]


class Linear(float_linear.Linear):
    """y = x fq(W)^T + b, fq being weight_fake_quant."""

    _FLOAT_MODULE = float_linear.Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(in_features, out_features, bias, **factory_kwargs)
        assert qconfig, "qconfig must be provided for QAT module"
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight(factory_kwargs=factory_kwargs)

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod):
        """The QAT twin of a float module that carries a qconfig (prepare_qat's input),
        sharing its weight and bias (and their parametrizations)."""
        assert type_before_parametrizations(mod) == cls._FLOAT_MODULE, \
            " qat." + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__
        assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined"
        assert mod.qconfig, "Input float module must have a valid qconfig"
        if type_before_parametrizations(mod) == LinearReLU:
            mod = mod[0]
        qat_linear = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=mod.qconfig)
        for name in ("weight", "bias"):
            if is_parametrized(mod, name):
                transfer_parametrizations_and_params(mod, qat_linear, name)
            else:
                setattr(qat_linear, name, getattr(mod, name))
        return qat_linear

    def to_float(self):
        linear = float_linear.Linear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = Parameter(self.bias.detach())
        linear.train(self.training)
        return linear
