"""c10's Half and BFloat16 conversions against numpy and torch, over every bit pattern.

float32 -> Half is compared with numpy's astype(np.float16) and float32 -> BFloat16 with
torch's .to(torch.bfloat16), for all 2^32 float32 inputs, in chunks of 2^24 with
vectorised comparisons. Both oracles round to nearest-even; they differ from c10 only in
which NaN a NaN becomes (numpy keeps payload bits, torch 1.13 returns +0x7FC0 whatever
the sign), so for NaN inputs we require a NaN (of the same sign, for Half) instead of
equal bits.
"""
import ctypes
import time

import numpy as np
import pytest
import torch

CHUNK_BITS = 24
CHUNK = 1 << CHUNK_BITS

HOOKS = [
    "tessera_float_to_half", "tessera_half_to_float",
    "tessera_float_to_bfloat16", "tessera_bfloat16_to_float",
    "tessera_float_to_float8_e4m3fn", "tessera_float8_e4m3fn_to_float",
    "tessera_float_to_float8_e5m2", "tessera_float8_e5m2_to_float",
]


@pytest.fixture(scope="module")
def hooks(testhooks):
    for name in HOOKS:
        fn = getattr(testhooks, name)
        fn.restype = None
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return testhooks


def call(fn, src, dst):
    assert src.flags.c_contiguous and dst.flags.c_contiguous and src.size == dst.size
    fn(src.ctypes.data, dst.ctypes.data, src.size)


def float32_chunks():
    """Yields (bits, floats) for every float32 pattern, CHUNK at a time, in reused buffers."""
    base = np.arange(CHUNK, dtype=np.uint32)
    bits = np.empty(CHUNK, dtype=np.uint32)
    for k in range(1 << (32 - CHUNK_BITS)):
        np.add(base, np.uint32(k << CHUNK_BITS), out=bits)
        yield bits, bits.view(np.float32)


def report_mismatches(what, in_bits, ours, ref):
    head = ", ".join(f"{i:#010x}: ours {o:#x} ref {r:#x}" for i, o, r in zip(in_bits[:8], ours[:8], ref[:8]))
    pytest.fail(f"{what}: {in_bits.size} mismatches, e.g. {head}")


def test_float_to_half_every_float32(hooks):
    start = time.perf_counter()
    ours = np.empty(CHUNK, dtype=np.uint16)
    for bits, floats in float32_chunks():
        call(hooks.tessera_float_to_half, floats, ours)
        with np.errstate(over="ignore", invalid="ignore"):
            ref = floats.astype(np.float16).view(np.uint16)
        bad = np.flatnonzero(ours != ref)
        if bad.size:
            b, o = bits[bad], ours[bad]
            nan_in = (b & 0x7FFFFFFF) > 0x7F800000
            same_sign_nan = ((o & 0x7FFF) > 0x7C00) & ((o >> 15) == (b >> 31))
            really_bad = ~(nan_in & same_sign_nan)
            if really_bad.any():
                report_mismatches("float32 -> Half vs numpy", b[really_bad], o[really_bad], ref[bad][really_bad])
        # NaN inputs numpy happens to agree with still need the sign kept: covered above
        # only for mismatches, so check the NaN rows of ours directly.
        nan_rows = (bits & 0x7FFFFFFF) > 0x7F800000
        if nan_rows.any():
            o = ours[nan_rows]
            assert np.all((o & 0x7FFF) > 0x7C00) and np.array_equal(o >> 15, (bits[nan_rows] >> 31).astype(np.uint16))
    print(f"float32 -> Half, 2^32 inputs: {time.perf_counter() - start:.1f} s")


def test_float_to_bfloat16_every_float32(hooks):
    start = time.perf_counter()
    ours = np.empty(CHUNK, dtype=np.uint16)
    for bits, floats in float32_chunks():
        call(hooks.tessera_float_to_bfloat16, floats, ours)
        ref = torch.from_numpy(floats).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
        bad = np.flatnonzero(ours != ref)
        if bad.size:
            b, o = bits[bad], ours[bad]
            nan_in = (b & 0x7FFFFFFF) > 0x7F800000
            nan_out = (o & 0x7FFF) > 0x7F80
            really_bad = ~(nan_in & nan_out)
            if really_bad.any():
                report_mismatches("float32 -> BFloat16 vs torch", b[really_bad], o[really_bad], ref[bad][really_bad])
        nan_rows = (bits & 0x7FFFFFFF) > 0x7F800000
        if nan_rows.any():
            assert np.all((ours[nan_rows] & 0x7FFF) > 0x7F80)
    print(f"float32 -> BFloat16, 2^32 inputs: {time.perf_counter() - start:.1f} s")


def test_half_to_float_every_pattern(hooks):
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    ours = np.empty(halves.size, dtype=np.float32)
    call(hooks.tessera_half_to_float, halves, ours)
    ref = halves.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(ours.view(np.uint32), ref.view(np.uint32))  # NaN payloads too


def test_bfloat16_to_float_every_pattern(hooks):
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    ours = np.empty(patterns.size, dtype=np.float32)
    call(hooks.tessera_bfloat16_to_float, patterns, ours)
    ref = torch.from_numpy(patterns.view(np.int16)).view(torch.bfloat16).to(torch.float32).numpy()
    np.testing.assert_array_equal(ours.view(np.uint32), ref.view(np.uint32))


def test_float8_e5m2_decodes_as_top_byte_of_half(hooks):
    codes = np.arange(256, dtype=np.uint8)
    ours = np.empty(256, dtype=np.float32)
    call(hooks.tessera_float8_e5m2_to_float, codes, ours)
    ref = (codes.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(ours.view(np.uint32), ref.view(np.uint32))


def test_float8_e4m3fn_hooks_roundtrip(hooks):
    codes = np.arange(256, dtype=np.uint8)
    floats = np.empty(256, dtype=np.float32)
    call(hooks.tessera_float8_e4m3fn_to_float, codes, floats)
    assert floats[0x38] == 1.0 and floats[0x7E] == 448.0 and np.isnan(floats[0x7F]) and np.isnan(floats[0xFF])
    assert np.isnan(floats).sum() == 2
    back = np.empty(256, dtype=np.uint8)
    call(hooks.tessera_float_to_float8_e4m3fn, floats, back)
    np.testing.assert_array_equal(back, codes)
    e5 = np.empty(256, dtype=np.uint8)
    call(hooks.tessera_float_to_float8_e5m2, np.array([1.0, 57344.0, 61440.0, -np.inf], np.float32).repeat(64), e5)
    np.testing.assert_array_equal(e5[::64], np.array([0x3C, 0x7B, 0x7C, 0xFC], np.uint8))
