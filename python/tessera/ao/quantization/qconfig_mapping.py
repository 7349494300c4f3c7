"""QConfigMapping (torch.ao.quantization.qconfig_mapping): which QConfig applies to which part
of a model, by global default, object type (module class, function or method name), module
name regex, module name, and (module name, object type, call index), with torch's dict form
and the per-engine default mappings."""
from collections import OrderedDict

from ... import _C
from ...nn import functional as F
from ...nn.modules import activation, batchnorm, conv, linear, normalization
from .fake_quantize import FixedQParamsFakeQuantize, default_weight_fake_quant
from .observer import (default_fixed_qparams_range_0to1_observer, default_fixed_qparams_range_neg1to1_observer,
                       default_placeholder_observer, default_weight_observer)
from .qconfig import QConfig, default_reuse_input_qconfig, get_default_qat_qconfig, get_default_qconfig

__all__ = ["get_default_qconfig_mapping", "get_default_qat_qconfig_mapping", "QConfigMapping"]

_GLOBAL_DICT_KEY = ""
_OBJECT_TYPE_DICT_KEY = "object_type"
_MODULE_NAME_REGEX_DICT_KEY = "module_name_regex"
_MODULE_NAME_DICT_KEY = "module_name"
_MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY = "module_name_object_type_order"


def _fixed_qparams_ops():
    # Ops whose output range is known ([0, 1] or [-1, 1]): their observers are fixed.
    zero_to_one = default_fixed_qparams_range_0to1_observer
    neg_one_to_one = default_fixed_qparams_range_neg1to1_observer
    return {activation.Hardsigmoid: zero_to_one, F.hardsigmoid: zero_to_one, "hardsigmoid": zero_to_one,
            "hardsigmoid_": zero_to_one, activation.Sigmoid: zero_to_one, _C.sigmoid: zero_to_one,
            "sigmoid": zero_to_one, "sigmoid_": zero_to_one, activation.Softmax: zero_to_one,
            activation.Tanh: neg_one_to_one, _C.tanh: neg_one_to_one, "tanh": neg_one_to_one,
            "tanh_": neg_one_to_one}


def _get_default_qconfig_mapping(is_qat, backend, version):
    qconfig = get_default_qat_qconfig(backend, version) if is_qat else get_default_qconfig(backend, version)
    default_weight = default_weight_fake_quant if is_qat else default_weight_observer
    # fbgemm and x86 have no per-channel transposed convolution
    qconfig_transpose = (QConfig(activation=qconfig.activation, weight=default_weight)
                         if backend in ("fbgemm", "x86") else qconfig)
    qconfig_layernorm = QConfig(activation=qconfig.activation, weight=default_placeholder_observer)
    mapping = QConfigMapping().set_global(qconfig).set_object_type("reshape", default_reuse_input_qconfig)
    # torch's order (to_dict lists the object types in it)
    for op, op_qconfig in ((conv.Conv1d, qconfig), (conv.Conv2d, qconfig), (conv.Conv3d, qconfig),
                           (conv.ConvTranspose1d, qconfig_transpose), (conv.ConvTranspose2d, qconfig_transpose),
                           (conv.ConvTranspose3d, qconfig_transpose), (linear.Linear, qconfig), (F.conv1d, qconfig),
                           (F.conv2d, qconfig), (F.conv3d, qconfig), (F.conv_transpose1d, qconfig_transpose),
                           (F.conv_transpose2d, qconfig_transpose), (F.conv_transpose3d, qconfig_transpose),
                           (F.linear, qconfig), (activation.ReLU, qconfig), (F.relu, qconfig), (_C.relu, qconfig),
                           (batchnorm.BatchNorm1d, qconfig), (batchnorm.BatchNorm2d, qconfig),
                           (batchnorm.BatchNorm3d, qconfig), (F.layer_norm, qconfig_layernorm),
                           (normalization.LayerNorm, qconfig_layernorm)):
        mapping.set_object_type(op, op_qconfig)
    fixed_qconfigs = {}  # one QConfig per fixed observer, shared by the ops that use it
    for op, observer in _fixed_qparams_ops().items():
        if observer not in fixed_qconfigs:
            act = FixedQParamsFakeQuantize.with_args(observer=observer) if is_qat else observer
            fixed_qconfigs[observer] = QConfig(activation=act, weight=default_weight)
        mapping.set_object_type(op, fixed_qconfigs[observer])
    return mapping


def get_default_qconfig_mapping(backend="fbgemm", version=0):
    """The post-training QConfigMapping for an engine ('x86', 'fbgemm', 'qnnpack', 'onednn')."""
    return _get_default_qconfig_mapping(False, backend, version)


def get_default_qat_qconfig_mapping(backend="fbgemm", version=1):
    """The quantization-aware-training QConfigMapping for an engine."""
    return _get_default_qconfig_mapping(True, backend, version)


class QConfigMapping:
    """QConfigs by key, in increasing priority: global, object type, module name regex (first
    registered match wins), module name, (module name, object type, index). Every setter
    returns the mapping, so calls chain."""

    def __init__(self):
        self.global_qconfig = None
        self.object_type_qconfigs = OrderedDict()
        self.module_name_regex_qconfigs = OrderedDict()
        self.module_name_qconfigs = OrderedDict()
        self.module_name_object_type_order_qconfigs = OrderedDict()

    def set_global(self, global_qconfig):
        self.global_qconfig = global_qconfig
        return self

    def set_object_type(self, object_type, qconfig):
        self.object_type_qconfigs[object_type] = qconfig
        return self

    def set_module_name_regex(self, module_name_regex, qconfig):
        self.module_name_regex_qconfigs[module_name_regex] = qconfig
        return self

    def set_module_name(self, module_name, qconfig):
        self.module_name_qconfigs[module_name] = qconfig
        return self

    def set_module_name_object_type_order(self, module_name, object_type, index, qconfig):
        self.module_name_object_type_order_qconfigs[(module_name, object_type, index)] = qconfig
        return self

    def to_dict(self):
        """torch's qconfig_dict form: {"": global, "object_type": [(type, qconfig)], ...}."""
        return {
            _GLOBAL_DICT_KEY: self.global_qconfig,
            _OBJECT_TYPE_DICT_KEY: list(self.object_type_qconfigs.items()),
            _MODULE_NAME_REGEX_DICT_KEY: list(self.module_name_regex_qconfigs.items()),
            _MODULE_NAME_DICT_KEY: list(self.module_name_qconfigs.items()),
            _MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY: [(*k, v) for k, v in
                                                      self.module_name_object_type_order_qconfigs.items()],
        }

    @classmethod
    def from_dict(cls, qconfig_dict):
        """The mapping a qconfig_dict describes (every key optional)."""
        mapping = cls()
        if _GLOBAL_DICT_KEY in qconfig_dict:
            mapping.set_global(qconfig_dict[_GLOBAL_DICT_KEY])
        for object_type, qconfig in qconfig_dict.get(_OBJECT_TYPE_DICT_KEY, []):
            mapping.set_object_type(object_type, qconfig)
        for regex, qconfig in qconfig_dict.get(_MODULE_NAME_REGEX_DICT_KEY, []):
            mapping.set_module_name_regex(regex, qconfig)
        for name, qconfig in qconfig_dict.get(_MODULE_NAME_DICT_KEY, []):
            mapping.set_module_name(name, qconfig)
        for name, object_type, index, qconfig in qconfig_dict.get(_MODULE_NAME_OBJECT_TYPE_ORDER_DICT_KEY, []):
            mapping.set_module_name_object_type_order(name, object_type, index, qconfig)
        return mapping
