#!/usr/bin/python3
"""torch.special side by side with torch: the common special functions on 1M float32
values (and a few in float64), alternating torch / tessera calls in one run at the same
thread count (bench_common.THREADS); the median of each and the ratio tessera / torch.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_special.py [rounds] [name filter...]
"""
import sys

import torch

import tessera
from bench_common import header, run_table, set_threads

N = 1 << 20


def _values(low, high, dtype=torch.float32, arity=1):
    def make(lib):
        out = []
        for k in range(arity):
            t = torch.rand(N, generator=torch.Generator().manual_seed(k), dtype=dtype) * (high - low) + low
            out.append(t if lib is torch else tessera.from_numpy(t.numpy()))
        return tuple(out)
    return make


def _special(name):
    return lambda lib, *xs: getattr(lib.special, name)(*xs)


CASES = [
    (f"{name} 1M {'f64' if dtype is torch.float64 else 'f32'}", _values(lo, hi, dtype, arity), _special(name))
    for name, lo, hi, dtype, arity in [
        ("ndtr", -5.0, 5.0, torch.float32, 1), ("log_ndtr", -20.0, 5.0, torch.float32, 1),
        ("ndtri", 0.0, 1.0, torch.float32, 1), ("erfcx", -3.0, 30.0, torch.float32, 1),
        ("entr", 0.0, 4.0, torch.float32, 1), ("i0", -10.0, 10.0, torch.float32, 1),
        ("i0e", -10.0, 10.0, torch.float32, 1), ("i1", -10.0, 10.0, torch.float32, 1),
        ("xlog1py", 0.0, 4.0, torch.float32, 2), ("gammainc", 0.1, 10.0, torch.float64, 2),
        ("zeta", 1.5, 10.0, torch.float64, 2), ("bessel_j0", 0.0, 50.0, torch.float64, 1),
        ("bessel_y1", 0.1, 50.0, torch.float64, 1), ("modified_bessel_k0", 0.1, 20.0, torch.float64, 1),
        ("airy_ai", -10.0, 5.0, torch.float64, 1),
    ]
] + [("chebyshev_polynomial_t n=5 1M f64", _values(-1.0, 1.0, torch.float64),
      lambda lib, x: lib.special.chebyshev_polynomial_t(x, 5))]


def main():
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 10
    set_threads()
    print(header(rounds))
    run_table(CASES, rounds, args, width=36)


if __name__ == "__main__":
    main()
