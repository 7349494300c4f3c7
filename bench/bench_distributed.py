#!/usr/bin/python3
"""all_reduce of float32 from 4 bytes to 256 MiB on 127.0.0.1, tessera.distributed's Gloo
process group against torch.distributed's, at world sizes 2 and 4: for each (library,
world size) a fresh set of processes, tessera and torch alternating, each rank on one
intra-op thread, for --rounds rounds. Prints the median over rounds of the latency per call
(each round's figure: the slowest rank's median), the bus bandwidth (2 (n-1)/n bytes over
the latency, NCCL-tests' definition) and the ratio tessera / torch of latencies.

--ddp: DistributedDataParallel's step (forward, backward, SGD step) of the digits CNN
(examples/train_digits.py's, batch 32 per rank) and of an MLP (256-1024-1024-10, batch 64
per rank) at 2 ranks, tessera against torch, beside each rank's compute-only step (the same
model without DDP) and the all-reduce of all its gradients alone: the overlap won is
(compute + communication - DDP step) / communication.

--mpi adds tessera's MPI process group (started by mpirun) beside them, its ratio against
torch's Gloo.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_distributed.py [--max-mib 256] [--worlds 2 4] [--rounds 3] [--mpi]
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

WORKER = r'''
import json, sys, time
from datetime import timedelta
lib, rank, world, port, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
if lib == "torch":
    import torch as T
    import torch.distributed as dist
else:
    import tessera as T
    import tessera.distributed as dist
T.set_num_threads(1)
if port == "mpi":  # under mpirun
    dist.init_process_group("mpi")
    rank = dist.get_rank()
else:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=timedelta(seconds=120))
rows = []
for nbytes in sizes:
    t = T.ones(max(1, nbytes // 4))
    for _ in range(2):
        dist.all_reduce(t)
    iters = max(3, min(200, int(2e8 // max(nbytes, 1))))
    times = []
    for _ in range(iters):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    # every rank's median, then the slowest rank's (the collective ends when the last does)
    med = T.tensor([sorted(times)[len(times) // 2]], dtype=T.float64)
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    rows.append((nbytes, float(med.item())))
if rank == 0:
    print("RESULT " + json.dumps(rows))
dist.destroy_process_group()
'''


DDP_WORKER = r'''
import json, statistics, sys, time
from datetime import timedelta
lib, rank, world, port, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
if lib == "torch":
    import torch as T
    from torch.nn.parallel import DistributedDataParallel as DDP
else:
    import tessera as T
    from tessera.nn.parallel import DistributedDataParallel as DDP
dist = T.distributed
nn = T.nn
T.set_num_threads(1)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                        timeout=timedelta(seconds=120))
T.manual_seed(0)
if kind == "cnn":
    def build():
        return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    x, y = T.randn(32, 1, 8, 8), T.randint(0, 10, (32,))
else:
    def build():
        return nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    x, y = T.randn(64, 256), T.randint(0, 10, (64,))
loss_fn = nn.CrossEntropyLoss()

def timed(model, steps=40):
    opt = T.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for i in range(steps + 5):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        if i >= 5:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)

ddp_step = timed(DDP(build()))
compute = timed(build())
flat = T.zeros(sum(p.numel() for p in build().parameters()))
comm_times = []
for i in range(45):
    dist.barrier()
    t0 = time.perf_counter()
    dist.all_reduce(flat)
    if i >= 5:
        comm_times.append(time.perf_counter() - t0)
comm = statistics.median(comm_times)
res = T.tensor([ddp_step, compute, comm], dtype=T.float64)
dist.all_reduce(res, op=dist.ReduceOp.MAX)
if rank == 0:
    print("RESULT " + json.dumps(res.tolist()))
dist.destroy_process_group()
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(lib, world, sizes, script=WORKER):
    port = free_port()
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    arg = json.dumps(sizes) if script is WORKER else sizes
    procs = [subprocess.Popen([sys.executable, "-c", script, lib, str(r), str(world), str(port), arg],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(world)]
    out = [p.communicate(timeout=1800)[0] for p in procs]
    for p, o in zip(procs, out):
        if p.returncode != 0:
            raise RuntimeError(f"{lib} world {world} failed:\n{o}")
    line = next(l for l in out[0].splitlines() if l.startswith("RESULT "))
    result = json.loads(line[len("RESULT "):])
    return dict(result) if script is WORKER else result


def run_mpi(world, sizes):
    """tessera's MPI process group, started by mpirun."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(world), sys.executable, "-c", WORKER,
           "tessera", "-1", str(world), "mpi", json.dumps(sizes)]
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"tessera MPI world {world} failed:\n{out.stdout}")
    line = next(l for l in out.stdout.splitlines() if l.startswith("RESULT "))
    return dict(json.loads(line[len("RESULT "):]))


