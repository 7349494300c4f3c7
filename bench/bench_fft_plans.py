"""The FFT plans alone (build/release/bench/fft_bench, C++, one thread) against torch.fft
(pocketfft, one thread) on the same workloads, alternating in one run; bench_fft.py
compares the tessera.fft operators themselves.

    /usr/bin/python3 bench/bench_fft_plans.py [rounds]

torch's figure includes its operator overhead (a few microseconds: visible only on the
short lines); the plans' figure is the transform alone, output preallocated.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import torch

BUILD = os.environ.get("TESSERA_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "build", "release"))

# (name, fft_bench filter, torch setup, torch call)
CASES = [
    ("c2c complex64 2^20", "BM_c2c<float>/1048576$", lambda: torch.randn(1 << 20, dtype=torch.complex64), torch.fft.fft),
    ("c2c complex128 2^20", "BM_c2c<double>/1048576$", lambda: torch.randn(1 << 20, dtype=torch.complex128),
     torch.fft.fft),
    ("c2c complex64 1000", "BM_c2c<float>/1000$", lambda: torch.randn(1000, dtype=torch.complex64), torch.fft.fft),
    ("c2c complex64 54000 (3^3 5^3 16)", "BM_c2c<float>/54000$", lambda: torch.randn(54000, dtype=torch.complex64),
     torch.fft.fft),
    ("c2c complex64 65537 (prime)", "BM_c2c<float>/65537$", lambda: torch.randn(65537, dtype=torch.complex64),
     torch.fft.fft),
    ("rfft float32 1000x1024", "BM_r2c_rows<float>/1000/1024$", lambda: torch.randn(1000, 1024), torch.fft.rfft),
    ("rfft float32 1000x1000", "BM_r2c_rows<float>/1000/1000$", lambda: torch.randn(1000, 1000), torch.fft.rfft),
    ("fft complex64 1000x1024 (rows)", "BM_c2c_rows<float>/1000/1024$",
     lambda: torch.randn(1000, 1024, dtype=torch.complex64), torch.fft.fft),
    ("irfft 1000x513 -> 1000x1024", "BM_c2r_rows<float>/1000/1024$",
     lambda: torch.randn(1000, 513, dtype=torch.complex64), lambda x: torch.fft.irfft(x, n=1024, norm="forward")),
]


def torch_seconds(setup, call, min_time=0.3):
    x = setup()
    call(x)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time:
        call(x)
        calls += 1
    return (time.perf_counter() - start) / calls


def plan_seconds(pattern):
    exe = os.path.join(BUILD, "bench", "fft_bench")
    out = subprocess.run([exe, f"--benchmark_filter={pattern}", "--benchmark_format=json", "--benchmark_min_time=0.3"],
                         capture_output=True, text=True, check=True).stdout
    bench = json.loads(out)["benchmarks"][0]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[bench["time_unit"]]
    return bench["real_time"] * scale


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, median of {rounds} alternating rounds")
    print("| workload | torch ms | tessera plan ms | ratio |")
    print("|---|---:|---:|---:|")
    for name, pattern, setup, call in CASES:
        t_torch, t_plan = [], []
        for _ in range(rounds):
            t_torch.append(torch_seconds(setup, call))
            t_plan.append(plan_seconds(pattern))
        a, b = statistics.median(t_torch) * 1e3, statistics.median(t_plan) * 1e3
        print(f"| {name} | {a:.3f} | {b:.3f} | {b / a:.2f} |", flush=True)


if __name__ == "__main__":
    main()
