"""tessera.cpu (the caching CPU allocator's statistics and controls) and the thread count.

The allocator is process-wide and other tests use it too, so these tests work with
differences of the counters; behaviour that depends on the environment at start-up
(TESSERA_CPU_ALLOCATOR=plain, the OpenMP wait policy) is checked in a fresh interpreter.
"""
import os
import resource
import subprocess
import sys
import textwrap
import time

import pytest

import tessera

MiB = 1 << 20

TORCH_KEYS = [
    "allocated_bytes.all.current", "allocated_bytes.all.peak", "allocated_bytes.all.allocated",
    "allocated_bytes.all.freed", "reserved_bytes.all.current", "reserved_bytes.all.peak",
    "requested_bytes.all.current", "requested_bytes.all.peak", "allocation.all.current", "allocation.all.peak",
    "segment.all.current", "segment.all.peak", "num_alloc_retries", "num_ooms",
]


def run_python(code, **env_changes):
    """Runs `code` in a fresh interpreter with the build's tessera; returns its stdout."""
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_caching_allocator_is_installed():
    assert tessera.cpu.allocator_backend() == "caching"


def test_memory_stats_has_torchs_keys_sorted():
    stats = tessera.cpu.memory_stats()
    for key in TORCH_KEYS + ["num_cache_hits", "num_cache_misses", "num_empty_cache", "cached_bytes.all.current",
                             "cache_limit_bytes"]:
        assert key in stats, key
        assert isinstance(stats[key], int), key
    assert list(stats) == sorted(stats)
    assert stats["allocated_bytes.all.current"] == tessera.cpu.memory_allocated()
    assert stats["reserved_bytes.all.current"] == tessera.cpu.memory_reserved()
    assert stats["reserved_bytes.all.current"] >= stats["allocated_bytes.all.current"]


def test_a_freed_block_is_reused_without_growing_reserved():
    tessera.cpu.empty_cache()
    allocated0 = tessera.cpu.memory_allocated()
    a = tessera.empty(4 * MiB)  # 16 MiB of float32
    assert tessera.cpu.memory_allocated() == allocated0 + 16 * MiB
    ptr = a.data_ptr()
    del a
    assert tessera.cpu.memory_allocated() == allocated0
    reserved = tessera.cpu.memory_reserved()
    hits = tessera.cpu.memory_stats()["num_cache_hits"]
    b = tessera.empty(4 * MiB)
    assert b.data_ptr() == ptr
    assert tessera.cpu.memory_reserved() == reserved
    assert tessera.cpu.memory_stats()["num_cache_hits"] == hits + 1
    del b


def test_empty_cache_releases_every_cached_block():
    keep = tessera.empty(1000)
    for n in (1000, 100_000, MiB, 8 * MiB):
        tessera.empty(n)
    before = tessera.cpu.memory_stats()
    assert before["cached_bytes.all.current"] > 0
    tessera.cpu.empty_cache()
    after = tessera.cpu.memory_stats()
    assert after["cached_bytes.all.current"] == 0
    assert after["reserved_bytes.all.current"] == after["allocated_bytes.all.current"]
    assert after["num_empty_cache"] == before["num_empty_cache"] + 1
    assert keep.data_ptr() != 0  # live tensors are untouched


def test_peaks_reset():
    big = tessera.empty(8 * MiB)
    del big
    assert tessera.cpu.max_memory_allocated() >= tessera.cpu.memory_allocated() + 32 * MiB
    tessera.cpu.reset_peak_memory_stats()
    assert tessera.cpu.max_memory_allocated() == tessera.cpu.memory_allocated()
    assert tessera.cpu.max_memory_reserved() == tessera.cpu.memory_reserved()
    tessera.cpu.reset_accumulated_memory_stats()
    assert tessera.cpu.memory_stats()["num_cache_hits"] == 0


def test_cache_limit():
    limit = tessera.cpu.get_cache_limit()
    try:
        tessera.cpu.set_cache_limit(0)
        assert tessera.cpu.memory_stats()["cached_bytes.all.current"] == 0
        tessera.empty(4 * MiB)  # freed at once: nothing may be cached
        stats = tessera.cpu.memory_stats()
        assert stats["cached_bytes.all.current"] == 0
        assert stats["reserved_bytes.all.current"] == stats["allocated_bytes.all.current"]
        with pytest.raises(ValueError):
            tessera.cpu.set_cache_limit(-1)
        with pytest.raises(TypeError):
            tessera.cpu.set_cache_limit("1G")
    finally:
        tessera.cpu.set_cache_limit(limit)
    assert tessera.cpu.get_cache_limit() == limit
    out = run_python("import tessera; print(tessera.cpu.get_cache_limit())", TESSERA_CPU_CACHE_LIMIT="256M")
    assert int(out) == 256 * MiB


