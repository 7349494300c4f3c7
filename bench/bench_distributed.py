#!/usr/bin/python3
"""all_reduce of float32 from 4 bytes to 256 MiB on 127.0.0.1, tessera.distributed's Gloo
process group against torch.distributed's, at world sizes 2 and 4: for each (library,
world size) a fresh set of processes, tessera and torch alternating, each rank on one
intra-op thread, for --rounds rounds. Prints the median over rounds of the latency per call
(each round's figure: the slowest rank's median), the bus bandwidth (2 (n-1)/n bytes over
the latency, NCCL-tests' definition) and the ratio tessera / torch of latencies.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_distributed.py [--max-mib 256] [--worlds 2 4] [--rounds 3]
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(lib, world, sizes):
    port = free_port()
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, lib, str(r), str(world), str(port), json.dumps(sizes)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(world)]
    out = [p.communicate(timeout=1800)[0] for p in procs]
    for p, o in zip(procs, out):
        if p.returncode != 0:
            raise RuntimeError(f"{lib} world {world} failed:\n{o}")
    line = next(l for l in out[0].splitlines() if l.startswith("RESULT "))
    return dict(json.loads(line[len("RESULT "):]))


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
    args = ap.parse_args()
    sizes, n = [], 4
    while n <= args.max_mib << 20:
        sizes.append(n)
        n *= 16 if n < (1 << 20) else 4
    print(f"all_reduce float32 on 127.0.0.1, Gloo, {os.cpu_count()} CPUs; latency = median over rounds")
    for world in args.worlds:
        runs = {"tessera": [], "torch": []}
        for _ in range(args.rounds):  # alternating, so drifts in the machine's load hit both
            for lib in runs:
                runs[lib].append(run(lib, world, sizes))
        ours = {s: sorted(r[s] for r in runs["tessera"])[args.rounds // 2] for s in sizes}
        theirs = {s: sorted(r[s] for r in runs["torch"])[args.rounds // 2] for s in sizes}
        factor = 2 * (world - 1) / world
        print(f"\nworld size {world}")
        print(f"{'size':>9} {'tessera us':>11} {'torch us':>10} {'ratio':>6} {'tessera GB/s':>13} {'torch GB/s':>11}")
        for s in sizes:
            a, b = ours[s], theirs[s]
            print(f"{label(s):>9} {a * 1e6:11.1f} {b * 1e6:10.1f} {a / b:6.2f} {factor * s / a / 1e9:13.3f} "
                  f"{factor * s / b / 1e9:11.3f}")


if __name__ == "__main__":
    main()
