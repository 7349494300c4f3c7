#!/usr/bin/env bash
# Installs every Debian package Tessera needs to build, test and benchmark.
# Idempotent: when everything is present it returns after one dpkg query.
# Recommends are never installed: python3-torch recommends libtorch-dev, whose
# c10/, ATen/ and torch/ headers must never reach our include paths.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config git valgrind
  libfmt-dev libgtest-dev libbenchmark-dev
  libopenblas-dev libdnnl-dev libgloo-dev libopenmpi-dev openmpi-bin
  pybind11-dev python3-dev python3-venv python3-setuptools python3-wheel
  python3-numpy python3-pytest python3-yaml python3-torch
  python3-sklearn python3-tqdm python3-matplotlib python3-torchvision
  python3-hypothesis python3-onnx clang libclang-rt-14-dev libfuzzer-14-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# PyTorch's own development headers must not be on the system include path.
if dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "install-deps: libtorch-dev is installed; its c10/ATen/torch headers would shadow ours." >&2
  echo "install-deps: remove it with: apt-get remove -y libtorch-dev" >&2
  exit 1
fi
echo "install-deps: all ${#packages[@]} packages present"
