"""Whether a module belongs to Python's standard library (such modules are externed
without being asked)."""
import os
import sys
import sysconfig


def _stdlib_names():
    names = getattr(sys, "stdlib_module_names", None)  # Python >= 3.10
    if names is not None:
        return frozenset(names)
    # Older Pythons: the built-in modules, and what lives in the standard library's folder
    # (site-packages excluded).
    found = set(sys.builtin_module_names)
    stdlib_dir = sysconfig.get_paths()["stdlib"]
    for entry in os.listdir(stdlib_dir):
        if entry in ("site-packages", "dist-packages"):
            continue
        stem, ext = os.path.splitext(entry)
        if ext == ".py" or (not ext and os.path.isdir(os.path.join(stdlib_dir, entry))):
            found.add(stem)
    dynload = os.path.join(stdlib_dir, "lib-dynload")
    if os.path.isdir(dynload):
        found.update(entry.split(".", 1)[0] for entry in os.listdir(dynload))
    return frozenset(found)


_STDLIB = _stdlib_names()


def is_stdlib_module(module: str) -> bool:
    return module.partition(".")[0] in _STDLIB
