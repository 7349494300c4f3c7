"""One rank of test_distributed.py's process groups: `distributed_worker.py SCENARIO RANK
WORLD_SIZE INIT_METHOD OUT_DIR`. The 'collectives' scenario runs every collective on every
Gloo dtype with inputs that are a function of (rank, dtype) and pickles the results for the
parent to compare with the answer computed in one process; the others are failure cases."""
import os
import pickle
import sys
import time
from datetime import timedelta

import numpy as np

import tessera
import tessera.distributed as dist

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"]
MPI_DTYPES = ["float32", "float64", "int8", "uint8", "int32", "int64"]  # MPI's types, as torch's MPI group
INTEGRAL = {"int8", "uint8", "int32", "int64", "bool"}


def values(rank, n, kind="sum", offset=0):
    """Small integers, exact in every dtype after any reduction of up to four ranks."""
    i = np.arange(n) + offset
    if kind == "product":
        return (i + rank) % 2 + 1  # 1 or 2
    return (i * 3 + rank * 5) % 7  # 0..6


def make(rank, dtype, n=6, kind="sum", offset=0):
    v = values(rank, n, kind, offset)
    if dtype == "bool":
        return tessera.tensor((v % 2) == 1)
    return tessera.tensor(v.astype(np.float64)).to(getattr(tessera, dtype))


def arr(t):
    return t.to(tessera.float64).numpy() if t.dtype in (tessera.float16, tessera.bfloat16) else t.numpy().copy()


def collectives(rank, world, out):
    R = dist.ReduceOp
    for dt in (MPI_DTYPES if dist.get_backend() == "mpi" else DTYPES):
        ops = [("SUM", "sum"), ("MIN", "sum"), ("MAX", "sum"), ("PRODUCT", "product")]
        if dt in INTEGRAL:
            ops += [("BAND", "sum"), ("BOR", "sum"), ("BXOR", "sum")]
        for op, kind in ops:
            t = make(rank, dt, kind=kind)
            dist.all_reduce(t, op=getattr(R, op))
            out[f"all_reduce/{dt}/{op}"] = arr(t)
        t = make(rank, dt)
        dist.broadcast(t, src=world - 1)
        out[f"broadcast/{dt}"] = arr(t)
        t = make(rank, dt)
        dist.reduce(t, dst=0, op=R.MAX)
        if rank == 0:
            out[f"reduce/{dt}"] = arr(t)
        parts = [make(0, dt).zero_() for _ in range(world)]
        dist.all_gather(parts, make(rank, dt))
        out[f"all_gather/{dt}"] = np.stack([arr(p) for p in parts])
        flat = make(0, dt, n=6 * world).zero_()
        dist.all_gather_into_tensor(flat, make(rank, dt))
        out[f"all_gather_into_tensor/{dt}"] = arr(flat)
        g = [make(0, dt).zero_() for _ in range(world)] if rank == world - 1 else None
        dist.gather(make(rank, dt), gather_list=g, dst=world - 1)
        if g is not None:
            out[f"gather/{dt}"] = np.stack([arr(p) for p in g])
        s = make(0, dt).zero_()
        dist.scatter(s, scatter_list=[make(r + 10, dt) for r in range(world)] if rank == 0 else None, src=0)
        out[f"scatter/{dt}"] = arr(s)
        if dt != "bool":
            rs = make(0, dt).zero_()
            dist.reduce_scatter(rs, [make(rank, dt, offset=6 * r) for r in range(world)])
            out[f"reduce_scatter/{dt}"] = arr(rs)
            rst = make(0, dt).zero_()
            dist.reduce_scatter_tensor(rst, make(rank, dt, n=6 * world))
            out[f"reduce_scatter_tensor/{dt}"] = arr(rst)
        a2a = make(0, dt, n=2 * world).zero_()
        dist.all_to_all_single(a2a, make(rank, dt, n=2 * world))
        out[f"all_to_all_single/{dt}"] = arr(a2a)
        outs = [make(0, dt, n=3).zero_() for _ in range(world)]
        dist.all_to_all(outs, [make(rank, dt, n=3, offset=3 * r) for r in range(world)])
        out[f"all_to_all/{dt}"] = np.stack([arr(o) for o in outs])

    # uneven all_to_all_single: rank r sends (j + 1) rows to rank j, each row of 2 columns
    inp = tessera.tensor(values(rank, 2 * sum(j + 1 for j in range(world))).reshape(-1, 2).astype(np.float32))
    res = tessera.zeros((rank + 1) * world, 2)
    dist.all_to_all_single(res, inp, output_split_sizes=[rank + 1] * world,
                           input_split_sizes=[j + 1 for j in range(world)])
    out["all_to_all_single/uneven"] = res.numpy()

    c = tessera.complex(make(rank, "float32"), make(rank + 1, "float32"))
    dist.all_reduce(c)
    out["all_reduce/complex64"] = c.numpy()

    if world > 1:
        nxt, prev = (rank + 1) % world, (rank - 1) % world
        got = tessera.zeros(6)
        if rank % 2 == 0:
            dist.send(make(rank, "float32"), dst=nxt, tag=3)
            dist.recv(got, src=prev, tag=3)
        else:
            dist.recv(got, src=prev, tag=3)
            dist.send(make(rank, "float32"), dst=nxt, tag=3)
        out["send_recv"] = got.numpy()
        ops = [dist.P2POp(dist.isend, make(rank, "int64"), nxt), dist.P2POp(dist.irecv, got2 := tessera.zeros(6, dtype=tessera.int64), prev)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        out["batch_isend_irecv"] = got2.numpy()
        # the futures of point-to-point work complete without a wait() on the work
        got3 = tessera.zeros(6)
        futures = [dist.isend(make(rank, "float32"), dst=nxt, tag=5).get_future(),
                   dist.irecv(got3, src=prev, tag=5).get_future()]
        for f in futures:
            f.wait()
        out["p2p_futures"] = got3.numpy()
        if rank == 0:
            senders = []
            for _ in range(world - 1):
                buf = tessera.zeros(6)
                senders.append(dist.recv(buf, tag=9))
                out[f"recv_any/{senders[-1]}"] = buf.numpy()
        else:
            dist.send(make(rank, "float32"), dst=0, tag=9)

    t = make(rank, "float32")
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    work.wait()
    out["async/work"] = t.numpy()
    out["async/future"] = fut.wait()[0].numpy()
    out["async/completed"] = work.is_completed() and work.is_success()

    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "items": list(range(rank))})
    out["all_gather_object"] = objs
    bl = [f"from {rank}", rank * 10, {"k": [rank]}] 
    dist.broadcast_object_list(bl, src=world - 1)
    out["broadcast_object_list"] = bl
    gl = [None] * world if rank == 0 else None
    dist.gather_object(("gathered", rank), gl, dst=0)
    if rank == 0:
        out["gather_object"] = gl
    so = [None]
    dist.scatter_object_list(so, [{"to": r, "pad": "x" * r} for r in range(world)] if rank == 0 else None, src=0)
    out["scatter_object_list"] = so[0]

    evens = dist.new_group(ranks=list(range(0, world, 2)))
    t = make(rank, "float32")
    if rank % 2 == 0:
        dist.all_reduce(t, group=evens)
        out["new_group/all_reduce"] = t.numpy()
        out["new_group/rank_size"] = (dist.get_rank(evens), dist.get_world_size(evens))
    else:
        out["new_group/rank_size"] = (dist.get_rank(evens), dist.get_world_size(evens))
    dist.barrier()
    if dist.get_backend() == "gloo":
        dist.monitored_barrier(timeout=timedelta(seconds=30))
    out["world"] = (dist.get_rank(), dist.get_world_size(), dist.get_backend(), dist.is_initialized())


