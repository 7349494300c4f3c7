"""TORCH_DISTRIBUTED_DEBUG: OFF (default), INFO or DETAIL (any case). DETAIL wraps each new
Gloo group in a _ProcessGroupWrapper that checks, before every collective, that all ranks
call the same one with the same dtypes and shapes."""
import enum
import os

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]


class DebugLevel(enum.IntEnum):
    OFF = 0
    INFO = 1
    DETAIL = 2

    def __repr__(self):
        return f"<DebugLevel.{self.name}: {self.value}>"

    def __str__(self):
        return f"DebugLevel.{self.name}"


_level = DebugLevel.OFF


def get_debug_level():
    return _level


def set_debug_level(level):
    global _level
    _level = DebugLevel(level)


def set_debug_level_from_env():
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG")
    if value is None:
        set_debug_level(DebugLevel.OFF)
        return
    try:
        set_debug_level(DebugLevel[value.upper()])
    except KeyError:
        raise RuntimeError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.") from None
