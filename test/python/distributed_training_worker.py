"""One rank of test_distributed_training.py: `distributed_training_worker.py SCENARIO RANK
WORLD_SIZE INIT_METHOD OUT_DIR`. Each scenario trains on this rank's shard of data that the
parent can rebuild (numpy, fixed seeds) and pickles what it saw for the parent to compare
with torch in one process on the whole batch."""
import os
import pickle
import sys
from datetime import timedelta

import numpy as np

import tessera
import tessera.distributed as dist

F = tessera.nn.functional


def shard_sizes(world):
    return [r + 1 for r in range(world)]  # uneven: 1, 2, 3, ...


def syncbn_data(world, steps=2):
    rng = np.random.RandomState(7)
    n = sum(shard_sizes(world))
    return [(rng.randn(n, 3, 2, 2), rng.randn(n, 3, 2, 2)) for _ in range(steps)]


def model_data(world, steps):
    rng = np.random.RandomState(11)
    return [(rng.randn(4 * world, 5), rng.randn(4 * world, 3)) for _ in range(steps)]


def numpy_state(m):
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}


def syncbn(rank, world, out):
    # Uneven shards through one SyncBatchNorm: outputs, input grads and running statistics
    # of the whole batch; weight and bias grads are each rank's share (summed by the parent).
    sizes = shard_sizes(world)
    lo = sum(sizes[:rank])
    bn = tessera.nn.SyncBatchNorm(3, momentum=0.3).double()
    with tessera.no_grad():
        bn.weight.copy_(tessera.tensor([0.5, 1.5, -1.0], dtype=tessera.float64))
        bn.bias.copy_(tessera.tensor([0.1, -0.2, 0.3], dtype=tessera.float64))
    for step, (x, t) in enumerate(syncbn_data(world)):
        xs = tessera.tensor(x[lo: lo + sizes[rank]]).requires_grad_()
        y = bn(xs)
        (y * tessera.tensor(t[lo: lo + sizes[rank]])).sum().backward()
        out[f"syncbn/y{step}"] = y.detach().numpy().copy()
        out[f"syncbn/dx{step}"] = xs.grad.numpy().copy()
        out[f"syncbn/dw{step}"] = bn.weight.grad.numpy().copy()
        out[f"syncbn/db{step}"] = bn.bias.grad.numpy().copy()
        bn.zero_grad()
        out[f"syncbn/running{step}"] = (bn.running_mean.numpy().copy(), bn.running_var.numpy().copy())
    # a rank with an empty shard still takes part; eval mode uses the running statistics
    x = tessera.randn(0 if rank == 0 else 2, 3, dtype=tessera.float64, requires_grad=True)
    bn1 = tessera.nn.SyncBatchNorm(3).double()
    bn1(x).sum().backward()
    out["syncbn/empty_grad_shape"] = tuple(x.grad.shape) if x.grad is not None else None
    bn.eval()
    out["syncbn/eval"] = bn(tessera.ones(2, 3, 1, 1, dtype=tessera.float64)).detach().numpy().copy()

    # convert_sync_batchnorm inside DDP, equal shards: the whole batch's gradient
    from tessera.nn.parallel import DistributedDataParallel as DDP
    tessera.manual_seed(5)
    net = tessera.nn.Sequential(tessera.nn.Linear(5, 4), tessera.nn.BatchNorm1d(4), tessera.nn.Tanh(),
                                tessera.nn.Linear(4, 3)).double()
    net = DDP(tessera.nn.SyncBatchNorm.convert_sync_batchnorm(net))
    out["ddp_bn/init"] = numpy_state(net.module)
    x, y = model_data(world, 1)[0]
    F.mse_loss(net(tessera.tensor(x[4 * rank: 4 * rank + 4])), tessera.tensor(y[4 * rank: 4 * rank + 4])).backward()
    out["ddp_bn/grads"] = {n: p.grad.numpy().copy() for n, p in net.module.named_parameters()}
    out["ddp_bn/state"] = numpy_state(net.module)