def test_out_of_memory_names_the_size_and_counts_the_retry():
    before = tessera.cpu.memory_stats()
    with pytest.raises(tessera.OutOfMemoryError, match="not enough memory: you tried to allocate 576460752303423488 bytes"):
        tessera.empty(2 ** 59, dtype=tessera.uint8)
    after = tessera.cpu.memory_stats()
    assert after["num_ooms"] == before["num_ooms"] + 1
    assert after["num_alloc_retries"] == before["num_alloc_retries"] + 1
    assert issubclass(tessera.OutOfMemoryError, RuntimeError)


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def test_a_repeated_large_add_takes_no_new_page_faults():
    n = 16 * MiB  # 64 MiB per tensor
    a = tessera.empty(n)
    b = tessera.empty(n)
    a.fill_(1.0)
    b.fill_(2.0)
    c = a + b  # the first output maps (and faults in) its memory
    del c
    faults = []
    for _ in range(5):
        before = minor_faults()
        c = a + b
        del c
        faults.append(minor_faults() - before)
    assert max(faults) < 100, faults  # a fresh 64 MiB mapping costs 16384 (32 with huge pages)


def test_plain_allocator_opt_out():
    out = run_python("""
        import resource, tessera
        a = tessera.empty(1 << 24); b = tessera.empty(1 << 24); a.fill_(1.0); b.fill_(2.0)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(3):
            c = a + b
            del c
        f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        print(tessera.cpu.allocator_backend(), tessera.cpu.memory_allocated(), (f1 - f0) // 3)
    """, TESSERA_CPU_ALLOCATOR="plain")
    backend, allocated, faults = out.split()
    assert backend == "plain"
    assert allocated == "0"  # nothing goes through the caching allocator
    assert int(faults) >= 16000  # every 64 MiB output is faulted in afresh


def test_set_and_get_num_threads():
    saved = tessera.get_num_threads()
    try:
        for n in (1, 2, 3):
            tessera.set_num_threads(n)
            assert tessera.get_num_threads() == n
            total, threads = tessera._C._parallel_sum(1_000_000, 1000)
            assert total == 1_000_000 * 999_999 // 2
            assert threads == n  # one chunk per thread, each thread a chunk
        tessera.set_num_threads(1)
        assert tessera._C._parallel_sum(1_000_000, 1000)[1] == 1
        with pytest.raises(RuntimeError, match="positive integer"):
            tessera.set_num_threads(0)
        with pytest.raises(TypeError):
            tessera.set_num_threads("2")
    finally:
        tessera.set_num_threads(saved)


def test_default_thread_count_and_environment():
    out = run_python("import tessera; print(tessera.get_num_threads())", OMP_NUM_THREADS="3",
                     TESSERA_NUM_THREADS=None)
    assert int(out) == 3
    out = run_python("import tessera; print(tessera.get_num_threads(), tessera._C._parallel_sum(10**6, 1)[1])",
                     OMP_NUM_THREADS="3", TESSERA_NUM_THREADS="1")
    assert out.split() == ["1", "1"]
    out = run_python("import tessera; print(tessera.get_num_threads())", OMP_NUM_THREADS=None,
                     TESSERA_NUM_THREADS=None)
    assert 1 <= int(out) <= (os.cpu_count() or 1)


def test_idle_workers_do_not_spin():
    # A fresh interpreter without any wait-policy setting: `import tessera` sets it.
    out = run_python("""
        import os, resource, subprocess, sys, time, tessera
        assert tessera.cpu._RUNTIME_ENV == {"GOMP_SPINCOUNT": "3000", "OPENBLAS_THREAD_TIMEOUT": "4"}
        # Set for this process's libgomp / OpenBLAS only: not left for child processes.
        assert "GOMP_SPINCOUNT" not in os.environ and "OPENBLAS_THREAD_TIMEOUT" not in os.environ
        child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('GOMP_SPINCOUNT'))"],
                               capture_output=True, text=True, check=True).stdout.strip()
        assert child == "None", child
        tessera.set_num_threads(2)
        def cpu():
            r = resource.getrusage(resource.RUSAGE_SELF)
            return r.ru_utime + r.ru_stime
        tessera._C._parallel_sum(100000, 1)
        c0, w0 = cpu(), time.perf_counter()
        for _ in range(50):
            tessera._C._parallel_sum(100000, 1)
            time.sleep(0.002)
        print(cpu() - c0, time.perf_counter() - w0)
    """, OMP_WAIT_POLICY=None, GOMP_SPINCOUNT=None, OPENBLAS_THREAD_TIMEOUT=None)
    used, wall = map(float, out.split())
    assert used < 0.25 * wall, (used, wall)
