"""torch.distributed's process-group API: init_process_group and the default group, new_group
and subgroups, and the collectives (sync, or async_op=True for a Work), point-to-point
sends, and the object collectives, over tessera._C._distributed_c10d's process groups."""
import io
import os
import pickle
import warnings
from datetime import timedelta

import tessera
from tessera._C import _distributed_c10d as _c10d
from tessera.futures import Future
from tessera._C._distributed_c10d import (AllgatherOptions, AllreduceOptions, AllToAllOptions,
                                          BarrierOptions, BroadcastOptions, GatherOptions,
                                          PrefixStore, ProcessGroup, ReduceOp, ReduceOptions,
                                          ReduceScatterOptions, ScatterOptions, Store)

from ._debug import DebugLevel, get_debug_level
from .constants import default_pg_timeout
from .rendezvous import register_rendezvous_handler, rendezvous  # noqa: F401

_GLOO_AVAILABLE = _c10d._GLOO_AVAILABLE
if _GLOO_AVAILABLE:
    from tessera._C._distributed_c10d import ProcessGroupGloo
_MPI_AVAILABLE = _c10d._MPI_AVAILABLE
if _MPI_AVAILABLE:
    from tessera._C._distributed_c10d import ProcessGroupMPI

__all__ = [
    "Backend", "GroupMember", "P2POp", "all_gather", "all_gather_into_tensor", "all_gather_object",
    "all_reduce", "all_to_all", "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast",
    "broadcast_object_list", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_global_rank", "get_group_rank", "get_rank", "get_world_size", "group", "init_process_group",
    "irecv", "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend", "monitored_barrier", "new_group", "new_subgroups",
    "new_subgroups_by_enumeration", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor",
    "scatter", "scatter_object_list", "send", "supports_complex",
]


def is_mpi_available():
    return _MPI_AVAILABLE


def is_nccl_available():
    return False


def is_gloo_available():
    return _GLOO_AVAILABLE


def is_ucc_available():
    return False


def is_torchelastic_launched():
    """Whether this process was started by the launcher (it sets TORCHELASTIC_RUN_ID)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


class Backend:
    """The backends' names: ``Backend("GLOO") == "gloo"``."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    TCP = "tcp"
    _plugins = {}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.TCP:
            raise ValueError("TCP backend has been deprecated. Please use "
                             "Gloo or MPI backend for collective operations on CPU tensors.")
        if value == Backend.UNDEFINED:
            raise ValueError(f"Invalid backend: '{name}'")
        if value not in (Backend.GLOO, Backend.NCCL, Backend.UCC, Backend.MPI):
            value = name.lower()
        return value

    @classmethod
    def register_backend(cls, name, func):
        """Adds a third-party backend: ``func(store, rank, world_size, timeout)`` makes its
        process group."""
        assert not hasattr(Backend, name.upper()), f"{name.upper()} c10d backend already exist"
        assert name.upper() not in Backend._plugins, f"{name.upper()} c10d backend creator function already exist"
        setattr(Backend, name.upper(), name.upper())
        Backend._plugins[name.upper()] = func


dist_backend = Backend


class _reduce_op:
    """Deprecated alias of ReduceOp (torch.distributed.reduce_op)."""

    def __init__(self):
        for name in ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
            setattr(self, name, getattr(ReduceOp, name))

    def __getattribute__(self, key):
        warnings.warn("torch.distributed.reduce_op is deprecated, please use torch.distributed.ReduceOp instead")
        return object.__getattribute__(self, key)


reduce_op = _reduce_op()


class GroupMember:
    """``WORLD`` is the default group once initialized; ``NON_GROUP_MEMBER`` is what
    new_group returns to a process outside the new group."""

    WORLD = None
    NON_GROUP_MEMBER = object()


class group:
    WORLD = None


class _World:
    def __init__(self):
        self.pg_map = {}          # group -> (backend, store)
        self.pg_names = {}        # group -> name
        self.pg_group_ranks = {}  # group -> {global rank: group rank}
        self.group_count = 0

    @property
    def default_pg(self):
        return GroupMember.WORLD


_world = _World()


def _update_default_pg(pg):
    GroupMember.WORLD = group.WORLD = pg


def is_initialized():
    """Whether init_process_group has run (and destroy_process_group has not since)."""
    return GroupMember.WORLD is not None


