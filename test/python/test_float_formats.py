"""c10's Half and BFloat16 conversions against numpy and torch, over every bit pattern.

float32 -> Half is compared with numpy's astype(np.float16) and float32 -> BFloat16 with
torch's .to(torch.bfloat16). By default on a structured sample of float32 inputs: every
value of the top 19 bits (sign, exponent, the mantissa bits that survive into either
format and the first rounding bits) with each low-13-bit pattern that decides rounding
(zero, one, the halfway points and their neighbours, all ones), about 5 M inputs, plus 4 M
random ones; with TESSERA_EXHAUSTIVE_FLOATS=1 (scripts/fuzz.sh's long run) for all 2^32,
in chunks of 2^24. Comparisons are vectorised. Both oracles round to nearest-even; they differ from c10 only in
which NaN a NaN becomes (numpy keeps payload bits, torch 1.13 returns 0xFFFF whatever
the sign: its vectorised path), so for NaN inputs we require a NaN (of the same sign, for Half) instead of
equal bits.
"""
import ctypes
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

CHUNK_BITS = 24
CHUNK = 1 << CHUNK_BITS
# numpy's cast raises the FP status flag (feraiseexcept, ~60 ns) for every input that
# overflows or underflows float16, about half of all patterns: most of this test's time.
WORKERS = int(os.environ.get("TESSERA_TEST_THREADS", min(2, os.cpu_count() or 1)))

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


EXHAUSTIVE = os.environ.get("TESSERA_EXHAUSTIVE_FLOATS") == "1"
# Low 13 bits that decide rounding: Half keeps 10 mantissa bits (its round bit is bit 12),
# BFloat16 keeps 7 (bit 15, which the 19-bit prefix enumerates); the sticky bits below are
# zero, one, or all ones.
LOW_PATTERNS = np.array([0, 1, 2, 0x0FFF, 0x1000, 0x1001, 0x17FF, 0x1800, 0x1FFE, 0x1FFF], np.uint32)


def float32_chunks():
    """The float32 bit patterns to check, a chunk at a time (module docstring)."""
    if EXHAUSTIVE:
        base = np.arange(CHUNK, dtype=np.uint32)
        for k in range(1 << (32 - CHUNK_BITS)):
            yield base + np.uint32(k << CHUNK_BITS)
        return
    for k in range(8):
        prefixes = np.arange(k << 16, (k + 1) << 16, dtype=np.uint32) << np.uint32(13)
        yield (prefixes[:, None] | LOW_PATTERNS[None, :]).ravel()
    yield np.random.default_rng(0).integers(0, 1 << 32, 1 << 22, dtype=np.uint32)


def for_every_float32(check):
    """Calls check(bits, floats) on each chunk of float32_chunks().

    Chunks run on WORKERS threads: numpy's casts, torch and ctypes calls all release the
    GIL. check returns None, or a message that fails the test.
    """
    def run(bits):
        return check(bits, bits.view(np.float32))

    ex = ThreadPoolExecutor(WORKERS)
    try:
        for problem in ex.map(run, float32_chunks()):
            if problem:
                pytest.fail(problem)
    finally:
        ex.shutdown(cancel_futures=True)


def describe(what, in_bits, ours, ref):
    head = ", ".join(f"{i:#010x}: ours {o:#06x} ref {r:#06x}" for i, o, r in zip(in_bits[:8], ours[:8], ref[:8]))
    return f"{what}: {in_bits.size} mismatches in this chunk, e.g. {head}"


def is_nan32(bits):
    return (bits & 0x7FFFFFFF) > 0x7F800000


def test_float_to_half(hooks):
    def check(bits, floats):
        ours = np.empty(bits.size, dtype=np.uint16)
        call(hooks.tessera_float_to_half, floats, ours)
        with np.errstate(over="ignore", invalid="ignore"):
            ref = floats.astype(np.float16).view(np.uint16)
        bad = np.flatnonzero(ours != ref)
        b, o, r = bits[bad], ours[bad], ref[bad]
        # numpy keeps NaN payload bits, c10 returns 0x7E00 | sign: a same-sign NaN is right.
        excused = is_nan32(b) & ((o & 0x7FFF) > 0x7C00) & ((o >> 15) == (b >> 31))
        if not excused.all():
            return describe("float32 -> Half vs numpy", b[~excused], o[~excused], r[~excused])
        nan = is_nan32(bits)
        if nan.any():  # each NaN gives a NaN of its sign
            o = ours[nan]
            if not (np.all((o & 0x7FFF) > 0x7C00) and np.array_equal(o >> 15, (bits[nan] >> 31).astype(np.uint16))):
                return "float32 NaN -> Half is not a NaN of the same sign"
        return None

    start = time.perf_counter()
    for_every_float32(check)
    print(f"float32 -> Half, {'2^32' if EXHAUSTIVE else 'sampled'} inputs on {WORKERS} thread(s): "
          f"{time.perf_counter() - start:.1f} s")


def test_float_to_bfloat16(hooks):
    def check(bits, floats):
        ours = np.empty(bits.size, dtype=np.uint16)
        call(hooks.tessera_float_to_bfloat16, floats, ours)
        ref = torch.from_numpy(floats).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
        bad = np.flatnonzero(ours != ref)
        b, o, r = bits[bad], ours[bad], ref[bad]
        # torch 1.13 turns every NaN into 0xFFFF; c10 gives 0x7FC0 | sign. Any NaN is right.
        excused = is_nan32(b) & ((o & 0x7FFF) > 0x7F80)
        if not excused.all():
            return describe("float32 -> BFloat16 vs torch", b[~excused], o[~excused], r[~excused])
        if is_nan32(bits).any():
            if not np.all((ours[is_nan32(bits)] & 0x7FFF) > 0x7F80):
                return "float32 NaN -> BFloat16 is not a NaN"
        return None

    start = time.perf_counter()
    for_every_float32(check)
    print(f"float32 -> BFloat16, {'2^32' if EXHAUSTIVE else 'sampled'} inputs on {WORKERS} thread(s): "
          f"{time.perf_counter() - start:.1f} s")


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
