#!/usr/bin/python3
"""Quantized tensors, tessera against torch 1.13 in one run (issue 26): quantizing and
dequantizing 16M float32 values per tensor, a 1024^2 weight per channel, and int_repr, both
libraries at the same thread count, alternating call by call, output allocation included.
Bytes moved (read + written) give GB/s, beside the STREAM add figure of this machine.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_quantized.py [build dir] [rounds]

The loops are scalar for now (torch 1.13 without FBGEMM is scalar too); issue 26's target
is 70% of STREAM for quantize/dequantize of 16M floats, which needs the AVX2 kernels that
come with the quantized kernels (point 2).
"""
import sys

import numpy
import torch

import tessera

from bench_common import THREADS, header, print_table, run_case, set_threads, stream

M16 = 1 << 24


def floats(lib, shape, seed):
    values = numpy.random.default_rng(seed).standard_normal(shape, dtype=numpy.float32)
    return torch.from_numpy(values) if lib is torch else tessera.tensor(values)


def quantized(lib, shape, seed, dtype):
    return lib.quantize_per_tensor(floats(lib, shape, seed), 0.02, 3, getattr(lib, dtype))


def channel_qparams(lib, n):
    return lib.linspace(0.01, 0.05, n, dtype=lib.float64), lib.arange(n) % 7


# name, setup(lib) -> args, op(lib, *args), bytes moved
CASES = [
    ("quantize_per_tensor 16M -> qint8", lambda L: (floats(L, (M16,), 0),),
     lambda L, x: L.quantize_per_tensor(x, 0.02, 3, L.qint8), 5 * M16),
    ("quantize_per_tensor 16M -> quint8", lambda L: (floats(L, (M16,), 1),),
     lambda L, x: L.quantize_per_tensor(x, 0.02, 128, L.quint8), 5 * M16),
    ("dequantize 16M qint8", lambda L: (quantized(L, (M16,), 2, "qint8"),), lambda L, q: q.dequantize(), 5 * M16),
    ("int_repr 16M qint8", lambda L: (quantized(L, (M16,), 3, "qint8"),), lambda L, q: q.int_repr(), 2 * M16),
    ("quantize_per_channel 1024^2 axis 0", lambda L: (floats(L, (1024, 1024), 4),) + channel_qparams(L, 1024),
     lambda L, x, s, z: L.quantize_per_channel(x, s, z, 0, L.qint8), 5 * 1024 * 1024),
    ("dequantize per channel 1024^2", lambda L: (L.quantize_per_channel(floats(L, (1024, 1024), 5),
                                                                         *channel_qparams(L, 1024), 0, L.qint8),),
     lambda L, q: q.dequantize(), 5 * 1024 * 1024),
]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    set_threads()
    stream_before = stream(build)
    rows = [(name, run_case(setup, op, rounds) + (nbytes,), None) for name, setup, op, nbytes in CASES]
    best = max(stream_before, stream(build))
    print(header(rounds))
    print(f"STREAM add (bench/stream_add, {THREADS} threads): {best:.1f} GB/s (before {stream_before:.1f})")
    print()
    print_table(rows, best, "STREAM")


if __name__ == "__main__":
    main()
