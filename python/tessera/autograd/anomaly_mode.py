"""Anomaly mode, as torch.autograd.anomaly_mode: backward checks every Node's results for
NaN, and an error names the forward op that made the failing Node."""
import functools
import warnings

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]

_A = _C._autograd


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly mode on for its block, and warns
    once per use, as torch does, that it slows everything down."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = _A.is_anomaly_enabled()
        _A.set_anomaly_enabled(True)

    def __exit__(self, *exc):
        _A.set_anomaly_enabled(self.prev)

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
        self.prev = _A.is_anomaly_enabled()
        self.check_nan = check_nan
        _A.set_anomaly_enabled(bool(mode))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _A.set_anomaly_enabled(self.prev)
