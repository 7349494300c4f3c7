#!/usr/bin/env bash
# `pip install --no-build-isolation .` into a fresh venv (--system-site-packages, so
# Debian's numpy is visible) from an existing build directory, then imports the installed
# package from outside the source tree and trains one step with it: the wheel must carry
# the extension and its libraries, found through $ORIGIN, not through the build tree.
# Usage: check_wheel.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
[[ -n "${TESSERA_TRACE_SCRIPTS:-}" ]] && set -x
build=$(realpath "$1"); src=$(realpath "$2")
work="$build/wheel-check"
rm -rf "$work"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
# A copy of the sources (without build trees): pip builds in the tree it is given, and
# several builds may run from one checkout.
mkdir -p "$work/src"
tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$work/src" -xf -
TESSERA_BUILD_DIR="$build" "$work/venv/bin/pip" install --no-build-isolation --no-index --quiet "$work/src"
cd "$work"
env -u PYTHONPATH "$work/venv/bin/python" - <<'PY'
import pathlib, sys
import tessera as torch
where = pathlib.Path(torch.__file__).resolve()
assert "site-packages" in where.parts, f"tessera imported from {where}, not the venv"
ext = pathlib.Path(torch._C.__file__).resolve()
assert ext.parent == where.parent, ext
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.1)
x, y = torch.randn(32, 4), torch.randn(32, 1)
losses = []
for _ in range(20):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
assert losses[-1] < losses[0], losses
print(f"ok: tessera {torch.__version__} installed at {where.parent}, loss {losses[0]:.3f} -> {losses[-1]:.3f}")
PY
