"""tessera.cpu.amp.GradScaler: tessera.amp.GradScaler("cpu", ...), deprecated as in current torch."""
import warnings

from tessera.amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler"]


class GradScaler(_GradScaler):
    """``tessera.cpu.amp.GradScaler(args...)`` is ``tessera.amp.GradScaler("cpu", args...)``."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`tessera.cpu.amp.GradScaler(args...)` is deprecated. "
                      "Please use `tessera.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
