#!/usr/bin/python3
"""torch.distributions side by side with torch (issue 24's workload Normal.log_prob of 16M,
and the gamma-family samplers), alternating torch / tessera calls in one run at the same
thread count (bench_common.THREADS); the median of each and the ratio tessera / torch.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_distributions.py [rounds] [name filter...]
"""
import sys

import torch

import tessera
from bench_common import header, run_table, set_threads


def _values(n, low, high):
    def make(lib):
        t = torch.rand(n, generator=torch.Generator().manual_seed(0)) * (high - low) + low
        return (t if lib is torch else tessera.from_numpy(t.numpy()),)
    return make


def _normal_log_prob(lib, x):
    return lib.distributions.Normal(0.5, 2.0).log_prob(x)


CASES = [
    ("Normal(0.5, 2).log_prob 16M", _values(1 << 24, -4.0, 4.0), _normal_log_prob),
    ("_standard_gamma 1M (shape 0.1..10)", _values(1 << 20, 0.1, 10.0), lambda lib, a: lib._standard_gamma(a)),
    ("_standard_gamma_grad 1M", _values(1 << 20, 0.5, 5.0), lambda lib, a: lib._standard_gamma_grad(a, a)),
    ("_sample_dirichlet 100000x10", lambda lib: (_values(1_000_000, 0.5, 3.0)(lib)[0].reshape(100_000, 10),),
     lambda lib, a: lib._sample_dirichlet(a)),
]


def main():
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 10
    set_threads()
    print(header(rounds))
    run_table(CASES, rounds, args, width=36)


if __name__ == "__main__":
    import torch.distributions  # noqa: F401  (torch.distributions is a lazy attribute of torch)
    import tessera.distributions  # noqa: F401
    main()
