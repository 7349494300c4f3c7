#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds examples/cpp against it the way a
# user's project would (find_package(Tessera CONFIG)), then runs the example. The app's
# compiler must read our headers from the prefix, never from the source tree.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
work="$build/install-check"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/libtessera_c10.so"
test -f "$work/prefix/include/c10/c10.h"
test -f "$work/prefix/lib/cmake/Tessera/TesseraConfig.cmake"

cmake -S "$src/examples/cpp" -B "$work/app" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/app" >/dev/null
if ninja -C "$work/app" -t deps | grep -F "$src/c10/"; then
  echo "the example read headers from the source tree instead of the installed prefix" >&2
  exit 1
fi
ninja -C "$work/app" -t deps | grep -q -F "$work/prefix/include/c10/c10.h"
output=$("$work/app/c10_tour")
echo "$output"
grep -q "promote(Int, Float) = Float" <<<"$output"
echo "ok: installed package builds and runs examples/cpp"
