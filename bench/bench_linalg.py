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


def _matrix(lib, *shape, spd=False, seed=0, dtype=torch.float32):
    a = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    if spd:
        a = a @ a.mH + shape[-1] * torch.eye(shape[-1], dtype=dtype)
    return a if lib is torch else tessera.from_numpy(a.numpy())


def _setup(*shape, spd=False, rhs=None, dtype=torch.float32):
    def make(lib):
        args = (_matrix(lib, *shape, spd=spd, dtype=dtype),)
        return args + ((_matrix(lib, *rhs, seed=1, dtype=dtype),) if rhs else ())
    return make


C128 = torch.complex128


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
    ("eig 256", _setup(256, 256), lambda lib, a: lib.linalg.eig(a)),
    ("c128 solve 512x512", _setup(512, 512, rhs=(512, 1), dtype=C128), lambda lib, a, b: lib.linalg.solve(a, b)),
    ("c128 inv 512x512", _setup(512, 512, dtype=C128), lambda lib, a: lib.linalg.inv(a)),
    ("c128 solve batch 10000x4x4", _setup(10000, 4, 4, rhs=(10000, 4, 1), dtype=C128),
     lambda lib, a, b: lib.linalg.solve(a, b)),
    ("c128 inv batch 10000x4x4", _setup(10000, 4, 4, dtype=C128), lambda lib, a: lib.linalg.inv(a)),
    ("c128 cholesky 512", _setup(512, 512, spd=True, dtype=C128), lambda lib, a: lib.linalg.cholesky(a)),
    ("c128 eig 256", _setup(256, 256, dtype=C128), lambda lib, a: lib.linalg.eig(a)),
]


def main():
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 10
    set_threads()
    print(header(rounds))
    run_table(CASES, rounds, args, width=28)


if __name__ == "__main__":
    main()
