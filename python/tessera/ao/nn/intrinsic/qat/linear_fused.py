"""The quantization-aware-training LinearBn1d of torch.nn.intrinsic.qat: Linear + BatchNorm1d
trained with the batch norm folded into the weight that gets fake-quantized (scaled by
gamma / running_std), as the conv + batch norm modules do, so the quantized Linear it
converts to sees the weights training saw."""
from ..... import _C
from .....nn import functional as F
from .....nn import init
from .....nn.modules.batchnorm import BatchNorm1d
from .....nn.modules.linear import Linear as FloatLinear
from .....nn.utils.fusion import fuse_linear_bn_weights
from .. import modules as nni
from ._bn_stats import _BatchNormStatsMixin

__all__ = ["LinearBn1d"]


class LinearBn1d(_BatchNormStatsMixin, FloatLinear, nni._FusedModule):
    """The Linear's weight and bias, the batch norm as child `bn` and the weight's fake
    quantizer; freeze_bn keeps the batch norm in eval mode (running statistics)."""

    def __init__(self, in_features, out_features, bias=True, eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None):
        FloatLinear.__init__(self, in_features, out_features, bias)
        assert qconfig, "qconfig must be provded for QAT module"
        self.qconfig = qconfig
        self._set_up_batch_norm(BatchNorm1d(out_features, eps, momentum, True, True), bias, freeze_bn)

    def reset_bn_parameters(self):
        # unlike the conv modules, the bias keeps its fresh empty() contents, as in torch
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)

    def reset_parameters(self):
        super(LinearBn1d, self).reset_parameters()

    def forward(self, input):
        """x fq(W * gamma / running_std)^T, divided back by gamma / running_std, plus the
        bias, through the batch norm (https://arxiv.org/pdf/1806.08342.pdf, p. 18)."""
        assert self.bn.running_var is not None
        running_std = _C.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape([-1, 1]))
        if self.bias is not None:
            zero_bias = _C.zeros_like(self.bias)
        else:
            zero_bias = _C.zeros(self.out_features, device=scaled_weight.device)
        linear_out = F.linear(input, scaled_weight, zero_bias)
        linear_out_orig = linear_out / scale_factor.reshape([1, -1])
        if self.bias is not None:
            linear_out_orig = linear_out_orig + self.bias.reshape([1, -1])
        return self.bn(linear_out_orig)

    @classmethod
    def from_float(cls, mod):
        """The QAT module for a fused float LinearBn1d carrying a qconfig, sharing the
        Linear's weight and bias and the batch norm's parameters and running statistics."""
        assert type(mod) == nni.LinearBn1d, \
            "qat." + cls.__name__ + ".from_float only works for " + nni.LinearBn1d.__name__
        assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined"
        assert mod.qconfig, "Input float module must have a valid config"
        linear, bn = mod[0], mod[1]
        qat_linearbn = cls(linear.in_features, linear.out_features, linear.bias is not None, bn.eps, bn.momentum,
                           False, mod.qconfig)
        return qat_linearbn._share_float_modules(linear, bn)

    def to_float(self):
        """A float Linear with the batch norm folded in (its running statistics)."""
        linear = FloatLinear(self.in_features, self.out_features)
        linear.weight, linear.bias = fuse_linear_bn_weights(self.weight, self.bias, self.bn.running_mean,
                                                            self.bn.running_var, self.bn.eps, self.bn.weight,
                                                            self.bn.bias)
        return linear
