"""tessera.cpu: the caching CPU allocator, with torch.cuda's memory API.

    tessera.cpu.memory_allocated()      # bytes in live tensors' blocks
    tessera.cpu.memory_reserved()       # ... plus blocks cached for reuse
    tessera.cpu.memory_stats()          # torch.cuda.memory_stats()-style keys
    tessera.cpu.empty_cache()           # give every cached block back to the system

Freed CPU blocks are kept (up to ``get_cache_limit()`` bytes, env TESSERA_CPU_CACHE_LIMIT)
and handed to the next request of their size class, so a large output costs its page
faults once. TESSERA_CPU_ALLOCATOR=plain (read at start-up) turns the cache off; the
statistics then stay at zero (``allocator_backend()`` says which one is installed).

Importing this module (``import tessera`` does, before loading the extension) also sets
GOMP_SPINCOUNT=3000 unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is already set, and
OPENBLAS_THREAD_TIMEOUT=4 unless set, for this process only: libgomp and OpenBLAS read
them once, when the extension loads them, and they are removed from os.environ after.
By default idle worker threads spin for milliseconds (OpenMP) to ~0.1 s (OpenBLAS) after
every parallel region, stealing the cores from the next GEMM; a
short OpenMP spin (~0.1 ms) still catches the back-to-back regions of a training step,
which fully passive workers (OMP_WAIT_POLICY=PASSIVE) would each have to be woken for
(a small CNN's train step: 13.8 ms with the short spin, 24.3 ms passive). (If another
library loaded libgomp or OpenBLAS first, their settings stay as that process started
them.)
"""
import collections as _collections
import os as _os

# The runtime settings for this process only: they are set while the extension loads
# libgomp and OpenBLAS (which read them then) and taken out of os.environ again, so
# processes started later (a torch benchmark, any subprocess) get the user's environment.
_RUNTIME_ENV = {}
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _RUNTIME_ENV["GOMP_SPINCOUNT"] = "3000"
# OpenBLAS's pool (pthreads) spin-yields 2**28 cycles (~0.1 s) after each call by default.
if "OPENBLAS_THREAD_TIMEOUT" not in _os.environ:
    _RUNTIME_ENV["OPENBLAS_THREAD_TIMEOUT"] = "4"
_os.environ.update(_RUNTIME_ENV)
try:
    from .. import _C  # noqa: E402  (after the environment above)
finally:
    for _name in _RUNTIME_ENV:
        _os.environ.pop(_name, None)

__all__ = [
    "allocator_backend",
    "empty_cache",
    "get_cache_limit",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_cache_limit",
]


def memory_stats():
    """The allocator's counters as an OrderedDict sorted by key, like torch.cuda.memory_stats().

    "<stat>.all.{current,peak,allocated,freed}" for allocated_bytes, reserved_bytes,
    requested_bytes, allocation (blocks), segment (blocks held from the system),
    cached_bytes and cached_blocks; and num_alloc_retries, num_ooms, num_cache_hits,
    num_cache_misses, num_small_allocs, num_empty_cache, num_cache_limit_releases,
    cache_limit_bytes. Byte counts are block sizes (requests rounded to size classes).
    """
    return _collections.OrderedDict(sorted(_C._cpu_memory_stats().items()))


def memory_allocated():
    """Bytes in blocks handed out to live tensors."""
    return _C._cpu_memory_allocated()


def max_memory_allocated():
    """Peak of memory_allocated() since start-up or reset_peak_memory_stats()."""
    return _C._cpu_memory_stats()["allocated_bytes.all.peak"]


def memory_reserved():
    """Bytes held from the system: blocks in use plus blocks cached."""
    return _C._cpu_memory_reserved()


def max_memory_reserved():
    """Peak of memory_reserved() since start-up or reset_peak_memory_stats()."""
    return _C._cpu_memory_stats()["reserved_bytes.all.peak"]


def empty_cache():
    """Releases every cached (unused) block to the system; live tensors are untouched."""
    _C._cpu_empty_cache()


def reset_peak_memory_stats():
    """Sets every "peak" statistic to its current value."""
    _C._cpu_reset_peak_memory_stats()


def reset_accumulated_memory_stats():
    """Zeroes the "allocated"/"freed" totals and the event counters."""
    _C._cpu_reset_accumulated_memory_stats()


def set_cache_limit(nbytes):
    """Caps the bytes kept cached; cached blocks over a lowered cap are released at once."""
    _C._cpu_set_cache_limit(nbytes)


def get_cache_limit():
    """The cap on cached bytes."""
    return _C._cpu_cache_limit()


def allocator_backend():
    """"caching" when the caching allocator is installed, "plain" under TESSERA_CPU_ALLOCATOR=plain."""
    return _C._cpu_allocator_backend()
