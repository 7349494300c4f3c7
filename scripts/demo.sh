#!/usr/bin/env bash
# The main job, from nothing: installs the Debian packages, builds and installs Tessera,
# then builds and runs examples/cpp against the installed package as a user's app would.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build build/release -j "$(nproc)"
cmake --install build/release --prefix build/demo/prefix
cmake -S examples/cpp -B build/demo/app -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/demo/prefix"
cmake --build build/demo/app
build/demo/app/c10_tour
