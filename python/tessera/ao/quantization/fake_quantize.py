"""Fake quantization modules, as torch.ao.quantization.fake_quantize defines them, for
quantization-aware training: each observes its input (an observer in
activation_post_process), takes the qparams the observer gives, and fake-quantizes the
input with them (float in, float out, straight-through gradient). Observation and fake
quantization switch on and off separately (enable_observer, enable_fake_quant).
"""
from ... import _C
from ..._dtype_info import iinfo
from ...nn.modules.module import Module
from .observer import (FixedQParamsObserver, HistogramObserver, MovingAverageMinMaxObserver,
                       MovingAveragePerChannelMinMaxObserver,
                       _with_args, default_fixed_qparams_range_0to1_observer,
                       default_fixed_qparams_range_neg1to1_observer)

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FixedQParamsFakeQuantize", "FusedMovingAvgObsFakeQuantize",
           "default_histogram_fake_quant",
           "disable_fake_quant", "disable_observer", "enable_fake_quant", "enable_observer", "default_fake_quant",
           "default_weight_fake_quant", "default_dynamic_fake_quant", "default_fixed_qparams_range_neg1to1_fake_quant",
           "default_fixed_qparams_range_0to1_fake_quant", "default_symmetric_fixed_qparams_fake_quant",
           "default_affine_fixed_qparams_fake_quant", "default_per_channel_weight_fake_quant",
           "default_embedding_fake_quant", "default_embedding_fake_quant_4bit", "default_fused_act_fake_quant",
           "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant",
           "fused_wt_fake_quant_range_neg_127_to_127", "fused_per_channel_wt_fake_quant_range_neg_127_to_127"]


def _name(obj):
    return str(obj).rsplit(".", 1)[-1]


def _is_per_channel(qscheme):
    return _name(qscheme) in ("per_channel_symmetric", "per_channel_affine", "per_channel_affine_float_qparams")


def _is_symmetric(qscheme):
    return _name(qscheme) in ("per_tensor_symmetric", "per_channel_symmetric")


