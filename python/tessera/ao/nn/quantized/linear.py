"""The quantized Linear of torch.ao.nn.quantized (modules/linear.py): a qint8 weight packed
once by quantized::linear_prepack and run by quantized::linear on quint8 activations. The
packed weight lives in LinearPackedParams; the state dict holds it unpacked, (weight, bias),
in torch's format, so state dicts move between tessera and torch both ways."""
from .... import _C
from ....ops import ops
from ....nn.modules.module import Module
from ....nn.modules import linear as float_linear
from ....nn.modules.multihead import NonDynamicallyQuantizableLinear
from ....nn.utils.fusion import fuse_linear_bn_weights
from ....nn.utils.parametrize import type_before_parametrizations
from .utils import WeightedQuantizedModule, _hide_packed_params_repr, _quantize_weight

__all__ = ["LinearPackedParams", "Linear"]


class LinearPackedParams(Module):
    """Holds quantized::linear_prepack's result; qint8 is the only dtype this build packs
    (torch 1.13's float16 packing needs FBGEMM, which Debian's torch lacks too)."""
    _version = 3

    def __init__(self, dtype=_C.qint8):
        super().__init__()
        self.dtype = dtype
        if self.dtype != _C.qint8:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        wq = _C._empty_affine_quantized([1, 1], scale=1.0, zero_point=0, dtype=_C.qint8)
        self.set_weight_bias(wq, None)

    def set_weight_bias(self, weight, bias):
        self._packed_params = ops.quantized.linear_prepack(weight, bias)

    def _weight_bias(self):
        return ops.quantized.linear_unpack(self._packed_params)

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            self.dtype = _C.qint8
        else:
            self.dtype = state_dict[prefix + "dtype"]
            state_dict.pop(prefix + "dtype")
        if self.dtype != _C.qint8:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        if version is None or version < 3:
            self.set_weight_bias(state_dict[prefix + "weight"], state_dict[prefix + "bias"])
            state_dict.pop(prefix + "weight")
            state_dict.pop(prefix + "bias")
        if version == 3:
            weight, bias = state_dict[prefix + "_packed_params"]
            state_dict.pop(prefix + "_packed_params")
            self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self):
        return self._weight_bias().__repr__()


class Linear(WeightedQuantizedModule):
    """y = quantized::linear(x, packed (W, b), scale, zero_point): quint8 in and out."""
    _version = 3
    _FLOAT_MODULE = (float_linear.Linear, NonDynamicallyQuantizableLinear)

    def __init__(self, in_features, out_features, bias_=True, dtype=_C.qint8):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bias = _C.zeros(out_features, dtype=_C.float) if bias_ else None
        if dtype != _C.qint8:
            raise RuntimeError("Unsupported dtype specified for quantized Linear!")
        qweight = _C._empty_affine_quantized([out_features, in_features], scale=1, zero_point=0, dtype=_C.qint8)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "QuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}")

    def __repr__(self):
        return _hide_packed_params_repr(self, LinearPackedParams)

    def forward(self, x):
        return ops.quantized.linear(x, self._packed_params._packed_params, self.scale, self.zero_point)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = _C.tensor(self.scale)
        destination[prefix + "zero_point"] = _C.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.scale = float(state_dict[prefix + "scale"])
        state_dict.pop(prefix + "scale")
        self.zero_point = int(state_dict[prefix + "zero_point"])
        state_dict.pop(prefix + "zero_point")
        version = local_metadata.get("version", None)
        if version is None or version == 1:
            # version 1 kept the weight and bias at the top level
            weight = state_dict.pop(prefix + "weight")
            bias = state_dict.pop(prefix + "bias")
            state_dict.update({prefix + "_packed_params.weight": weight, prefix + "_packed_params.bias": bias})
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    @classmethod
    def from_float(cls, mod):
        """The quantized twin of a float Linear that prepare() observed (or a fused LinearReLU,
        or a QAT Linear / LinearReLU / LinearBn1d, whose weight_fake_quant observes the weight):
        the weight through qconfig.weight(), the output qparams from the module's
        activation_post_process."""
        if hasattr(mod, "weight_fake_quant"):
            from ..intrinsic.qat import LinearBn1d  # imports this module
            if type_before_parametrizations(mod) == LinearBn1d:
                # the batch norm folded in with its running statistics, as training saw it
                mod.weight, mod.bias = fuse_linear_bn_weights(mod.weight, mod.bias, mod.bn.running_mean,
                                                              mod.bn.running_var, mod.bn.eps, mod.bn.weight,
                                                              mod.bn.bias)
            weight_post_process = mod.weight_fake_quant
            activation_post_process = mod.activation_post_process
        else:
            float_modules = cls._FLOAT_MODULE if isinstance(cls._FLOAT_MODULE, tuple) else (cls._FLOAT_MODULE,)
            if type_before_parametrizations(mod) not in float_modules:
                names = ", ".join(m.__name__ for m in float_modules)
                raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {names}, but got: {type(mod)}")
            assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined"
            activation_post_process = mod.activation_post_process
            from ..intrinsic.modules import LinearReLU as FusedLinearReLU  # imports this module
            if type_before_parametrizations(mod) == FusedLinearReLU:
                mod = mod[0]
            weight_post_process = mod.qconfig.weight()
        weight_post_process(mod.weight)
        dtype = weight_post_process.dtype
        act_scale, act_zp = activation_post_process.calculate_qparams()
        assert dtype == _C.qint8, "Weight observer must have dtype torch.qint8"
        qweight = _quantize_weight(mod.weight.float(), weight_post_process)
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        qlinear.scale = float(act_scale)
        qlinear.zero_point = int(act_zp)
        return qlinear

    @classmethod
    def from_reference(cls, ref_qlinear, output_scale, output_zero_point):
        qlinear = cls(ref_qlinear.in_features, ref_qlinear.out_features)
        qlinear.set_weight_bias(ref_qlinear.get_quantized_weight(), ref_qlinear.bias)
        qlinear.scale = float(output_scale)
        qlinear.zero_point = int(output_zero_point)
        return qlinear
