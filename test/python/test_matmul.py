"""The matmul family beyond the OpInfo samples, against torch 1.13: matmul's rank
combinations and batch broadcasting, einsum's equation forms, transposed / strided /
column-major operands (and that a.t() @ b allocates nothing but its result), empty
products, beta = 0 ignoring NaN, every dtype, BLAS thread handling, and torch's errors."""
import ctypes
import ctypes.util

import pytest
import torch

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

DTYPES = ["float32", "float64", "bfloat16", "float16", "int32", "int64", "int8", "complex64", "complex128"]
TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12), "bfloat16": (1.6e-2, 5e-2), "float16": (2e-3, 1e-2),
       "complex64": (1e-5, 1e-5), "complex128": (1e-12, 1e-12)}


def reference(fn, dtype, *tensors):
    """torch's result; for Half (no CPU matmul in torch 1.13) torch's float32 result rounded."""
    if dtype == "float16":
        return fn(*[t.float() for t in tensors]).half()
    return fn(*tensors)


def check(fn, dtype, *tensors, tol=None):
    want = reference(fn, dtype, *tensors)
    got = fn(*[to_tessera(t) for t in tensors])
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape), (tuple(got.shape), tuple(want.shape))
    rtol, atol = tol or TOL.get(dtype, (0, 0))
    torch.testing.assert_close(to_torch(got), want, rtol=rtol, atol=atol)


class Both:
    """A call written once: `lib` is torch or tessera depending on its operands."""

    def __init__(self, body):
        self.body = body

    def __call__(self, *tensors):
        lib = torch if isinstance(tensors[0], torch.Tensor) else tessera
        return self.body(lib, *tensors)


def mT(t):
    """A matrix (batch) stored transposed: same shape, last two dims swapped in memory."""
    return t.transpose(-1, -2).contiguous().transpose(-1, -2)


# ---------------------------------------------------------------- matmul ranks

