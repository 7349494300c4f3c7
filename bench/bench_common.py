"""What the side-by-side benchmark scripts share: the machine's bandwidth ceilings
(bench/stream_add), alternating torch / tessera timing, and the table they print.

Each figure is the median of `rounds` timed calls after one warm-up, torch and tessera
called alternately at the same thread count; the machine is shared, so compare the ratios
(tessera / torch) more than the absolute times.
"""
import datetime
import os
import statistics
import subprocess
import time

import torch

import tessera

THREADS = 2


def stream(build, mode="add"):
    """GB/s of STREAM add (bytes read + written) or of a plain read, at THREADS threads."""
    exe = os.path.join(build, "bench", "stream_add")
    out = subprocess.run([exe, str(THREADS), mode], capture_output=True, text=True, check=True).stdout
    return float(out)


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run_case_times(setup, op, rounds, warmups=1):
    """Every timed call's seconds, torch's and tessera's, alternating calls after warm-ups."""
    t_args, m_args = setup(torch), setup(tessera)
    for _ in range(warmups):
        op(torch, *t_args)
        op(tessera, *m_args)
    t_torch, t_tessera = [], []
    for _ in range(rounds):
        t_torch.append(timed(lambda: op(torch, *t_args)))
        t_tessera.append(timed(lambda: op(tessera, *m_args)))
    return t_torch, t_tessera


def run_case(setup, op, rounds):
    """Median seconds per call for torch and tessera."""
    t_torch, t_tessera = run_case_times(setup, op, rounds)
    return statistics.median(t_torch), statistics.median(t_tessera)


def set_threads():
    torch.set_num_threads(THREADS)
    tessera.set_num_threads(THREADS)


def header(rounds):
    return (f"{datetime.date.today()}  threads={THREADS} (torch.get_num_threads()={torch.get_num_threads()}, "
            f"tessera={tessera.get_num_threads()})  torch {torch.__version__}  "
            f"tessera ISA {tessera._C._cpu_capability()}  median of {rounds}")


def ratio_header(width):
    """The head of a torch ms / tessera ms / ratio table whose workload column is `width` wide."""
    print(f"| {'workload':{width}} | {'torch ms':>8} | {'tessera ms':>10} | {'ratio':>5} |")
    print(f"|{'-' * (width + 2)}|{'-' * 9}:|{'-' * 11}:|{'-' * 6}:|")


def ratio_row(name, t_torch, t_tessera, width):
    print(f"| {name:{width}} | {t_torch * 1e3:8.2f} | {t_tessera * 1e3:10.2f} | {t_tessera / t_torch:5.2f} |",
          flush=True)


def run_table(cases, rounds, filters=(), width=44):
    """Times each (name, setup, op) case whose name holds one of `filters` (every case when
    none) with run_case, printing the ratio table a row at a time."""
    ratio_header(width)
    for name, setup, op in cases:
        if filters and not any(f in name for f in filters):
            continue
        ratio_row(name, *run_case(setup, op, rounds), width)


def print_table(rows, ceiling, ceiling_name):
    """rows: (name, (t_torch, t_tessera, bytes) or None, note)."""
    print(f"| {'workload':34} | {'torch ms':>8} | {'tessera ms':>10} | {'ratio':>5} | {'torch GB/s':>10} | "
          f"{'tessera GB/s':>12} | {'% ' + ceiling_name:>9} |")
    print(f"|{'-' * 36}|{'-' * 9}:|{'-' * 11}:|{'-' * 6}:|{'-' * 11}:|{'-' * 13}:|{'-' * 10}:|")
    for name, figures, note in rows:
        if figures is None:
            print(f"| {name:34} | {'':>8} | {'skipped':>10} | {'':>5} | {'':>10} | {'':>12} | {'':>9} |  {note}")
            continue
        t_torch, t_tessera, nbytes = figures
        gb_torch, gb_tessera = nbytes / t_torch / 1e9, nbytes / t_tessera / 1e9
        print(f"| {name:34} | {t_torch * 1e3:8.2f} | {t_tessera * 1e3:10.2f} | {t_tessera / t_torch:5.2f} | "
              f"{gb_torch:10.1f} | {gb_tessera:12.1f} | {100 * gb_tessera / ceiling:8.0f}% |")
