"""tessera.cuda.amp (torch.cuda.amp): autocast, GradScaler, custom_fwd / custom_bwd with the
device fixed to "cuda". Without CUDA, autocast and GradScaler warn and disable themselves,
as torch's do on a machine without a GPU."""
import functools

import tessera
from tessera.amp import autocast_mode as _autocast_mode
from tessera.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler"]


class autocast(_autocast_mode.autocast):
    """``tessera.cuda.amp.autocast(args...)`` is ``tessera.autocast("cuda", args...)``."""

    def __init__(self, enabled=True, dtype=tessera.float16, cache_enabled=True):
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``tessera.cuda.amp.GradScaler(args...)`` is ``tessera.amp.GradScaler("cuda", args...)``."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """tessera.amp.custom_fwd with device_type="cuda" (torch 1.13's signature)."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)
    return _autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """tessera.amp.custom_bwd with device_type="cuda"."""
    return _autocast_mode.custom_bwd(bwd, device_type="cuda")
