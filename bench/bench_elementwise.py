#!/usr/bin/python3
"""Elementwise throughput, tessera against torch in one run: both at the same thread count
(2), alternating torch and tessera call by call, timing what a user writes (`a + b`, output
allocation included), with this machine's STREAM add bandwidth measured in the same run
(bench/stream_add.cpp, before and after the cases) printed beside them.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_elementwise.py build/release [rounds]

Each figure is the median of `rounds` (default 15) timed calls after one warm-up; the
machine is shared, so compare the ratios (tessera / torch) more than the absolute times.
GB/s counts the bytes a kernel must read and write once (STREAM's convention).
"""
import sys

import tessera
from bench_common import THREADS, header, print_table, run_case, set_threads, stream
M16, M4, SIDE = 16 << 20, 4 << 20, 4096


def make(lib, shape, dtype="float32"):
    """Values in [-2, 2), made the same way in both libraries."""
    t = lib.rand(*shape) * 4.0 + -2.0  # (tessera has no Tensor - number operator yet)
    return t if dtype == "float32" else t.to(getattr(lib, dtype))


# name, setup(lib) -> args, op(lib, *args), bytes moved
CASES = [
    ("add 16M f32", lambda L: (make(L, (M16,)), make(L, (M16,))), lambda L, a, b: a + b, 12 * M16),
    ("mul 16M f32", lambda L: (make(L, (M16,)), make(L, (M16,))), lambda L, a, b: a * b, 12 * M16),
    ("add 4096^2 f32, a.t() + b", lambda L: (make(L, (SIDE, SIDE)).t(), make(L, (SIDE, SIDE))),
     lambda L, a, b: a + b, 12 * SIDE * SIDE),
    ("mul 4096^2 f32, a.t() * b", lambda L: (make(L, (SIDE, SIDE)).t(), make(L, (SIDE, SIDE))),
     lambda L, a, b: a * b, 12 * SIDE * SIDE),
    ("exp 16M f32", lambda L: (make(L, (M16,)),), lambda L, a: a.exp(), 8 * M16),
    ("tanh 4M f32", lambda L: (make(L, (M4,)),), lambda L, a: a.tanh(), 8 * M4),
    ("sigmoid 4M f32", lambda L: (make(L, (M4,)),), lambda L, a: a.sigmoid(), 8 * M4),
    ("pow 4M f32, ** 2", lambda L: (make(L, (M4,)),), lambda L, a: a ** 2, 8 * M4),
    ("pow 4M f32, ** 0.75", lambda L: (make(L, (M4,)).abs(),), lambda L, a: a ** 0.75, 8 * M4),
    ("copy_ f32->f16 4096^2", lambda L: (make(L, (SIDE, SIDE), "float16"), make(L, (SIDE, SIDE))),
     lambda L, dst, src: dst.copy_(src), 6 * SIDE * SIDE),
    ("a.t().contiguous() 4096^2 f32", lambda L: (make(L, (SIDE, SIDE)).t(),), lambda L, a: a.contiguous(),
     8 * SIDE * SIDE),
    ("where 4M f32", lambda L: (L.gt(make(L, (M4,)), 0.0), make(L, (M4,)), make(L, (M4,))),
     lambda L, c, a, b: L.where(c, a, b), 9 * M4),
]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    set_threads()
    stream_before = stream(build)
    rows = []
    for name, setup, op, nbytes in CASES:
        if name.startswith("where") and not hasattr(tessera, "where"):
            rows.append((name, None, "tessera.where does not exist in this build"))
            continue
        t_torch, t_tessera = run_case(setup, op, rounds)
        rows.append((name, (t_torch, t_tessera, nbytes), None))
    best = max(stream_before, stream(build))
    print(header(rounds))
    print(f"STREAM add (bench/stream_add, {THREADS} threads, 3 x 128 MiB): {best:.1f} GB/s "
          f"(before {stream_before:.1f})")
    print()
    print_table(rows, best, "STREAM")


if __name__ == "__main__":
    main()
