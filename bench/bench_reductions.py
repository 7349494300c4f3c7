#!/usr/bin/python3
"""Reductions, scans and softmax, tessera against torch in one run at the same thread count
(2), with this machine's read bandwidth (bench/stream_add ... read, before and after the
cases) printed beside them: a reduction's ceiling is reading its input once.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_reductions.py build/release [rounds]

GB/s counts the bytes a kernel must read and write once; % read is against the read
bandwidth (for ops that also write, the figure understates how close they are).
"""
import sys

from bench_common import THREADS, header, print_table, run_case, set_threads, stream

M16, SIDE = 16 << 20, 4096


def make(lib, *shape):
    return lib.rand(*shape) * 4.0 + -2.0


# name, setup(lib) -> args, op(lib, *args), bytes moved
CASES = [
    ("sum 16M f32", lambda L: (make(L, M16),), lambda L, a: a.sum(), 4 * M16),
    ("sum(dim=0) 4096^2 f32", lambda L: (make(L, SIDE, SIDE),), lambda L, a: a.sum(0), 4 * SIDE * SIDE),
    ("sum(dim=1) 4096^2 f32", lambda L: (make(L, SIDE, SIDE),), lambda L, a: a.sum(1), 4 * SIDE * SIDE),
    ("mean(dim=-1) 4096x1024 f32", lambda L: (make(L, SIDE, 1024),), lambda L, a: a.mean(-1), 4 * SIDE * 1024),
    ("var(dim=-1) 4096x1024 f32", lambda L: (make(L, SIDE, 1024),), lambda L, a: a.var(-1), 4 * SIDE * 1024),
    ("softmax(dim=-1) 4096x1024 f32", lambda L: (make(L, SIDE, 1024),), lambda L, a: L.softmax(a, -1),
     8 * SIDE * 1024),
    ("log_softmax(dim=-1) 4096x1024 f32", lambda L: (make(L, SIDE, 1024),), lambda L, a: L.log_softmax(a, -1),
     8 * SIDE * 1024),
    ("cumsum 16M f32", lambda L: (make(L, M16),), lambda L, a: L.cumsum(a, 0), 8 * M16),
]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    set_threads()
    read_before = stream(build, "read")
    rows = [(name, (*run_case(setup, op, rounds), nbytes), None) for name, setup, op, nbytes in CASES]
    best = max(read_before, stream(build, "read"))
    print(header(rounds))
    print(f"read bandwidth (bench/stream_add {THREADS} read, 128 MiB): {best:.1f} GB/s (before {read_before:.1f})")
    print()
    print_table(rows, best, "read")


if __name__ == "__main__":
    main()
