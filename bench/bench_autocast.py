#!/usr/bin/python3
"""Autocast side by side with torch 1.13 (bfloat16 on the CPU), alternating torch / tessera
in one run at the same thread count (bench_common.THREADS):

- linear 256x1024 -> 1024 forward under autocast (weights cast per region, the cache on);
- an MLP 784-512-512-10 train step at batch 128 under autocast (forward and loss inside,
  backward outside, as torch's docs recommend);
- the digits CNN (examples/train_digits.py) train step at batch 64 under autocast;
- `a + b` on one-element tensors inside an autocast region: the cost of the key's
  fallthrough on an operator that no list names.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_autocast.py [rounds]
"""
import importlib.util
import pathlib
import sys

import torch

import tessera
from bench_common import header, run_case, set_threads

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _digits_model(lib):
    spec = importlib.util.spec_from_file_location("train_digits", ROOT / "examples" / "train_digits.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    lib.manual_seed(0)
    return demo.build_model(lib.nn)


def _data(lib, *shape, seed=0):
    return lib.tensor(torch.rand(*shape, generator=torch.Generator().manual_seed(seed)).tolist())


def linear_setup(lib):
    lib.manual_seed(0)
    return lib.nn.Linear(1024, 1024), _data(lib, 256, 1024)


def linear_op(lib, layer, x):
    with lib.autocast("cpu"):
        return layer(x)


def mlp_setup(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512), lib.nn.ReLU(),
                              lib.nn.Linear(512, 10))
    labels = lib.tensor(torch.randint(0, 10, (128,), generator=torch.Generator().manual_seed(1)).tolist())
    return model, _data(lib, 128, 784), labels


def step_op(lib, model, x, labels):
    model.zero_grad(set_to_none=True)
    with lib.autocast("cpu"):
        loss = lib.nn.functional.cross_entropy(model(x), labels)
    loss.backward()


def cnn_setup(lib):
    labels = lib.tensor(torch.randint(0, 10, (64,), generator=torch.Generator().manual_seed(2)).tolist())
    return _digits_model(lib), _data(lib, 64, 1, 8, 8), labels


def add_setup(lib):
    return lib.ones(1), lib.ones(1)


def add_op(lib, a, b):
    with lib.autocast("cpu"):
        for _ in range(100):
            a + b


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    set_threads()
    print(header(rounds))
    print(f"{'workload (bfloat16 autocast)':<44} {'torch':>10} {'tessera':>10} {'ratio':>7}")
    cases = [("linear 256x1024x1024 forward", linear_setup, linear_op, 1),
             ("MLP 784-512-512-10 step, batch 128", mlp_setup, step_op, 1),
             ("digits CNN step, batch 64", cnn_setup, step_op, 1),
             ("a + b (1 element) in a region, per op", add_setup, add_op, 100)]
    for name, setup, op, per in cases:
        t, m = run_case(setup, op, rounds)
        print(f"{name:<44} {t / per * 1e6:>8.1f}us {m / per * 1e6:>8.1f}us {m / t:>7.2f}")


if __name__ == "__main__":
    main()
