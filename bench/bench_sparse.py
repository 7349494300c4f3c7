"""Sparse workloads of issue 25, torch 1.13 and tessera alternating in one run at the same
thread count, with scipy.sparse beside them where it has the operation:

    /usr/bin/python3 bench/bench_sparse.py [--threads 2] [--rounds 3] [--full] [--only TEXT]

The default sizes are scaled down so the run takes about a minute on 2 cores; --full uses
the issue's sizes (a 100k x 100k matrix at 0.1% and 1% density, 10M-entry coalesce).
Prints a Markdown table of medians and the ratio tessera / torch (below 1: tessera is
faster). The embedding row is one training step (zero_grad, lookup of 4096 indices,
backward into a sparse grad, SGD step) of nn.Embedding(sparse=True): scipy has no such op.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import scipy.sparse
import torch

sys.path.insert(0, os.path.join(os.environ.get("TESSERA_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..",
                                                                                 "build", "release")), "python"))
import tessera  # noqa: E402


def seconds(fn, min_time=0.2):
    fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time or calls == 0:
        fn()
        calls += 1
    return (time.perf_counter() - start) / calls


def random_coo(n, nnz, seed, duplicates=False):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, nnz, dtype=np.int64)
    cols = rng.integers(0, n, nnz, dtype=np.int64)
    if not duplicates:
        keys = np.unique(rows * n + cols)
        rows, cols = keys // n, keys % n
    values = rng.standard_normal(rows.shape[0]).astype(np.float32)
    return rows, cols, values


def cases(full):
    n = 100_000 if full else 20_000
    out = []
    for density in (0.001, 0.01):
        rows, cols, values = random_coo(n, int(n * n * density), 1)
        dense = np.random.default_rng(2).standard_normal((n, 64)).astype(np.float32)
        csr = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(n, n))

        def make(lib, rows=rows, cols=cols, values=values, dense=dense, n=n):
            idx = lib.from_numpy(np.stack([rows, cols]))
            s = lib.sparse_coo_tensor(idx, lib.from_numpy(values), (n, n)).to_sparse_csr()
            return s, lib.from_numpy(dense)
        out.append((f"CSR x dense [{n}, 64], {n}^2 at {density:.1%}", make, lambda lib, s, d: lib.mm(s, d),
                    (lambda csr=csr, d=dense: csr @ d)))
    m = 10_000_000 if full else 2_000_000
    side = 1 << 14
    rows, cols, values = random_coo(side, m, 3, duplicates=True)

    def make_coo(lib, rows=rows, cols=cols, values=values):
        return (lib.sparse_coo_tensor(lib.from_numpy(np.stack([rows, cols])), lib.from_numpy(values), (side, side)),)
    coo_scipy = scipy.sparse.coo_matrix((values, (rows, cols)), shape=(side, side))
    out.append((f"COO coalesce, {m} entries", make_coo, lambda lib, s: s.coalesce(),
                lambda c=coo_scipy: c.tocsr()))
    dense = np.random.default_rng(4).standard_normal((4096, 4096)).astype(np.float32)
    dense[np.random.default_rng(5).random((4096, 4096)) < 0.9] = 0

    def make_dense(lib, d=dense):
        return (lib.from_numpy(d),)

    def make_sparse(lib, d=dense):
        return (lib.from_numpy(d).to_sparse(),)
    out.append(("to_sparse of 4096^2 (10% nonzero)", make_dense, lambda lib, x: x.to_sparse(),
                lambda d=dense: scipy.sparse.coo_matrix(d)))
    out.append(("to_dense of that", make_sparse, lambda lib, s: s.to_dense(),
                lambda c=scipy.sparse.coo_matrix(dense): c.toarray()))
    rows_e = 1_000_000 if full else 200_000
    weight = np.random.default_rng(6).standard_normal((rows_e, 64)).astype(np.float32)
    lookups = np.random.default_rng(7).integers(0, rows_e, 4096, dtype=np.int64)

    def make_embedding(lib, w=weight, idx=lookups):
        emb = lib.nn.Embedding(rows_e, 64, sparse=True, _weight=lib.from_numpy(w.copy()))
        return emb, lib.optim.SGD(emb.parameters(), lr=0.01), lib.from_numpy(idx)

    def embedding_step(lib, emb, opt, idx):
        opt.zero_grad()
        emb(idx).sum().backward()
        opt.step()
    out.append((f"nn.Embedding({rows_e} x 64, sparse=True) + SGD step, 4096 lookups", make_embedding,
                embedding_step, None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--only", default="", help="run the workloads whose name contains this text")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tessera.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, scipy {scipy.__version__}, {args.threads} threads each (scipy: 1), "
          f"median of {args.rounds} alternating rounds")
    print("| workload | torch ms | tessera ms | scipy ms | tessera / torch | tessera / scipy |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, make, op, scipy_op in cases(args.full):
        if args.only not in name:
            continue
        t_args, m_args = make(torch), make(tessera)
        times = {"torch": [], "tessera": [], "scipy": []}
        for _ in range(args.rounds):
            times["torch"].append(seconds(lambda: op(torch, *t_args)))
            times["tessera"].append(seconds(lambda: op(tessera, *m_args)))
            if scipy_op is not None:
                times["scipy"].append(seconds(scipy_op))
        t, m = (statistics.median(times[k]) * 1e3 for k in ("torch", "tessera"))
        if scipy_op is None:
            print(f"| {name} | {t:.2f} | {m:.2f} | - | {m / t:.2f} | - |", flush=True)
            continue
        s = statistics.median(times["scipy"]) * 1e3
        print(f"| {name} | {t:.2f} | {m:.2f} | {s:.2f} | {m / t:.2f} | {m / s:.2f} |", flush=True)


if __name__ == "__main__":
    main()
