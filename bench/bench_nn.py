#!/usr/bin/python3
"""nn operators side by side with torch (issue 8), alternating torch / tessera calls in one
run at the same thread count (bench_common.THREADS); the median of each, and the ratio
tessera / torch (target: at most 1.0).

  PYTHONPATH=build/python /usr/bin/python3 bench/bench_nn.py [rounds] [name filter...]
"""
import sys

import torch

import tessera
from bench_common import header, run_case, set_threads


def _input(lib, *shape, requires_grad=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    data = torch.randn(*shape, generator=g)
    t = data if lib is torch else tessera.from_numpy(data.numpy())
    return t.clone().requires_grad_(requires_grad)


def _forward_backward(f):
    def run(lib, x, g):
        x.grad = None
        f(lib, x).backward(g)
    return run


GELU_SHAPE = (4096, 1024)


def _gelu_setup(requires_grad):
    return lambda lib: (_input(lib, *GELU_SHAPE, requires_grad=requires_grad), _input(lib, *GELU_SHAPE, seed=1))


def _classes(lib, n, classes):
    t = torch.randint(0, classes, (n,), generator=torch.Generator().manual_seed(2))
    return t if lib is torch else tessera.from_numpy(t.numpy())


def _ce_setup(requires_grad):
    return lambda lib: (_input(lib, 4096, 1000, requires_grad=requires_grad), _classes(lib, 4096, 1000))


def _ce_fwd_bwd(lib, x, t):
    x.grad = None
    lib.nn.functional.cross_entropy(x, t).backward()


def _pool_setup(lib):
    return (_input(lib, 32, 64, 112, 112),)


def _pool3d_setup(requires_grad):
    return lambda lib: (_input(lib, 8, 32, 16, 56, 56, requires_grad=requires_grad),)


def _pool3d_fwd_bwd(pool):
    def run(lib, x):
        x.grad = None
        pool(lib.nn.functional, x).sum().backward()
    return run


def _conv3d_setup(requires_grad, transposed=False):
    def setup(lib):
        w_shape = (16, 32, 3, 3, 3) if transposed else (32, 16, 3, 3, 3)
        return (_input(lib, 4, 16, 16, 28, 28, requires_grad=requires_grad),
                _input(lib, *w_shape, seed=1, requires_grad=requires_grad))
    return setup


def _conv3d_fwd_bwd(conv):
    def run(lib, x, w):
        x.grad = w.grad = None
        conv(lib.nn.functional, x, w).sum().backward()
    return run


def _ln_setup(requires_grad):
    def setup(lib):
        w = _input(lib, 1024, seed=3, requires_grad=requires_grad)
        b = _input(lib, 1024, seed=4, requires_grad=requires_grad)
        return _input(lib, 4096, 1024, requires_grad=requires_grad), w, b, _input(lib, 4096, 1024, seed=5)
    return setup


def _ln_fwd_bwd(lib, x, w, b, g):
    for t in (x, w, b):
        t.grad = None
    lib.nn.functional.layer_norm(x, (1024,), w, b).backward(g)


def _conv_setup(n, cin, cout, size, requires_grad):
    def setup(lib):
        x = _input(lib, n, cin, size, size, requires_grad=requires_grad)
        w = _input(lib, cout, cin, 3, 3, seed=6, requires_grad=requires_grad)
        b = _input(lib, cout, seed=7, requires_grad=requires_grad)
        return x, w, b
    return setup


def _conv(padding):
    return lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, padding=padding)


def _conv_fwd_bwd(padding):
    def run(lib, x, w, b):
        x.grad = w.grad = b.grad = None
        lib.nn.functional.conv2d(x, w, b, padding=padding).sum().backward()
    return run


def _bn_setup(lib):
    return (_input(lib, 32, 64, 56, 56), _input(lib, 64, seed=3), _input(lib, 64, seed=4),
            lib.zeros(64), lib.ones(64))


def _bn_grad_setup(lib):
    x, w, b, rm, rv = _bn_setup(lib)
    return x.requires_grad_(), w.requires_grad_(), b.requires_grad_(), rm, rv


def _bn_fwd_bwd(lib, x, w, b, rm, rv):
    x.grad = w.grad = b.grad = None
    lib.nn.functional.batch_norm(x, rm, rv, w, b, training=True).sum().backward()


def _attention(lib, q, k, v):
    # torch 1.13 has no scaled_dot_product_attention: its figure is the composite in torch ops
    if lib is torch:
        return ((q @ k.transpose(-2, -1)) * (q.size(-1) ** -0.5)).softmax(-1) @ v
    return lib.nn.functional.scaled_dot_product_attention(q, k, v)


