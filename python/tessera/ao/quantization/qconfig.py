"""QConfig (torch.ao.quantization.qconfig): which observer or fake-quantize constructors make a
module's activation and weight observers; the named configurations torch ships (post-training,
QAT, dynamic, weight- or activation-only); the per-engine defaults get_default_qconfig and
get_default_qat_qconfig; and the helpers prepare uses (device-following constructors, the
memoryless check, equality of configurations)."""
import copy
import warnings
from collections import namedtuple

from ... import _C
from ...nn.modules.linear import Identity
from ...nn.modules.module import Module
from . import fake_quantize as fq
from . import observer as obs

__all__ = ["QConfig", "QConfigDynamic", "default_qconfig", "default_debug_qconfig", "default_per_channel_qconfig",
           "default_dynamic_qconfig", "float16_dynamic_qconfig", "float16_static_qconfig",
           "per_channel_dynamic_qconfig", "float_qparams_weight_only_qconfig",
           "float_qparams_weight_only_qconfig_4bit", "default_qat_qconfig", "default_dynamic_qat_qconfig",
           "default_weight_only_qconfig", "default_activation_only_qconfig", "default_qat_qconfig_v2",
           "default_reuse_input_qconfig", "default_symmetric_qnnpack_qconfig",
           "default_per_channel_symmetric_qnnpack_qconfig", "default_symmetric_qnnpack_qat_qconfig",
           "default_per_channel_symmetric_qnnpack_qat_qconfig", "default_embedding_qat_qconfig",
           "default_embedding_qat_qconfig_4bit", "get_default_qconfig", "get_default_qat_qconfig",
           "get_default_qconfig_dict", "get_default_qat_qconfig_dict", "assert_valid_qconfig",
           "add_module_to_qconfig_obs_ctr", "obs_or_fq_ctr_equals", "qconfig_equals", "activation_is_memoryless",
           "is_reuse_input_qconfig"]

