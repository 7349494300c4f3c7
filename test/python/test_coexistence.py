"""Tessera's libraries load into a process that already runs PyTorch, and neither
disturbs the other: our symbols live in the `tessera` inline namespace, and our library
names (libtessera_c10.so) differ from torch's (libc10.so)."""
import ctypes
import os

import torch


def loaded_libraries():
    with open(f"/proc/{os.getpid()}/maps") as f:
        return {line.split()[-1] for line in f if line.rstrip().endswith(".so") or ".so." in line}


def test_torch_and_tessera_in_one_process(c10_lib, testhooks):
    # torch is imported and working, and both c10 libraries are mapped at once.
    libs = {os.path.basename(p) for p in loaded_libraries()}
    assert any(name.startswith("libc10.so") for name in libs), "torch's libc10 should be loaded"
    assert any(name.startswith("libtessera_c10.so") for name in libs)
    assert torch.promote_types(torch.uint8, torch.int8) == torch.int16

    # A c10 exception thrown and caught across our library boundary keeps its type, so
    # typeinfo resolves to our classes and not to torch's same-named ones.
    buf = ctypes.create_string_buffer(128)
    assert testhooks.tessera_test_error_roundtrip(buf, len(buf)) == 1
    assert buf.value.decode() == "buffer of 128 bytes"

    # torch still works after our libraries were loaded with RTLD_GLOBAL.
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(x.t().contiguous().t(), x)
