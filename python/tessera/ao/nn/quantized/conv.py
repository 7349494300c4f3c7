"""The quantized convolutions of torch.ao.nn.quantized (modules/conv.py): Conv1d, Conv2d and
Conv3d on a qint8 weight packed once by quantized::conv{1,2,3}d_prepack, quint8 in and out
(channels-last results, as torch's). The state dict holds the weight and bias unpacked
(weight, bias, scale, zero_point) in torch's format. The transposed convolutions are not
implemented."""
from .... import _C
from ....ops import ops
from ....nn import functional as F
from ....nn.modules import conv as float_conv
from ....nn.modules.module import Module
from ....nn.modules.utils import _pair, _reverse_repeat_tuple, _single, _triple
from ....nn.utils.fusion import fuse_conv_bn_weights
from .utils import WeightedQuantizedModule, _quantize_weight

__all__ = ["Conv1d", "Conv2d", "Conv3d"]

_SUPPORTED_PADDING = {"zeros", "reflect"}


class _ConvNd(WeightedQuantizedModule):
    _DIMS = None  # 1, 2 or 3
    _NTUPLE = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        to_tuple = self._NTUPLE
        padding = padding if isinstance(padding, str) else to_tuple(padding)
        self._init(in_channels, out_channels, to_tuple(kernel_size), to_tuple(stride), padding, to_tuple(dilation),
                   False, to_tuple(0), groups, bias, padding_mode, device=device, dtype=dtype)

    def _init(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
              groups, bias, padding_mode="zeros", device=None, dtype=None):
        Module.__init__(self)
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        if padding_mode not in _SUPPORTED_PADDING:
            raise ValueError(f"'padding_mode' {padding_mode} is not supported by quantized convolution")
        self.padding_mode = padding_mode
        shape = [in_channels, out_channels // groups] if transposed else [out_channels, in_channels // groups]
        qweight = _C._empty_affine_quantized(shape + list(kernel_size), scale=1, zero_point=0, dtype=_C.qint8,
                                             device=device)
        bias_float = _C.zeros(out_channels, dtype=_C.float, device=device) if bias else None
        self.set_weight_bias(qweight, bias_float)
        self.scale = 1.0
        self.zero_point = 0

    def _prepack(self, w, b, padding):
        return getattr(ops.quantized, f"conv{self._DIMS}d_prepack")(w, b, self.stride, padding, self.dilation,
                                                                     self.groups)

    def set_weight_bias(self, w, b):
        padding = self.padding if self.padding_mode == "zeros" else self._NTUPLE(0)
        self._packed_params = self._prepack(w, b, padding)

    def _weight_bias(self):
        return getattr(ops.quantized, f"conv{self._DIMS}d_unpack")(self._packed_params)

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    _RELU = False  # the fused modules (nniq.ConvReLU*d) run conv*d_relu

    def _run(self, input):
        op = getattr(ops.quantized, f"conv{self._DIMS}d{'_relu' if self._RELU else ''}")
        return op(input, self._packed_params, self.scale, self.zero_point)

    def forward(self, input):
        if len(input.shape) != self._DIMS + 2:
            names = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}[self._DIMS]
            raise ValueError(f"Input shape must be `{names}`!")
        if self.padding_mode != "zeros":
            input = F.pad(input, _reverse_repeat_tuple(self.padding[:self._DIMS], 2), mode=self.padding_mode)
        return self._run(input)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}, scale={scale}, " \
            "zero_point={zero_point}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s.format(**self.__dict__)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        w, b = self._weight_bias()
        destination[prefix + "weight"] = w
        destination[prefix + "bias"] = b
        destination[prefix + "scale"] = _C.tensor(self.scale)
        destination[prefix + "zero_point"] = _C.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.set_weight_bias(state_dict[prefix + "weight"], state_dict[prefix + "bias"])
        state_dict.pop(prefix + "weight")
        state_dict.pop(prefix + "bias")
        self.scale = float(state_dict[prefix + "scale"])
        state_dict.pop(prefix + "scale")
        self.zero_point = int(state_dict[prefix + "zero_point"])
        state_dict.pop(prefix + "zero_point")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __getstate__(self):
        w, b = self._weight_bias()
        return (self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.dilation,
                self.transposed, self.output_padding, self.groups, self.padding_mode, w, b, self.scale,
                self.zero_point, self.training)

    def __setstate__(self, state):
        Module.__init__(self)
        (self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.dilation,
         self.transposed, self.output_padding, self.groups, self.padding_mode) = state[:10]
        self.set_weight_bias(state[10], state[11])
        self.scale, self.zero_point, self.training = state[12], state[13], state[14]

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        new.__setstate__(self.__getstate__())
        return new

    def __copy__(self):
        return self.__deepcopy__({})

    @classmethod
    def get_qconv(cls, mod, activation_post_process, weight_post_process=None):
        """The quantized convolution of float module `mod`: its weight through the weight
        observer, the output qparams from activation_post_process."""
        if weight_post_process is None:
            weight_post_process = mod.qconfig.weight()
        weight_post_process(mod.weight)
        assert weight_post_process.dtype == _C.qint8, "Weight observer must have a dtype of qint8"
        qweight = _quantize_weight(mod.weight.float(), weight_post_process)
        qconv = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                    mod.groups, mod.bias is not None, mod.padding_mode)
        qconv.set_weight_bias(qweight, mod.bias)
        if activation_post_process is not None and activation_post_process.dtype != _C.float:
            act_scale, act_zp = activation_post_process.calculate_qparams()
            qconv.scale = float(act_scale)
            qconv.zero_point = int(act_zp)
        return qconv

    @classmethod
    def from_float(cls, mod):
        if hasattr(mod, "weight_fake_quant"):
            from ..intrinsic import qat as nniqat  # imports this module
            # the batch norm folded in with its running statistics: ConvBn*d here, ConvBnReLU*d in the ReLU form
            if type(mod) == getattr(nniqat, f"ConvBn{'ReLU' if cls._RELU else ''}{cls._DIMS}d"):
                mod.weight, mod.bias = fuse_conv_bn_weights(mod.weight, mod.bias, mod.bn.running_mean,
                                                            mod.bn.running_var, mod.bn.eps, mod.bn.weight, mod.bn.bias)
            assert hasattr(mod, "activation_post_process"), "Input QAT module must have observer attached"
            return cls.get_qconv(mod, mod.activation_post_process, mod.weight_fake_quant)
        from ..intrinsic import modules as fused  # imports this module
        relu_module = getattr(fused, f"ConvReLU{cls._DIMS}d")
        float_module = getattr(cls, "_FLOAT_MODULE", None) or getattr(float_conv, f"Conv{cls._DIMS}d")
        assert type(mod) == float_module, \
            f" nnq.{cls.__name__}.from_float only works for {float_module.__name__} but got:{type(mod)}"
        assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined."
        activation_post_process = getattr(mod, "activation_post_process", None)
        if type(mod) == relu_module:
            mod = mod[0]
        return cls.get_qconv(mod, activation_post_process, mod.qconfig.weight())

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        qconv = cls(ref_qconv.in_channels, ref_qconv.out_channels, ref_qconv.kernel_size, ref_qconv.stride,
                    ref_qconv.padding, ref_qconv.dilation, ref_qconv.groups, ref_qconv.bias is not None,
                    ref_qconv.padding_mode, device=ref_qconv.weight.device, dtype=ref_qconv.weight.dtype)
        qconv.set_weight_bias(ref_qconv.get_quantized_weight(), ref_qconv.bias)
        qconv.scale = float(output_scale)
        qconv.zero_point = int(output_zero_point)
        return qconv


class Conv1d(_ConvNd):
    """quantized::conv1d: torch packs it as a convolution of unit height."""
    _DIMS, _NTUPLE = 1, staticmethod(_single)
    _FLOAT_MODULE = float_conv.Conv1d

    def _get_name(self):
        return "QuantizedConv1d"


class Conv2d(_ConvNd):
    _DIMS, _NTUPLE = 2, staticmethod(_pair)
    _FLOAT_MODULE = float_conv.Conv2d

    def _get_name(self):
        return "QuantizedConv2d"


class Conv3d(_ConvNd):
    _DIMS, _NTUPLE = 3, staticmethod(_triple)
    _FLOAT_MODULE = float_conv.Conv3d

    def _get_name(self):
        return "QuantizedConv3d"
