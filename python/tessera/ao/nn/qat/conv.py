"""The quantization-aware-training convolutions (torch.ao.nn.qat.Conv1d/2d/3d): float
convolutions whose weight passes through a fake quantizer (qconfig.weight()) on every
forward. The fused QAT ConvReLU*d of tessera.ao.nn.intrinsic.qat build on them."""
from ....nn.modules import conv as float_conv
from ....nn.modules.utils import _pair, _single, _triple
from ....nn.parameter import Parameter
from ..intrinsic.modules import _FusedModule

__all__ = ["Conv1d", "Conv2d", "Conv3d"]


def float_conv_copy(qat_conv):
    """The float convolution (its class's _FLOAT_CONV_MODULE) with qat_conv's geometry and
    detached copies of its weight and bias."""
    conv = type(qat_conv)._FLOAT_CONV_MODULE(qat_conv.in_channels, qat_conv.out_channels, qat_conv.kernel_size,
                                             qat_conv.stride, qat_conv.padding, qat_conv.dilation, qat_conv.groups,
                                             qat_conv.bias is not None, qat_conv.padding_mode)
    conv.weight = Parameter(qat_conv.weight.detach())
    if qat_conv.bias is not None:
        conv.bias = Parameter(qat_conv.bias.detach())
    return conv


class _ConvNd(float_conv._ConvNd):
    """What the QAT convolutions share; the concrete classes also derive from the float
    Conv*d, which supplies _conv_forward."""

    _FLOAT_MODULE = None        # what from_float accepts
    _FLOAT_CONV_MODULE = None   # the float convolution to_float makes
    _FLOAT_RELU_MODULE = None   # set by the fused ConvReLU*d

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, qconfig=None, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        float_conv._ConvNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                                    transposed, output_padding, groups, bias, padding_mode, **factory_kwargs)
        assert qconfig, "qconfig must be provided for QAT module"
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight(factory_kwargs=factory_kwargs)

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @staticmethod
    def from_float(cls, mod):
        """The QAT module of class `cls` for a float convolution (or fused ConvReLU*d) that
        carries a qconfig, sharing its weight and bias."""
        assert type(mod) == cls._FLOAT_MODULE, \
            "qat." + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__
        assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined"
        assert mod.qconfig, "Input float module must have a valid qconfig"
        if issubclass(type(mod), _FusedModule):
            mod = mod[0]
        qat_conv = cls(mod.in_channels, mod.out_channels, mod.kernel_size, stride=mod.stride, padding=mod.padding,
                       dilation=mod.dilation, groups=mod.groups, bias=mod.bias is not None,
                       padding_mode=mod.padding_mode, qconfig=mod.qconfig)
        qat_conv.weight = mod.weight
        qat_conv.bias = mod.bias
        return qat_conv

    def to_float(self):
        """The float convolution with this weight and bias (detached copies of the
        references); for the fused ConvReLU*d, the float ConvReLU*d around it."""
        cls = type(self)
        conv = float_conv_copy(self)
        if not issubclass(cls, _FusedModule):
            return conv
        assert cls._FLOAT_RELU_MODULE is not None
        fused = cls._FLOAT_MODULE(conv, cls._FLOAT_RELU_MODULE())
        fused.train(self.training)
        return fused


def _qat_conv(float_cls, to_tuple):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", qconfig=None, device=None, dtype=None):
        padding = padding if isinstance(padding, str) else to_tuple(padding)
        _ConvNd.__init__(self, in_channels, out_channels, to_tuple(kernel_size), stride=to_tuple(stride),
                         padding=padding, dilation=to_tuple(dilation), transposed=False, output_padding=to_tuple(0),
                         groups=groups, bias=bias, padding_mode=padding_mode, qconfig=qconfig, device=device,
                         dtype=dtype)

    def from_float(cls, mod):
        return _ConvNd.from_float(cls, mod)

    name = float_cls.__name__
    return type(name, (_ConvNd, float_cls), {
        "__doc__": f"{name} whose weight is fake-quantized by weight_fake_quant on every forward.",
        "__init__": __init__, "from_float": classmethod(from_float), "_FLOAT_MODULE": float_cls,
        "_FLOAT_CONV_MODULE": float_cls, "__module__": __name__})


Conv1d = _qat_conv(float_conv.Conv1d, _single)
Conv2d = _qat_conv(float_conv.Conv2d, _pair)
Conv3d = _qat_conv(float_conv.Conv3d, _triple)
