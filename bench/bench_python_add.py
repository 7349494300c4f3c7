#!/usr/bin/python3
"""`a + b` on one-element float tensors: tessera against torch in one run, alternating
rounds so both see the same machine state, both at one thread. Prints each side's best
per-call time and the ratio (tessera / torch; the target is at most 0.5).

  PYTHONPATH=build/release/python bench/bench_python_add.py
"""
import timeit

import torch

import tessera

ROUNDS = 15
CALLS = 20000


def best_per_call(stmt, env):
    timer = timeit.Timer(stmt, globals=env)
    return min(timer.repeat(repeat=1, number=CALLS)) / CALLS


def main():
    torch.set_num_threads(1)
    cases = {
        "a + b": ("a + b", {"a": torch.ones(1), "b": torch.ones(1)}, {"a": tessera.tensor([1.0]), "b": tessera.tensor([1.0])}),
        "a + 1": ("a + 1", {"a": torch.ones(1)}, {"a": tessera.tensor([1.0])}),
        "add(a, b)": ("add(a, b)", {"add": torch.add, "a": torch.ones(1), "b": torch.ones(1)},
                      {"add": tessera.add, "a": tessera.tensor([1.0]), "b": tessera.tensor([1.0])}),
    }
    print(f"torch {torch.__version__}, threads={torch.get_num_threads()}; best of {ROUNDS} rounds x {CALLS} calls")
    for name, (stmt, torch_env, tessera_env) in cases.items():
        t_torch, t_tessera = float("inf"), float("inf")
        for _ in range(ROUNDS):
            t_torch = min(t_torch, best_per_call(stmt, torch_env))
            t_tessera = min(t_tessera, best_per_call(stmt, tessera_env))
        print(f"{name:>10}: torch {t_torch * 1e9:7.0f} ns   tessera {t_tessera * 1e9:7.0f} ns   "
              f"ratio {t_tessera / t_torch:.2f}")


if __name__ == "__main__":
    main()