class FakeQuantizeBase(Module):
    """The switches every fake quantizer has: fake_quant_enabled and observer_enabled, uint8
    buffers holding 1 or 0."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", _C.tensor([1], dtype=_C.uint8))
        self.register_buffer("observer_enabled", _C.tensor([1], dtype=_C.uint8))

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)

    with_args = classmethod(_with_args)


class FakeQuantize(FakeQuantizeBase):
    """Observes each input (MovingAverageMinMaxObserver by default) and fake-quantizes it
    with the observer's current qparams, per tensor or per channel as its qscheme says."""

    scale: object
    zero_point: object

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            assert quant_min <= quant_max, "quant_min must be less than or equal to quant_max"
            dtype = observer_kwargs.get("dtype", _C.quint8)
            if hasattr(observer, "p"):  # a with_args factory: its dtype, if it names one
                dtype = getattr(observer, "p").keywords.get("dtype", dtype)
            assert iinfo(dtype).min <= quant_min, "quant_min out of bound"
            assert quant_max <= iinfo(dtype).max, "quant_max out of bound"
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        self.activation_post_process = observer(**observer_kwargs)
        # the range the observer settled on (its dtype's, unless one was given)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        # float qparams' zero points are reals (the value that maps to 0), the others integers
        float_qparams = _name(self.activation_post_process.qscheme) == "per_channel_affine_float_qparams"
        self.register_buffer("scale", _C.tensor([1.0], dtype=_C.float))
        self.register_buffer("zero_point", _C.tensor([0], dtype=_C.float if float_qparams else _C.int))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        assert _is_per_channel(self.qscheme) or _name(self.qscheme) in ("per_tensor_symmetric", "per_tensor_affine"), \
            "Only per channel and per tensor quantization are supported in fake quantize got qscheme: " + \
            str(self.qscheme)
        self.is_per_channel = _is_per_channel(self.qscheme)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):  # noqa: N803 (torch's argument name)
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            scale, zero_point = scale.to(self.scale.device), zero_point.to(self.zero_point.device)
            if self.scale.shape != scale.shape:
                self.scale.resize_(scale.shape)
                self.zero_point.resize_(zero_point.shape)
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point)
        if self.fake_quant_enabled[0] == 1:
            # the observer's range (self.quant_min/max are copies kept for compatibility)
            qmin, qmax = self.activation_post_process.quant_min, self.activation_post_process.quant_max
            if self.is_per_channel:
                X = _C.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis, qmin, qmax)
            else:
                X = _C.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, qmin, qmax)
        return X

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={self.activation_post_process.quant_min}, "
                f"quant_max={self.activation_post_process.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
                f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # scale and zero_point are saved as tensors (not buffers' Parameters)
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = self.scale
        destination[prefix + "zero_point"] = self.zero_point

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # A per-channel quantizer's qparams take the saved lengths.
        for name in ("scale", "zero_point"):
            key = prefix + name
            if key in state_dict:
                val = state_dict[key]
                if name == "scale":
                    self.scale.resize_(val.shape)
                else:
                    self.zero_point.resize_(val.shape)
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake quantization with fixed qparams (a FixedQParamsObserver's): the output ranges of
    sigmoid, tanh and the like."""

    def __init__(self, observer):
        super().__init__(observer=observer)
        assert type(self.activation_post_process) == FixedQParamsObserver, \
            f"{self.__class__.__name__}'s observer must be a {FixedQParamsObserver.__name__}"
        self._observer_ctr = observer
        self.scale = self.activation_post_process.scale
        self.zero_point = self.activation_post_process.zero_point
        assert _name(self.qscheme) in ("per_tensor_symmetric", "per_tensor_affine"), \
            "Only per tensor quantization is supported FixedQParamsFakeQuantize module, got qscheme:" + \
            str(self.qscheme)

    def calculate_qparams(self):
        return self.scale, self.zero_point

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}, "
                f"quant_min={self.activation_post_process.quant_min}, "
                f"quant_max={self.activation_post_process.quant_max}, qscheme={self.qscheme}")


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """FakeQuantize over a moving-average min/max observer, in one fused operator per call
    (fused_moving_avg_obs_fake_quant) instead of an observer step plus fake quantization."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        assert isinstance(self.activation_post_process,
                          (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)), \
            "Fused observer+fake_quant module only works with MovingAverageMinMaxObserver"
        self.register_buffer("fake_quant_enabled", _C.tensor([1], dtype=_C.long))
        self.register_buffer("observer_enabled", _C.tensor([1], dtype=_C.long))
        self.is_symmetric_quant = _is_symmetric(self.activation_post_process.qscheme)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}, "
                f"quant_min={self.activation_post_process.quant_min}, "
                f"quant_max={self.activation_post_process.quant_max}, qscheme={self.qscheme}, "
                f"reduce_range={self.activation_post_process.reduce_range}")

    def forward(self, X):  # noqa: N803 (torch's argument name)
        return _C.fused_moving_avg_obs_fake_quant(
            X, self.observer_enabled, self.fake_quant_enabled, self.activation_post_process.min_val,
            self.activation_post_process.max_val, self.scale, self.zero_point,
            self.activation_post_process.averaging_constant, self.activation_post_process.quant_min,
            self.activation_post_process.quant_max, self.ch_axis, self.is_per_channel, self.is_symmetric_quant)


default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=_C.quint8, qscheme=_C.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=_C.qint8, qscheme=_C.per_tensor_symmetric,
                                                   reduce_range=False)
default_dynamic_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                                    dtype=_C.quint8, averaging_constant=1)
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer)
default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer)
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=_C.qint8,
    qscheme=_C.per_channel_symmetric, reduce_range=False, ch_axis=0)
default_embedding_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, qscheme=_C.per_channel_affine_float_qparams, dtype=_C.quint8,
    quant_min=0, quant_max=255, ch_axis=0, averaging_constant=1)
default_embedding_fake_quant_4bit = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, qscheme=_C.per_channel_affine_float_qparams, ch_axis=0,
    dtype=_C.quint4x2, averaging_constant=1)
default_histogram_fake_quant = FakeQuantize.with_args(observer=HistogramObserver, quant_min=0, quant_max=255,
                                                      dtype=_C.quint8, qscheme=_C.per_tensor_affine, reduce_range=True)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=_C.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=_C.qint8,
    qscheme=_C.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=_C.qint8,
    qscheme=_C.per_channel_symmetric)
# Weights on [-127, 127] (symmetric around 0), with a smallest scale of 2^-12.
fused_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-127, quant_max=127, dtype=_C.qint8,
    qscheme=_C.per_tensor_symmetric, eps=2 ** -12)
fused_per_channel_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-127, quant_max=127, dtype=_C.qint8,
    qscheme=_C.per_channel_symmetric, eps=2 ** -12)


def disable_fake_quant(mod):
    """For model.apply: turns fake quantization off in each fake quantizer."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    """For model.apply: turns fake quantization on in each fake quantizer."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


def disable_observer(mod):
    """For model.apply: stops each fake quantizer's observer (its qparams stay as they are)."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod):
    """For model.apply: restarts each fake quantizer's observer."""
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()
