#!/usr/bin/python3
"""Autograd side by side with torch, alternating torch / tessera in one run at the same
thread count (bench_common.THREADS):

- backward through a chain of 200 small elementwise ops (mul, add, tanh, repeated), the
  time of `y.backward(g)` divided by 200: the engine's cost per node;
- forward + backward of an MLP 784-512-512-10 at batch 128 written with mm / add / relu /
  log_softmax (the loss is the mean of the log-probabilities picked by a one-hot mask);
- `a + b` on one-element tensors with and without requires_grad (the Autograd kernel's
  cost when nothing needs a grad, and the cost of recording a node when something does).

  PYTHONPATH=build/python /usr/bin/python3 bench/bench_autograd.py [rounds]
"""
import statistics
import sys
import timeit

import torch

import tessera
from bench_common import THREADS, header, set_threads, timed

CHAIN = 200


def chain_graph(lib, x, w, c):
    y = x
    for i in range(CHAIN // 3):
        y = y.mul(w).add(c).tanh()
    for _ in range(CHAIN - 3 * (CHAIN // 3)):
        y = y.mul(w)
    return y


def chain_case(rounds):
    """Median seconds of backward through the chain, per library (graph built untimed)."""
    times = {torch: [], tessera: []}
    inputs = {}
    for lib in (torch, tessera):
        x = lib.tensor([0.1 * i for i in range(16)], requires_grad=True)
        w = lib.tensor([0.9] * 16, requires_grad=True)
        c = lib.tensor([0.05] * 16, requires_grad=True)
        inputs[lib] = (x, w, c, lib.ones(16))
    for _ in range(rounds + 1):
        for lib in (torch, tessera):
            x, w, c, g = inputs[lib]
            y = chain_graph(lib, x, w, c)
            times[lib].append(timed(lambda: y.backward(g)))
    return statistics.median(times[torch][1:]), statistics.median(times[tessera][1:])


def mlp_params(lib):
    gen = torch.Generator().manual_seed(0)

    def param(*shape):
        t = (torch.rand(*shape, generator=gen) - 0.5) * 0.1
        return lib.tensor(t.tolist(), requires_grad=True)

    x = lib.tensor(torch.rand(128, 784, generator=gen).tolist())
    labels = torch.randint(0, 10, (128,), generator=gen)
    onehot = lib.tensor(torch.nn.functional.one_hot(labels, 10).float().tolist())
    return x, onehot, [param(784, 512), param(512), param(512, 512), param(512), param(512, 10), param(10)]


def mlp_step(lib, x, onehot, params):
    w1, b1, w2, b2, w3, b3 = params
    h = lib.relu(lib.add(lib.mm(x, w1), b1))
    h = lib.relu(lib.add(lib.mm(h, w2), b2))
    logp = lib.log_softmax(lib.add(lib.mm(h, w3), b3), 1)
    loss = logp.mul(onehot).sum().div(-128.0)
    loss.backward()
    for p in params:
        p.grad = None
    return loss


def mlp_case(rounds):
    args = {lib: mlp_params(lib) for lib in (torch, tessera)}
    # A warm-up, and a check that both compute the same loss.
    loss_t = mlp_step(torch, *args[torch]).item()
    loss_m = mlp_step(tessera, *args[tessera]).item()
    assert abs(loss_t - loss_m) < 1e-4 * max(1.0, abs(loss_t)), (loss_t, loss_m)
    t_torch, t_tessera = [], []
    for _ in range(rounds):
        t_torch.append(timed(lambda: mlp_step(torch, *args[torch])))
        t_tessera.append(timed(lambda: mlp_step(tessera, *args[tessera])))
    return statistics.median(t_torch), statistics.median(t_tessera)


def add_case(requires_grad, calls=20000, rounds=15):
    """Best per-call seconds of `a + b` on one-element tensors."""
    envs = {lib: {"a": lib.tensor([1.0], requires_grad=requires_grad), "b": lib.tensor([1.0])} for lib in (torch, tessera)}
    best = {torch: float("inf"), tessera: float("inf")}
    for _ in range(rounds):
        for lib in (torch, tessera):
            t = min(timeit.Timer("a + b", globals=envs[lib]).repeat(repeat=1, number=calls)) / calls
            best[lib] = min(best[lib], t)
    return best[torch], best[tessera]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    set_threads()
    print(header(rounds))
    rows = []
    t, m = chain_case(rounds)
    rows.append((f"backward, {CHAIN}-op chain (per node)", t / CHAIN, m / CHAIN, "us", 1e6, 0.7))
    t, m = mlp_case(rounds)
    rows.append(("MLP 784-512-512-10 b128 fwd+bwd", t, m, "ms", 1e3, 1.0))
    t, m = add_case(False)
    rows.append(("a + b, 1 elt, no grad (best)", t, m, "ns", 1e9, 0.5))
    t, m = add_case(True)
    rows.append(("a + b, 1 elt, requires_grad (best)", t, m, "ns", 1e9, None))
    print(f"| {'workload':38} | {'torch':>10} | {'tessera':>10} | {'ratio':>5} | {'target':>6} |")
    print(f"|{'-' * 40}|{'-' * 11}:|{'-' * 11}:|{'-' * 6}:|{'-' * 7}:|")
    for name, t, m, unit, scale, target in rows:
        goal = f"<= {target}" if target is not None else ""
        print(f"| {name:38} | {t * scale:7.2f} {unit} | {m * scale:7.2f} {unit} | {m / t:5.2f} | {goal:>6} |")
    print(f"(threads: torch {torch.get_num_threads()}, tessera {tessera.get_num_threads()}; THREADS={THREADS})")


if __name__ == "__main__":
    main()
