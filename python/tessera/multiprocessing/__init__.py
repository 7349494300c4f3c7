"""tessera.multiprocessing: the standard multiprocessing module, as torch.multiprocessing,
with reducers registered so that tessera tensors sent through its queues and pipes travel
through shared memory (see reductions.py) instead of being pickled byte by byte.

    import tessera.multiprocessing as mp
    q = mp.get_context("fork").Queue(); q.put(tessera.ones(3))   # the receiver maps the data
"""
import multiprocessing
import sys

from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException, spawn,  # noqa: F401
                    start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__
__all__ += ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException"]

# Blocks are passed by name (torch's "file_system" strategy). torch's default on Linux,
# "file_descriptor", passes open descriptors over sockets; it is not implemented here.
_sharing_strategy = "file_system"
_all_sharing_strategies = {"file_system"}


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors (one of get_all_sharing_strategies())."""
    global _sharing_strategy
    if new_strategy == "file_descriptor" and sys.platform.startswith("linux"):
        raise NotImplementedError("tessera shares tensors by named shared-memory blocks only "
                                  "('file_system'); 'file_descriptor' is not implemented")
    assert new_strategy in _all_sharing_strategies
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The sharing strategies this system supports."""
    return set(_all_sharing_strategies)


# Forked children start single-threaded: aten/core/Parallel.cpp registers that with
# pthread_atfork (libgomp's pool does not survive fork).
init_reductions()
