"""The quantization-aware-training conv + batch norm modules of torch.nn.intrinsic.qat
(ConvBn1d/2d/3d, ConvBnReLU1d/2d/3d): during training the convolution sees the weight the
quantized model will have, the float weight scaled by gamma / running_std (the batch norm
folded in) and fake-quantized, while the batch norm still normalizes with batch statistics."""
import math

from ..... import _C
from .....autograd.grad_mode import no_grad
from .....nn import functional as F
from .....nn import init
from .....nn.modules import conv as float_conv
from .....nn.modules.activation import ReLU
from .....nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .....nn.modules.utils import _pair, _single, _triple
from .....nn.utils.fusion import fuse_conv_bn_weights
from .. import modules as nni
from ._bn_stats import _BatchNormStatsMixin
from ...qat.conv import float_conv_copy

__all__ = ["ConvBn1d", "ConvBnReLU1d", "ConvBn2d", "ConvBnReLU2d", "ConvBn3d", "ConvBnReLU3d", "update_bn_stats",
           "freeze_bn_stats"]

_BN_CLASS_MAP = {1: BatchNorm1d, 2: BatchNorm2d, 3: BatchNorm3d}

# torch 1.13 renamed the batch norm's state into a child `bn` (version 2); version-1 names
_V1_NAMES = {"bn.weight": "gamma", "bn.bias": "beta", "bn.running_mean": "running_mean",
             "bn.running_var": "running_var", "bn.num_batches_tracked": "num_batches_tracked"}


class _ConvBnNd(_BatchNormStatsMixin, float_conv._ConvNd, nni._FusedModule):
    """The convolution's weight and bias, the batch norm as child `bn` (affine, tracking
    running stats) and the weight's fake quantizer. freeze_bn puts the batch norm in eval
    mode for good: it then normalizes with (and no longer updates) its running statistics."""

    _version = 2
    _FLOAT_MODULE = None          # the fused float module from_float takes
    _FLOAT_CONV_MODULE = None
    _FLOAT_BN_MODULE = None
    _FLOAT_RELU_MODULE = None
    _FUSED_FLOAT_MODULE = None    # what to_float returns for the ReLU forms (BN folded away)

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None, dim=2):
        # the convolution is built without bias: its bias is added after the unscaling
        float_conv._ConvNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                                    transposed, output_padding, groups, False, padding_mode)
        assert qconfig, "qconfig must be provided for QAT module"
        self.qconfig = qconfig
        self._set_up_batch_norm(_BN_CLASS_MAP[dim](out_channels, eps, momentum, True, True), bias, freeze_bn)
        self._enable_slow_path_for_better_numerical_stability = False

    def reset_bn_parameters(self):
        """Running stats reset, gamma ~ U(0, 1), beta = 0, and the convolution's bias drawn
        as Conv*d draws it."""
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def reset_parameters(self):
        super(_ConvBnNd, self).reset_parameters()

    def _shapes(self):
        # per output channel: along dim 0 of the weight, dim 1 of the activation
        weight_shape = [1] * self.weight.dim()
        weight_shape[0] = -1
        bias_shape = [1] * self.weight.dim()
        bias_shape[1] = -1
        return weight_shape, bias_shape

    def _forward(self, input):
        if self._enable_slow_path_for_better_numerical_stability:
            return self._forward_slow(input)
        return self._forward_approximate(input)

    def _forward_approximate(self, input):
        """One convolution with fq(W * gamma / running_std), its output divided back by
        gamma / running_std, the bias added, then the batch norm (batch statistics while
        training). Exact up to the fake quantization, but fails where gamma is 0."""
        assert self.bn.running_var is not None
        weight_shape, bias_shape = self._shapes()
        running_std = _C.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(weight_shape))
        # the bias must come after the division, so the convolution runs with zeros
        if self.bias is not None:
            zero_bias = _C.zeros_like(self.bias, dtype=input.dtype)
        else:
            zero_bias = _C.zeros(self.out_channels, device=scaled_weight.device, dtype=input.dtype)
        conv = self._conv_forward(input, scaled_weight, zero_bias)
        conv_orig = conv / scale_factor.reshape(bias_shape)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(bias_shape)
        return self.bn(conv_orig)

    def _forward_slow(self, input):
        """The two-convolution form of https://arxiv.org/pdf/1806.08342.pdf, which also
        handles gamma == 0: a float convolution gives the batch statistics (and updates the
        running ones), a second one with fq(W * gamma / running_std) the output, rescaled
        by running_std / batch_std and shifted by the fused bias."""
        assert self.bn.running_var is not None and self.bn.running_mean is not None
        weight_shape, bias_shape = self._shapes()
        zero_bias = _C.zeros(self.out_channels, device=self.weight.device, dtype=input.dtype)
        if self.bn.training:
            conv_out = self._conv_forward(input, self.weight, zero_bias)
            with no_grad():
                self.bn(conv_out if self.bias is None else conv_out + self.bias.reshape(bias_shape))
        running_std = _C.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(weight_shape))
        conv_bn = self._conv_forward(input, scaled_weight, zero_bias)
        if self.bn.training:
            avg_dims = [0] + list(range(2, self.weight.dim()))
            batch_mean = conv_out.mean(avg_dims)
            batch_var = _C.square(conv_out - batch_mean.reshape(bias_shape)).mean(avg_dims)
            batch_std = _C.sqrt(batch_var + self.bn.eps)
            conv_bn = conv_bn * (running_std / batch_std).reshape(bias_shape)
            fused_mean, fused_std = batch_mean, batch_std
        else:
            fused_mean = self.bn.running_mean - (self.bias if self.bias is not None else 0)
            fused_std = running_std
        conv_bn = conv_bn + (self.bn.bias - self.bn.weight * fused_mean / fused_std).reshape(bias_shape)
        if self.bias is not None:
            # a zero term so that the bias takes part in the loss (DDP wants every parameter used)
            conv_bn = conv_bn + (self.bias - self.bias).reshape(bias_shape)
        return conv_bn

    def forward(self, input):
        return self._forward(input)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version == 1:
            for v2_name, v1_name in _V1_NAMES.items():
                if prefix + v1_name in state_dict:
                    state_dict[prefix + v2_name] = state_dict.pop(prefix + v1_name)
                elif prefix + v2_name in state_dict:
                    # some version-1 state dicts already used the version-2 names
                    pass
                elif strict:
                    missing_keys.append(prefix + v2_name)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def from_float(cls, mod):
        """The QAT module for a fused float ConvBn*d / ConvBnReLU*d carrying a qconfig: it
        shares the convolution's weight and bias and the batch norm's parameters and
        running statistics."""
        assert type(mod) == cls._FLOAT_MODULE, \
            "qat." + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__
        assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined"
        assert mod.qconfig, "Input float module must have a valid qconfig"
        conv, bn = mod[0], mod[1]
        qat_convbn = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
                         conv.dilation, conv.groups, conv.bias is not None, conv.padding_mode, bn.eps, bn.momentum,
                         False, mod.qconfig)
        return qat_convbn._share_float_modules(conv, bn)

    def to_float(self):
        """The float convolution with the batch norm folded in (its running statistics), in
        a float ConvReLU*d for the ReLU forms."""
        cls = type(self)
        conv = float_conv_copy(self)
        conv.weight, conv.bias = fuse_conv_bn_weights(conv.weight, conv.bias, self.bn.running_mean,
                                                      self.bn.running_var, self.bn.eps, self.bn.weight, self.bn.bias)
        if cls._FLOAT_RELU_MODULE is None:
            conv.train(self.training)
            return conv
        conv_relu = cls._FUSED_FLOAT_MODULE(conv, cls._FLOAT_RELU_MODULE())
        conv_relu.train(self.training)
        return conv_relu


