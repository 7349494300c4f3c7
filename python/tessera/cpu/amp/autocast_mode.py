"""tessera.cpu.amp.autocast: tessera.autocast("cpu", ...) with torch 1.13's signature."""
import tessera
from tessera.amp.autocast_mode import autocast as _autocast

__all__ = ["autocast"]


class autocast(_autocast):
    """``tessera.cpu.amp.autocast(args...)`` is ``tessera.autocast("cpu", args...)``."""

    def __init__(self, enabled=True, dtype=tessera.bfloat16, cache_enabled=True):
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