_INSTANCE_ERROR = ("received observer instance, please pass observer class instead. "
                   "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """Observer classes (or callables making observers) for activations and weights: prepare
    and convert make one observer of each per module."""

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig " + _INSTANCE_ERROR)
        return super().__new__(cls, activation, weight)


class QConfigDynamic(namedtuple("QConfigDynamic", ["activation", "weight"])):
    """The deprecated dynamic form of QConfig (activation defaults to Identity)."""

    def __new__(cls, activation=Identity, weight=Identity):
        if isinstance(weight, Module):
            raise ValueError("QConfigDynamic " + _INSTANCE_ERROR)
        warnings.warn("QConfigDynamic is going to be deprecated in PyTorch 1.12, please use QConfig instead")
        return super().__new__(cls, activation, weight)


default_qconfig = QConfig(activation=obs.default_observer, weight=obs.default_weight_observer)
default_debug_qconfig = QConfig(weight=obs.default_weight_observer, activation=obs.default_debug_observer)
default_per_channel_qconfig = QConfig(activation=obs.default_observer, weight=obs.default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=obs.default_dynamic_quant_observer, weight=obs.default_weight_observer)
float16_dynamic_qconfig = QConfig(
    activation=obs.PlaceholderObserver.with_args(dtype=_C.float16, compute_dtype=_C.float16),
    weight=obs.PlaceholderObserver.with_args(dtype=_C.float16))
float16_static_qconfig = QConfig(activation=obs.PlaceholderObserver.with_args(dtype=_C.float16),
                                 weight=obs.PlaceholderObserver.with_args(dtype=_C.float16))
per_channel_dynamic_qconfig = QConfig(activation=obs.default_dynamic_quant_observer,
                                      weight=obs.default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(activation=obs.default_placeholder_observer,
                                            weight=obs.default_float_qparams_observer)
float_qparams_weight_only_qconfig_4bit = QConfig(activation=obs.default_placeholder_observer,
                                                 weight=obs.default_float_qparams_observer_4bit)
default_qat_qconfig = QConfig(activation=fq.default_fake_quant, weight=fq.default_weight_fake_quant)
default_dynamic_qat_qconfig = QConfig(activation=fq.default_dynamic_fake_quant, weight=fq.default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=Identity, weight=fq.default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=fq.default_fake_quant, weight=Identity)
default_qat_qconfig_v2 = QConfig(activation=fq.default_fused_act_fake_quant, weight=fq.default_fused_wt_fake_quant)
default_reuse_input_qconfig = QConfig(activation=obs.default_reuse_input_observer, weight=obs.NoopObserver)

# Signed activations with zero point 0 (symmetric) for qnnpack/xnnpack; eps = 2^-12 keeps
# xnnpack's requantization scale (input * weight / output scale) above its lower bound.
_qnnpack_symmetric_activation = obs.HistogramObserver.with_args(dtype=_C.qint8, reduce_range=False, eps=2 ** -12)
default_symmetric_qnnpack_qconfig = QConfig(activation=_qnnpack_symmetric_activation,
                                            weight=obs.weight_observer_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qconfig = QConfig(activation=_qnnpack_symmetric_activation,
                                                        weight=obs.per_channel_weight_observer_range_neg_127_to_127)
_qnnpack_symmetric_fused_activation = fq.FusedMovingAvgObsFakeQuantize.with_args(
    observer=obs.MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=_C.qint8, reduce_range=False,
    eps=2 ** -12)
default_symmetric_qnnpack_qat_qconfig = QConfig(activation=_qnnpack_symmetric_fused_activation,
                                                weight=fq.fused_wt_fake_quant_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qat_qconfig = QConfig(
    activation=_qnnpack_symmetric_fused_activation, weight=fq.fused_per_channel_wt_fake_quant_range_neg_127_to_127)
default_embedding_qat_qconfig = QConfig(activation=obs.NoopObserver.with_args(dtype=_C.float32),
                                        weight=fq.default_embedding_fake_quant)
default_embedding_qat_qconfig_4bit = QConfig(activation=obs.NoopObserver.with_args(dtype=_C.float32),
                                             weight=fq.default_embedding_fake_quant_4bit)

# Per engine: whether activations use 7 bits (reduce_range, for fbgemm's and x86's vpmaddubsw
# overflow) and whether weights are observed per channel (all but qnnpack).
_ENGINE_ACTIVATION_REDUCE_RANGE = {"fbgemm": True, "x86": True, "qnnpack": False, "onednn": False}


def _engine_weight_per_channel(backend):
    return backend != "qnnpack"


def get_default_qconfig(backend="fbgemm", version=0):
    """The post-training qconfig for an engine ('x86', 'fbgemm', 'qnnpack', 'onednn'; any
    other name gives default_qconfig): histogram-observed activations, min/max weights."""
    if version != 0:
        raise AssertionError("Version number: " + str(version) +
                             " in get_default_qconfig is not supported. Version number must be 0")
    if backend not in _ENGINE_ACTIVATION_REDUCE_RANGE:
        return default_qconfig
    activation = obs.HistogramObserver.with_args(reduce_range=_ENGINE_ACTIVATION_REDUCE_RANGE[backend])
    weight = (obs.default_per_channel_weight_observer if _engine_weight_per_channel(backend)
              else obs.default_weight_observer)
    return QConfig(activation=activation, weight=weight)


def get_default_qat_qconfig(backend="fbgemm", version=1):
    """The quantization-aware-training qconfig for an engine: moving-average fake quantizers,
    separate modules (version 0) or the fused FusedMovingAvgObsFakeQuantize (version 1)."""
    if version not in (0, 1):
        raise AssertionError("Version number: " + str(version) +
                             "in get_default_qat_qconfig is not supported. Version number must be 0 or 1")
    if backend not in _ENGINE_ACTIVATION_REDUCE_RANGE:
        return default_qat_qconfig if version == 0 else default_qat_qconfig_v2
    fake_quant = fq.FakeQuantize if version == 0 else fq.FusedMovingAvgObsFakeQuantize
    activation_args = dict(observer=obs.MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
    if backend != "onednn":  # as torch: no reduce_range argument for onednn (the observer default, False)
        activation_args["reduce_range"] = _ENGINE_ACTIVATION_REDUCE_RANGE[backend]
    if version == 0:
        weight = (fq.default_per_channel_weight_fake_quant if _engine_weight_per_channel(backend)
                  else fq.default_weight_fake_quant)
    else:
        weight = (fq.default_fused_per_channel_wt_fake_quant if _engine_weight_per_channel(backend)
                  else fq.default_fused_wt_fake_quant)
    return QConfig(activation=fake_quant.with_args(**activation_args), weight=weight)


def get_default_qconfig_dict(backend="fbgemm", version=0):
    """Deprecated: get_default_qconfig_mapping(...).to_dict()."""
    warnings.warn("torch.ao.quantization.get_default_qconfig_dict is deprecated and will be removed in a future "
                  "version. Please use torch.ao.quantization.get_default_qconfig_mapping instead.")
    from .qconfig_mapping import get_default_qconfig_mapping
    return get_default_qconfig_mapping(backend, version).to_dict()


def get_default_qat_qconfig_dict(backend="fbgemm", version=1):
    """Deprecated: get_default_qat_qconfig_mapping(...).to_dict()."""
    warnings.warn("torch.ao.quantization.get_default_qat_qconfig_dict is deprecated and will be removed in a future "
                  "version. Please use torch.ao.quantization.get_default_qat_qconfig_mapping instead.")
    from .qconfig_mapping import get_default_qat_qconfig_mapping
    return get_default_qat_qconfig_mapping(backend, version).to_dict()


def assert_valid_qconfig(qconfig, mod):
    """torch's check: a ConvTranspose may not take a per-channel weight observer."""
    if qconfig is None:
        return
    from ...nn.modules import conv
    if isinstance(mod, (conv.ConvTranspose1d, conv.ConvTranspose2d, conv.ConvTranspose3d)):
        if qconfig.weight is None:
            return
        example = qconfig.weight()
        is_per_channel = isinstance(example, (obs.PerChannelMinMaxObserver, obs.MovingAveragePerChannelMinMaxObserver))
        assert not is_per_channel, "Per channel weight observer is not supported yet for ConvTranspose{n}d."


def add_module_to_qconfig_obs_ctr(qconfig, module):
    """qconfig with constructors that build their observers on the device of `module`'s
    parameters and buffers (for the constructors that take factory_kwargs)."""
    if module is None or qconfig is None or qconfig._fields != ("activation", "weight"):
        return qconfig

    def module_device_kwargs():
        devices = {p.device for p in module.parameters()} | {b.device for b in module.buffers()}
        return {"device": next(iter(devices))} if devices else None

    def on_module_device(constructor):
        try:
            constructor.with_args(factory_kwargs=None)()
        except (AttributeError, TypeError):  # not a with_args constructor, or no factory_kwargs argument
            return constructor
        return constructor.with_callable_args(factory_kwargs=module_device_kwargs)

    return QConfig(on_module_device(qconfig.activation), on_module_device(qconfig.weight))


def _partial_wrapper_equals(a, b):
    a_keywords, b_keywords = copy.copy(a.p.keywords), copy.copy(b.p.keywords)
    same = True
    if "observer" in a_keywords and "observer" in b_keywords:
        same = obs_or_fq_ctr_equals(a_keywords.pop("observer"), b_keywords.pop("observer"))
    return same and a_keywords == b_keywords and a.p.func == b.p.func and a.p.args == b.p.args


def obs_or_fq_ctr_equals(obs_or_fq1, obs_or_fq2):
    """Whether two observer / fake-quantize constructors make the same thing (with_args
    wrappers compare by class and arguments)."""
    if isinstance(obs_or_fq1, obs._PartialWrapper) and isinstance(obs_or_fq2, obs._PartialWrapper):
        return _partial_wrapper_equals(obs_or_fq1, obs_or_fq2)
    return obs_or_fq1 == obs_or_fq2


def qconfig_equals(q1, q2):
    """Whether two qconfigs (or None) configure the same observers."""
    if q1 is None or q2 is None:
        return q1 == q2
    try:
        return obs_or_fq_ctr_equals(q1.activation, q2.activation) and obs_or_fq_ctr_equals(q1.weight, q2.weight)
    except AttributeError:
        return q1 == q2


def activation_is_memoryless(qconfig):
    """Whether the activation observer keeps no history (a moving average with averaging
    constant 1): prepare then observes the module's input instead of its output."""
    def memoryless(observer):
        return getattr(observer, "averaging_constant", None) == 1

    activation = qconfig.activation()
    if isinstance(activation, fq.FakeQuantizeBase) and hasattr(activation, "activation_post_process"):
        return memoryless(activation.activation_post_process)
    return memoryless(activation)


def is_reuse_input_qconfig(qconfig):
    """Whether qconfig is the reuse-input configuration (activations share the input's observer)."""
    return (qconfig is not None and isinstance(qconfig.activation(), obs.ReuseInputObserver)
            and isinstance(qconfig.weight(), obs.NoopObserver))
