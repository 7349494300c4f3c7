"""The module mappings of eager-mode quantization (torch.ao.quantization.quantization_mappings):
float or observed module type -> the module that replaces it in prepare_qat (QAT modules),
convert (static quantized modules) and quantize_dynamic; the types prepare puts observers
on; the activations whose observers are fixed in training (sigmoid, tanh, ...).

torch maps some float modules to quantized modules tessera has no kernels for yet (quantized
embeddings, transposed convolutions, PReLU, the recurrent and fused dynamic modules): those
types stay in the propagation list, so prepare observes them as torch does, and convert
raises NotImplementedError naming the module."""
import copy
import functools

from ...nn.modules import activation, batchnorm, conv, dropout, instancenorm, linear, normalization, rnn, sparse
from ...nn.modules.container import Sequential
from ...nn.modules.multihead import NonDynamicallyQuantizableLinear
from ...nn.utils.parametrize import type_before_parametrizations
from .fake_quantize import default_fixed_qparams_range_0to1_fake_quant, default_fixed_qparams_range_neg1to1_fake_quant
from .stubs import DeQuantStub, QuantStub

__all__ = ["get_default_static_quant_module_mappings", "get_default_qat_module_mappings",
           "get_default_dynamic_quant_module_mappings", "get_default_qconfig_propagation_list",
           "get_static_quant_module_class", "get_dynamic_quant_module_class", "no_observer_set",
           "not_yet_quantizable_module_types"]


@functools.lru_cache(maxsize=None)
def _mappings():
    # Built on first use: the quantized and QAT module packages import this package's observers.
    from ..nn import intrinsic as nni, qat as nnqat, quantized as nnq
    from ..nn.intrinsic import qat as nniqat, quantized as nniq
    from ..nn.quantized import dynamic as nnqd
    static = {
        QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize, dropout.Dropout: nnq.Dropout,
        conv.Conv1d: nnq.Conv1d, conv.Conv2d: nnq.Conv2d, conv.Conv3d: nnq.Conv3d,
        activation.ELU: nnq.ELU, activation.Hardswish: nnq.Hardswish, activation.LeakyReLU: nnq.LeakyReLU,
        activation.ReLU6: nnq.ReLU6, NonDynamicallyQuantizableLinear: nnq.Linear, linear.Linear: nnq.Linear,
        nnq.FloatFunctional: nnq.QFunctional,
        nni.ConvReLU1d: nniq.ConvReLU1d, nni.ConvReLU2d: nniq.ConvReLU2d, nni.ConvReLU3d: nniq.ConvReLU3d,
        nni.LinearReLU: nniq.LinearReLU,
        batchnorm.BatchNorm2d: nnq.BatchNorm2d, batchnorm.BatchNorm3d: nnq.BatchNorm3d,
        normalization.LayerNorm: nnq.LayerNorm, normalization.GroupNorm: nnq.GroupNorm,
        instancenorm.InstanceNorm1d: nnq.InstanceNorm1d, instancenorm.InstanceNorm2d: nnq.InstanceNorm2d,
        instancenorm.InstanceNorm3d: nnq.InstanceNorm3d,
        nni.BNReLU2d: nniq.BNReLU2d, nni.BNReLU3d: nniq.BNReLU3d,
        nniqat.ConvBn1d: nnq.Conv1d, nniqat.ConvBn2d: nnq.Conv2d, nniqat.ConvBn3d: nnq.Conv3d,
        nniqat.ConvBnReLU1d: nniq.ConvReLU1d, nniqat.ConvBnReLU2d: nniq.ConvReLU2d,
        nniqat.ConvBnReLU3d: nniq.ConvReLU3d, nniqat.ConvReLU2d: nniq.ConvReLU2d,
        nniqat.ConvReLU3d: nniq.ConvReLU3d, nniqat.LinearReLU: nniq.LinearReLU, nniqat.LinearBn1d: nnq.Linear,
        nnqat.Linear: nnq.Linear, nnqat.Conv2d: nnq.Conv2d, nnqat.Conv3d: nnq.Conv3d,
    }
    qat = {
        conv.Conv2d: nnqat.Conv2d, conv.Conv3d: nnqat.Conv3d, linear.Linear: nnqat.Linear,
        NonDynamicallyQuantizableLinear: nnqat.Linear,
        nni.ConvBn1d: nniqat.ConvBn1d, nni.ConvBn2d: nniqat.ConvBn2d, nni.ConvBn3d: nniqat.ConvBn3d,
        nni.ConvBnReLU1d: nniqat.ConvBnReLU1d, nni.ConvBnReLU2d: nniqat.ConvBnReLU2d,
        nni.ConvBnReLU3d: nniqat.ConvBnReLU3d, nni.ConvReLU2d: nniqat.ConvReLU2d,
        nni.ConvReLU3d: nniqat.ConvReLU3d, nni.LinearReLU: nniqat.LinearReLU, nni.LinearBn1d: nniqat.LinearBn1d,
    }
    dynamic = {linear.Linear: nnqd.Linear, NonDynamicallyQuantizableLinear: nnqd.Linear}
    # torch's static and dynamic targets that have no quantized modules here yet
    static_missing = frozenset((conv.ConvTranspose1d, conv.ConvTranspose2d, conv.ConvTranspose3d, sparse.Embedding,
                                sparse.EmbeddingBag, activation.PReLU))
    dynamic_missing = frozenset((rnn.GRUCell, rnn.LSTM, rnn.GRU, rnn.LSTMCell, rnn.RNNCell, nni.LinearReLU,
                                 sparse.Embedding, sparse.EmbeddingBag))
    return static, qat, dynamic, (static_missing, dynamic_missing)


