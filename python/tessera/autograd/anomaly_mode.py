"""Anomaly mode, as torch.autograd.anomaly_mode: backward checks every Node's results for
NaN, and an error names the forward op that made the failing Node. The top-level switches
tessera.set_anomaly_enabled / is_anomaly_enabled / is_anomaly_check_nan_enabled live here
too."""
import builtins
import functools
import warnings

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]

_A = _C._autograd
# check_nan as last set. Tessera's engine checks backward results for NaN whenever anomaly
# mode is on: check_nan=False is kept and read back but does not turn that check off yet.
_check_nan = [True]


def is_anomaly_enabled():
    """Whether autograd's anomaly mode is on."""
    return _A.is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    """Whether anomaly mode was last set with check_nan=True (the default)."""
    return _check_nan[0]


def set_anomaly_enabled(enabled, check_nan=True):
    """set_anomaly_enabled(enabled, check_nan=True): turns anomaly mode on or off."""
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan)), 1):
        if not isinstance(value, bool):
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, "
                            f"not {builtins.type(value).__name__}")
    _A.set_anomaly_enabled(enabled)
    _check_nan[0] = check_nan


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly mode on for its block, and warns
    once per use, as torch does, that it slows everything down."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        set_anomaly_enabled(True, bool(self.check_nan))

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return run


class set_detect_anomaly:
    """Turns anomaly mode on or off at once; used as a context manager it restores the
    previous mode on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        self.check_nan = check_nan
        set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)
