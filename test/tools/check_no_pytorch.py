#!/usr/bin/python3
"""Fails if any object Tessera compiled included a header from PyTorch's own trees, or if
any library or program it linked depends on PyTorch's libraries.

Headers: the compiler's dependency records (Ninja keeps them; `ninja -t deps` prints every
header each object read). A header is PyTorch's when a directory named c10, ATen, torch
or caffe2 on its path lies outside our source and build trees (for example
/usr/include/ATen/Tensor.h or .../dist-packages/torch/include/c10/core/Device.h).
Libraries: DT_NEEDED of every ELF file in the build tree (readelf -d) must not name
libc10, libtorch*, libcaffe2* or libshm.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys

PYTORCH_DIRS = {"c10", "ATen", "torch", "caffe2"}
PYTORCH_LIBS = re.compile(r"^lib(c10(_cuda)?|torch\w*|caffe2\w*|shm)\.so")


def foreign_pytorch_header(path: str, own_roots) -> bool:
    p = os.path.realpath(path)
    if any(p == r or p.startswith(r + os.sep) for r in own_roots):
        return False
    return any(part in PYTORCH_DIRS for part in pathlib.PurePath(p).parts[:-1])


def parse_ninja_deps(text: str):
    """Yields (object, header) pairs from `ninja -t deps` output."""
    target = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            target = line.split(":", 1)[0]
        else:
            yield target, line.strip()


def bad_headers(deps_text: str, own_roots):
    return sorted({(obj, h) for obj, h in parse_ninja_deps(deps_text) if foreign_pytorch_header(h, own_roots)})


def needed_libraries(elf: pathlib.Path):
    out = subprocess.run(["readelf", "-d", str(elf)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def is_elf(path: pathlib.Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def bad_links(build_dir: pathlib.Path):
    found = []
    for path in build_dir.rglob("*"):
        if path.is_file() and not path.suffix == ".o" and is_elf(path):
            found += [(str(path), lib) for lib in needed_libraries(path) if PYTORCH_LIBS.match(lib)]
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True, type=pathlib.Path)
    ap.add_argument("--source-dir", required=True, type=pathlib.Path)
    args = ap.parse_args()
    roots = [os.path.realpath(args.source_dir), os.path.realpath(args.build_dir)]
    deps = subprocess.run(["ninja", "-C", str(args.build_dir), "-t", "deps"],
                          capture_output=True, text=True, check=True).stdout
    n_headers = sum(1 for _ in parse_ninja_deps(deps))
    if n_headers == 0:
        sys.exit("no dependency records found: was the tree built with Ninja?")
    headers = bad_headers(deps, roots)
    links = bad_links(args.build_dir)
    for obj, h in headers:
        print(f"PyTorch header in {obj}: {h}")
    for elf, lib in links:
        print(f"PyTorch library linked by {elf}: {lib}")
    if headers or links:
        sys.exit(1)
    print(f"ok: {n_headers} header dependencies and every ELF file checked; none from PyTorch")


if __name__ == "__main__":
    main()
