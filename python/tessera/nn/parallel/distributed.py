"""DistributedDataParallel: a module replicated on every rank of a process group. Its
parameters and buffers start as rank 0's; each backward all-reduces the gradients bucket by
bucket while the pass is still running (tessera._C._distributed_c10d.Reducer, driven by
hooks on the parameters' AccumulateGrad), so after backward every rank holds the mean
gradient and the optimizers step alike."""
from contextlib import contextmanager

import tessera
from tessera.distributed.algorithms.join import Join, Joinable, JoinHook, _JoinConfig

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES


def _bucket_assignment(params, caps):
    """torch's compute_bucket_assignment_by_size: parameters in order, one open bucket per
    dtype, closed when it reaches its cap (the first cap for each dtype's first bucket);
    buckets in reverse order, since the last parameters' grads come first in backward."""
    open_, done = {}, []
    for i, p in enumerate(params):
        b = open_.setdefault(p.dtype, {"indices": [], "bytes": 0, "n": 0})
        b["indices"].append(i)
        b["bytes"] += p.numel() * p.element_size()
        if b["bytes"] >= caps[min(b["n"], len(caps) - 1)]:
            done.append(b["indices"])
            open_[p.dtype] = {"indices": [], "bytes": 0, "n": b["n"] + 1}
    done += [b["indices"] for b in open_.values() if b["indices"]]
    done.sort(key=min)
    return list(reversed(done))


def _tensors_of(obj):
    if isinstance(obj, tessera.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors_of(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors_of(o)]
    return []


class _DDPJoinHook(JoinHook):
    """A joined rank's share of each iteration the others still run: the buffer broadcast,
    the all-reduce that says whether they sync gradients, and then the bucket all-reduces
    with zeros (so the average counts this rank as contributing nothing). Once all have
    joined, the last joiner's parameters and buffers go to every rank."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        self.ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        ddp = self.ddp
        if ddp._will_sync_buffers():
            ddp._broadcast_coalesced(list(ddp.module.buffers()), ddp._find_common_rank(False))
        work = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        work.wait()
        should_sync_backwards = work.result()[0].item() != 0
        ddp.require_forward_param_sync = should_sync_backwards
        if should_sync_backwards:
            ddp.reducer._match_all_reduce_for_bwd_pass()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        ddp._sync_module_states(ddp._find_common_rank(is_last_joiner))


class DistributedDataParallel(Module, Joinable):
    """Wraps ``module`` for data-parallel training on ``process_group`` (the default group
    when None). CPU tensors only: ``device_ids`` and ``output_device`` must be None."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        from tessera import distributed as dist
        from tessera._C._distributed_c10d import Reducer
        if device_ids is not None and len(device_ids) > 0:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters on the CPU.")
        params = []
        for p in module.parameters():
            if p.requires_grad and not any(p is q for q in params):
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.process_group = process_group if process_group is not None else dist.distributed_c10d._get_default_group()
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self._sync_module_states()
        buckets = _bucket_assignment(params, [_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap])
        # static_graph lets parameters go unused (torch finds which in its first iteration);
        # here unused ones are found in every iteration, as with find_unused_parameters.
        self.reducer = Reducer(params, buckets, self.process_group, find_unused_parameters or static_graph,
                               gradient_as_bucket_view)
        self._comm_hook_set = False
        self._join_config = _JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True

    def _broadcast_coalesced(self, tensors, src=0):
        """The values of the group's rank ``src`` into every rank's tensors, one broadcast
        per dtype."""
        from tessera import distributed as dist
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with tessera.no_grad():
            for group in by_dtype.values():
                flat = tessera.cat([t.detach().reshape(-1) for t in group])
                # broadcast names the source by its rank in the default group
                dist.broadcast(flat, dist.get_global_rank(self.process_group, src), group=self.process_group)
                offset = 0
                for t in group:
                    t.copy_(flat[offset: offset + t.numel()].view(t.shape))
                    offset += t.numel()

    def _sync_module_states(self, src=0):
        tensors = list(self.module.parameters()) + [b for b in self.module.buffers()]
        if tensors:
            self._broadcast_coalesced(tensors, src)

    def _will_sync_buffers(self):
        return self.broadcast_buffers and self.require_forward_param_sync and any(True for _ in self.module.buffers())

    def _find_common_rank(self, rank_cond):
        """The highest group rank among those where rank_cond holds (under join, the rank
        whose buffers and parameters are current)."""
        from tessera import distributed as dist
        rank = tessera.tensor([self.process_group.rank() if rank_cond else -1])
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. This indicates a bug in "
                             "PyTorch, please report an issue.")
        return int(rank.item())

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        from tessera import distributed as dist
        sync = not is_joined_rank and self.require_backward_grad_sync and tessera.is_grad_enabled()
        flag = tessera.ones(1) if sync else tessera.zeros(1)
        return dist.all_reduce(flag, group=self.process_group, async_op=True)

    def forward(self, *inputs, **kwargs):
        grad_sync = tessera.is_grad_enabled() and self.require_backward_grad_sync
        # None outside a join: a count from an earlier forward must not divide this one
        work = Join.notify_join_context(self)
        self.reducer._set_forward_pass_work_handle(work, self._divide_by_initial_world_size)
        if self._will_sync_buffers():
            src = self._find_common_rank(True) if self._join_config.enable else 0
            self._broadcast_coalesced(list(self.module.buffers()), src)
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        output = self.module(*inputs, **kwargs)
        # a forward without grad sync (no_sync, no_grad) is followed by none on the joined
        # ranks either: their next buffer broadcast is skipped alike
        self.require_forward_param_sync = grad_sync
        if grad_sync:
            self.reducer.prepare_for_backward(_tensors_of(output) if (self.find_unused_parameters or
                                                                      self.static_graph) else [])
        return output

    @contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally; the first synchronised
        backward after it all-reduces the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook):
        """Replaces each bucket's all-reduce by ``hook(state, bucket)``, which returns a
        tessera.futures.Future of the bucket's reduced flat tensor (GradBucket: index(),
        buffer(), gradients(), parameters(), is_last(), set_buffer()). The built-in hooks of
        default_hooks (allreduce_hook, fp16_compress_hook, bf16_compress_hook) on this
        module's own group run inside the C++ reducer; any other callable runs as given."""
        import inspect
        from tessera.distributed.algorithms.ddp_comm_hooks import default_hooks
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        try:
            sig = inspect.signature(hook)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            from tessera._C._distributed_c10d import GradBucket
            bucket = sig.parameters.get("bucket")
            if bucket is not None and bucket.annotation not in (inspect.Parameter.empty, GradBucket):
                raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        builtin = {default_hooks.allreduce_hook: "allreduce", default_hooks.fp16_compress_hook: "fp16_compress",
                   default_hooks.bf16_compress_hook: "bf16_compress"}
        if hook in builtin and (state is None or state is self.process_group):
            self.reducer._set_builtin_comm_hook(builtin[hook])
        else:
            self.reducer._set_comm_hook(state, hook)

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """A Join context for this module alone: ranks may run different numbers of
        iterations inside it. With divide_by_initial_world_size the gradients are averaged
        over the whole group (joined ranks count as zeros), else over the running ranks."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return next(self.module.parameters()).device

    @property
    def join_process_group(self):
        return self.process_group

    def _get_unused_parameters(self):
        return self.reducer._get_unused_parameters()
