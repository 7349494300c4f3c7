#!/usr/bin/env bash
# Runs every test from nothing: installs the Debian packages, then configures, builds and
# tests twice: a normal build (warnings as errors, CUDA compiled when nvcc is present; the
# Python op tests run at the CPU's best ISA and again at the default one), and an
# AddressSanitizer + UndefinedBehaviorSanitizer build (default ISA, no CUDA, no benchmarks)
# that stops at the first error, running the C++ tests and the Python op tests (the
# interpreter with the ASan runtime preloaded: test/python/CMakeLists.txt). Between them,
# short fixed-seed fuzz runs (scripts/fuzz.sh --short). Last, a ThreadSanitizer build of
# only what the concurrency tests need, running them (test/cpp/concurrency, the threaded
# tests of the other programs, DataLoader workers and Python threads).
#   scripts/test.sh          everything (.ci/run calls exactly this)
#   scripts/test.sh --quick  the normal build and its quick tier (ctest label "quick": the
#                            fast tests of every component, sampled where a file is slow;
#                            a few minutes after the build)
#   scripts/test.sh --tsan   the ThreadSanitizer job alone
set -euo pipefail
mode=all
case "${1:-}" in
  --tsan) mode=tsan ;;
  --quick) mode=quick ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick | --tsan]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere (CI) reuses a
# developer's cache.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
# Three builds (normal, ASan, TSan) and the fuzzers share the cache; ccache's default 5 GB
# would evict one to hold the next, and every CI run would then be a cold one.
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"

scripts/install-deps.sh

step() { printf '\n=== %s (%s)\n' "$1" "$(date +%T)"; }

if [[ $mode != tsan ]]; then
  step "normal build"
  cmake -S . -B build/release -G Ninja -DTESSERA_WERROR=ON -DPython3_EXECUTABLE=/usr/bin/python3
  cmake --build build/release -j "$jobs"
fi
if [[ $mode == quick ]]; then
  step "quick tests"
  ctest --test-dir build/release --output-on-failure -j "$jobs" -L quick
  step "quick tests passed in $root"
  exit 0
fi

if [[ $mode == all ]]; then
  step "normal tests"
  # Every test, less the quick tier's sampled copies of the slow files (label quick_only).
  ctest --test-dir build/release --output-on-failure -j "$jobs" -LE quick_only

  step "fuzzing (libFuzzer targets; short, fixed seeds)"
  scripts/fuzz.sh --short

  step "sanitizer build"
  cmake -S . -B build/asan -G Ninja -DTESSERA_WERROR=ON -DTESSERA_SANITIZE="address;undefined" \
        -DTESSERA_CUDA=OFF -DTESSERA_BENCH=OFF -DTESSERA_PYTHON=ON -DCMAKE_BUILD_TYPE=Debug \
        -DPython3_EXECUTABLE=/usr/bin/python3
  cmake --build build/asan -j "$jobs"
  step "sanitizer tests"
  ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:allocator_may_return_null=1:detect_leaks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build/asan --output-on-failure -j "$jobs"
fi

step "thread sanitizer build (concurrency tests only)"
cmake -S . -B build/tsan -G Ninja -DTESSERA_WERROR=ON -DTESSERA_SANITIZE=thread -DTESSERA_CUDA=OFF \
      -DTESSERA_BENCH=OFF -DTESSERA_PYTHON=ON -DCMAKE_BUILD_TYPE=Debug -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build build/tsan -j "$jobs" --target concurrency_tests c10_tests aten_tests autograd_tests _C
step "thread sanitizer tests"
TSAN_OPTIONS="halt_on_error=1:exitcode=66:suppressions=$root/test/tsan.supp" \
  ctest --test-dir build/tsan --output-on-failure -j "$jobs"
step "all tests passed in $root"