def _get_default_group():
    if not is_initialized():
        raise RuntimeError("Default process group has not been initialized, "
                           "please make sure to call init_process_group.")
    return GroupMember.WORLD


def _get_default_store():
    return _world.pg_map[_get_default_group()][1]


def _rank_not_in_group(group):
    return group is not None and group is GroupMember.NON_GROUP_MEMBER


def _warn_not_in_group(op_name):
    warnings.warn(f"Running {op_name} on global rank {get_rank()} which does not belong to the given group.")


def _pg(group):
    return _get_default_group() if group is None or group is GroupMember.WORLD else group


def get_group_rank(group, global_rank):
    """The rank in ``group`` of the process whose default-group rank is ``global_rank``."""
    if group is GroupMember.WORLD or group is None:
        return global_rank
    if group not in _world.pg_group_ranks:
        raise RuntimeError(f"Group {group} is not registered, please create group with torch.distributed.new_group API")
    ranks = _world.pg_group_ranks[group]
    if global_rank not in ranks:
        raise RuntimeError(f"Global rank {global_rank} is not part of group {group}")
    return ranks[global_rank]


def get_global_rank(group, group_rank):
    """The default-group rank of the process of rank ``group_rank`` in ``group``."""
    if group is GroupMember.WORLD or group is None:
        return group_rank
    if group not in _world.pg_group_ranks:
        raise RuntimeError(f"Group {group} is not registered, please create group with torch.distributed.new_group API")
    for rank, grp_rank in _world.pg_group_ranks[group].items():
        if grp_rank == group_rank:
            return rank
    raise RuntimeError(f"Group rank {group_rank} is not part of group {group}")


_get_global_rank = get_global_rank
_get_group_rank = get_group_rank


def get_backend(group=None):
    pg = _pg(group)
    if _rank_not_in_group(pg):
        raise RuntimeError("Invalid process group specified")
    entry = _world.pg_map.get(pg)
    if entry is None:
        raise RuntimeError("Invalid process group specified")
    return entry[0]


def get_rank(group=None):
    """This process's rank in ``group`` (the default group when None); -1 outside it."""
    if _rank_not_in_group(group):
        return -1
    default_pg = _get_default_group()
    if group is None or group is GroupMember.WORLD:
        return default_pg.rank()
    return get_group_rank(group, default_pg.rank())


def get_world_size(group=None):
    """The number of processes in ``group`` (the default group when None); -1 outside it."""
    if _rank_not_in_group(group):
        return -1
    return _pg(group).size()


def _store_based_barrier(rank, store, timeout):
    """Waits until every rank of the world has reached this point, through the store (as
    torch does after creating a group, before any collective may run on it)."""
    key = f"store_based_barrier_key:{_world.group_count}"
    store.add(key, 1)
    world_size = get_world_size()
    import time
    start = time.monotonic()
    while True:
        arrived = store.add(key, 0)
        if arrived >= world_size:
            return
        if timedelta(seconds=time.monotonic() - start) > timeout:
            raise RuntimeError(f"Timed out initializing process group in store based barrier on rank: {rank}, "
                               f"for key: {key} (world_size={world_size}, worker_count={arrived}, timeout={timeout})")
        time.sleep(0.01)


def _new_process_group_helper(group_size, group_rank, global_ranks, backend, store, timeout, group_name=None):
    _world.group_count += 1
    if not group_name:
        group_name = str(_world.group_count)
    if group_name in _world.pg_names.values():
        raise RuntimeError("The specified group name has already been created, please use a different group name")
    if not isinstance(timeout, timedelta):
        raise RuntimeError("Expected timeout argument to be of type datetime.timedelta")
    if global_ranks and group_rank < 0 and backend != Backend.MPI:
        return GroupMember.NON_GROUP_MEMBER  # (MPI builds a group with every world rank taking part)
    prefix_store = PrefixStore(f"{group_name}/", store) if store is not None else None
    if backend == Backend.GLOO:
        if not _GLOO_AVAILABLE:
            raise RuntimeError("Distributed package doesn't have Gloo built in")
        iface = os.environ.get("GLOO_SOCKET_IFNAME", "")
        iface = iface.split(",")[0] if iface else ""
        pg = ProcessGroupGloo(prefix_store, group_rank, group_size, timeout, interface=iface)
        if get_debug_level() == DebugLevel.DETAIL:
            # the fingerprints travel on a helper group of the same ranks
            helper = ProcessGroupGloo(PrefixStore(f"{group_name}/detail/", store), group_rank, group_size, timeout,
                                      interface=iface)
            pg = _c10d._ProcessGroupWrapper(pg, helper, timeout)
    elif backend == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    elif backend == Backend.MPI:
        if not _MPI_AVAILABLE:
            raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only included if you build "
                               "PyTorch from source on a host that has MPI installed.")
        pg = ProcessGroupMPI.create(global_ranks)
        if pg is None:
            return GroupMember.NON_GROUP_MEMBER
    elif backend.upper() in Backend._plugins:
        pg = Backend._plugins[backend.upper()](prefix_store, group_rank, group_size, timeout)
    else:
        raise RuntimeError(f"Unsupported backend: {backend}")
    _world.pg_map[pg] = (backend, store)
    _world.pg_names[pg] = group_name
    return pg


