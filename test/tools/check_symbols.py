#!/usr/bin/python3
"""Fails if a shared library exports a C++ symbol of namespace c10, at, torch or c10d that is not
inside the `tessera` inline namespace, where it could collide with a PyTorch loaded into
the same process. Usage: check_symbols.py LIB [LIB...]
"""
import re
import subprocess
import sys

OUR_NAMESPACES = ("c10", "at", "torch", "c10d")
# "typeinfo for c10::tessera::Error", "vtable for ...", "guard variable for ..." name a
# symbol of the entity after the prefix.
PREFIX = re.compile(r"^(typeinfo name for |typeinfo for |vtable for |VTT for |guard variable for |"
                    r"construction vtable for |TLS init function for |TLS wrapper function for |"
                    r"non-virtual thunk to |virtual thunk to )+")


def unversioned(demangled: str) -> bool:
    name = PREFIX.sub("", demangled)
    for ns in OUR_NAMESPACES:
        if name.startswith(ns + "::") and not name.startswith(ns + "::tessera::"):
            return True
    return False


def exported_symbols(lib: str):
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            yield parts[2]


def main(libs):
    bad, total = [], 0
    for lib in libs:
        for sym in exported_symbols(lib):
            total += 1
            if unversioned(sym):
                bad.append(f"{lib}: {sym}")
    print("\n".join(bad))
    if bad:
        sys.exit(f"{len(bad)} exported symbols outside the tessera ABI namespace")
    if total == 0:
        sys.exit("no exported symbols found")
    print(f"ok: {total} exported symbols, all namespaced")


if __name__ == "__main__":
    main(sys.argv[1:])
