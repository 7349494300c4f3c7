"""tessera.fft against torch.fft (pocketfft) at the operator level: the same calls on the
same data, alternating between the libraries in one run, both at the same thread count.

    /usr/bin/python3 bench/bench_fft.py [threads] [rounds]

Prints a Markdown table of medians and the ratio tessera / torch (below 1: tessera is
faster). bench_fft_plans.py times the plans alone, single-threaded.
"""
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.environ.get("TESSERA_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                                                 "build", "release")), "python"))
import tessera  # noqa: E402


def _data(shape, complex_):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32)
    if complex_:
        a = (a + 1j * rng.standard_normal(shape).astype(np.float32)).astype(np.complex64)
    return a


# (name, shape, complex input, call(lib, x))
CASES = [
    ("fft complex64 2^20", (1 << 20,), True, lambda lib, x: lib.fft.fft(x)),
    ("ifft complex64 2^20", (1 << 20,), True, lambda lib, x: lib.fft.ifft(x)),
    ("rfft float32 1000x1024", (1000, 1024), False, lambda lib, x: lib.fft.rfft(x)),
    ("rfft float32 1000x1000", (1000, 1000), False, lambda lib, x: lib.fft.rfft(x)),
    ("irfft 1000x513 -> 1000x1024", (1000, 513), True, lambda lib, x: lib.fft.irfft(x, n=1024)),
    ("fft complex64 65537 (prime)", (65537,), True, lambda lib, x: lib.fft.fft(x)),
    ("fft2 complex64 512x512", (512, 512), True, lambda lib, x: lib.fft.fft2(x)),
    ("rfftn float32 64x64x64", (64, 64, 64), False, lambda lib, x: lib.fft.rfftn(x)),
    ("fft along dim 0 complex64 1024x256", (1024, 256), True, lambda lib, x: lib.fft.fft(x, dim=0)),
    ("stft float32 2^20, n_fft 512, hop 128, hann", (1 << 20,), False,
     lambda lib, x: lib.stft(x, 512, hop_length=128, window=lib.hann_window(512), return_complex=True)),
    ("istft of that", (257, 8193), True,
     lambda lib, x: lib.istft(x, 512, hop_length=128, window=lib.hann_window(512))),
]


def seconds(call, x, lib, min_time=0.25):
    call(lib, x)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time:
        call(lib, x)
        calls += 1
    return (time.perf_counter() - start) / calls


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.set_num_threads(threads)
    tessera.set_num_threads(threads)
    print(f"torch {torch.__version__}, {threads} threads each, median of {rounds} alternating rounds")
    print("| workload | torch ms | tessera ms | ratio |")
    print("|---|---:|---:|---:|")
    for name, shape, complex_, call in CASES:
        a = _data(shape, complex_)
        xt, xs = torch.from_numpy(a), tessera.tensor(a)
        t_torch, t_tessera = [], []
        for _ in range(rounds):
            t_torch.append(seconds(call, xt, torch))
            t_tessera.append(seconds(call, xs, tessera))
        a_ms, b_ms = statistics.median(t_torch) * 1e3, statistics.median(t_tessera) * 1e3
        print(f"| {name} | {a_ms:.3f} | {b_ms:.3f} | {b_ms / a_ms:.2f} |", flush=True)


if __name__ == "__main__":
    main()