def init_process_group(backend, init_method=None, timeout=default_pg_timeout, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """Joins this process to the default group: rendezvous through ``init_method`` (env://
    when neither it nor ``store`` is given), then the backend's process group."""
    if not isinstance(timeout, timedelta):
        raise RuntimeError("Expected timeout argument to be of type datetime.timedelta")
    if GroupMember.WORLD is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    assert (store is None) or (init_method is None), "Cannot specify both init_method and store."
    if store is not None:
        assert world_size > 0, "world_size must be positive if using store"
        assert rank >= 0, "rank must be non-negative if using store"
    elif init_method is None:
        init_method = "env://"
    backend = Backend(backend)
    if backend == Backend.MPI:
        # mpirun assigns the ranks: no rendezvous, no store
        if world_size != -1 or rank != -1:
            warnings.warn(f"For MPI backend, world_size ({world_size}) and rank ({rank}) are ignored since they "
                          "are assigned by the MPI runtime.")
        default_pg = _new_process_group_helper(-1, -1, [], backend, None, timeout, group_name)
        _update_default_pg(default_pg)
        _world.pg_group_ranks[default_pg] = {i: i for i in range(default_pg.size())}
        return
    if store is None:
        store, rank, world_size = next(rendezvous(init_method, rank, world_size, timeout=timeout))
        store.set_timeout(timeout)
        store = PrefixStore("default_pg", store)
    default_pg = _new_process_group_helper(world_size, rank, [], backend, store, timeout, group_name)
    _update_default_pg(default_pg)
    _world.pg_group_ranks[default_pg] = {i: i for i in range(world_size)}
    if backend != Backend.MPI:
        _store_based_barrier(rank, store, timeout)


def destroy_process_group(group=None):
    """Destroys ``group``, or with None every group and the default one."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = GroupMember.WORLD if group is None else group
    if pg is None or pg not in _world.pg_map:
        raise RuntimeError("Invalid process group specified")
    if group is None or group is GroupMember.WORLD:
        _update_default_pg(None)
        _world.pg_map.clear()
        _world.pg_names.clear()
        _world.pg_group_ranks.clear()
        _world.group_count = 0
    else:
        del _world.pg_map[pg]
        del _world.pg_names[pg]
        del _world.pg_group_ranks[pg]


def new_group(ranks=None, timeout=default_pg_timeout, backend=None, pg_options=None):
    """A group of the default group's ``ranks`` (every rank when None). Every process of the
    default group must call it, in the same order; those outside get NON_GROUP_MEMBER."""
    default_pg = _get_default_group()
    default_backend, default_store = _world.pg_map[default_pg]
    global_rank, global_world_size = default_pg.rank(), default_pg.size()
    backend = Backend(backend) if backend else default_backend
    if ranks is not None:
        ranks = sorted(ranks)
        group_world_size = len(ranks)
        if group_world_size > global_world_size:
            raise RuntimeError("the new group's world size should be less or equal to the world size set by "
                               "init_process_group")
        for r in ranks:
            if r < 0 or r >= global_world_size:
                raise RuntimeError("The new group's rank should be within the world_size set by init_process_group")
        group_rank = ranks.index(global_rank) if global_rank in ranks else -1
    else:
        ranks = list(range(global_world_size))
        group_world_size, group_rank = global_world_size, global_rank
    pg = _new_process_group_helper(group_world_size, group_rank, ranks, backend, default_store, timeout)
    if pg is not GroupMember.NON_GROUP_MEMBER:
        _world.pg_group_ranks[pg] = {g: i for i, g in enumerate(ranks)}
    if backend != Backend.MPI:
        _store_based_barrier(global_rank, default_store, timeout)
    return pg


def new_subgroups(group_size=None, group=None, timeout=default_pg_timeout, backend=None, pg_options=None):
    """Splits the world into groups of ``group_size`` consecutive ranks; returns this
    process's group and all of them."""
    world_size = get_world_size()
    if group_size is None:
        raise ValueError("group_size must be given: tessera has no CUDA devices to count")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > world_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError("The world size must be divisible by 'group_size'")
    return new_subgroups_by_enumeration([list(range(s, s + group_size)) for s in range(0, world_size, group_size)],
                                        timeout=timeout, backend=backend, pg_options=pg_options)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=default_pg_timeout, backend=None,
                                 pg_options=None):
    """One group per list of ranks (disjoint); returns this process's group and all of them."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    cur, subgroups, seen = None, [], set()
    my_rank = get_rank()
    for ranks in ranks_per_subgroup_list:
        sub = new_group(ranks=ranks, timeout=timeout, backend=backend, pg_options=pg_options)
        subgroups.append(sub)
        for r in ranks:
            if r in seen:
                raise RuntimeError(f"Rank {r} has appeared in both subgroup {seen} and {ranks}")
            seen.add(r)
        if my_rank in ranks:
            cur = sub
    return cur, subgroups


# ---- checks shared by the collectives ----

def _check_single_tensor(param, param_name):
    if not isinstance(param, tessera.Tensor):
        raise RuntimeError(f"Invalid function argument. Expected parameter `{param_name}` to be of type torch.Tensor.")


def _check_tensor_list(param, param_name):
    if not isinstance(param, list) or not all(isinstance(p, tessera.Tensor) for p in param):
        raise RuntimeError(f"Invalid function argument. Expected parameter `{param_name}` "
                           "to be of type List[torch.Tensor].")


def _ensure_all_tensors_same_dtype(*tensors):
    last = None
    for t in tensors:
        for x in (t if isinstance(t, (list, tuple)) else [t]):
            dtype = x.dtype
            if x.is_complex():
                dtype = {tessera.complex64: tessera.float32, tessera.complex128: tessera.float64}.get(dtype, dtype)
            if last is None:
                last = dtype
            elif last != dtype:
                raise RuntimeError(f"Invalid usage of tensors with different dtypes. Found {last} and  {dtype}")


def _as_real(t):
    return tessera.view_as_real(t) if t.is_complex() else t


def supports_complex(reduceOp):
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR,
                            ReduceOp.BXOR)


def _group_root(group, rank):
    return rank if group is None or group is GroupMember.WORLD else get_group_rank(group, rank)


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _validate_output_list_for_rank(my_rank, dst, gather_list):
    if dst == my_rank:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")


# ---- collectives ----

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across the group in place (every rank gets the result)."""
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_reduce")
        return None
    if tensor.is_complex():
        if not supports_complex(op):
            raise RuntimeError(f"all_reduce does not support {op} on complex tensors")
        tensor = tessera.view_as_real(tensor)
    opts = AllreduceOptions()
    opts.reduceOp = op
    return _finish(_pg(group).allreduce([tensor], opts), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Copies rank ``src``'s ``tensor`` into every other rank's."""
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("broadcast")
        return None
    opts = BroadcastOptions()
    opts.rootRank = _group_root(group, src)
    opts.rootTensor = 0
    return _finish(_pg(group).broadcast([_as_real(tensor)], opts), async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across the group into rank ``dst``'s."""
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce")
        return None
    opts = ReduceOptions()
    opts.reduceOp = op
    opts.rootRank = _group_root(group, dst)
    return _finish(_pg(group).reduce([tensor], opts), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list`` (one entry per rank) on every rank."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    _ensure_all_tensors_same_dtype(tensor_list, tensor)
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather")
        return None
    tensor_list = [_as_real(t) for t in tensor_list]
    return _finish(_pg(group).allgather([tensor_list], [_as_real(tensor)], AllgatherOptions()), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor`` concatenated (in rank order) into ``output_tensor``."""
    _check_single_tensor(input_tensor, "input_tensor")
    _check_single_tensor(output_tensor, "output_tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather_into_tensor")
        return None
    return _finish(_pg(group)._allgather_base(_as_real(output_tensor), _as_real(input_tensor)), async_op)


def _all_gather_base(output_tensor, input_tensor, group=None, async_op=False):
    warnings.warn("torch.distributed._all_gather_base is a private function and will be deprecated. "
                  "Please use torch.distributed.all_gather_into_tensor instead.")
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def _tensor_and_list(tensor, tensors, list_name, group, op):
    """gather's and scatter's argument checks: the list ([] when omitted), or None when this
    rank is outside ``group``."""
    _check_single_tensor(tensor, "tensor")
    if tensors:
        _check_tensor_list(tensors, list_name)
    else:
        tensors = []
    _ensure_all_tensors_same_dtype(tensor, tensors)
    if _rank_not_in_group(group):
        _warn_not_in_group(op)
        return None
    return tensors


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    gather_list = _tensor_and_list(tensor, gather_list, "gather_list", group, "gather")
    if gather_list is None:
        return None
    my_rank = get_rank()
    _validate_output_list_for_rank(my_rank, dst, gather_list)
    opts = GatherOptions()
    opts.rootRank = _group_root(group, dst)
    outputs = [gather_list] if dst == my_rank else []
    return _finish(_pg(group).gather(outputs, [tensor], opts), async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Rank ``src``'s ``scatter_list[i]`` into rank i's ``tensor``."""
    scatter_list = _tensor_and_list(tensor, scatter_list, "scatter_list", group, "scatter")
    if scatter_list is None:
        return None
    scatter_list = [_as_real(t) for t in scatter_list]
    tensor = _as_real(tensor)
    my_rank = get_rank()
    if src == my_rank:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        inputs = [scatter_list]
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        inputs = []
    opts = ScatterOptions()
    opts.rootRank = _group_root(group, src)
    return _finish(_pg(group).scatter([tensor], inputs, opts), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input_list[i]`` across the group into rank i's ``output``."""
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    _ensure_all_tensors_same_dtype(output, input_list)
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce_scatter")
        return None
    opts = ReduceScatterOptions()
    opts.reduceOp = op
    return _finish(_pg(group).reduce_scatter([output], [input_list], opts), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input`` across the group; rank i keeps its i-th chunk in ``output``."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    if _rank_not_in_group(group):
        _warn_not_in_group("reduce_scatter_tensor")
        return None
    opts = ReduceScatterOptions()
    opts.reduceOp = op
    return _finish(_pg(group)._reduce_scatter_base(output, input, opts), async_op)


def _reduce_scatter_base(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    warnings.warn("torch.distributed._reduce_scatter_base is a private function and will be deprecated. "
                  "Please use torch.distributed.reduce_scatter_tensor instead.")
    return reduce_scatter_tensor(output, input, op, group, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Splits ``input`` along dim 0 (equally, or by ``input_split_sizes``) and sends part i
    to rank i; ``output`` receives every rank's part for this rank, in rank order."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    if _rank_not_in_group(group):
        _warn_not_in_group("all_to_all_single")
        return None
    output_split_sizes = [] if output_split_sizes is None else list(output_split_sizes)
    input_split_sizes = [] if input_split_sizes is None else list(input_split_sizes)
    return _finish(_pg(group).alltoall_base(_as_real(output), _as_real(input), output_split_sizes,
                                            input_split_sizes, AllToAllOptions()), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Sends ``input_tensor_list[i]`` to rank i; ``output_tensor_list[j]`` receives rank j's."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _ensure_all_tensors_same_dtype(output_tensor_list, input_tensor_list)
    if _rank_not_in_group(group):
        _warn_not_in_group("all_to_all")
        return None
    outs = [_as_real(t) for t in output_tensor_list]
    ins = [_as_real(t) for t in input_tensor_list]
    return _finish(_pg(group).alltoall(outs, ins, AllToAllOptions()), async_op)


def barrier(group=GroupMember.WORLD, async_op=False, device_ids=None):
    """Waits until every rank of the group has called it (and its earlier collectives ran)."""
    if _rank_not_in_group(group):
        _warn_not_in_group("barrier")
        return None
    opts = BarrierOptions()
    if device_ids is not None:
        if not isinstance(device_ids, list):
            raise RuntimeError("Invalid function argument: device_ids type should be List[int]")
        opts.device_ids = device_ids
    return _finish(_pg(group).barrier(opts), async_op)


def monitored_barrier(group=GroupMember.WORLD, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not reach it within ``timeout`` (rank 0
    collects every rank's arrival; Gloo only, as in torch)."""
    if _rank_not_in_group(group):
        _warn_not_in_group("monitored_barrier")
        return None
    if get_backend(group) != Backend.GLOO:
        raise RuntimeError("monitored_barrier is only implemented for GLOO backend.")
    pg = _pg(group)
    if timeout is None:
        inner = getattr(pg, "wrapped_pg", pg)  # the Gloo group under a DETAIL wrapper
        timeout = inner.timeout if hasattr(inner, "timeout") else default_pg_timeout
    rank, size = pg.rank(), pg.size()
    tag = 2 ** 31 - 7  # far from the small tags programs give send/recv
    token = tessera.zeros(1)
    if rank != 0:
        pg.send([token], 0, tag).wait()
        pg.recv([token], 0, tag).wait()
        return None
    missing = []
    works = {r: pg.recv([tessera.zeros(1)], r, tag) for r in range(1, size)}
    for r, work in works.items():
        try:
            work.wait(timeout)
        except RuntimeError:
            if not wait_all_ranks:
                raise RuntimeError(f"Rank {r} failed to pass monitoredBarrier in "
                                   f"{int(timeout.total_seconds() * 1000)} ms") from None
            missing.append(r)
    if missing:
        raise RuntimeError(f"Ranks {', '.join(map(str, missing))} failed to pass monitoredBarrier in "
                           f"{int(timeout.total_seconds() * 1000)} ms")
    for r in range(1, size):
        pg.send([token], r, tag).wait()
    return None


# ---- point to point ----

def isend(tensor, dst, group=None, tag=0):
    """Starts sending ``tensor`` to rank ``dst``; returns its Work."""
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("isend")
        return None
    return _pg(group).send([tensor], _group_root(group, dst), tag)


def irecv(tensor, src=None, group=None, tag=0):
    """Starts receiving into ``tensor`` from rank ``src`` (any rank when None)."""
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("irecv")
        return None
    pg = _pg(group)
    if src is None:
        return pg.recv_anysource([tensor], tag)
    return pg.recv([tensor], _group_root(group, src), tag)


def send(tensor, dst, group=None, tag=0):
    """Sends ``tensor`` to rank ``dst`` and waits until it has gone."""
    if get_rank() == dst:
        raise ValueError("Invalid destination rank: destination rank should not be the same as "
                         "the rank of the current process.")
    work = isend(tensor, dst, group, tag)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0):
    """Receives into ``tensor`` from rank ``src`` (any rank when None); returns the sender's rank."""
    _check_single_tensor(tensor, "tensor")
    if _rank_not_in_group(group):
        _warn_not_in_group("recv")
        return -1
    work = irecv(tensor, src, group, tag)
    work.wait()
    if src is None:
        sender = work.source_rank()
        return sender if group is None or group is GroupMember.WORLD else get_global_rank(group, sender)
    return src


class P2POp:
    """One send or receive of a batch_isend_irecv."""

    def __init__(self, op, tensor, peer, group=None, tag=0):
        if op not in (isend, irecv):
            raise RuntimeError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                               "``torch.distributed.irecv``.")
        _check_single_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list):
    """Starts every send and receive of the list; returns their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise RuntimeError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                           "``torch.distributed.P2POp``.")
    backends = {get_backend(p.group) for p in p2p_op_list}
    if len(backends) > 1:
        raise RuntimeError("All groups need to use the same backend.")
    return [p.op(p.tensor, p.peer, p.group, p.tag) for p in p2p_op_list]


# ---- object collectives: pickled objects as byte tensors ----

def _object_to_tensor(obj):
    data = pickle.dumps(obj)
    return tessera.frombuffer(bytearray(data), dtype=tessera.uint8), tessera.tensor([len(data)], dtype=tessera.long)


def _tensor_to_object(tensor, size):
    return pickle.loads(bytes(tensor[:size].numpy().tobytes()))


def _padded_object(obj, group):
    """``obj`` pickled and padded to the longest pickle of the group's ranks, and every
    rank's pickle length."""
    data, size = _object_to_tensor(obj)
    sizes = [tessera.zeros(1, dtype=tessera.long) for _ in range(get_world_size(group))]
    all_gather(sizes, size, group=group)
    padded = tessera.zeros(int(max(int(s.item()) for s in sizes)), dtype=tessera.uint8)
    padded[: data.numel()] = data
    return padded, [int(s.item()) for s in sizes]


def all_gather_object(object_list, obj, group=None):
    """Every rank's picklable ``obj`` into ``object_list`` (one entry per rank)."""
    if _rank_not_in_group(group):
        _warn_not_in_group("all_gather_object")
        return
    padded, sizes = _padded_object(obj, group)
    world, max_size = len(sizes), padded.numel()
    outputs = [tessera.empty(max_size, dtype=tessera.uint8) for _ in range(world)]
    all_gather(outputs, padded, group=group)
    for i, t in enumerate(outputs):
        object_list[i] = _tensor_to_object(t, sizes[i])


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """Every rank's picklable ``obj`` into ``object_gather_list`` on rank ``dst``."""
    if _rank_not_in_group(group):
        _warn_not_in_group("gather_object")
        return
    my_rank = get_rank()
    _validate_output_list_for_rank(my_rank, dst, object_gather_list)
    padded, sizes = _padded_object(obj, group)
    world, max_size = len(sizes), padded.numel()
    outputs = [tessera.empty(max_size, dtype=tessera.uint8) for _ in range(world)] if my_rank == dst else None
    gather(padded, gather_list=outputs, dst=dst, group=group)
    if my_rank != dst:
        return
    for i, t in enumerate(outputs):
        object_gather_list[i] = _tensor_to_object(t, sizes[i])


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Rank ``src``'s picklable objects into every rank's ``object_list`` (same length)."""
    if _rank_not_in_group(group):
        _warn_not_in_group("broadcast_object_list")
        return
    my_rank = get_rank()
    if my_rank == src:
        pairs = [_object_to_tensor(o) for o in object_list]
        sizes = tessera.cat([s for _, s in pairs])
    else:
        sizes = tessera.empty(len(object_list), dtype=tessera.long)
    broadcast(sizes, src=src, group=group)
    total = int(sizes.sum().item())
    if my_rank == src:
        payload = tessera.cat([d for d, _ in pairs]) if pairs else tessera.empty(0, dtype=tessera.uint8)
    else:
        payload = tessera.empty(total, dtype=tessera.uint8)
    broadcast(payload, src=src, group=group)
    if my_rank != src:
        offset = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _tensor_to_object(payload[offset: offset + n], n)
            offset += n


def scatter_object_list(scatter_object_output_list, scatter_object_input_list, src=0, group=None):
    """Rank ``src``'s ``scatter_object_input_list[i]`` into rank i's
    ``scatter_object_output_list[0]``."""
    if _rank_not_in_group(group):
        _warn_not_in_group("scatter_object_list")
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise RuntimeError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    my_rank = get_rank()
    max_size = tessera.zeros(1, dtype=tessera.long)
    if my_rank == src:
        pairs = [_object_to_tensor(o) for o in scatter_object_input_list]
        max_size[0] = max(int(s.item()) for _, s in pairs)
    broadcast(max_size, src=src, group=group)
    n = int(max_size.item())
    if my_rank == src:
        padded = []
        for d, _ in pairs:
            p = tessera.zeros(n, dtype=tessera.uint8)
            p[: d.numel()] = d
            padded.append(p)
        sizes = [s for _, s in pairs]
    else:
        padded, sizes = None, None
    out = tessera.empty(n, dtype=tessera.uint8)
    scatter(out, scatter_list=padded, src=src, group=group)
    size = tessera.zeros(1, dtype=tessera.long)
    scatter(size, scatter_list=sizes, src=src, group=group)
    scatter_object_output_list[0] = _tensor_to_object(out, int(size.item()))


class _WorkFuture(Future):
    """Work.get_future()'s Future: its wait() also waits on the work, since Gloo's
    point-to-point work completes in wait() (collectives complete on the group's thread)."""

    def __init__(self, work):
        super().__init__()
        self._work = work

    def wait(self):
        try:
            self._work.wait()
        except Exception:  # noqa: BLE001 - the work's done callback sets it on the future
            pass
        return super().wait()


def _work_get_future(self):
    """A tessera.futures.Future of this work's result tensors."""
    fut = _WorkFuture(self)

    def done():
        error = self.exception()
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(self.result())

    self._add_done_callback(done)
    return fut


_c10d.Work.get_future = _work_get_future
