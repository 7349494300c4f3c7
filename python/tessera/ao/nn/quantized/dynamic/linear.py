"""DynamicQuantizedLinear (torch.ao.nn.quantized.dynamic.Linear): quantized::linear_dynamic,
which quantizes each input to quint8 with qparams from its own range, multiplies by the
packed qint8 weight and returns float."""
from ..... import _C
from .....ops import ops
from .....nn.modules import linear as float_linear
from .....nn.modules.multihead import NonDynamicallyQuantizableLinear
from .. import linear as nnq_linear
from ..utils import _quantize_weight

__all__ = ["Linear"]


class Linear(nnq_linear.Linear):
    _version = 4
    _FLOAT_MODULE = (float_linear.Linear, NonDynamicallyQuantizableLinear)

    def __init__(self, in_features, out_features, bias_=True, dtype=_C.qint8):
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        # scale and zero_point stay as nnq.Linear's (1.0, 0) and unused, as in torch
        self.version = 4

    def forward(self, x):
        if self._packed_params.dtype != _C.qint8:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        if self.version is None or self.version < 4:
            Y = ops.quantized.linear_dynamic(x, self._packed_params._packed_params)  # noqa: N806
        else:
            Y = ops.quantized.linear_dynamic(x, self._packed_params._packed_params, reduce_range=True)  # noqa: N806
        return Y.to(x.dtype)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        extra_repr_str = (f"in_features={self.in_features}, out_features={self.out_features}, "
                          f"dtype={self._packed_params.dtype}")
        if self._packed_params.dtype == _C.qint8:
            extra_repr_str += f", qscheme={self.weight().qscheme()}"
        return extra_repr_str

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.version = local_metadata.get("version", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def from_float(cls, mod):
        """The dynamic twin of a float Linear carrying a qconfig (its weight observer), as
        quantize_dynamic builds it."""
        from ...intrinsic.modules import LinearReLU  # imports the quantized modules
        float_modules = cls._FLOAT_MODULE + (LinearReLU,)
        if type(mod) not in float_modules:
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for one of"
                                 + str([m.__name__ for m in float_modules]))
        assert hasattr(mod, "qconfig"), "Input float module must have qconfig defined"
        if type(mod) == LinearReLU:  # the relu is dropped, as torch 1.13 drops it
            mod = mod[0]
        if mod.qconfig is not None and mod.qconfig.weight is not None:
            weight_observer = mod.qconfig.weight()
        else:
            from ....quantization.observer import MinMaxObserver
            weight_observer = MinMaxObserver(dtype=_C.qint8, qscheme=_C.per_tensor_symmetric)
        dtype = weight_observer.dtype
        if dtype != _C.qint8:
            raise RuntimeError("Unsupported dtype specified for dynamic quantized Linear!")
        weight_observer(mod.weight)
        qweight = _quantize_weight(mod.weight.float(), weight_observer)
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        return qlinear

    @classmethod
    def from_reference(cls, ref_qlinear):
        qlinear = cls(ref_qlinear.in_features, ref_qlinear.out_features, dtype=ref_qlinear.weight_dtype)
        qlinear.set_weight_bias(ref_qlinear.get_quantized_weight(), ref_qlinear.bias)
        return qlinear
