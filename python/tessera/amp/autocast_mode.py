"""tessera.autocast (torch.amp.autocast_mode): the context manager and decorator that turns
the AutocastCPU dispatch key on for a region, and custom_fwd / custom_bwd for autograd
Functions.

As torch 1.13, with current PyTorch's float16 on the CPU: entering saves the thread's
autocast state (enabled, dtype, cache), sets its own and raises the nesting level;
leaving restores the state, and the outermost region's exit empties the weight cache."""
import collections.abc
import functools
import warnings

import tessera

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_CPU_DTYPES = (tessera.bfloat16, tessera.float16)


def is_autocast_available(device_type):
    """Whether autocast has kernels for this device type ("cpu"; "cuda" needs a CUDA build)."""
    return device_type == "cpu" or (device_type == "cuda" and tessera.cuda.is_available())


def _get_dtype(device_type):
    return tessera.get_autocast_cpu_dtype() if device_type == "cpu" else tessera.get_autocast_gpu_dtype()


def _is_enabled(device_type):
    return tessera.is_autocast_cpu_enabled() if device_type == "cpu" else tessera.is_autocast_enabled()


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    """A region where operators run in mixed precision: on the CPU, matmuls, convolutions
    and linear layers in ``dtype`` (bfloat16 by default, or float16), precision-sensitive
    ops (losses, norms, linalg, fft) in float32, and cat/stack/index_copy in the widest
    input type. Also a decorator. Backward passes need no autocast: each backward op runs
    in the dtype its forward op used.

    Args: device_type ("cpu" or "cuda"), dtype (the lower precision; default the device's
    current autocast dtype), enabled (False: a region that turns autocast off),
    cache_enabled (cache the casts of weights within the region; default the current
    setting, True)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        if device_type == "cuda":
            self.fast_dtype = tessera.get_autocast_gpu_dtype()
        elif device_type == "cpu":
            self.fast_dtype = tessera.get_autocast_cpu_dtype()
        else:
            raise RuntimeError("User specified autocast device_type must be 'cuda' or 'cpu'")
        self._cache_enabled = tessera.is_autocast_cache_enabled()
        if enabled and device_type == "cuda" and not tessera.cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        if dtype is not None:
            self.fast_dtype = dtype
        if cache_enabled is not None:
            self._cache_enabled = cache_enabled
        if device_type == "cpu" and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtype of tessera.bfloat16, tessera.float16 currently.")
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = tessera.is_autocast_cache_enabled()
        if self.device == "cpu":
            self.prev = tessera.is_autocast_cpu_enabled()
            self.prev_fastdtype = tessera.get_autocast_cpu_dtype()
            tessera.set_autocast_cpu_enabled(self._enabled)
            if self.fast_dtype in _CPU_DTYPES:  # an unsupported one disabled the region in __init__
                tessera.set_autocast_cpu_dtype(self.fast_dtype)
        else:
            self.prev = tessera.is_autocast_enabled()
            self.prev_fastdtype = tessera.get_autocast_gpu_dtype()
            tessera.set_autocast_gpu_dtype(self.fast_dtype)
            tessera.set_autocast_enabled(self._enabled)
        tessera.autocast_increment_nesting()
        tessera.set_autocast_cache_enabled(self._cache_enabled)

    def __exit__(self, exc_type, exc_val, exc_tb):
        if tessera.autocast_decrement_nesting() == 0:
            tessera.clear_autocast_cache()
        if self.device == "cpu":
            tessera.set_autocast_cpu_enabled(self.prev)
            tessera.set_autocast_cpu_dtype(self.prev_fastdtype)
        else:
            tessera.set_autocast_enabled(self.prev)
            tessera.set_autocast_gpu_dtype(self.prev_fastdtype)
        tessera.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        return autocast_decorator(self, func)


def _cast(value, device_type, dtype):
    """value with its floating (not float64) tensors on device_type cast to dtype, through
    dicts and iterables, as torch.amp's helper."""
    if isinstance(value, tessera.Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not tessera.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if type(value).__module__ == "numpy":
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """For the forward of an autograd.Function (current torch.amp.custom_fwd): with
    cast_inputs, inside an autocast region the floating inputs are cast to it and forward
    runs with autocast off; without, forward runs under the caller's autocast state, which
    custom_bwd then gives backward."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _get_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _is_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_on = _is_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not autocast_on:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """For the backward of an autograd.Function whose forward is custom_fwd-decorated: it
    runs under the autocast state forward ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
