#!/usr/bin/python3
"""DataLoader throughput side by side with torch: one epoch over a TensorDataset of
60000 x 784 float32 images with int64 labels, batch_size 128, shuffle=True, with worker
processes (and in the main process, for reference); torch and tessera epochs alternate in
one run at the same thread count (bench_common.THREADS). Median epoch time of each, batches
per second, and the ratio tessera / torch (target: at most 1.0).

  PYTHONPATH=build/python /usr/bin/python3 bench/bench_data.py [rounds]
"""
import math
import statistics
import sys

import torch
import torch.utils.data

import tessera
import tessera.utils.data
from bench_common import header, set_threads, timed

N, FEATURES, CLASSES, BATCH = 60000, 784, 10, 128


def _dataset(lib, data):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(N, FEATURES, generator=g)
    y = torch.randint(0, CLASSES, (N,), generator=g)
    if lib is tessera:
        x, y = tessera.from_numpy(x.numpy()), tessera.from_numpy(y.numpy())
    return data.TensorDataset(x, y)


def _epoch(loader):
    n = 0
    for x, y in loader:
        n += 1
    return n


CASES = [
    # (name, DataLoader keyword arguments)
    ("workers=2", dict(num_workers=2)),
    ("workers=0", dict(num_workers=0)),
]


def main():
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 3
    set_threads()
    print(header(rounds))
    libs = {"torch": (torch, torch.utils.data), "tessera": (tessera, tessera.utils.data)}
    datasets = {name: _dataset(*libs[name]) for name in libs}
    batches = math.ceil(N / BATCH)
    print(f"\nDataLoader one epoch: TensorDataset {N} x {FEATURES} float32 + int64 labels, batch_size={BATCH}, "
          f"shuffle=True ({batches} batches)")
    print(f"| {'workload':12} | {'torch ms':>9} | {'tessera ms':>10} | {'ratio':>5} | {'torch batch/s':>13} | "
          f"{'tessera batch/s':>15} |")
    print(f"|{'-' * 14}|{'-' * 10}:|{'-' * 11}:|{'-' * 6}:|{'-' * 14}:|{'-' * 16}:|")
    for name, kw in CASES:
        def loader(lib):
            mod, data = libs[lib]
            return data.DataLoader(datasets[lib], batch_size=BATCH, shuffle=True,
                                   generator=mod.Generator().manual_seed(1), **kw)
        for lib in libs:  # warm-up: first-touch of the data, imports in the workers' path
            assert _epoch(loader(lib)) == batches
        times = {lib: [] for lib in libs}
        for _ in range(rounds):
            for lib in libs:
                times[lib].append(timed(lambda: _epoch(loader(lib))))
        t_torch, t_tessera = statistics.median(times["torch"]), statistics.median(times["tessera"])
        print(f"| {name:12} | {t_torch * 1e3:9.1f} | {t_tessera * 1e3:10.1f} | {t_tessera / t_torch:5.2f} | "
              f"{batches / t_torch:13.0f} | {batches / t_tessera:15.0f} |", flush=True)


if __name__ == "__main__":
    main()
