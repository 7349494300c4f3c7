#!/usr/bin/python3
"""Instructions per call of the dispatcher's paths, counted by callgrind (stable where
times are noisy). Runs dispatch_count for two call counts per mode; the difference over
the difference in calls is the per-call cost, start-up excluded.

  bench/callgrind_dispatch.py BUILD_DIR
"""
import pathlib
import re
import subprocess
import sys
import tempfile


def instructions(binary, mode, n):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "cg.out"
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary), mode, str(n)],
                              capture_output=True, text=True, check=True)
        m = re.search(r"Collected : (\d+)", proc.stderr)
        return int(m.group(1))


def main():
    binary = pathlib.Path(sys.argv[1]) / "bench" / "dispatch_count"
    n1, n2 = 1000, 11000
    per_call = {}
    for mode in ("direct", "dispatched", "boxed"):
        per_call[mode] = (instructions(binary, mode, n2) - instructions(binary, mode, n1)) / (n2 - n1)
        print(f"{mode:>10}: {per_call[mode]:8.1f} instructions per call")
    print(f"dispatcher overhead (dispatched - direct): {per_call['dispatched'] - per_call['direct']:.1f} instructions")
    print(f"boxed overhead (boxed - direct): {per_call['boxed'] - per_call['direct']:.1f} instructions")


if __name__ == "__main__":
    main()
