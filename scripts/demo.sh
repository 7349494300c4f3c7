#!/usr/bin/env bash
# The main job, from nothing: installs the Debian packages, builds what the demo needs
# (the Python extension and the libraries under it) and trains a small CNN on
# scikit-learn's handwritten digits with `import tessera as torch` (examples/train_digits.py:
# DataLoader, Adam, OneCycleLR; PNG of the curves and a checkpoint in build/digits), timed
# against real torch running the same script. Then installs the C++ package and builds and
# runs examples/cpp against it as a user's app would (an autograd linear fit among them).
# Later runs rebuild nothing and take well under a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
echo "demo: building the extension (the first time takes a while on few cores)"
cmake --build build/release -j "$(nproc)" --target _C
PYTHONPATH=build/release/python /usr/bin/python3 examples/train_digits.py --out build/digits --compare-torch "$@"

cmake --build build/release -j "$(nproc)" --target c10 aten autograd
cmake --install build/release --prefix build/demo/prefix >/dev/null
cmake -S examples/cpp -B build/demo/app -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/demo/prefix" >/dev/null
cmake --build build/demo/app >/dev/null
build/demo/app/c10_tour | tail -3
build/demo/app/autograd_app
