#!/usr/bin/python3
"""Elementwise throughput, tessera against torch in one run, alternating, both at the same
thread count (2), with this machine's STREAM add bandwidth measured beside them.
Times include output allocation (`a + b` as users write it).

  PYTHONPATH=build/release/python bench/bench_elementwise.py build/release
"""
import os
import subprocess
import sys
import time

import torch

import tessera

THREADS = 2
ROUNDS = 5


def best_time(fn, repeat=5):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    torch.set_num_threads(THREADS)
    if hasattr(tessera, "set_num_threads"):
        tessera.set_num_threads(THREADS)
    stream = float(subprocess.run([os.path.join(build, "bench", "stream_add"), str(THREADS)], capture_output=True,
                                  text=True, check=True).stdout)
    print(f"threads={THREADS}  STREAM add = {stream:.1f} GB/s  (torch {torch.__version__})")
    M16, M4 = 16 << 20, 4 << 20
    side = 4096

    def make(lib, shape, dtype="float32"):
        t = lib.empty(*shape, dtype=getattr(lib, dtype))
        t.fill_(0.5)
        return t

    cases = [
        ("add 16M", lambda L: (make(L, (M16,)), make(L, (M16,))), lambda L, a, b: a + b, 3 * 4 * M16),
        ("mul 16M", lambda L: (make(L, (M16,)), make(L, (M16,))), lambda L, a, b: a * b, 3 * 4 * M16),
        ("add 4096x4096 transposed",
         lambda L: (make(L, (side, side)).t(), make(L, (side, side))),
         lambda L, a, b: a + b, 3 * 4 * side * side),
        ("exp 16M", lambda L: (make(L, (M16,)),), lambda L, a: a.exp(), 2 * 4 * M16),
        ("tanh 4M", lambda L: (make(L, (M4,)),), lambda L, a: a.tanh(), 2 * 4 * M4),
        ("sigmoid 4M", lambda L: (make(L, (M4,)),), lambda L, a: a.sigmoid(), 2 * 4 * M4),
        ("copy_ f32->f16 4096x4096", lambda L: (make(L, (side, side), "float16"), make(L, (side, side))),
         lambda L, dst, src: dst.copy_(src), 6 * side * side),
        ("transposed contiguous() 4096x4096", lambda L: (make(L, (side, side)).t(),),
         lambda L, a: a.contiguous(), 8 * side * side),
        ("where 4M", lambda L: (make(L, (M4,), "bool"), make(L, (M4,)), make(L, (M4,))),
         lambda L, c, a, b: L.where(c, a, b), 9 * M4),
    ]
    print(f"{'case':36} {'torch ms':>9} {'tessera ms':>10} {'ratio':>6} {'tessera GB/s':>12} {'% STREAM':>8}")
    for name, setup, op, nbytes in cases:
        try:
            t_args, m_args = setup(torch), setup(tessera)
            if any(x is None for x in m_args):
                raise AttributeError("missing op")
            t_torch = t_tessera = float("inf")
            for _ in range(ROUNDS):
                t_torch = min(t_torch, best_time(lambda: op(torch, *t_args), 2))
                t_tessera = min(t_tessera, best_time(lambda: op(tessera, *m_args), 2))
        except (AttributeError, RuntimeError, TypeError, NotImplementedError) as e:
            print(f"{name:36} {'':>9} {'missing':>10}   ({type(e).__name__}: {str(e).splitlines()[0][:60]})")
            continue
        gbs = nbytes / t_tessera / 1e9
        print(f"{name:36} {t_torch * 1e3:9.2f} {t_tessera * 1e3:10.2f} {t_tessera / t_torch:6.2f} {gbs:12.1f} "
              f"{100 * gbs / stream:7.0f}%")


if __name__ == "__main__":
    main()