RANKS = [((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((3, 5), (5, 4)), ((2, 3, 5), (5,)), ((5,), (2, 5, 4)),
         ((2, 3, 5), (5, 4)), ((3, 5), (2, 5, 4)), ((2, 3, 5), (2, 5, 4)), ((2, 1, 3, 5), (4, 5, 2)),
         ((1, 3, 5), (6, 5, 4)), ((2, 2, 3, 5), (5,)), ((5,), (3, 1, 5, 2)), ((7, 1, 1, 3, 5), (2, 1, 5, 4))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", RANKS, ids=str)
def test_matmul_ranks_and_broadcasting(shapes, dtype):
    if dtype.startswith("complex") and shapes == ((5,), (5,)):
        pytest.skip("torch 1.13's complex dot returns 0: test_complex_dot_and_vdot checks ours")
    a, b = make_torch(shapes[0], dtype, 1), make_torch(shapes[1], dtype, 2)
    check(Both(lambda lib, x, y: lib.matmul(x, y)), dtype, a, b)
    check(Both(lambda lib, x, y: x @ y), dtype, a, b)


@pytest.mark.parametrize("shapes", [s for s in RANKS if len(s[0]) >= 2 and len(s[1]) >= 2], ids=str)
def test_matmul_transposed_operands(shapes):
    a, b = mT(make_torch(shapes[0], "float32", 3)), mT(make_torch(shapes[1], "float32", 4))
    check(Both(lambda lib, x, y: lib.matmul(x, y)), "float32", a, b)
    check(Both(lambda lib, x, y: lib.matmul(x, y)), "float32", a[..., ::2, :], b[..., ::2])


def test_matmul_out():
    a, b = make_torch((2, 3, 5), "float64", 5), make_torch((5, 4), "float64", 6)
    out = tessera.empty(0, dtype=tessera.float64)
    assert tessera.matmul(to_tessera(a), to_tessera(b), out=out) is out
    torch.testing.assert_close(to_torch(out), a @ b)


# ---------------------------------------------------------------- einsum

EQUATIONS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("iij->j", [(3, 3, 2)]), ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]), ("ijk->", [(2, 3, 4)]), ("ijk->kj", [(2, 3, 4)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk", [(2, 1, 3, 4), (6, 4, 5)]),
    ("...ij,jk->...ik", [(2, 3, 3, 4), (4, 5)]), ("i...->...", [(3, 2, 4)]), ("...i,...i", [(2, 3), (2, 3)]),
    ("b...,b->...", [(2, 3, 4), (2,)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("Ab,bA->", [(3, 4), (4, 3)]), ("aB,Ba", [(3, 4), (4, 3)]),
    ("i j , j k -> i k", [(3, 4), (4, 5)]), ("ij,j->", [(3, 4), (4,)]), ("ij,jk->ik", [(3, 0), (0, 5)]),
    ("bij,bjk->bik", [(0, 3, 4), (0, 4, 5)]), ("i,i,i->i", [(4,), (4,), (4,)]), ("ij,ik->jk", [(1, 3), (5, 4)]),
    ("ik,jk->ijk", [(3, 4), (1, 4)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64", "bfloat16"])
@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_equations(eq, shapes, dtype):
    ops = [make_torch(s, dtype, 10 + i) for i, s in enumerate(shapes)]
    check(Both(lambda lib, *t: lib.einsum(eq, *t)), dtype, *ops)


def test_einsum_takes_a_list_and_strided_operands():
    a, b = mT(make_torch((3, 4), "float32", 1)), make_torch((5, 8), "float32", 2)[:, ::2]
    want = torch.einsum("ij,kj->ik", [a, b])
    torch.testing.assert_close(to_torch(tessera.einsum("ij,kj->ik", [to_tessera(a), to_tessera(b)])), want)
    # a contraction path (as opt_einsum gives) changes the order, not the result
    x, y, z = (make_torch(s, "float64", i) for i, s in enumerate([(2, 3), (3, 4), (4, 5)]))
    got = tessera.einsum("ij,jk,kl->il", to_tessera(x), to_tessera(y), to_tessera(z), path=[1, 2, 0, 1])
    torch.testing.assert_close(to_torch(got), x @ y @ z)


def test_einsum_sublist_form_says_it_is_not_supported():
    a = tessera.ones(2, 3)
    with pytest.raises(NotImplementedError, match="sublist"):
        tessera.einsum(a, [0, 1], a, [0, 1])


# ---------------------------------------------------------------- layouts, empties, beta

def test_column_major_out_and_transposed_inputs():
    a, b = make_torch((4, 6), "float32", 1), make_torch((5, 6), "float32", 2)
    out = tessera.empty(3, 4).t()  # a (4, 3) view stored column-major
    want = a.t()[:3].t() @ b.t()[:3, :3]
    got = tessera.mm(to_tessera(a.t()[:3].t()), to_tessera(b.t()[:3, :3]), out=out)
    assert got is out and out.stride() == (1, 4)
    torch.testing.assert_close(to_torch(out), want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "complex64"])
def test_k_zero_gives_zeros_or_beta_times_self(dtype):
    a, b = make_torch((3, 0), dtype, 1), make_torch((0, 4), dtype, 2)
    assert to_torch(tessera.mm(to_tessera(a), to_tessera(b))).tolist() == torch.mm(a, b).tolist()
    c = make_torch((3, 4), dtype, 3)
    check(Both(lambda lib, s, x, y: lib.addmm(s, x, y, beta=2)), dtype, c, a, b)
    check(Both(lambda lib, s, x, y: lib.baddbmm(s, x, y, beta=0)), dtype, c[None], a[None], b[None])


@pytest.mark.parametrize("op", ["addmm", "addmv", "baddbmm", "addbmm"])
def test_beta_zero_ignores_nan_in_self(op):
    shapes = {"addmm": [(3, 4), (3, 5), (5, 4)], "addmv": [(3,), (3, 5), (5,)],
              "baddbmm": [(2, 3, 4), (2, 3, 5), (2, 5, 4)], "addbmm": [(3, 4), (2, 3, 5), (2, 5, 4)]}[op]
    s, x, y = (make_torch(sh, "float32", i) for i, sh in enumerate(shapes))
    s = torch.full_like(s, float("nan"))
    # (torch 1.13's own baddbmm with beta = 0 sometimes reads its uninitialised result: its
    # meaning, alpha * bmm, is the reference there)
    want = torch.bmm(x, y) * 1.5 if op == "baddbmm" else getattr(torch, op)(s, x, y, beta=0, alpha=1.5)
    got = getattr(tessera, op)(to_tessera(s), to_tessera(x), to_tessera(y), beta=0, alpha=1.5)
    assert not bool(torch.isnan(want).any())
    torch.testing.assert_close(to_torch(got), want, rtol=1e-5, atol=1e-5)
    mine = to_tessera(s)  # in place too
    getattr(mine, op + "_")(to_tessera(x), to_tessera(y), beta=0, alpha=1.5)
    torch.testing.assert_close(to_torch(mine), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,n", [(257, 300, 129), (64, 1, 64), (1, 500, 1), (130, 70, 1), (1, 33, 200)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int32"])
def test_larger_products_against_torch(m, k, n, dtype):
    a, b = make_torch((m, k), dtype, 1, -1, 1), make_torch((k, n), dtype, 2, -1, 1)
    tol = (1e-4, 1e-4) if dtype == "float32" else (1e-10, 1e-10) if dtype != "int32" else (0, 0)
    check(Both(lambda lib, x, y: lib.mm(x, y)), dtype, a, b, tol=tol)
    check(Both(lambda lib, x, y: lib.mm(x, y)), dtype, mT(a), mT(b), tol=tol)


@pytest.mark.parametrize("m,k,n", [(64, 64, 64), (40, 33, 25), (300, 200, 100)])
def test_float32_onednn_products_beta_zero_and_out_layouts(m, k, n):
    # Note [float GEMM backend]: float32 products of 32^3 multiply-adds and up run on
    # oneDNN's sgemm: beta = 0 must still ignore NaN, and transposed / column-major
    # operands and outputs reach it as leading dimensions.
    s, x, y = make_torch((m, n), "float32", 1), make_torch((m, k), "float32", 2), make_torch((k, n), "float32", 3)
    nan = torch.full_like(s, float("nan"))
    want = torch.addmm(s, x, y, beta=0, alpha=0.5)
    got = to_torch(tessera.addmm(to_tessera(nan), to_tessera(x), to_tessera(y), beta=0, alpha=0.5))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    want = torch.addmm(s, x, y, beta=0.25)
    got = to_torch(tessera.addmm(to_tessera(s), to_tessera(mT(x)), to_tessera(y), beta=0.25))
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    out = tessera.empty(n, m).t()  # a column-major out= is computed as the transposed problem
    tessera.mm(to_tessera(mT(x)), to_tessera(mT(y)), out=out)
    torch.testing.assert_close(to_torch(out), mT(x) @ mT(y), rtol=1e-4, atol=1e-4)


def test_float32_backends_agree():
    # TESSERA_SGEMM=openblas (read once per process) sends every float32 product to
    # OpenBLAS: the same products, within float32 rounding of each other and of torch.
    import subprocess
    import sys
    code = ("import numpy as np, tessera; g = np.random.default_rng(0); "
            "a = tessera.from_numpy(g.standard_normal((96, 80)).astype('float32')); "
            "b = tessera.from_numpy(g.standard_normal((80, 72)).astype('float32')); "
            "np.save(__import__('sys').stdout.buffer, (a @ b).numpy())")
    import io
    import os
    import numpy as np
    results = []
    for backend in (None, "openblas"):
        env = {k: v for k, v in os.environ.items() if k != "TESSERA_SGEMM"}
        if backend:
            env["TESSERA_SGEMM"] = backend
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env).stdout
        results.append(np.load(io.BytesIO(out)))
    g = np.random.default_rng(0)
    a, b = g.standard_normal((96, 80)).astype("float32"), g.standard_normal((80, 72)).astype("float32")
    want = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_products_wrap_like_torch(dtype):
    a = torch.tensor([[100, -100, 77], [127, 127, 127]]).to(getattr(torch, dtype))
    b = torch.tensor([[100, 3], [-100, 5], [127, -128]]).to(getattr(torch, dtype))
    assert to_torch(tessera.mm(to_tessera(a), to_tessera(b))).tolist() == torch.mm(a, b).tolist()
    assert to_torch(tessera.dot(to_tessera(a[0]), to_tessera(b[:, 0]))).item() == torch.dot(a[0], b[:, 0]).item()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("layout", ["contiguous", "stepped", "expanded"])
def test_complex_dot_and_vdot(dtype, layout):
    """torch 1.13 (Debian's build) returns 0 for complex dot and vdot, so the reference is
    torch's mv of a one-row matrix (vdot: of the conjugated row)."""
    a, b = make_torch((14,), dtype, 1)[::2], make_torch((7,), dtype, 2)
    if layout == "contiguous":
        a = a.contiguous()
    elif layout == "expanded":
        a = a[:1].expand(7)
    tol = TOL[dtype]
    for got, want in [(tessera.dot(to_tessera(a), to_tessera(b)), torch.mv(a[None], b)[0]),
                      (tessera.vdot(to_tessera(a), to_tessera(b)), torch.mv(a.conj()[None].resolve_conj(), b)[0]),
                      (tessera.matmul(to_tessera(a), to_tessera(b)), torch.mv(a[None], b)[0])]:
        torch.testing.assert_close(to_torch(got), want, rtol=tol[0], atol=tol[1])


# ---------------------------------------------------------------- memory and threads

def test_mm_of_a_transposed_operand_allocates_only_its_result():
    """a.t() @ b goes to BLAS as a transposed operand: the only new memory is the result."""
    a, b = tessera.randn(256, 128), tessera.randn(256, 64)
    at = a.t()
    tessera.mm(at, b)  # warm up (size classes, thread pools)

    def allocated(fn):
        before = tessera.cpu.memory_stats()
        r = fn()
        after = tessera.cpu.memory_stats()
        return after["allocated_bytes.all.allocated"] - before["allocated_bytes.all.allocated"], \
            after["allocation.all.current"] - before["allocation.all.current"], r

    result_bytes, _, _ = allocated(lambda: tessera.empty(128, 64))
    used, blocks, r = allocated(lambda: tessera.mm(at, b))
    assert (used, blocks) == (result_bytes, 1)
    used, _, _ = allocated(lambda: tessera.mm(b.t(), a))  # the other side transposed
    assert used == result_bytes
    out = tessera.empty(128, 64)
    used, _, _ = allocated(lambda: tessera.mm(at, b, out=out))
    assert used == 0
    torch.testing.assert_close(to_torch(r), to_torch(a).t() @ to_torch(b), rtol=1e-4, atol=1e-4)


def openblas_threads():
    lib = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
    lib.openblas_get_num_threads.restype = ctypes.c_int
    return lib.openblas_get_num_threads()


def test_openblas_is_the_pthread_build():
    """Note [BLAS threads] (aten/native/linalg/Blas.cpp) assumes OpenBLAS's own pthread pool, sized
    by openblas_set_num_threads: Debian's default (libopenblas.so.0 -> openblas-pthread). An
    OpenMP build would share our OpenMP pool instead, and that note would need revisiting."""
    lib = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
    lib.openblas_get_parallel.restype = ctypes.c_int
    with open("/proc/self/maps") as maps:
        loaded = {line.split()[-1] for line in maps if "openblas" in line}
    assert lib.openblas_get_parallel() == 1, loaded  # 1: pthreads (0: sequential, 2: OpenMP)
    assert any("openblas-pthread" in path for path in loaded), loaded


def test_bmm_gives_the_same_bits_at_any_thread_count_and_restores_blas_threads():
    a, b = tessera.randn(16, 64, 128), tessera.randn(16, 128, 128)
    before = tessera.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            tessera.set_num_threads(n)
            assert openblas_threads() == n
            results.append(to_torch(tessera.bmm(a, b)))
            assert openblas_threads() == n  # held to one thread only during the batch
        assert torch.equal(results[0], results[1])
    finally:
        tessera.set_num_threads(before)


# ---------------------------------------------------------------- errors

ERRORS = [
    "lib.mm(lib.ones(3), lib.ones(3, 4))", "lib.mm(lib.ones(3, 3), lib.ones(3))",
    "lib.mm(lib.ones(2, 3), lib.ones(4, 5))", "lib.mm(lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64))",
    "lib.mm(lib.ones(2, 3, dtype=lib.int64), lib.ones(3, 4))",
    "lib.mm(lib.ones(2, 3, dtype=lib.bool), lib.ones(3, 4, dtype=lib.bool))",
    "lib.bmm(lib.ones(2, 3), lib.ones(3, 4))", "lib.bmm(lib.ones(2, 2, 3), lib.ones(3, 3, 4))",
    "lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 4, 4))", "lib.bmm(lib.ones(2, 2, 3), lib.ones(2, 3, 4, dtype=lib.float64))",
    "lib.mv(lib.ones(3), lib.ones(3))", "lib.mv(lib.ones(2, 3), lib.ones(4))",
    "lib.mv(lib.ones(2, 3), lib.ones(3, dtype=lib.float64))", "lib.dot(lib.ones(2, 3), lib.ones(3))",
    "lib.dot(lib.ones(3), lib.ones(4))", "lib.dot(lib.ones(3), lib.ones(3, dtype=lib.float64))",
    "lib.vdot(lib.ones(3), lib.ones(3, dtype=lib.float64))",
    "lib.addmm(lib.ones(3, 3), lib.ones(2, 3), lib.ones(3, 4))",
    "lib.addmm(lib.ones(2, 4, dtype=lib.float64), lib.ones(2, 3), lib.ones(3, 4))",
    "lib.addmm(lib.ones(2, 4), lib.ones(3), lib.ones(3, 4))", "lib.addmm(lib.ones(2, 4), lib.ones(2, 3), lib.ones(3))",
    "lib.addmm(lib.ones(2, 4), lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 4))",
    "lib.addmv(lib.ones(3), lib.ones(2, 3), lib.ones(3))", "lib.addmv(lib.ones(2, 2), lib.ones(2, 3), lib.ones(3))",
    "lib.baddbmm(lib.ones(2, 2, 5), lib.ones(2, 2, 3), lib.ones(2, 3, 4))",
    "lib.addbmm(lib.ones(2, 5), lib.ones(2, 2, 3), lib.ones(2, 3, 4))",
    "lib.addbmm(lib.ones(2, 4), lib.ones(2, 2, 3), lib.ones(3, 3, 4))",
    "lib.addbmm(lib.ones(2, 4), lib.ones(2, 2, 3), lib.ones(2, 5, 4))",
    "lib.matmul(lib.ones(()), lib.ones(3))", "lib.matmul(lib.ones(3), lib.ones(4))",
    "lib.matmul(lib.ones(2, 3), lib.ones(4))", "lib.matmul(lib.ones(2, 2, 3), lib.ones(2, 4, 5))",
    "lib.matmul(lib.ones(2, 2, 3), lib.ones(3, 3, 5))", "lib.matmul(lib.ones(2, 3), lib.ones(3, dtype=lib.float64))",
    "lib.matmul(lib.ones(2, 2, 4), lib.ones(3, 5))", "lib.matmul(lib.ones(4), lib.ones(2, 3, 5))",
    "lib.matmul(lib.ones(2, 4), lib.ones(2, 3, 5))",
    "lib.matmul(lib.ones(2, 3), lib.ones(3, 4), out=lib.ones(2, 4, dtype=lib.float64))",
    "lib.mm(lib.ones(2, 3), lib.ones(3, 4), out=lib.ones(2, 4, dtype=lib.float64))",
    "lib.outer(lib.ones(2, 2), lib.ones(3))", "lib.outer(lib.ones(2), lib.ones(2, 2))",
    "lib.einsum('ij,jk->ik', lib.ones(2, 3), lib.ones(4, 5))", "lib.einsum('ij,jk->ik', lib.ones(2, 3))",
    "lib.einsum('ij', lib.ones(2, 3), lib.ones(2, 3))", "lib.einsum('ij->ii', lib.ones(2, 3))",
    "lib.einsum('ij->k', lib.ones(2, 3))", "lib.einsum('ijk->i', lib.ones(2, 3))", "lib.einsum('i1->i', lib.ones(2, 3))",
    "lib.einsum('i..j', lib.ones(2, 3))", "lib.einsum('...i...', lib.ones(2, 3))",
    "lib.einsum('ij->i->j', lib.ones(2, 3))", "lib.einsum('ij,jk', lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64))",
    "lib.einsum('...ij,...jk', lib.ones(2, 2, 3), lib.ones(3, 3, 4))",
    "lib.einsum('ij,jk', lib.ones(2, 3, dtype=lib.bool), lib.ones(3, 4, dtype=lib.bool))",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr, first_line_only=True)


@pytest.mark.parametrize("expr", ["lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 5))",
                                  "lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3), lib.ones(5))",
                                  "lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 3, dtype=lib.float64))"])
def test_linear_errors_like_torch(expr):
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch})
    with pytest.raises(Exception) as got:
        eval(expr.replace("lib.nn.functional.linear", "lib.linear"), {"lib": tessera})
    assert got.type.__name__ == want.type.__name__
    assert str(got.value) == str(want.value)
