"""torch's process-wide switches and build facts under their top-level names:
``has_*`` (what this build has), the inter-op thread count, deterministic-algorithm and
warn-always modes, float32 matmul precision, flushing denormals and anomaly mode.

Tessera's CPU kernels are deterministic and its matmul always computes in float32, so
most of these switches are kept and read back without changing any result, as they are
in a CPU-only torch. The arguments are checked as torch checks them.
"""
import builtins
import math
import os
import platform
import warnings

from . import backends as _backends

__all__ = ["e", "pi", "inf", "nan", "has_cuda", "has_cudnn", "has_mps", "has_mkl", "has_lapack", "has_spectral",
           "has_openmp", "has_mkldnn", "get_num_interop_threads", "set_num_interop_threads", "init_num_threads",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_warn_always", "is_warn_always_enabled", "get_float32_matmul_precision",
           "set_float32_matmul_precision", "set_flush_denormal", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan

# What this build has (cmake/TesseraDependencies.cmake requires OpenMP and oneDNN).
has_cuda = False
has_cudnn = False
has_mps = False
has_mkl = False  # the BLAS is OpenBLAS
has_lapack = False  # tessera.linalg's factorizations are Tessera's own, not LAPACK's
has_spectral = True  # tessera.fft (aten/native/spectral/)
has_openmp = _backends.openmp.is_available()
has_mkldnn = _backends.mkldnn.is_available()


def _type_name(obj):
    return builtins.type(obj).__name__


# ---------------------------------------------------------------- inter-op threads

# Tessera runs independent ops on the calling thread: there is no inter-op pool, so the
# count is 1 until set. torch fixes its pool's size once (the first query starts the pool,
# as does the first setting), and so do we: the number is kept and read back.
_interop = {"threads": 1, "fixed": False}


def get_num_interop_threads():
    """get_num_interop_threads() -> int: the inter-op thread count (1: Tessera runs
    independent ops on the calling thread). After this call the count is fixed."""
    _interop["fixed"] = True
    return _interop["threads"]


def set_num_interop_threads(n):
    """set_num_interop_threads(int): sets the inter-op thread count, once, before any
    query of it. Tessera keeps the number; it has no inter-op pool to size."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {_type_name(n)}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop["fixed"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop.update(threads=n, fixed=True)


def init_num_threads():
    """init_num_threads(): prepares the calling thread's intra-op threads. Tessera's
    OpenMP runtime needs nothing per thread, so this does nothing."""


# ---------------------------------------------------------------- determinism

_det = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """use_deterministic_algorithms(mode, *, warn_only=False): asks for deterministic
    algorithms only. Every CPU kernel of Tessera is deterministic already, so nothing
    raises or warns on account of this mode; it is kept and read back."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, "
                        f"not {_type_name(mode)}")
    if not isinstance(warn_only, bool):
        raise TypeError("use_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {_type_name(warn_only)}")
    _det.update(enabled=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled():
    """Whether use_deterministic_algorithms(True) is in force."""
    return _det["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether use_deterministic_algorithms was last given warn_only=True."""
    return _det["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """set_deterministic_debug_mode(debug_mode): 'default' (0), 'warn' (1) or 'error' (2),
    another spelling of use_deterministic_algorithms(False / True with warn_only / True)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {builtins.type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """get_deterministic_debug_mode() -> int: 0 (off), 1 (warn only) or 2 (error)."""
    if not _det["enabled"]:
        return 0
    return 1 if _det["warn_only"] else 2


# ---------------------------------------------------------------- warnings

_warn_always = [False]


def set_warn_always(b):
    """set_warn_always(b): asks for warnings torch gives once per process to be given every
    time. Tessera's own warnings go through Python's warnings module, whose filters decide
    that; the flag is kept and read back."""
    if not isinstance(b, bool):
        raise RuntimeError(f"set_warn_always expects a bool, but got {_type_name(b)}")
    _warn_always[0] = b


def is_warn_always_enabled():
    """Whether set_warn_always(True) is in force."""
    return _warn_always[0]


# ---------------------------------------------------------------- float32 matmul precision

# One setting with two spellings, as in torch: precision 'highest' is
# backends.cuda.matmul.allow_tf32 == False, and the other two mean True. Tessera's CPU
# matmul computes in float32 under each of them.
_matmul_precision = ["highest"]


def get_float32_matmul_precision():
    """get_float32_matmul_precision() -> str: 'highest', 'high' or 'medium'."""
    allow_tf32 = bool(_backends.cuda.matmul.allow_tf32)
    if allow_tf32 == (_matmul_precision[0] != "highest"):
        return _matmul_precision[0]
    return "high" if allow_tf32 else "highest"


def set_float32_matmul_precision(precision):
    """set_float32_matmul_precision(precision): 'highest', 'high' or 'medium' (another
    string is refused with a warning and changes nothing)."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {_type_name(precision)}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _matmul_precision[0] = precision
    _backends.cuda.matmul.allow_tf32 = precision != "highest"


# ---------------------------------------------------------------- denormals

def _cpu_has_daz():
    """Whether the CPU can treat denormal inputs as zero (x86 with SSE3, as torch asks)."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "pni" in line.split()  # Linux calls SSE3 "pni"
    except OSError:
        pass
    return os.name == "nt"  # every x86 CPU Windows 10+ runs on has SSE3


def set_flush_denormal(mode):
    """set_flush_denormal(mode) -> bool: whether this CPU supports flushing denormal floats
    to zero (x86 with SSE3), as torch answers.

    Limitation: Tessera's extension has no way yet to set the FTZ/DAZ bits of the MXCSR
    register, so this answers the support question but does not change how kernels treat
    denormals: they are computed as IEEE 754 says either way."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {_type_name(mode)}")
    return _cpu_has_daz()


# ---------------------------------------------------------------- anomaly mode

# Kept with tessera.autograd's detect_anomaly, which sets them too.
from .autograd.anomaly_mode import (  # noqa: E402,F401
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled)
