"""tessera.ao.quantization: torch.ao.quantization's eager workflow, as far as it exists:
QuantStub, DeQuantStub and QuantWrapper (identities until convert()), the observers
(observer.py: min/max per tensor and per channel, plain and moving-average, placeholder,
recording, fixed qparams), the fake quantizers for quantization-aware training
(fake_quantize.py: FakeQuantize, FixedQParamsFakeQuantize, FusedMovingAvgObsFakeQuantize),
QConfig with the defaults that need no histogram (qconfig.py), and propagate_qconfig_,
convert and quantize_dynamic (quantize.py). Not yet: HistogramObserver, get_default_qconfig,
fuse_modules, prepare / prepare_qat / quantize.
"""
from . import fake_quantize, observer, qconfig, quantize as _quantize_passes
from .fake_quantize import (FakeQuantizeBase, FakeQuantize, FixedQParamsFakeQuantize, FusedMovingAvgObsFakeQuantize,
                            disable_fake_quant, disable_observer, enable_fake_quant, enable_observer,
                            default_fake_quant, default_weight_fake_quant, default_dynamic_fake_quant,
                            default_fixed_qparams_range_neg1to1_fake_quant,
                            default_fixed_qparams_range_0to1_fake_quant, default_symmetric_fixed_qparams_fake_quant,
                            default_affine_fixed_qparams_fake_quant, default_per_channel_weight_fake_quant,
                            default_embedding_fake_quant, default_embedding_fake_quant_4bit,
                            default_fused_act_fake_quant, default_fused_wt_fake_quant,
                            default_fused_per_channel_wt_fake_quant, fused_wt_fake_quant_range_neg_127_to_127,
                            fused_per_channel_wt_fake_quant_range_neg_127_to_127)  # noqa: F401
from .observer import (ObserverBase, UniformQuantizationObserverBase, MinMaxObserver, MovingAverageMinMaxObserver,
                       PerChannelMinMaxObserver, MovingAveragePerChannelMinMaxObserver, PlaceholderObserver,
                       RecordingObserver, NoopObserver, FixedQParamsObserver, ReuseInputObserver,
                       get_observer_state_dict, load_observer_state_dict, default_observer,
                       default_placeholder_observer, default_debug_observer, default_weight_observer,
                       default_per_channel_weight_observer, default_dynamic_quant_observer,
                       default_float_qparams_observer, default_float_qparams_observer_4bit,
                       default_fixed_qparams_range_neg1to1_observer, default_fixed_qparams_range_0to1_observer,
                       default_symmetric_fixed_qparams_observer, default_affine_fixed_qparams_observer,
                       default_reuse_input_observer, weight_observer_range_neg_127_to_127,
                       per_channel_weight_observer_range_neg_127_to_127)  # noqa: F401
from .qconfig import (QConfig, assert_valid_qconfig, default_dynamic_qconfig, default_per_channel_qconfig,
                      default_qconfig, per_channel_dynamic_qconfig)  # noqa: F401
from .quantize import (convert, get_default_dynamic_quant_module_mappings, propagate_qconfig_, quantize_dynamic,
                       swap_module)  # noqa: F401
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401

__all__ = (["DeQuantStub", "QuantStub", "QuantWrapper"] + observer.__all__ + fake_quantize.__all__ + qconfig.__all__
           + _quantize_passes.__all__)
