#!/usr/bin/python3
"""torch.linalg side by side with torch (issue 24's workloads), alternating torch / tessera
calls in one run at the same thread count (bench_common.THREADS); the median of each and
the ratio tessera / torch. Targets: batched small matrices at most 0.5, large at most 1.0.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_linalg.py [rounds] [name filter...]
"""
import sys

import torch

import tessera
from bench_common import header, run_table, set_threads


def _matrix(lib, *shape, spd=False, seed=0):
    a = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    if spd:
        a = a @ a.mT + shape[-1] * torch.eye(shape[-1])
    return a if lib is torch else tessera.from_numpy(a.numpy())


def _setup(*shape, spd=False, rhs=None):
    def make(lib):
        args = (_matrix(lib, *shape, spd=spd),)
        return args + ((_matrix(lib, *rhs, seed=1),) if rhs else ())
    return make


CASES = [
    ("solve 512x512", _setup(512, 512, rhs=(512, 1)), lambda lib, a, b: lib.linalg.solve(a, b)),
    ("inv 512x512", _setup(512, 512), lambda lib, a: lib.linalg.inv(a)),
    ("solve batch 10000x4x4", _setup(10000, 4, 4, rhs=(10000, 4, 1)), lambda lib, a, b: lib.linalg.solve(a, b)),
    ("inv batch 10000x4x4", _setup(10000, 4, 4), lambda lib, a: lib.linalg.inv(a)),
    ("det batch 10000x4x4", _setup(10000, 4, 4), lambda lib, a: lib.linalg.det(a)),
    ("cholesky 1024", _setup(1024, 1024, spd=True), lambda lib, a: lib.linalg.cholesky(a)),
    ("cholesky batch 10000x4x4", _setup(10000, 4, 4, spd=True), lambda lib, a: lib.linalg.cholesky(a)),
    ("svd 512", _setup(512, 512), lambda lib, a: lib.linalg.svd(a)),
    ("eigh 512", _setup(512, 512, spd=True), lambda lib, a: lib.linalg.eigh(a)),
    ("qr 512", _setup(512, 512), lambda lib, a: lib.linalg.qr(a)),
]


def main():
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 10
    set_threads()
    print(header(rounds))
    run_table(CASES, rounds, args, width=28)


if __name__ == "__main__":
    main()
