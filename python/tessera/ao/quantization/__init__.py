"""tessera.ao.quantization: torch.ao.quantization's eager workflow. QuantStub, DeQuantStub
and QuantWrapper mark where tensors become quantized; the observers (observer.py) and the
fake quantizers for quantization-aware training (fake_quantize.py) watch tensors and compute
qparams; QConfig and QConfigMapping say which observers a module gets, with torch's
per-engine defaults (qconfig.py, qconfig_mapping.py); fuse_modules folds conv/linear, batch
norm and ReLU sequences (fuse_modules.py, fuser_method_mappings.py); prepare, prepare_qat,
convert, quantize, quantize_qat and quantize_dynamic run the workflow (quantize.py) with
torch's module mappings (quantization_mappings.py).
"""
from . import (fake_quantize, fuse_modules as _fuse_modules, observer, qconfig, qconfig_mapping,
               quantization_mappings, quantize as _quantize_passes)
from .fake_quantize import (FakeQuantizeBase, FakeQuantize, FixedQParamsFakeQuantize, FusedMovingAvgObsFakeQuantize,
                            default_histogram_fake_quant,
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
                       PerChannelMinMaxObserver, MovingAveragePerChannelMinMaxObserver, HistogramObserver,
                       PlaceholderObserver, RecordingObserver, NoopObserver, FixedQParamsObserver, ReuseInputObserver,
                       get_observer_state_dict, load_observer_state_dict, default_observer, default_histogram_observer,
                       default_placeholder_observer, default_debug_observer, default_weight_observer,
                       default_per_channel_weight_observer, default_dynamic_quant_observer,
                       default_float_qparams_observer, default_float_qparams_observer_4bit,
                       default_fixed_qparams_range_neg1to1_observer, default_fixed_qparams_range_0to1_observer,
                       default_symmetric_fixed_qparams_observer, default_affine_fixed_qparams_observer,
                       default_reuse_input_observer, weight_observer_range_neg_127_to_127,
                       per_channel_weight_observer_range_neg_127_to_127)  # noqa: F401
from .fuse_modules import fuse_known_modules, fuse_modules, fuse_modules_qat  # noqa: F401
from .fuser_method_mappings import (fuse_conv_bn, fuse_conv_bn_relu, fuse_convtranspose_bn,  # noqa: F401
                                    fuse_linear_bn, get_fuser_method)
from .quant_type import QuantType, quant_type_to_str  # noqa: F401
from .qconfig import *  # noqa: F401,F403 (qconfig.__all__: QConfig, the named configurations, the helpers)
from .qconfig_mapping import (QConfigMapping, get_default_qat_qconfig_mapping,  # noqa: F401
                              get_default_qconfig_mapping)
from .quantization_mappings import *  # noqa: F401,F403
from .quantize import *  # noqa: F401,F403
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401


def default_eval_fn(model, calib_data):
    """Runs model on the inputs of calib_data's (input, target) pairs: a calibration run_fn for quantize()."""
    for data, target in calib_data:
        model(data)


__all__ = (["DeQuantStub", "QuantStub", "QuantWrapper"] + observer.__all__ + fake_quantize.__all__ + qconfig.__all__
           + _quantize_passes.__all__ + qconfig_mapping.__all__ + quantization_mappings.__all__
           + _fuse_modules.__all__ + ["QuantType", "quant_type_to_str", "default_eval_fn"])
