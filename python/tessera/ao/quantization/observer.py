"""Observers, as torch.ao.quantization.observer defines them: modules that watch the tensors
passing through them (returning them unchanged) and compute quantization parameters from
what they saw (calculate_qparams). The min/max family keeps the running range per tensor or
per channel, plain or as a moving average; HistogramObserver keeps a running histogram and
picks the range that quantizes it with the least error; the others hold fixed qparams,
record the tensors, or only carry a dtype.
"""
import re
from functools import partial

from ... import _C
from ...nn.modules.module import Module

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver", "HistogramObserver",
           "PlaceholderObserver", "RecordingObserver", "NoopObserver", "FixedQParamsObserver", "ReuseInputObserver",
           "get_observer_state_dict", "load_observer_state_dict", "default_observer", "default_placeholder_observer",
           "default_debug_observer", "default_weight_observer", "default_per_channel_weight_observer",
           "default_histogram_observer", "default_dynamic_quant_observer", "default_float_qparams_observer",
           "default_float_qparams_observer_4bit", "default_fixed_qparams_range_neg1to1_observer",
           "default_fixed_qparams_range_0to1_observer", "default_symmetric_fixed_qparams_observer",
           "default_affine_fixed_qparams_observer", "default_reuse_input_observer",
           "weight_observer_range_neg_127_to_127", "per_channel_weight_observer_range_neg_127_to_127"]

_FLOAT32_EPS = 1.1920928955078125e-07  # torch.finfo(torch.float32).eps
_PER_TENSOR = ("per_tensor_affine", "per_tensor_symmetric")
_PER_CHANNEL = ("per_channel_affine", "per_channel_symmetric", "per_channel_affine_float_qparams")
_SYMMETRIC = ("per_tensor_symmetric", "per_channel_symmetric")


def _name(obj):
    return str(obj).rsplit(".", 1)[-1]


class _PartialWrapper:
    """What Observer.with_args(...) returns: a factory of the class with those arguments
    (callable with more). with_callable_args adds arguments computed at each call (a fresh
    value per instance), unless the call passes them itself."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, fn in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: fn()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__() + self.callable_args.__repr__()

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        result = _PartialWrapper(p=self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self)).with_callable_args(**kwargs)


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The integer range an observer quantizes to: the custom one if given (halved with
    reduce_range), else the dtype's (quint8 (0, 255), qint8 (-128, 127), qint32, 4-bit (0, 15))."""
    dtype = _name(dtype)
    if has_customized_qrange:
        initial_min, initial_max = (0, 2 ** 31 - 1) if dtype == "qint32" else (0, 255)
        if quant_min is not None and quant_max is not None:
            initial_min, initial_max = quant_min, quant_max
        span = initial_max - initial_min + 1
        if dtype == "qint8":
            assert 0 < span <= 256, "quantization range should be positive and not exceed the maximum bit range (=256)."
        elif dtype == "qint32":
            assert 0 < span <= 2 ** 31, \
                "quantization range should be positive and not exceed the maximum bit range (=4294967296)."
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype == "qint8":
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype == "quint8":
        return (0, 127) if reduce_range else (0, 255)
    if dtype == "qint32":
        return -2 ** 31, 2 ** 31 - 1
    return 0, 15


