"""ZeroRedundancyOptimizer (ZeRO stage 1, as torch.distributed.optim has it): the parameters
are split over the ranks, largest first, each to the rank holding the fewest elements so
far; each rank keeps a local ``optimizer_class`` for its share only (so the optimizer state
is spread over the group), steps it, and broadcasts its updated parameters to the others.
The gradients must already be the same on every rank (DistributedDataParallel's)."""
from collections import defaultdict

import tessera

from ...optim.optimizer import Optimizer
from ..algorithms.join import Join, Joinable, JoinHook

__all__ = ["ZeroRedundancyOptimizer"]


class _ZeROJoinHook(JoinHook):
    """A joined rank still owns its shard: each iteration of the others it steps the shard
    (with the gradients DDP's join hook reduced) and broadcasts it, as they expect."""

    def __init__(self, zero):
        self.zero = zero
        super().__init__()

    def main_hook(self):
        self.zero._step_shard()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """``ZeroRedundancyOptimizer(params, optimizer_class, process_group=None,
    parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults)``: ``defaults``
    go to ``optimizer_class``. With ``parameters_as_bucket_view`` the parameters become
    views into one flat tensor per rank and dtype, which is what is broadcast. Parameters
    of several dtypes are allowed (each dtype its own broadcast; torch requires one)."""

    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        from .. import distributed_c10d as c10d
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) needs DDP's Python "
                                      "communication hooks, which tessera does not have yet")
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)
        self._all_params = [p for g in self.param_groups for p in g["params"]]
        self.process_group = process_group if process_group is not None else c10d._get_default_group()
        self.world_size = c10d.get_world_size(self.process_group)
        self.rank = c10d.get_rank(self.process_group)
        self.global_rank = c10d.get_global_rank(self.process_group, self.rank)
        self.optimizer_class = optimizer_class
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._all_state_dicts = []
        self._partition = self._partition_parameters()
        self.optim = optimizer_class(self._partition[self.rank], **defaults)
        # the local optimizer filled in its class's defaults: the public groups show them too
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self._buckets = self._build_param_buckets() if parameters_as_bucket_view else None
        self.initialized = True

    # -- partition

    def _partition_parameters(self):
        """For each rank, one group per global group: its hyperparameters and the rank's
        share of its parameters."""
        sizes = [0] * self.world_size
        per_rank = [[] for _ in range(self.world_size)]
        self._param_to_rank = {}
        for group in self.param_groups:
            shares = [[] for _ in range(self.world_size)]
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                rank = sizes.index(min(sizes))
                shares[rank].append(p)
                sizes[rank] += p.numel()
                self._param_to_rank[id(p)] = rank
            hyper = {k: v for k, v in group.items() if k != "params"}
            for rank in range(self.world_size):
                per_rank[rank].append(dict(hyper, params=shares[rank]))
        self._param_to_index = {id(p): i for i, p in enumerate(self._all_params)}
        return per_rank

    def _owned_by(self, rank):
        return [p for group in self._partition[rank] for p in group["params"]]

    def _build_param_buckets(self):
        """One flat tensor per (rank, dtype); each parameter becomes a view into its own."""
        buckets = []
        with tessera.no_grad():
            for rank in range(self.world_size):
                by_dtype = defaultdict(list)
                for p in self._owned_by(rank):
                    by_dtype[p.dtype].append(p)
                for dtype, params in by_dtype.items():
                    flat = tessera.cat([p.detach().reshape(-1) for p in params])
                    offset = 0
                    for p in params:
                        p.data = flat[offset: offset + p.numel()].view(p.shape)
                        offset += p.numel()
                    buckets.append((rank, flat, None))
        return buckets

    # -- stepping

    @staticmethod
    def _sync_param_groups(src, dst):
        for s, d in zip(src, dst):
            for key, value in s.items():
                if key != "params":
                    d[key] = value

    def _sync_params(self):
        """Every rank's share, broadcast from its owner."""
        from .. import distributed_c10d as c10d
        works, copies = [], []
        with tessera.no_grad():
            if self._buckets is not None:
                flats = [(rank, flat, None) for rank, flat, _ in self._buckets]
            else:
                flats = []
                for rank in range(self.world_size):
                    by_dtype = defaultdict(list)
                    for p in self._owned_by(rank):
                        by_dtype[p.dtype].append(p)
                    for params in by_dtype.values():
                        flats.append((rank, tessera.cat([p.detach().reshape(-1) for p in params]), params))
            for rank, flat, params in flats:
                src = c10d.get_global_rank(self.process_group, rank)
                works.append(c10d.broadcast(flat, src, group=self.process_group, async_op=True))
                if params is not None and rank != self.rank:
                    copies.append((flat, params))
            for w in works:
                w.wait()
            for flat, params in copies:
                offset = 0
                for p in params:
                    p.copy_(flat[offset: offset + p.numel()].view(p.shape))
                    offset += p.numel()

    def _step_shard(self, closure=None, **kwargs):
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(**kwargs) if closure is None else self.optim.step(closure=closure, **kwargs)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self._sync_params()
        return loss

    def step(self, closure=None, **kwargs):
        """The local optimizer's step on this rank's share, then every share broadcast."""
        Join.notify_join_context(self)
        return self._step_shard(closure, **kwargs)

    def zero_grad(self, set_to_none=True):
        Optimizer.zero_grad(self, set_to_none)

    def add_param_group(self, param_group):
        Optimizer.add_param_group(self, param_group)
        if not self.initialized:
            return
        # Earlier groups keep their ranks (the partition is greedy in group order).
        self._all_params = [p for g in self.param_groups for p in g["params"]]
        self._partition = self._partition_parameters()
        local = self._partition[self.rank]
        if len(local) == len(self.optim.param_groups) + 1:
            self.optim.add_param_group(local[-1])
        if self.parameters_as_bucket_view:
            self._buckets = self._build_param_buckets()

    # -- state

    def consolidate_state_dict(self, to=0):
        """Collects every rank's local optimizer state on rank ``to`` (of the group); every
        rank must call it. Then state_dict() on that rank gives the whole state."""
        from .. import distributed_c10d as c10d
        # hyperparameters changed since the last step (a scheduler's lr) are the current ones
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        gathered = [None] * self.world_size if self.rank == to else None
        c10d.gather_object(self.optim.state_dict(), gathered, dst=c10d.get_global_rank(self.process_group, to),
                           group=self.process_group)
        self._all_state_dicts = gathered if self.rank == to else []

    def state_dict(self):
        """The state of an ``optimizer_class`` over all the parameters (torch's layout:
        parameters numbered in group order); only after consolidate_state_dict(to=rank)."""
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you meant to "
                               "save the global state.")
        state_dict = Optimizer.state_dict(self)
        state = {}
        for rank, local in enumerate(self._all_state_dicts):
            for local_group, share in zip(local["param_groups"], self._partition[rank]):
                for local_id, p in zip(local_group["params"], share["params"]):
                    if local_id in local["state"]:
                        state[self._param_to_index[id(p)]] = local["state"][local_id]
        state_dict["state"] = dict(sorted(state.items()))
        return state_dict

    def load_state_dict(self, state_dict):
        """Loads a whole state (as state_dict() gives, or a plain optimizer's over the same
        parameters): each rank keeps its share's state and every group's hyperparameters."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        local = {"state": {}, "param_groups": []}
        index = 0
        for group, saved in zip(self.optim.param_groups, saved_groups):
            ids = []
            for p in group["params"]:
                global_id = self._param_to_index[id(p)]
                if global_id in state_dict["state"]:
                    local["state"][index] = state_dict["state"][global_id]
                ids.append(index)
                index += 1
            local["param_groups"].append(dict({k: v for k, v in saved.items() if k != "params"}, params=ids))
        self.optim.load_state_dict(local)
        self._sync_param_groups(saved_groups, self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)

    # -- Joinable

    def join_hook(self, **kwargs):
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        return self._all_params[0].device

    @property
    def join_process_group(self):
        return self.process_group