def _ddp_data(world):
    rng = np.random.RandomState(0)
    return rng.randn(world * 4, 5), rng.randn(world * 4, 3), rng.randn(world * 4, 5), rng.randn(world * 4, 3)


class _WithUnused(tessera.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = tessera.nn.Linear(5, 3)
        self.unused = tessera.nn.Linear(5, 3)

    def forward(self, x):
        return self.used(x)


def ddp(rank, world, out):
    from tessera.distributed.algorithms.ddp_comm_hooks import default_hooks
    from tessera.nn.parallel import DistributedDataParallel as DDP
    F = tessera.nn.functional
    xa, ya, xb, yb = (tessera.tensor(a, dtype=tessera.float64)[4 * rank: 4 * rank + 4] for a in _ddp_data(world))

    def model(seed):
        tessera.manual_seed(seed + rank)  # ranks start apart: DDP must broadcast rank 0's
        return tessera.nn.Sequential(tessera.nn.Linear(5, 8), tessera.nn.Tanh(), tessera.nn.Linear(8, 3)).double()

    def grads(m):
        return {n: p.grad.numpy().copy() for n, p in m.named_parameters() if p.grad is not None}

    def state(m):
        return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}

    # plain: two SGD steps, a small bucket cap so the model spans several buckets
    net = DDP(model(100), bucket_cap_mb=0.0001)
    out["ddp/init"] = state(net.module)
    opt = tessera.optim.SGD(net.parameters(), lr=0.1)
    for step, (x, y) in enumerate([(xa, ya), (xb, yb)]):
        opt.zero_grad()
        F.mse_loss(net(x), y).backward()
        out[f"ddp/grads{step}"] = grads(net.module)
        opt.step()
    out["ddp/final"] = state(net.module)

    # no_sync: local accumulation, then one averaged reduction
    net = DDP(model(200))
    out["no_sync/init"] = state(net.module)
    with net.no_sync():
        F.mse_loss(net(xa), ya).backward()
    out["no_sync/local"] = grads(net.module)
    F.mse_loss(net(xb), yb).backward()
    out["no_sync/grads"] = grads(net.module)

    # gradient_as_bucket_view and the compression hooks; two backwards without zero_grad
    # accumulate, and after zero_grad one backward gives one batch's grads again
    for name, kwargs, hook in [("plain", {}, None), ("bucket_view", {"gradient_as_bucket_view": True}, None),
                               ("fp16", {}, default_hooks.fp16_compress_hook),
                               ("bf16", {}, default_hooks.bf16_compress_hook)]:
        net = DDP(model(300), **kwargs)
        if hook is not None:
            net.register_comm_hook(None, hook)
        out[f"{name}/init"] = state(net.module)
        F.mse_loss(net(xa), ya).backward()
        out[f"{name}/grads"] = grads(net.module)
        F.mse_loss(net(xa), ya).backward()
        out[f"{name}/twice"] = grads(net.module)
        net.zero_grad()
        F.mse_loss(net(xa), ya).backward()
        out[f"{name}/after_zero"] = grads(net.module)

    # a hook on a parameter applies before the reduction; a forward without backward (a loss
    # for logging) does not stop the next iteration; a reentrant checkpoint inside the model
    net = DDP(model(500))
    out["hooked/init"] = state(net.module)
    net.module[0].bias.register_hook(lambda g: g * 0)
    with tessera.no_grad():
        net(xa)
    F.mse_loss(net(xa), ya)  # grad mode, but no backward
    F.mse_loss(net(xa), ya).backward()
    out["hooked/grads"] = grads(net.module)
    inner = model(600)
    out["checkpoint/init"] = state(inner)

    class Checkpointed(tessera.nn.Module):
        def __init__(self, seq):
            super().__init__()
            self.seq = seq

        def forward(self, x):
            h = self.seq[1](self.seq[0](x))
            return tessera.utils.checkpoint.checkpoint(self.seq[2], h, use_reentrant=True)

    net = DDP(Checkpointed(inner))
    out["checkpoint/init"] = state(net.module.seq)
    F.mse_loss(net(xa), ya).backward()
    out["checkpoint/grads"] = grads(net.module.seq)
    F.mse_loss(net(xa), ya).backward()  # the reduction finished: a second iteration runs

    # a DDP module on a group without global rank 0
    if world >= 3:
        sub = dist.new_group(ranks=[1, 2])
        if rank in (1, 2):
            net = DDP(model(700), process_group=sub)
            out["subgroup/init"] = state(net.module)
            F.mse_loss(net(xa), ya).backward()
            out["subgroup/grads"] = grads(net.module)

    # Python comm hooks: a mean of our own (its state records what each bucket showed),
    # one that sums through set_buffer and a ready Future, and a built-in hook function on
    # another group object, which runs as Python
    seen = {"last": [], "consistent": []}

    def mean_hook(state, bucket):
        params, grads_ = bucket.parameters(), bucket.gradients()
        state["last"].append(bucket.is_last())
        state["consistent"].append(sum(p.numel() for p in params) == bucket.buffer().numel() and
                                   all(tuple(g.shape) == tuple(p.shape) for g, p in zip(grads_, params)))
        t = bucket.buffer().div_(world)
        return dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0])

    net = DDP(model(800))
    net.register_comm_hook(seen, mean_hook)
    out["pyhook/init"] = state(net.module)
    F.mse_loss(net(xa), ya).backward()
    out["pyhook/grads"] = grads(net.module)
    out["pyhook/seen"] = seen
    try:
        net.register_comm_hook(None, mean_hook)
        out["pyhook/twice"] = None
    except RuntimeError as e:
        out["pyhook/twice"] = str(e)

    def sum_hook(state, bucket):
        total = bucket.buffer().clone()
        dist.all_reduce(total)
        bucket.set_buffer(total)
        fut = tessera.futures.Future()
        fut.set_result([bucket.buffer()])
        return fut

    net = DDP(model(900))
    net.register_comm_hook(None, sum_hook)
    out["sumhook/init"] = state(net.module)
    F.mse_loss(net(xa), ya).backward()
    out["sumhook/grads"] = grads(net.module)
    everyone = dist.new_group(ranks=list(range(world)))
    net = DDP(model(1000))
    net.register_comm_hook(everyone, default_hooks.fp16_compress_hook)
    out["grouphook/init"] = state(net.module)
    F.mse_loss(net(xa), ya).backward()
    out["grouphook/grads"] = grads(net.module)

    # unused parameters: found with find_unused_parameters, an error without it
    tessera.manual_seed(400 + rank)
    net = DDP(_WithUnused().double(), find_unused_parameters=True)
    out["unused/init"] = state(net.module)
    F.mse_loss(net(xa), ya).backward()
    out["unused/grads"] = grads(net.module)
    out["unused/unused"] = net._get_unused_parameters()
    net = DDP(_WithUnused().double())
    F.mse_loss(net(xa), ya).backward()
    try:
        net(xa)
        out["unused/error"] = None
    except RuntimeError as e:
        out["unused/error"] = str(e)


