#!/usr/bin/python3
"""int8 GEMMs and convolutions (issue 26 point 6), tessera against torch 1.13 in one run, both
at the same thread count, alternating call by call: quantized::linear on a 64 x 1024 batch
with a 1024 x 1024 weight, quantized::conv2d for the digits CNN's second layer (32 -> 64
channels on 4 x 4, batch 256) and a ResNet-style 3x3 block (64 -> 64 at 56 x 56, batch 8),
each against torch's oneDNN engine (its default) and its QNNPACK engine, and against both
libraries' float32 forms. The weights are packed once (as a module holds them); the timed
call is the operator with its output allocation.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_quantized_gemm.py [rounds]

Targets (issue 26): int8 at least 2x tessera's own float32 throughput, and at most 1.0x
torch's time.
"""
import statistics
import sys

import numpy
import torch

import tessera

from bench_common import THREADS, header, set_threads, timed


def floats(lib, shape, seed):
    values = numpy.random.default_rng(seed).standard_normal(shape, dtype=numpy.float32)
    return torch.from_numpy(values) if lib is torch else tessera.tensor(values)


def linear_case(lib, quantized):
    x, w, b = floats(lib, (64, 1024), 0), floats(lib, (1024, 1024), 1) * 0.03, floats(lib, (1024,), 2)
    if not quantized:
        return lambda: lib.nn.functional.linear(x, w, b)
    qx = lib.quantize_per_tensor(x, 0.03, 128, lib.quint8)
    packed = lib.ops.quantized.linear_prepack(lib.quantize_per_tensor(w, 0.0005, 0, lib.qint8), b)
    return lambda: lib.ops.quantized.linear(qx, packed, 0.5, 128)


def conv_case(n, c, o, hw):
    def case(lib, quantized):
        x, w, b = floats(lib, (n, c, hw, hw), 3), floats(lib, (o, c, 3, 3), 4) * 0.05, floats(lib, (o,), 5)
        if not quantized:
            return lambda: lib.nn.functional.conv2d(x, w, b, padding=1)
        qx = lib.quantize_per_tensor(x, 0.03, 128, lib.quint8).contiguous(memory_format=lib.channels_last)
        packed = lib.ops.quantized.conv2d_prepack(lib.quantize_per_tensor(w, 0.0005, 0, lib.qint8), b, [1, 1],
                                                  [1, 1], [1, 1], 1)
        return lambda: lib.ops.quantized.conv2d(qx, packed, 0.5, 128)
    return case


# name, case, multiply-adds per call
CASES = [
    ("linear 64x1024 . 1024x1024", linear_case, 64 * 1024 * 1024),
    ("conv2d digits 256x32x4x4 -> 64, 3x3", conv_case(256, 32, 64, 4), 256 * 64 * 4 * 4 * 32 * 9),
    ("conv2d ResNet 8x64x56x56 -> 64, 3x3", conv_case(8, 64, 64, 56), 8 * 64 * 56 * 56 * 64 * 9),
]


def median_ms(fns, rounds):
    """Median ms per call of each of fns, the calls alternating."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            times[i].append(timed(fn))
    return [statistics.median(t) * 1e3 for t in times]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    set_threads()
    print(header(rounds))
    print()
    print(f"| {'workload':37} | {'torch onednn':>12} | {'torch qnnpack':>13} | {'tessera int8':>12} | "
          f"{'ratio':>5} | {'torch f32':>9} | {'tessera f32':>11} | {'int8 speedup':>12} | {'int8 GOP/s':>10} |")
    print(f"|{'-' * 39}|{'-' * 13}:|{'-' * 14}:|{'-' * 13}:|{'-' * 6}:|{'-' * 10}:|{'-' * 12}:|{'-' * 13}:|"
          f"{'-' * 11}:|")
    for name, case, macs in CASES:
        torch.backends.quantized.engine = "qnnpack"
        torch_qnnpack = case(torch, True)
        torch.backends.quantized.engine = "onednn"
        fns = [case(torch, True), case(tessera, True), case(torch, False), case(tessera, False)]
        onednn_ms, tessera_ms, torch_f32_ms, tessera_f32_ms = median_ms(fns, rounds)
        torch.backends.quantized.engine = "qnnpack"
        qnnpack_ms, = median_ms([torch_qnnpack], rounds)
        torch.backends.quantized.engine = "onednn"
        print(f"| {name:37} | {onednn_ms:12.3f} | {qnnpack_ms:13.3f} | {tessera_ms:12.3f} | "
              f"{tessera_ms / onednn_ms:5.2f} | {torch_f32_ms:9.3f} | {tessera_f32_ms:11.3f} | "
              f"{tessera_f32_ms / tessera_ms:11.2f}x | {2 * macs / tessera_ms / 1e6:10.1f} |")
    print()
    print(f"ratio = tessera int8 / torch onednn; int8 speedup = tessera float32 / tessera int8 ({THREADS} threads)")


if __name__ == "__main__":
    main()