def ddp_table(rounds):
    print("DistributedDataParallel step at 2 ranks (ms, median over rounds of the slowest rank's median)")
    print(f"{'model':>6} {'lib':>8} {'DDP step':>9} {'compute':>8} {'comm':>7} {'overlap':>8}")
    for kind in ("cnn", "mlp"):
        runs = {"tessera": [], "torch": []}
        for _ in range(rounds):
            for lib in runs:
                runs[lib].append(run(lib, 2, kind, DDP_WORKER))
        med = {lib: [sorted(r[i] for r in rs)[rounds // 2] for i in range(3)] for lib, rs in runs.items()}
        for lib, (step, compute, comm) in med.items():
            overlap = (compute + comm - step) / comm if comm > 0 else float("nan")
            print(f"{kind:>6} {lib:>8} {step * 1e3:9.2f} {compute * 1e3:8.2f} {comm * 1e3:7.2f} {overlap:8.2f}")
        print(f"{kind:>6} {'ratio':>8} {med['tessera'][0] / med['torch'][0]:9.2f}")


def label(n):
    if n >= 1 << 20:
        return f"{n >> 20} MiB"
    if n >= 1 << 10:
        return f"{n >> 10} KiB"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-mib", type=int, default=256)
    ap.add_argument("--worlds", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ddp", action="store_true", help="the DDP step table instead of all_reduce's")
    ap.add_argument("--mpi", action="store_true", help="also tessera's MPI process group (under mpirun)")
    args = ap.parse_args()
    if args.ddp:
        ddp_table(args.rounds)
        return
    sizes, n = [], 4
    while n <= args.max_mib << 20:
        sizes.append(n)
        n *= 16 if n < (1 << 20) else 4
    print(f"all_reduce float32 on 127.0.0.1, Gloo, {os.cpu_count()} CPUs; latency = median over rounds")
    for world in args.worlds:
        runs = {"tessera": [], "torch": []}
        if args.mpi:
            runs["mpi"] = []
        for _ in range(args.rounds):  # alternating, so drifts in the machine's load hit both
            for lib in runs:
                runs[lib].append(run_mpi(world, sizes) if lib == "mpi" else run(lib, world, sizes))
        med = {lib: {s: sorted(r[s] for r in rs)[args.rounds // 2] for s in sizes} for lib, rs in runs.items()}
        ours, theirs = med["tessera"], med["torch"]
        factor = 2 * (world - 1) / world
        print(f"\nworld size {world}")
        extra = f" {'MPI us':>9} {'MPI ratio':>9}" if args.mpi else ""
        print(f"{'size':>9} {'tessera us':>11} {'torch us':>10} {'ratio':>6} {'tessera GB/s':>13} {'torch GB/s':>11}"
              + extra)
        for s in sizes:
            a, b = ours[s], theirs[s]
            row = (f"{label(s):>9} {a * 1e6:11.1f} {b * 1e6:10.1f} {a / b:6.2f} {factor * s / a / 1e9:13.3f} "
                   f"{factor * s / b / 1e9:11.3f}")
            if args.mpi:
                row += f" {med['mpi'][s] * 1e6:9.1f} {med['mpi'][s] / b:9.2f}"
            print(row)


if __name__ == "__main__":
    main()
