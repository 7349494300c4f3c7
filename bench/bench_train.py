#!/usr/bin/python3
"""The training stack side by side with torch (issue 9): whole train steps of
nn.Sequential models with optim.SGD, and optimizer steps alone, torch and tessera called
alternately in one run at the same thread count (bench_common.THREADS); the median of
each and the ratio tessera / torch.

- MLP 784-512-512-10, batch 128: zero_grad, forward, cross_entropy, backward, SGD step
  (momentum 0.9); target ratio <= 0.7.
- small CNN (conv 1->32 3x3, relu, maxpool, conv 32->64 3x3, relu, maxpool, linear
  64*7*7->128, relu, linear 128->10) on 28x28 images, batch 64: the same step; <= 0.7.
- Adam step over 100 parameters (50 of 256x256 and their 50 biases of 256, grads set
  once): torch with foreach=False (1.13's default) and foreach=True; target: tessera at
  most 0.5x torch's faster mode.

  PYTHONPATH=build/python /usr/bin/python3 bench/bench_train.py [rounds] [name filter...]
  ... bench_train.py --processes [rounds]   # the train steps, each library alone in its process

In one process the two libraries share libgomp and OpenBLAS, whose wait policies are set
by whichever loads them first (torch, here): their idle threads spin into the other
library's calls and the figures swing (torch's MLP step measured 7 to 23 ms). --processes
runs each train step in fresh processes that load one library each, alternating torch
with its defaults, torch with tessera's OpenMP setting (GOMP_SPINCOUNT=3000) and
tessera, and prints the medians: the second row shows what the kernels earn on their own.
"""
import sys

import torch

import tessera
from bench_common import header, ratio_header, ratio_row, run_table, set_threads


def _data(lib, *shape, seed=0, classes=None):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, classes, shape, generator=g) if classes else torch.randn(*shape, generator=g)
    return t if lib is torch else tessera.from_numpy(t.numpy())


def _copy_weights(lib, model, reference):
    """tessera's model gets torch's initial weights: both train from the same point."""
    if lib is torch:
        return model
    state = {k: tessera.from_numpy(v.numpy().copy()) for k, v in reference.state_dict().items()}
    model.load_state_dict(state)
    return model


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def _train_setup(build, input_shape, batch):
    torch.manual_seed(0)
    reference = build(torch)

    def setup(lib):
        model = reference if lib is torch else _copy_weights(lib, build(lib), reference)
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        return model, opt, _data(lib, batch, *input_shape), _data(lib, batch, classes=10, seed=1)
    return setup


def _train_step(lib, model, opt, x, y):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


def _adam_setup(foreach):
    def setup(lib):
        params = []
        for i in range(50):
            params.append(_data(lib, 256, 256, seed=2 * i))
            params.append(_data(lib, 256, seed=2 * i + 1))
        params = [lib.nn.Parameter(p) for p in params]
        for i, p in enumerate(params):
            p.grad = _data(lib, *p.shape, seed=1000 + i)
        kwargs = {"foreach": foreach} if lib is torch else {}
        return (lib.optim.Adam(params, lr=1e-3, **kwargs),)
    return setup


def _adam_step(lib, opt):
    opt.step()


CASES = [
    ("MLP 784-512-512-10 train step b128", _train_setup(_mlp, (784,), 128), _train_step),
    ("CNN 28x28 train step b64", _train_setup(_cnn, (1, 28, 28), 64), _train_step),
    ("Adam step 100 params vs torch foreach=False", _adam_setup(False), _adam_step),
    ("Adam step 100 params vs torch foreach=True", _adam_setup(True), _adam_step),
]


SOLO = r"""
import importlib, statistics, sys, time
import numpy as np
lib = importlib.import_module(sys.argv[1])
lib.set_num_threads(int(sys.argv[3]))
nn = lib.nn
if sys.argv[2] == "mlp":
    model, shape = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                 nn.Linear(512, 10)), (128, 784)
else:
    model, shape = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                 nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10)), (64, 1, 28, 28)
opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
rng = np.random.default_rng(0)
x = lib.from_numpy(rng.standard_normal(shape).astype("float32"))
y = lib.from_numpy(rng.integers(0, 10, shape[0]))
times = []
for i in range(100):
    t0 = time.perf_counter()
    opt.zero_grad()
    lib.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    times.append(time.perf_counter() - t0)
print(statistics.median(times[10:]))
"""


# The OpenMP setting tessera makes on import (python/tessera/cpu.py); the second
# configuration gives it to torch too (its effect on torch swung from 1.7x faster to 1.4x
# slower between runs here), so the table separates what the setting buys from what the
# kernels do. tessera's other setting,
# OPENBLAS_THREAD_TIMEOUT=4, is left out: it slows torch, whose GEMMs all go to OpenBLAS.
_TESSERA_RUNTIME_ENV = {"GOMP_SPINCOUNT": "3000"}


def main_processes(rounds):
    """Each train step in fresh processes, one library per process, alternating torch
    (its defaults), torch given tessera's runtime settings, and tessera."""
    import os
    import statistics
    import subprocess
    set_threads()
    print(f"{header(rounds)}  (one library per process)")
    ratio_header(66)
    configs = (("torch", "torch", {}), ("torch+env", "torch", _TESSERA_RUNTIME_ENV), ("tessera", "tessera", {}))
    for name, which in (("MLP 784-512-512-10 train step b128", "mlp"), ("CNN 28x28 train step b64", "cnn")):
        times = {key: [] for key, _, _ in configs}
        for _ in range(rounds):
            for key, lib, env in configs:
                out = subprocess.run([sys.executable, "-c", SOLO, lib, which, "2"], capture_output=True, text=True,
                                     check=True, env={**os.environ, **env})
                times[key].append(float(out.stdout.strip().splitlines()[-1]))
        ours = statistics.median(times["tessera"])
        ratio_row(name, statistics.median(times["torch"]), ours, 66)
        ratio_row(name + " (torch with GOMP_SPINCOUNT=3000)", statistics.median(times["torch+env"]), ours, 66)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--processes":
        main_processes(int(args[1]) if len(args) > 1 else 5)
        return
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 20
    set_threads()
    print(header(rounds))
    run_table(CASES, rounds, args, width=44)


if __name__ == "__main__":
    main()
