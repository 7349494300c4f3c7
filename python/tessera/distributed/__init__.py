"""tessera.distributed: torch.distributed's c10d layer on tessera's own stores (TCPStore,
FileStore, HashStore, PrefixStore) and process groups, with Gloo for CPU tensors. The
collectives run on Gloo's algorithms and transport; init_process_group takes torch's
env://, tcp:// and file:// init methods."""
from tessera._C._distributed_c10d import (FileStore, GradBucket, HashStore, PrefixStore, ProcessGroup,  # noqa: F401
                                          ReduceOp, Store, TCPStore, Work)

from ._debug import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env  # noqa: F401
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import (_all_gather_base, _get_default_group, _get_default_store,  # noqa: F401
                               _get_global_rank, _reduce_scatter_base, _rank_not_in_group, _world, reduce_op)
from .rendezvous import register_rendezvous_handler, rendezvous  # noqa: F401

set_debug_level_from_env()  # as torch, an invalid TORCH_DISTRIBUTED_DEBUG fails the import

if is_gloo_available():  # noqa: F405
    from tessera._C._distributed_c10d import ProcessGroupGloo  # noqa: F401


def is_available():
    """Whether tessera was built with the distributed package (it always is)."""
    return True
