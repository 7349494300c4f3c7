#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds examples/cpp against it the way a
# user's project would (find_package(Tessera CONFIG)), then runs the example. The app's
# compiler must read our headers from the prefix, never from the source tree.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
[[ -n "${TESSERA_TRACE_SCRIPTS:-}" ]] && set -x
build=$(realpath "$1"); src=$(realpath "$2")
work="$build/install-check"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/libtessera_c10.so"
test -f "$work/prefix/include/c10/c10.h"
test -f "$work/prefix/include/csrc/extension.h"  # (what a Python extension module includes)
test -f "$work/prefix/lib/cmake/Tessera/TesseraConfig.cmake"

cmake -S "$src/examples/cpp" -B "$work/app" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/app" >/dev/null
deps=$(ninja -C "$work/app" -t deps)  # captured: grep -q on a pipe would SIGPIPE ninja
if grep -F -e "$src/c10/" -e "$src/aten/" -e "$src/autograd/" <<<"$deps"; then
  echo "the examples read headers from the source tree instead of the installed prefix" >&2
  exit 1
fi
grep -q -F "$work/prefix/include/c10/c10.h" <<<"$deps"
grep -q -F "$work/prefix/include/aten/ops/Functions.h" <<<"$deps"
grep -q -F "$work/prefix/include/autograd/custom_function.h" <<<"$deps"
output=$("$work/app/c10_tour")
echo "$output"
grep -q "promote(Int, Float) = Float" <<<"$output"
output=$("$work/app/ops_app")
echo "$output"
grep -q "example::axpy: 22" <<<"$output"
output=$("$work/app/grad_app")
echo "$output"
grep -q "grad of sum(3x^2) at x=1: 6 6 6" <<<"$output"
output=$("$work/app/autograd_app")
echo "$output"
grep -q "autograd fit: w=3 b=-1" <<<"$output"
echo "ok: installed package builds and runs examples/cpp"
