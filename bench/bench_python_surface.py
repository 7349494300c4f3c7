#!/usr/bin/python3
"""The Python surface, tessera against torch in one run at one thread: tensor creation
from a list, scalar reads t[i] and t[i, j], boolean-mask and index-tensor reads, indexed
writes, numpy round trips, a custom operator defined from Python (torch.library /
tessera.library, called through torch.ops / tessera.ops), and `a + b` on
one-element tensors. Alternating rounds, best per-call time of each side, and the ratio
(tessera / torch; the targets are at most 0.7, and 0.5 for `a + b`).

  PYTHONPATH=build/python bench/bench_python_surface.py
"""
import sys
import timeit

import numpy as np
import torch

import tessera

ROUNDS = 7


def best_per_call(stmt, env, calls):
    timer = timeit.Timer(stmt, globals=env)
    return min(timer.repeat(repeat=1, number=calls)) / calls


def env_for(lib, setup):
    env = {"lib": lib, "np": np}
    exec(setup, env)  # noqa: S102 (benchmark set-up written below)
    return env


N = 1_000_000
CASES = [
    # (name, setup run with `lib` bound, statement, calls per round)
    ("tensor(list of 1000)", "data = [float(i) for i in range(1000)]", "lib.tensor(data)", 2000),
    ("t[i]", "t = lib.arange(100.)", "t[7]", 50000),
    ("t[i, j]", "t = lib.arange(100.).reshape(10, 10)", "t[3, 4]", 50000),
    ("t[mask] (1M)", f"t = lib.arange({N}.) % 7; m = t > 2", "t[m]", 10),
    ("t[index] (1M rows)", f"t = lib.arange({N}.); i = lib.tensor(np.random.default_rng(0).integers(0, {N}, {N}))",
     "t[i]", 10),
    ("t[index] (1M x 8)", f"t = lib.ones({N}, 8); i = lib.tensor(np.random.default_rng(0).integers(0, {N}, {N}))",
     "t[i]", 5),
    ("t[idx] = v (100k)", f"t = lib.zeros({N}); i = lib.tensor(np.random.default_rng(1).integers(0, {N}, 100000)); "
     "v = lib.ones(100000)", "t[i] = v", 50),
    ("t[idx] = 1.0 (small)", "t = lib.zeros(100); i = lib.tensor([3, 7, 9])", "t[i] = 1.0", 20000),
    ("t.numpy(), from_numpy", "t = lib.ones(100)", "lib.from_numpy(t.numpy())", 20000),
    ("custom Python op", "import sys; lib_obj = sys.modules['__main__'].custom_op(lib); x = lib.ones(4)",
     "lib.ops.bench_surface.twice(x)", 20000),
    ("a + b (1 element)", "a = lib.ones(1); b = lib.ones(1)", "a + b", 50000),
]

_LIBRARIES = {}


def custom_op(lib):
    """bench_surface::twice(Tensor x) -> Tensor, a CPU kernel written in Python (x + x)."""
    if lib not in _LIBRARIES:
        m = lib.library.Library("bench_surface", "DEF")
        m.define("twice(Tensor x) -> Tensor")
        m.impl("twice", lambda x: x + x, "CPU")
        _LIBRARIES[lib] = m
    return _LIBRARIES[lib]


def main():
    torch.set_num_threads(1)
    tessera.set_num_threads(1)
    only = sys.argv[1:]
    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}; best of {ROUNDS} rounds")
    print(f"{'case':>22}  {'torch':>10}  {'tessera':>10}  ratio")
    for name, setup, stmt, calls in CASES:
        if only and not any(o in name for o in only):
            continue
        t_env, s_env = env_for(torch, setup), env_for(tessera, setup)
        t_best, s_best = float("inf"), float("inf")
        for _ in range(ROUNDS):
            t_best = min(t_best, best_per_call(stmt, t_env, calls))
            s_best = min(s_best, best_per_call(stmt, s_env, calls))
        unit, scale = ("us", 1e6) if t_best > 1e-5 else ("ns", 1e9)
        print(f"{name:>22}  {t_best * scale:7.1f} {unit}  {s_best * scale:7.1f} {unit}  {s_best / t_best:5.2f}")


if __name__ == "__main__":
    main()