class ObserverBase(Module):
    """An observer: forward(x) records statistics of x and returns it; calculate_qparams()
    gives the (scale, zero_point) they imply."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


class UniformQuantizationObserverBase(ObserverBase):
    """The qparams of uniform (affine or symmetric) quantization from a min and a max."""

    _version = 3
    eps: object

    def __init__(self, dtype=None, qscheme=None, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_FLOAT32_EPS):
        dtype = _C.quint8 if dtype is None else dtype
        qscheme = _C.per_tensor_affine if qscheme is None else qscheme
        super().__init__(dtype=dtype)
        self.qscheme = qscheme
        if reduce_range:
            import warnings
            warnings.warn("Please use quant_min and quant_max to specify the range for observers. reduce_range will "
                          "be deprecated in a future release of PyTorch.")
        self.reduce_range = reduce_range
        factory_kwargs = dict(factory_kwargs or {})
        self.register_buffer("eps", _C.tensor([eps], **factory_kwargs))
        assert _name(qscheme) in _PER_TENSOR + _PER_CHANNEL, \
            "Default Observer only works for per_tensor_affine, per_tensor_symmetric, per_channel_affine, " \
            "per_channel_symmetric and per_channel_float_qparams quantization scheme"
        assert _name(dtype) in ("qint8", "quint8", "quint4x2", "qint32"), \
            "Default Observer only works for qint8, quint8 and quint4x2 data type"
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            self._validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.has_customized_qrange,
                                                             self.dtype, self.reduce_range)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Checkpoints before version 2 have no eps: it takes float32's.
        if local_metadata.get("version", None) in (None, 1) and prefix + "eps" not in state_dict:
            state_dict[prefix + "eps"] = _C.tensor([_FLOAT32_EPS])
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _validate_qmin_qmax(self, quant_min, quant_max):
        assert quant_min <= 0 <= quant_max, "Used-specified quantization range must include 0."
        assert quant_min < quant_max, "qmin must be strictly less than qmax for user-specified quantization range."

    def _calculate_qparams(self, min_val, max_val):
        """scale and zero_point (1-element tensors for a per-tensor observer, one per channel
        otherwise) for the observed range [min_val, max_val], widened to contain 0."""
        if not _check_min_max_valid(min_val, max_val):
            return _C.tensor([1.0], device=min_val.device), _C.tensor([0], device=min_val.device)
        quant_min, quant_max = self.quant_min, self.quant_max
        min_neg = _C.min(min_val, _C.zeros_like(min_val))
        max_pos = _C.max(max_val, _C.zeros_like(max_val))
        scale = _C.ones(min_neg.size(), dtype=_C.float32, device=min_neg.device)
        zero_point = _C.zeros(min_neg.size(), dtype=_C.int64, device=min_neg.device)
        scheme = _name(self.qscheme)
        if scheme in _SYMMETRIC:
            max_pos = _C.max(-min_neg, max_pos)
            scale = max_pos / (float(quant_max - quant_min) / 2)
            scale = _C.max(scale, self.eps)
            if _name(self.dtype) == "quint8":
                mid = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = zero_point.new_full(zero_point.size(), mid)
        elif scheme == "per_channel_affine_float_qparams":
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = _C.where(scale > self.eps, scale, _C.ones_like(scale))
            # the zero point is the real value that maps to 0 here, not an integer
            zero_point = -1 * min_val / scale
        else:
            scale = (max_pos - min_neg) / float(quant_max - quant_min)
            scale = _C.max(scale, self.eps)
            zero_point = quant_min - _C.round(min_neg / scale).to(_C.int)
            zero_point = _C.clamp(zero_point, quant_min, quant_max)
        if scale.dim() == 0:
            scale = _C.tensor([float(scale)], dtype=scale.dtype, device=scale.device)
        if zero_point.dim() == 0:
            value = float(zero_point) if scheme == "per_channel_affine_float_qparams" else int(zero_point)
            zero_point = _C.tensor([value], dtype=zero_point.dtype, device=zero_point.device)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


def _check_per_tensor(cls_name, qscheme):
    if qscheme is not None and _name(qscheme) not in _PER_TENSOR:
        raise NotImplementedError(f"{cls_name}'s qscheme only support torch.per_tensor_symmetric and "
                                  "torch.per_tensor_affine.")


def _check_per_channel(cls_name, qscheme):
    if _name(qscheme) not in _PER_CHANNEL:
        raise NotImplementedError(f"{cls_name}'s qscheme only support torch.per_channel_symmetric, "
                                  "torch.per_channel_affine and torch.per_channel_affine_float_qparams.")


def _check_min_max_valid(min_val, max_val):
    """Whether the observer saw anything: torch warns and gives the default qparams if not."""
    import warnings
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default values.")
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.")
            return False
        assert min_val <= max_val, f"min {min_val} should be less than max {max_val}"
    else:
        assert bool(_C.all(min_val <= max_val)), f"min {min_val} should be less than max {max_val}"
    return True


class MinMaxObserver(UniformQuantizationObserverBase):
    """The running minimum and maximum of everything observed, per tensor."""

    def __init__(self, dtype=None, qscheme=None, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_FLOAT32_EPS):
        _check_per_tensor("MinMaxObserver", qscheme)
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps)
        factory_kwargs = dict(factory_kwargs or {})
        self.register_buffer("min_val", _C.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", _C.tensor(float("-inf"), **factory_kwargs))
        if _name(self.qscheme) == "per_tensor_symmetric" and self.reduce_range and _name(self.dtype) == "quint8":
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_cur, max_cur = _C.aminmax(x)
        self.min_val.copy_(_C.min(min_cur, self.min_val))
        self.max_val.copy_(_C.max(max_cur, self.max_val))
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        self.min_val.copy_(_C.tensor(float("inf")))
        self.max_val.copy_(_C.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """A moving average of each observed tensor's minimum and maximum:
    running += averaging_constant * (current - running)."""

    def __init__(self, averaging_constant=0.01, dtype=None, qscheme=None, reduce_range=False, quant_min=None,
                 quant_max=None, eps=_FLOAT32_EPS, **kwargs):
        _check_per_tensor("MovingAverageMinMaxObserver", qscheme)
        self.averaging_constant = averaging_constant
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        if float(min_val) == float("inf") and float(max_val) == float("-inf"):
            min_val, max_val = _C.aminmax(x)
        else:
            min_cur, max_cur = _C.aminmax(x)
            min_val = min_val + self.averaging_constant * (min_cur - min_val)
            max_val = max_val + self.averaging_constant * (max_cur - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """The running minimum and maximum of each slice along ch_axis."""

    def __init__(self, ch_axis=0, dtype=None, qscheme=None, reduce_range=False, quant_min=None, quant_max=None,
                 factory_kwargs=None, eps=_FLOAT32_EPS):
        qscheme = _C.per_channel_affine if qscheme is None else qscheme
        _check_per_channel(type(self).__name__, qscheme)
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps)
        factory_kwargs = dict(factory_kwargs or {})
        self.ch_axis = ch_axis
        self.register_buffer("min_val", _C.tensor([], **factory_kwargs))
        self.register_buffer("max_val", _C.tensor([], **factory_kwargs))
        if _name(self.qscheme) == "per_channel_symmetric" and self.reduce_range and _name(self.dtype) == "quint8":
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig):
        return self._forward(x_orig)

    def _channel_rows(self, x_orig):
        """x with ch_axis first and the rest flattened: one row per channel."""
        x = x_orig.detach().to(self.min_val.dtype)
        order = list(range(x.dim()))
        order[self.ch_axis], order[0] = 0, self.ch_axis
        return _C.flatten(x.permute(order), start_dim=1)

    def _forward(self, x_orig):
        return self._observe(x_orig, lambda old, cur, pick: pick(cur, old))

    def _observe(self, x_orig, combine):
        """The per-channel minima and maxima of x, folded into the kept ones by
        combine(old, current, min or max) once there are kept ones."""
        if x_orig.numel() == 0:
            return x_orig
        min_cur, max_cur = _C.aminmax(self._channel_rows(x_orig), dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            self._store(min_cur, max_cur)
        else:
            self._store(combine(self.min_val, min_cur, _C.min), combine(self.max_val, max_cur, _C.max))
        return x_orig

    def _store(self, min_val, max_val):
        """The buffers take the new statistics (their length too: they start empty)."""
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # The per-channel buffers take the saved lengths (they start empty); checkpoints before
        # version 3 call them min_vals and max_vals. A missing one is reported when strict, the
        # rest loads leniently, as torch loads it.
        for name in ("min_val", "max_val"):
            key = prefix + name
            if key not in state_dict and prefix + name + "s" in state_dict:
                state_dict[key] = state_dict.pop(prefix + name + "s")
            if key in state_dict:
                getattr(self, name).resize_(state_dict[key].shape)
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def reset_min_max_vals(self):
        self.min_val = _C.tensor([])
        self.max_val = _C.tensor([])


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """A moving average of each channel's minimum and maximum."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=None, qscheme=None, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_FLOAT32_EPS, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        c = self.averaging_constant
        return self._observe(x_orig, lambda old, cur, _: old + c * (cur - old))


