"""The layering of docs/architecture.md, checked on the sources: each layer includes only
itself and the layers below it (c10 <- aten <- autograd <- distributed <- csrc), and csrc/,
distributed/ and autograd/
reach aten through its public headers (aten/core, aten/ops, ...), never aten/native/, whose
headers are kernel internals that may change with any kernel."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

# layer -> include prefixes it must not use
FORBIDDEN = {
    "c10": ("aten/", "autograd/", "distributed/", "csrc/", "python_api.h"),
    "aten": ("autograd/", "distributed/", "csrc/", "python_api.h"),
    "autograd": ("aten/native/", "csrc/", "python_api.h", "distributed/"),
    "distributed": ("aten/native/", "csrc/", "python_api.h"),
    "csrc": ("aten/native/",),
}


def includes(layer):
    for path in sorted((ROOT / layer).rglob("*")):
        if path.suffix in (".h", ".cpp", ".cu", ".cuh", ".inc"):
            for name in INCLUDE.findall(path.read_text(errors="replace")):
                yield path.relative_to(ROOT), name


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_includes_only_what_it_may(layer):
    bad = [f"{path}: {name}" for path, name in includes(layer) if name.startswith(FORBIDDEN[layer])]
    assert not bad, "\n".join(bad)


def test_the_check_sees_includes():
    # the scan must find aten's own native includes, or it proves nothing
    assert any(name.startswith("aten/native/") for _, name in includes("aten"))
    assert any(name.startswith("aten/core/") for _, name in includes("csrc"))