def datapipe(rank, world, out):
    # A shuffled DataPipe through DataLoader: each rank's workers keep a disjoint share of
    # one order (the shuffle seed is rank 0's), in two epochs.
    from tessera.utils.data import DataLoader
    from tessera.utils.data.datapipes.iter import IterableWrapper
    for workers in (0, 2):
        pipe = IterableWrapper(range(40)).shuffle().sharding_filter()
        loader = DataLoader(pipe, batch_size=None, num_workers=workers)
        for epoch in range(2):
            out[f"datapipe/{workers}/{epoch}"] = [int(x) for x in loader]


def killed_peer(rank, world, out):
    # Rank 1 dies before the collective; rank 0's all_reduce must fail within its timeout.
    if rank == 1:
        os._exit(3)
    t = tessera.ones(1000)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        out["error"] = None
    except RuntimeError as e:
        out["error"] = str(e)
    out["seconds"] = time.monotonic() - start


def slow_rank(rank, world, out):
    # Rank 1 never reaches the barrier: monitored_barrier on rank 0 names it.
    if rank == 1:
        time.sleep(6)
        return
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=1))
        out["error"] = None
    except RuntimeError as e:
        out["error"] = str(e)


def mismatch(rank, world, out):
    # Each pair of calls differs in one way; under DETAIL every rank raises instead of
    # hanging or mixing data.
    out["level"] = str(dist.get_debug_level())

    def attempt(key, fn):
        try:
            fn()
            out[key] = None
        except RuntimeError as e:
            out[key] = str(e)

    attempt("op", lambda: dist.all_reduce(tessera.ones(10)) if rank == 0 else dist.broadcast(tessera.ones(10), 0))
    attempt("shape", lambda: dist.all_reduce(tessera.ones(10 if rank == 0 else 20)))
    attempt("dtype", lambda: dist.all_reduce(tessera.ones(10, dtype=tessera.float32 if rank == 0 else tessera.int64)))
    attempt("barrier", lambda: dist.barrier() if rank == 0 else dist.all_gather([tessera.ones(2)] * world,
                                                                                 tessera.ones(2)))
    t = tessera.full((4,), float(rank + 1))
    dist.all_reduce(t)
    out["after"] = t.tolist()
    # DDP's bucket all-reduces go through the checked group too
    from tessera.nn.parallel import DistributedDataParallel as DDP
    tessera.manual_seed(rank)
    net = DDP(tessera.nn.Linear(3, 2))
    net(tessera.ones(2, 3) * (rank + 1)).sum().backward()
    grads = [p.grad.clone() for p in net.parameters()]
    for g in grads:
        dist.all_reduce(g, op=dist.ReduceOp.MAX)
    out["ddp_grad_equal"] = all((g == p.grad).all().item() for g, p in zip(grads, net.parameters()))
    # last: rank 1 never calls this all_reduce; rank 0 names it after the group's timeout
    if rank == 0:
        attempt("skipped", lambda: dist.all_reduce(tessera.ones(3)))


def main():
    scenario, rank, world, init_method, out_dir = sys.argv[1:6]
    rank, world = int(rank), int(world)
    timeout = timedelta(seconds=5 if scenario != "collectives" else 60)
    if init_method == "mpi":  # started by mpirun, which assigns the ranks
        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world, timeout=timeout)
    out = {}
    globals()[scenario](rank, world, out)
    with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(out, f)
    if scenario == "collectives":
        dist.destroy_process_group()
        out_after = dist.is_initialized()
        with open(os.path.join(out_dir, f"rank{rank}.after"), "w") as f:
            f.write(str(out_after))
    sys.stdout.flush()
    if init_method == "mpi":
        return  # a normal exit: MPI_Finalize runs at exit, as mpirun requires
    os._exit(0)  # a failure scenario's group may hold a dead peer: skip teardown


if __name__ == "__main__":
    main()
