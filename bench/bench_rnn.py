#!/usr/bin/python3
"""Recurrent layers side by side with torch: forward + backward of nn.LSTM (2 layers,
input 64, hidden 128, 100 steps, batch 32) and the same shapes for GRU and RNN(tanh),
torch and tessera called alternately in one run at the same thread count
(bench_common.THREADS); the median of each and the ratio tessera / torch.

Both run the recurrence in C++ over their operators (tessera's lstm / gru / rnn_tanh
operators, aten/native/nn/RNN.cpp: one matmul for every step's input projection, then one
step at a time).

  PYTHONPATH=build/python /usr/bin/python3 bench/bench_rnn.py [rounds] [name filter...]
"""
import sys

import torch

import tessera
from bench_common import header, run_table, set_threads

SEQ, BATCH, INPUT, HIDDEN, LAYERS = 100, 32, 64, 128, 2


def _setup(kind):
    torch.manual_seed(0)
    reference = getattr(torch.nn, kind)(INPUT, HIDDEN, LAYERS)
    x = torch.randn(SEQ, BATCH, INPUT, generator=torch.Generator().manual_seed(1))

    def setup(lib):
        if lib is torch:
            return reference, x
        model = getattr(tessera.nn, kind)(INPUT, HIDDEN, LAYERS)
        # the same starting weights, so both sides do the same arithmetic
        model.load_state_dict({k: tessera.from_numpy(v.detach().numpy().copy())
                               for k, v in reference.state_dict().items()})
        return model, tessera.from_numpy(x.numpy())
    return setup


def _forward_backward(lib, model, x):
    model.zero_grad()
    out, _ = model(x)
    out.sum().backward()


def _forward_only(lib, model, x):
    with lib.no_grad():
        model(x)


_SHAPE = f"{LAYERS}x{HIDDEN} in{INPUT} T{SEQ} b{BATCH}"
CASES = [
    (f"LSTM {_SHAPE} fwd+bwd", _setup("LSTM"), _forward_backward),
    (f"LSTM {_SHAPE} fwd (no_grad)", _setup("LSTM"), _forward_only),
    (f"GRU {_SHAPE} fwd+bwd", _setup("GRU"), _forward_backward),
    (f"RNN {_SHAPE} fwd+bwd", _setup("RNN"), _forward_backward),
]


def main():
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 10
    set_threads()
    print(header(rounds))
    run_table(CASES, rounds, args, width=40)


if __name__ == "__main__":
    main()