class WithBuffer(tessera.nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = tessera.nn.Sequential(tessera.nn.Linear(5, 8), tessera.nn.Tanh(), tessera.nn.Linear(8, 3))
        self.register_buffer("scale", tessera.tensor(1.0))

    def forward(self, x):
        return self.seq(x) * self.scale


def join_iterations(world):
    return [2 + r for r in range(world)]  # rank r runs 2 + r iterations


def join(rank, world, out):
    from tessera.distributed.optim import ZeroRedundancyOptimizer
    from tessera.distributed.algorithms import Join
    from tessera.nn.parallel import DistributedDataParallel as DDP
    data = model_data(world, max(join_iterations(world)))
    mine = data[:join_iterations(world)[rank]]

    def batches():
        for x, y in mine:
            yield tessera.tensor(x[4 * rank: 4 * rank + 4]), tessera.tensor(y[4 * rank: 4 * rank + 4])

    for divide in (True, False):
        tessera.manual_seed(rank)  # DDP starts every rank from rank 0's weights
        net = DDP(WithBuffer().double(), bucket_cap_mb=0.0001)
        out[f"join/{divide}/init"] = numpy_state(net.module)
        opt = tessera.optim.SGD(net.parameters(), lr=0.1)
        with net.join(divide_by_initial_world_size=divide):
            for x, y in batches():
                opt.zero_grad()
                F.mse_loss(net(x), y).backward()
                opt.step()
        out[f"join/{divide}/final"] = numpy_state(net.module)

    # DDP and ZeroRedundancyOptimizer joined together (Adam's state sharded)
    tessera.manual_seed(rank)
    net = DDP(WithBuffer().double())
    out["join_zero/init"] = numpy_state(net.module)
    opt = ZeroRedundancyOptimizer(net.parameters(), tessera.optim.Adam, lr=0.05)
    with Join([net, opt]):
        for x, y in batches():
            opt.zero_grad()
            F.mse_loss(net(x), y).backward()
            opt.step()
    out["join_zero/final"] = numpy_state(net.module)

    # a no_grad forward inside join(divide_by_initial_world_size=False) leaves no divisor
    # behind: a later backward outside join averages over the whole group
    tessera.manual_seed(rank)
    net = DDP(WithBuffer().double())
    out["stale/init"] = numpy_state(net.module)
    x, y = next(batches())
    with net.join(divide_by_initial_world_size=False):
        if rank != 0:
            with tessera.no_grad():
                net(x)
    net.zero_grad()
    F.mse_loss(net(x), y).backward()
    out["stale/grads"] = {n: p.grad.numpy().copy() for n, p in net.module.named_parameters()}

    # throw_on_early_termination: every rank raises once the first runs out
    tessera.manual_seed(rank)
    net = DDP(WithBuffer().double())
    try:
        with net.join(throw_on_early_termination=True):
            for x, y in batches():
                F.mse_loss(net(x), y).backward()
        out["throw"] = None
    except RuntimeError as e:
        out["throw"] = str(e)


def zero(rank, world, out):
    from tessera.distributed.optim import ZeroRedundancyOptimizer
    from tessera.nn.parallel import DistributedDataParallel as DDP
    data = model_data(world, 3)
    for view in (False, True):
        tessera.manual_seed(rank)
        net = DDP(WithBuffer().double())
        out[f"zero/{view}/init"] = numpy_state(net.module)
        opt = ZeroRedundancyOptimizer(net.parameters(), tessera.optim.Adam, parameters_as_bucket_view=view, lr=0.05,
                                      betas=(0.8, 0.9))
        owned = [p for g in opt.optim.param_groups for p in g["params"]]
        out[f"zero/{view}/owned"] = sum(p.numel() for p in owned)
        for x, y in data:
            opt.zero_grad()
            F.mse_loss(net(tessera.tensor(x[4 * rank: 4 * rank + 4])), tessera.tensor(y[4 * rank: 4 * rank + 4])).backward()
            opt.step()
        out[f"zero/{view}/final"] = numpy_state(net.module)
        # the public groups carry the optimizer class's defaults, and a scheduler's change
        # made after the last step is what consolidate_state_dict saves
        out[f"zero/{view}/keys"] = (sorted(opt.param_groups[0]), sorted(tessera.optim.Adam(
            [tessera.zeros(1, requires_grad=True)], lr=0.05).param_groups[0]))
        opt.param_groups[0]["lr"] = 0.02
        try:
            opt.state_dict()
            out[f"zero/{view}/unconsolidated"] = None
        except RuntimeError as e:
            out[f"zero/{view}/unconsolidated"] = str(e)
        opt.consolidate_state_dict(to=0)
        if rank == 0:
            sd = opt.state_dict()
            out[f"zero/{view}/state_dict"] = {
                "param_groups": [{k: v for k, v in g.items()} for g in sd["param_groups"]],
                "state": {i: {k: (v.numpy().copy() if isinstance(v, tessera.Tensor) else v) for k, v in s.items()}
                          for i, s in sd["state"].items()}}
    # load_state_dict: a fresh ZeRO over the same parameters takes rank 0's consolidated
    # state (sent to all) and steps exactly as the original
    objs = [opt.state_dict() if rank == 0 else None]
    dist.broadcast_object_list(objs, src=0)
    fresh = ZeroRedundancyOptimizer(net.parameters(), tessera.optim.Adam, lr=0.05, betas=(0.8, 0.9))
    fresh.load_state_dict(objs[0])
    fresh.consolidate_state_dict(to=0)
    if rank == 0:
        again = fresh.state_dict()
        out["zero/reloaded_same"] = all(
            all((a[k] == b[k]).all().item() if isinstance(a[k], tessera.Tensor) else a[k] == b[k] for k in a)
            for a, b in zip(again["state"].values(), objs[0]["state"].values())) and \
            again["state"].keys() == objs[0]["state"].keys()


def main():
    scenario, rank, world, init_method, out_dir = sys.argv[1:6]
    rank, world = int(rank), int(world)
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world,
                            timeout=timedelta(seconds=30))
    out = {}
    globals()[scenario](rank, world, out)
    with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(out, f)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