class _PassThroughObserver(ObserverBase):
    """An observer that only marks a place (with a dtype): it keeps nothing and has no qparams."""

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception(f"calculate_qparams should not be called for {type(self).__name__}")


class PlaceholderObserver(_PassThroughObserver):
    """Carries a dtype (float16 for dynamic quantization, ...) and observes nothing."""

    def __init__(self, dtype=None, custom_op_name="", compute_dtype=None):
        super().__init__(dtype=_C.float32 if dtype is None else dtype)
        self.custom_op = custom_op_name
        if compute_dtype:
            self.compute_dtype = compute_dtype


class RecordingObserver(ObserverBase):
    """Keeps every observed tensor (in tensor_val), for debugging."""

    __annotations__ = {"tensor_val": list}

    def __init__(self, dtype=None, **kwargs):
        super().__init__(dtype=_C.quint8 if dtype is None else dtype)
        self.tensor_val = []

    def forward(self, x):
        self.tensor_val.append(x.clone())
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for RecordingObserver")

    def get_tensor_value(self):
        return self.tensor_val


class NoopObserver(_PassThroughObserver):
    """Observes nothing and carries a dtype (float16 by default)."""

    def __init__(self, dtype=None, custom_op_name=""):
        super().__init__(dtype=_C.float16 if dtype is None else dtype)
        self.custom_op = custom_op_name