def _sdpa_setup(requires_grad):
    def setup(lib):
        return tuple(_input(lib, 1, 8, 1024, 64, seed=s, requires_grad=requires_grad) for s in (1, 2, 3))
    return setup


def _sdpa_fwd_bwd(lib, q, k, v):
    for t in (q, k, v):
        t.grad = None
    _attention(lib, q, k, v).sum().backward()


PEAK_RSS = """
import importlib, sys
lib = importlib.import_module(sys.argv[1])  # only the library measured is loaded
lib.set_num_threads(2)
L = int(sys.argv[2])
q, k, v = (lib.randn(1, 8, L, 64, requires_grad=True) for _ in range(3))
if sys.argv[1] == "torch":
    out = ((q @ k.transpose(-2, -1)) * 0.125).softmax(-1) @ v
else:
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v)
out.sum().backward()
# VmHWM: the high-water mark of this program's memory (ru_maxrss would also count the
# benchmark process this one was forked from, before exec)
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) // 1024)
"""


def attention_memory():
    """Peak RSS (MB, the process's whole) of attention forward + backward, 8 heads x 64, by
    sequence length, each run in a fresh process that loads only the library measured."""
    import subprocess
    rows = []
    for L in (1024, 4096, 8192):
        row = [L]
        for name in ("torch", "tessera"):
            if name == "torch" and L > 4096:
                row.append(None)  # the L x L composite at 8k needs several GB
                continue
            out = subprocess.run([sys.executable, "-c", PEAK_RSS, name, str(L)], capture_output=True, text=True,
                                 check=True)
            row.append(int(out.stdout.strip().splitlines()[-1]))
        rows.append(row)
    print("\nscaled_dot_product_attention fwd+bwd, 8 heads x 64: peak RSS of the process (MB)")
    print("| tokens | torch composite | tessera fused |")
    print("|-------:|----------------:|--------------:|")
    for L, t, s in rows:
        print(f"| {L:6} | {'-' if t is None else t:>15} | {s:>13} |")


def _rows_setup(requires_grad):
    return lambda lib: (_input(lib, 4096, 1024, requires_grad=requires_grad),)


def _lrn_setup(lib):
    return (_input(lib, 32, 64, 28, 28, requires_grad=True),)


def _lrn_fwd_bwd(lib, x):
    x.grad = None
    lib.nn.functional.local_response_norm(x, 5).sum().backward()


def _normalize_fwd_bwd(lib, x):
    x.grad = None
    lib.nn.functional.normalize(x, dim=1).sum().backward()


def _addr_setup(lib):
    return (_input(lib, 1024, 1024), _input(lib, 1024, seed=1), _input(lib, 1024, seed=2))


def _baddbmm_setup(lib):
    return (_input(lib, 32, 128, 128), _input(lib, 32, 128, 64, seed=1), _input(lib, 32, 64, 128, seed=2))


def _scatter_reduce_setup(lib):
    g = torch.Generator().manual_seed(3)
    index = torch.randint(0, 4096, (65536, 64), generator=g)
    return (_input(lib, 4096, 64), index if lib is torch else tessera.from_numpy(index.numpy()),
            _input(lib, 65536, 64, seed=4))


