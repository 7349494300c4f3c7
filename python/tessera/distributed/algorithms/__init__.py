"""tessera.distributed.algorithms: the Join context for uneven inputs, and
DistributedDataParallel's communication hooks."""
from .join import Join, Joinable, JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
