#!/usr/bin/python3
"""Matrix products, tessera against torch in one run: both at the same thread count (2),
alternating torch and tessera call by call, timing what a user writes (`a @ b`, output
allocation included), with this machine's float32 FMA peaks measured in the same run
(bench/fma_peak.cpp, AVX2 and AVX-512, on 1 and 2 threads, before and after the cases)
printed beside them: the percentage is of the widest the CPU has, which is what OpenBLAS's
kernels use (SkylakeX on an AVX-512 CPU), and of AVX2's too.

  PYTHONPATH=build/python /usr/bin/python3 bench/bench_matmul.py build [rounds]

Workloads: square float32 matmul 512 / 1024 / 2048, bmm of 64 128x128 matrices, and an
MLP train step written by hand (no autograd yet): three linear layers forward (with relu)
and the backward-shaped products (grad of input and weight per layer), as a training loop
interleaves BLAS calls and elementwise kernels. Each figure is the median of `rounds`
(default 15) timed calls after a warm-up; the spread (max - min over the median) of the
MLP step shows whether BLAS threads and our OpenMP threads fight (a fight shows as
occasional calls several times slower). GFLOP/s counts 2 * m * n * k per product.

Both libraries share one libgomp and one OpenBLAS in this process (Debian's torch links the
system OpenBLAS), so tessera is imported first: its idle-thread policy (workers sleep
instead of spinning, core/Parallel.cpp) is in force for both. With torch imported first,
OpenBLAS workers left spinning by one call steal a core from the next call's OpenMP
threads, and bmm (OpenMP threads over the batch) slows several-fold for both libraries.
"""
import datetime
import os
import statistics
import subprocess
import sys

import tessera  # first: its GOMP_SPINCOUNT / OPENBLAS_THREAD_TIMEOUT then apply to the shared libgomp and OpenBLAS

import torch  # noqa: E402  (the same libgomp and OpenBLAS, so both libraries run under that policy)

from bench_common import THREADS, run_case_times  # noqa: E402


def gemm_case(n):
    return (lambda L: (L.randn(n, n), L.randn(n, n)), lambda L, a, b: a @ b, 2.0 * n ** 3)


def bmm_case(batch, n):
    return (lambda L: (L.randn(batch, n, n), L.randn(batch, n, n)), lambda L, a, b: L.bmm(a, b),
            2.0 * batch * n ** 3)


# An MLP 784 -> 1024 -> 1024 -> 10 on a batch of 256: forward, then for each layer the
# input gradient g @ W and the weight gradient g^T @ x (the transposes go to BLAS as they are).
SIZES = [784, 1024, 1024, 10]
BATCH = 256


def mlp_setup(L):
    x = L.randn(BATCH, SIZES[0])
    ws = [L.randn(SIZES[i + 1], SIZES[i]) * 0.03 for i in range(3)]
    bs = [L.randn(SIZES[i + 1]) for i in range(3)]
    return (x, ws, bs)


def linear(L, x, w, b):
    return L.nn.functional.linear(x, w, b) if L is torch else L.linear(x, w, b)


def mlp_step(L, x, ws, bs):
    acts = [x]
    h = x
    for i in range(3):
        h = linear(L, h, ws[i], bs[i])
        if i < 2:
            h = h.relu()
        acts.append(h)
    g = acts[-1]  # stands for dLoss/dout
    grads = []
    for i in reversed(range(3)):
        grads.append(L.mm(g.t(), acts[i]))  # dW = g^T x
        g = L.mm(g, ws[i])  # dx = g W
    return grads


def mlp_flops():
    f = 0
    for i in range(3):
        f += 2 * BATCH * SIZES[i] * SIZES[i + 1] * 3  # forward, dW, dx
    return float(f)


CASES = [("matmul 512 f32", *gemm_case(512)), ("matmul 1024 f32", *gemm_case(1024)),
         ("matmul 2048 f32", *gemm_case(2048)), ("bmm 64x128x128 f32", *bmm_case(64, 128)),
         ("MLP train step (b=256, 784-1024-1024-10)", mlp_setup, lambda L, x, ws, bs: mlp_step(L, x, ws, bs),
          mlp_flops())]


def fma_peak(build, threads, isa="avx2"):
    exe = os.path.join(build, "bench", "fma_peak")
    return float(subprocess.run([exe, str(threads), isa], capture_output=True, text=True, check=True).stdout)


def peaks(build):
    """{isa: (1 thread, THREADS threads)} GFLOP/s; avx512 is 0 where the CPU lacks it."""
    return {isa: (fma_peak(build, 1, isa), fma_peak(build, THREADS, isa)) for isa in ("avx2", "avx512")}


def spread(times):
    return (max(times) - min(times)) / statistics.median(times)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    torch.set_num_threads(THREADS)
    tessera.set_num_threads(THREADS)
    before = peaks(build)
    rows = []
    for name, setup, op, flops in CASES:
        rows.append((name, flops, *run_case_times(setup, op, rounds, warmups=2)))
    after = peaks(build)
    best = {isa: tuple(max(x, y) for x, y in zip(before[isa], after[isa])) for isa in before}
    # The ceiling is the widest FMA the CPU has: OpenBLAS runs its AVX-512 (SkylakeX)
    # kernels where the CPU has AVX-512F.
    ceiling = "avx512" if best["avx512"][1] > 0 else "avx2"
    peak2 = best[ceiling][1]
    print(f"{datetime.date.today()}  threads={THREADS} (torch.get_num_threads()={torch.get_num_threads()}, "
          f"tessera={tessera.get_num_threads()})  torch {torch.__version__}  median of {rounds}")
    for isa in before:
        print(f"FMA peak, {isa} (bench/fma_peak, 12 FMA chains per thread): 1 thread {best[isa][0]:.1f} GFLOP/s, "
              f"{THREADS} threads {best[isa][1]:.1f} GFLOP/s (before / after the cases: {before[isa][1]:.1f} / "
              f"{after[isa][1]:.1f})")
    print()
    print(f"| {'workload':41} | {'torch ms':>8} | {'tessera ms':>10} | {'ratio':>5} | {'torch GFLOP/s':>13} | "
          f"{'tessera GFLOP/s':>15} | {'% ' + ceiling + ' peak':>13} | {'% avx2 peak':>11} | "
          f"{'spread torch/tessera':>20} |")
    print(f"|{'-' * 43}|{'-' * 9}:|{'-' * 11}:|{'-' * 6}:|{'-' * 14}:|{'-' * 16}:|{'-' * 14}:|{'-' * 12}:|"
          f"{'-' * 21}:|")
    for name, flops, t_torch, t_tessera in rows:
        mt, mm = statistics.median(t_torch), statistics.median(t_tessera)
        gt, gm = flops / mt / 1e9, flops / mm / 1e9
        print(f"| {name:41} | {mt * 1e3:8.2f} | {mm * 1e3:10.2f} | {mm / mt:5.2f} | {gt:13.1f} | {gm:15.1f} | "
              f"{100 * gm / peak2:12.0f}% | {100 * gm / best['avx2'][1]:10.0f}% | "
              f"{spread(t_torch):9.2f} / {spread(t_tessera):8.2f} |")


if __name__ == "__main__":
    main()