class ReuseInputObserver(_PassThroughObserver):
    """Marks an output that reuses its input's observer (FX quantization)."""

    def __init__(self):
        super().__init__(_C.quint8)


class FixedQParamsObserver(ObserverBase):
    """qparams fixed in advance (for ops whose output range is known: sigmoid, tanh, ...)."""

    scale: object
    zero_point: object

    def __init__(self, scale, zero_point, dtype=None, qscheme=None, quant_min=0, quant_max=255):
        super().__init__(dtype=_C.quint8 if dtype is None else dtype)
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.register_buffer("scale", _C.tensor([scale], dtype=_C.float))
        self.register_buffer("zero_point", _C.tensor([zero_point], dtype=_C.int))
        self.qscheme = _C.per_tensor_affine if qscheme is None else qscheme

    def forward(self, X):  # noqa: N803 (torch's argument name)
        return X

    def calculate_qparams(self):
        return self.scale, self.zero_point


def get_observer_state_dict(mod):
    """The state_dict entries of every observer and fake quantizer in mod."""
    from collections import OrderedDict
    od = OrderedDict()
    for k, v in mod.state_dict().items():
        if re.search(r"activation_post_process", k):
            od[k] = v
    od._metadata = mod.state_dict()._metadata
    return od


def load_observer_state_dict(mod, obs_dict):
    """Loads get_observer_state_dict's entries into mod's observers and fake quantizers;
    a missing or unexpected observer entry raises."""
    missing_keys, unexpected_keys = [], []
    for name, module in mod.named_modules():
        if _is_activation_post_process(module):
            module._load_from_state_dict(obs_dict, name + ".", {}, False, missing_keys, unexpected_keys, [])
    for k in missing_keys:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Missing keys for observer {k} in state_dict")
    for k in unexpected_keys:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Unexpected keys for observer {k} in state_dict")


def _is_activation_post_process(module):
    from .fake_quantize import FakeQuantizeBase
    return isinstance(module, (ObserverBase, FakeQuantizeBase))


# defined in its own file, on this one's base classes
from ._histogram import HistogramObserver  # noqa: E402

default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = RecordingObserver
default_weight_observer = MinMaxObserver.with_args(dtype=_C.qint8, qscheme=_C.per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(dtype=_C.qint8, qscheme=_C.per_tensor_symmetric,
                                                                quant_min=-127, quant_max=127, eps=2 ** -12)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype=_C.qint8,
                                                                         qscheme=_C.per_channel_symmetric)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=_C.qint8, qscheme=_C.per_channel_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=_C.quint8, compute_dtype=_C.quint8)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=_C.quint8, qscheme=_C.per_channel_affine_float_qparams, ch_axis=0)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=_C.quint4x2, qscheme=_C.per_channel_affine_float_qparams, ch_axis=0)
# The output ranges of sigmoid (0, 1) and tanh (-1, 1), on 256 steps.
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=_C.quint8, quant_min=0, quant_max=255)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=_C.quint8, quant_min=0, quant_max=255)
default_symmetric_fixed_qparams_observer = default_fixed_qparams_range_neg1to1_observer
default_affine_fixed_qparams_observer = default_fixed_qparams_range_0to1_observer
default_reuse_input_observer = ReuseInputObserver
