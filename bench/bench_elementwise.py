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
import datetime
import os
import statistics
import subprocess
import sys
import time

import torch

import tessera

THREADS = 2
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
    ("copy_ f32->f16 4096^2", lambda L: (make(L, (SIDE, SIDE), "float16"), make(L, (SIDE, SIDE))),
     lambda L, dst, src: dst.copy_(src), 6 * SIDE * SIDE),
    ("a.t().contiguous() 4096^2 f32", lambda L: (make(L, (SIDE, SIDE)).t(),), lambda L, a: a.contiguous(),
     8 * SIDE * SIDE),
    ("where 4M f32", lambda L: (L.gt(make(L, (M4,)), 0.0), make(L, (M4,)), make(L, (M4,))),
     lambda L, c, a, b: L.where(c, a, b), 9 * M4),
]


def stream_add(build):
    exe = os.path.join(build, "bench", "stream_add")
    out = subprocess.run([exe, str(THREADS)], capture_output=True, text=True, check=True).stdout
    return float(out)


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run_case(setup, op, rounds):
    """Median seconds per call for torch and tessera, alternating calls."""
    t_args, m_args = setup(torch), setup(tessera)
    op(torch, *t_args)
    op(tessera, *m_args)
    t_torch, t_tessera = [], []
    for _ in range(rounds):
        t_torch.append(timed(lambda: op(torch, *t_args)))
        t_tessera.append(timed(lambda: op(tessera, *m_args)))
    return statistics.median(t_torch), statistics.median(t_tessera)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    torch.set_num_threads(THREADS)
    tessera.set_num_threads(THREADS)
    isa = tessera._C._cpu_capability()
    stream_before = stream_add(build)
    rows = []
    for name, setup, op, nbytes in CASES:
        if name.startswith("where") and not hasattr(tessera, "where"):
            rows.append((name, None, "tessera.where does not exist in this build"))
            continue
        t_torch, t_tessera = run_case(setup, op, rounds)
        rows.append((name, (t_torch, t_tessera, nbytes), None))
    stream = max(stream_before, stream_add(build))
    print(f"{datetime.date.today()}  threads={THREADS} (torch.get_num_threads()={torch.get_num_threads()}, "
          f"tessera={tessera.get_num_threads()})  torch {torch.__version__}  tessera ISA {isa}  "
          f"median of {rounds}")
    print(f"STREAM add (bench/stream_add, {THREADS} threads, 3 x 128 MiB): {stream:.1f} GB/s "
          f"(before {stream_before:.1f})")
    print()
    print(f"| {'workload':31} | {'torch ms':>8} | {'tessera ms':>10} | {'ratio':>5} | {'torch GB/s':>10} | "
          f"{'tessera GB/s':>12} | {'% STREAM':>8} |")
    print(f"|{'-' * 33}|{'-' * 9}:|{'-' * 11}:|{'-' * 6}:|{'-' * 11}:|{'-' * 13}:|{'-' * 9}:|")
    for name, figures, note in rows:
        if figures is None:
            print(f"| {name:31} | {'':>8} | {'skipped':>10} | {'':>5} | {'':>10} | {'':>12} | {'':>8} |  {note}")
            continue
        t_torch, t_tessera, nbytes = figures
        gb_torch, gb_tessera = nbytes / t_torch / 1e9, nbytes / t_tessera / 1e9
        print(f"| {name:31} | {t_torch * 1e3:8.2f} | {t_tessera * 1e3:10.2f} | {t_tessera / t_torch:5.2f} | "
              f"{gb_torch:10.1f} | {gb_tessera:12.1f} | {100 * gb_tessera / stream:7.0f}% |")


if __name__ == "__main__":
    main()