CASES = [
    # (name, setup(lib) -> args, op(lib, *args))
    ("conv2d 32x3->64 32x32 k3p1", _conv_setup(32, 3, 64, 32, False), _conv(1)),
    ("conv2d fwd+bwd 32x3->64 32x32 k3p1", _conv_setup(32, 3, 64, 32, True), _conv_fwd_bwd(1)),
    ("conv2d 32x64->64 56x56 k3", _conv_setup(32, 64, 64, 56, False), _conv(0)),
    ("conv2d fwd+bwd 32x64->64 56x56 k3", _conv_setup(32, 64, 64, 56, True), _conv_fwd_bwd(0)),
    ("gelu 4096x1024", _gelu_setup(False), lambda lib, x, g: lib.nn.functional.gelu(x)),
    ("gelu tanh 4096x1024", _gelu_setup(False), lambda lib, x, g: lib.nn.functional.gelu(x, approximate="tanh")),
    ("gelu fwd+bwd 4096x1024", _gelu_setup(True), _forward_backward(lambda lib, x: lib.nn.functional.gelu(x))),
    ("silu fwd+bwd 4096x1024", _gelu_setup(True), _forward_backward(lambda lib, x: lib.nn.functional.silu(x))),
    ("relu fwd+bwd 4096x1024", _gelu_setup(True), _forward_backward(lambda lib, x: lib.nn.functional.relu(x))),
    ("max_pool2d 32x64x112x112 k3s2p1", _pool_setup,
     lambda lib, x: lib.nn.functional.max_pool2d(x, 3, stride=2, padding=1)),
    ("max_pool3d 8x32x16x56x56 k2", _pool3d_setup(False), lambda lib, x: lib.nn.functional.max_pool3d(x, 2)),
    ("max_pool3d fwd+bwd k3s2p1", _pool3d_setup(True),
     _pool3d_fwd_bwd(lambda F, x: F.max_pool3d(x, 3, stride=2, padding=1))),
    ("avg_pool3d 8x32x16x56x56 k2", _pool3d_setup(False), lambda lib, x: lib.nn.functional.avg_pool3d(x, 2)),
    ("avg_pool3d fwd+bwd k3s2p1", _pool3d_setup(True),
     _pool3d_fwd_bwd(lambda F, x: F.avg_pool3d(x, 3, stride=2, padding=1))),
    ("adaptive_avg_pool3d -> 1", _pool3d_setup(False), lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 1)),
    ("conv3d fwd+bwd 4x16->32 16x28x28", _conv3d_setup(True),
     _conv3d_fwd_bwd(lambda F, x, w: F.conv3d(x, w, padding=1))),
    ("conv_transpose3d fwd+bwd 16->32 s2", _conv3d_setup(True, transposed=True),
     _conv3d_fwd_bwd(lambda F, x, w: F.conv_transpose3d(x, w, stride=2))),
    ("normalize 4096x1024", _rows_setup(False), lambda lib, x: lib.nn.functional.normalize(x, dim=1)),
    ("normalize fwd+bwd 4096x1024", _rows_setup(True), _normalize_fwd_bwd),
    ("renorm 4096x1024", _rows_setup(False), lambda lib, x: lib.renorm(x, 2, 0, 1.0)),
    ("local_response_norm fwd+bwd", _lrn_setup, _lrn_fwd_bwd),
    ("addr 1024x1024", _addr_setup, lambda lib, a, u, v: lib.addr(a, u, v)),
    ("baddbmm 32x128x64x128", _baddbmm_setup, lambda lib, a, b, c: lib.baddbmm(a, b, c)),
    ("scatter_reduce amax 64k->4k", _scatter_reduce_setup,
     lambda lib, a, i, s: a.scatter_reduce(0, i, s, "amax")),
    ("layer_norm 4096x1024", _ln_setup(False),
     lambda lib, x, w, b, g: lib.nn.functional.layer_norm(x, (1024,), w, b)),
    ("layer_norm fwd+bwd 4096x1024", _ln_setup(True), _ln_fwd_bwd),
    ("batch_norm train 32x64x56x56", _bn_setup,
     lambda lib, x, w, b, rm, rv: lib.nn.functional.batch_norm(x, rm, rv, w, b, training=True)),
    ("batch_norm fwd+bwd 32x64x56x56", _bn_grad_setup, _bn_fwd_bwd),
    ("cross_entropy 4096x1000", _ce_setup(False), lambda lib, x, t: lib.nn.functional.cross_entropy(x, t)),
    ("cross_entropy fwd+bwd 4096x1000", _ce_setup(True), _ce_fwd_bwd),
    ("sdpa 8x1024x64", _sdpa_setup(False), _attention),
    ("sdpa fwd+bwd 8x1024x64", _sdpa_setup(True), _sdpa_fwd_bwd),
]


def main():
    args = sys.argv[1:]
    rounds = int(args.pop(0)) if args and args[0].isdigit() else 20
    set_threads()
    print(header(rounds))
    print(f"| {'workload':30} | {'torch ms':>8} | {'tessera ms':>10} | {'ratio':>5} |")
    print(f"|{'-' * 32}|{'-' * 9}:|{'-' * 11}:|{'-' * 6}:|")
    for name, setup, op in CASES:
        if args and not any(a in name for a in args):
            continue
        t_torch, t_tessera = run_case(setup, op, rounds)
        print(f"| {name:30} | {t_torch * 1e3:8.2f} | {t_tessera * 1e3:10.2f} | {t_tessera / t_torch:5.2f} |", flush=True)
    if not args or any(a in "sdpa memory" for a in args):
        attention_memory()


if __name__ == "__main__":
    main()
