#!/usr/bin/python3
"""Shape and order ops, tessera against torch in one run: both at the same thread count
(2), alternating torch and tessera call by call, timing what a user writes (output
allocation included): sort of 1M float32, topk(k=10) of 1M float32, cat of 8 tensors of
1M float32.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_shape_ops.py [rounds]

Each figure is the median of `rounds` (default 15) timed calls after one warm-up; the
machine is shared, so compare the ratios (tessera / torch) more than the absolute times.
"""
import sys

import numpy
import torch

import tessera

from bench_common import header, run_case, set_threads
M1 = 1 << 20


def make(lib, n, seed):
    """The same uniformly random float32 values in [-1, 1) in both libraries (numpy's
    generator; tessera.tensor reads the array's buffer)."""
    values = numpy.random.default_rng(seed).random(n, dtype=numpy.float32) * 2 - 1
    return torch.from_numpy(values) if lib is torch else tessera.tensor(values)


# name, setup(lib) -> args, op(lib, *args)
CASES = [
    ("sort 1M f32", lambda L: (make(L, M1, 0),), lambda L, a: L.sort(a)),
    ("sort 1M f32, stable=True", lambda L: (make(L, M1, 0),), lambda L, a: L.sort(a, stable=True)),
    ("topk(k=10) 1M f32", lambda L: (make(L, M1, 1),), lambda L, a: L.topk(a, 10)),
    ("cat 8 x 1M f32", lambda L: ([make(L, M1, s) for s in range(8)],), lambda L, ts: L.cat(ts)),
    ("cat 8 x [1024, 1024] f32, dim=1", lambda L: ([make(L, M1, s).reshape(1024, 1024) for s in range(8)],),
     lambda L, ts: L.cat(ts, 1)),
]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    set_threads()
    print(header(rounds))
    print()
    print(f"| {'workload':33} | {'torch ms':>8} | {'tessera ms':>10} | {'ratio':>5} |")
    print(f"|{'-' * 35}|{'-' * 9}:|{'-' * 11}:|{'-' * 6}:|")
    for name, setup, op in CASES:
        t_torch, t_tessera = run_case(setup, op, rounds)
        print(f"| {name:33} | {t_torch * 1e3:8.2f} | {t_tessera * 1e3:10.2f} | {t_tessera / t_torch:5.2f} |")


if __name__ == "__main__":
    main()