def get_default_static_quant_module_mappings():
    """Observed module type -> quantized module type, for convert after prepare or prepare_qat."""
    return copy.copy(_mappings()[0])


def get_default_qat_module_mappings():
    """Float (or fused) module type -> QAT module type, for prepare_qat."""
    return copy.copy(_mappings()[1])


def get_default_dynamic_quant_module_mappings():
    """Float module type -> dynamically quantized module type, for quantize_dynamic."""
    return copy.copy(_mappings()[2])


def not_yet_quantizable_module_types(dynamic=False):
    """Module types torch's default static (or dynamic) mapping converts and tessera has no
    quantized module for yet."""
    return _mappings()[3][1 if dynamic else 0]


def get_default_qconfig_propagation_list():
    """The module types prepare attaches observers to when they are leaves."""
    static, qat, dynamic, (static_missing, dynamic_missing) = _mappings()
    return set(static) | set(qat) | set(dynamic) | static_missing | dynamic_missing | {Sequential}


def get_static_quant_module_class(float_module_class, additional_static_quant_mapping=None, is_reference=False):
    """The statically quantized module class for a float module class."""
    if is_reference:
        raise NotImplementedError("reference quantized modules (is_reference=True) are not implemented")
    mapping = {**_mappings()[0], **(additional_static_quant_mapping or {})}
    result = mapping.get(float_module_class, None)
    assert result is not None, \
        f"Floating point module class {float_module_class} does not have a corresponding quantized module class"
    return copy.deepcopy(result)


def get_dynamic_quant_module_class(float_module_class, additional_dynamic_quant_mapping=None):
    """The dynamically quantized module class for a float module class."""
    mapping = {**_mappings()[2], **(additional_dynamic_quant_mapping or {})}
    result = mapping.get(float_module_class, None)
    assert result is not None, \
        f"Floating point module class {float_module_class} does not have a corresponding quantized module class"
    return copy.deepcopy(result)


def no_observer_set():
    """Module types that get no observer in prepare (torch's quantizable LSTM and
    MultiheadAttention, which tessera does not have: empty)."""
    return set()


def _special_act_post_process_table():
    return {activation.Hardsigmoid: default_fixed_qparams_range_0to1_fake_quant,
            activation.Sigmoid: default_fixed_qparams_range_0to1_fake_quant,
            activation.Softmax: default_fixed_qparams_range_0to1_fake_quant,
            activation.Tanh: default_fixed_qparams_range_neg1to1_fake_quant}


def _has_special_act_post_process(module):
    # in training, activations with a known output range get fixed-qparams fake quantizers
    return module.training and type_before_parametrizations(module) in _special_act_post_process_table()


def _get_special_act_post_process(module):
    return _special_act_post_process_table().get(type_before_parametrizations(module), None)