def _conv_bn_classes(dims, float_conv_cls, to_tuple):
    """ConvBn{dims}d and ConvBnReLU{dims}d."""

    class ConvBn(_ConvBnNd, float_conv_cls):
        __doc__ = f"Conv{dims}d + BatchNorm{dims}d for quantization-aware training."
        _FLOAT_MODULE = getattr(nni, f"ConvBn{dims}d")
        _FLOAT_CONV_MODULE = float_conv_cls
        _FLOAT_BN_MODULE = _BN_CLASS_MAP[dims]

        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=None, padding_mode="zeros", eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None):
            _ConvBnNd.__init__(self, in_channels, out_channels, to_tuple(kernel_size), to_tuple(stride),
                               to_tuple(padding), to_tuple(dilation), False, to_tuple(0), groups, bias, padding_mode,
                               eps, momentum, freeze_bn, qconfig, dim=dims)

    class ConvBnReLU(ConvBn):
        __doc__ = f"Conv{dims}d + BatchNorm{dims}d + ReLU for quantization-aware training."
        _FLOAT_MODULE = getattr(nni, f"ConvBnReLU{dims}d")
        _FLOAT_RELU_MODULE = ReLU
        _FUSED_FLOAT_MODULE = getattr(nni, f"ConvReLU{dims}d")

        def forward(self, input):
            return F.relu(_ConvBnNd._forward(self, input))

    for cls, name in ((ConvBn, f"ConvBn{dims}d"), (ConvBnReLU, f"ConvBnReLU{dims}d")):
        cls.__name__ = cls.__qualname__ = name
    return ConvBn, ConvBnReLU


ConvBn1d, ConvBnReLU1d = _conv_bn_classes(1, float_conv.Conv1d, _single)
ConvBn2d, ConvBnReLU2d = _conv_bn_classes(2, float_conv.Conv2d, _pair)
ConvBn3d, ConvBnReLU3d = _conv_bn_classes(3, float_conv.Conv3d, _triple)

_CONV_BN_CLASSES = (ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d, ConvBn1d, ConvBn2d, ConvBn3d)


def update_bn_stats(mod):
    """For model.apply: lets the conv + batch norm modules update their running statistics
    again (LinearBn1d is left as it is, as in torch)."""
    if type(mod) in _CONV_BN_CLASSES:
        mod.update_bn_stats()


def freeze_bn_stats(mod):
    """For model.apply: freezes the batch norms of the conv + batch norm modules."""
    if type(mod) in _CONV_BN_CLASSES:
        mod.freeze_bn_stats()
