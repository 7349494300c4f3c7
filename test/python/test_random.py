"""Random operators against torch 1.13, statistically (moments within a few standard errors,
ranges, chi-square goodness of fit), with seeding and generator independence, bernoulli and
multinomial in all their forms, their errors and meta results. (Deterministic factories and
casts: test_factories.py.)
"""
import math

import pytest
import torch

import tessera

from factory_checks import as_torch, check_expr, check_same, name, outcome, run
from torch_compare import same_error


# ================================================================ bernoulli with tensor probabilities

def test_bernoulli_inplace_with_tensor_p_broadcasts_and_matches_the_probabilities():
    tessera.manual_seed(21)
    probs = [0.05, 0.3, 0.5, 0.75, 0.95]
    rows = 40_000
    x = tessera.zeros(rows, len(probs), dtype=tessera.float64)
    assert x.bernoulli_(tessera.tensor(probs)) is x  # p (5,) broadcast over the rows
    draws = as_torch(x)
    assert set(draws.unique().tolist()) <= {0.0, 1.0}
    for j, p in enumerate(probs):
        assert abs(draws[:, j].mean().item() - p) < 6 * math.sqrt(p * (1 - p) / rows), (j, p)
    # columns are independent of each other: the 2x2 table of two columns fits p_i p_j
    both = (draws[:, 1] * draws[:, 3]).mean().item()
    assert abs(both - 0.3 * 0.75) < 6 * math.sqrt(0.225 * 0.775 / rows)
    # p as a column broadcast along rows, and elementwise p of self's own shape
    y = tessera.zeros(3, 20_000)
    y.bernoulli_(tessera.tensor([[0.2], [0.0], [1.0]]))
    means = as_torch(y).mean(1).tolist()
    assert abs(means[0] - 0.2) < 6 * math.sqrt(0.16 / 20_000) and means[1] == 0.0 and means[2] == 1.0


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32",
                                   "float64"])
@pytest.mark.parametrize("p_dtype", ["float32", "float64", "bfloat16", "float16"])
def test_bernoulli_inplace_tensor_p_dtypes(dtype, p_dtype):
    # p of 0s and 1s gives exactly p, in self's dtype (torch 1.13 lacks Half self and Half p
    # on the CPU; current PyTorch, and tessera, have them)
    pattern = [0.0, 1.0, 1.0, 0.0, 1.0, 0.0]
    p = tessera.tensor(pattern, dtype=getattr(tessera, p_dtype)).reshape(2, 3)
    x = tessera.full((2, 3), 1, dtype=getattr(tessera, dtype)).t().t()  # any layout
    x.bernoulli_(p)
    want = torch.tensor(pattern).reshape(2, 3).to(getattr(torch, dtype))
    check_same(x, want)


def test_bernoulli_inplace_tensor_p_on_non_contiguous_self():
    tessera.manual_seed(22)
    base = tessera.zeros(4, 10_000)
    view = base.t()  # (10000, 4), column-major in memory
    view.bernoulli_(tessera.tensor([0.0, 1.0, 0.5, 0.1]))
    rows = as_torch(base).mean(1).tolist()
    assert rows[0] == 0.0 and rows[1] == 1.0
    assert abs(rows[2] - 0.5) < 6 * math.sqrt(0.25 / 10_000) and abs(rows[3] - 0.1) < 6 * math.sqrt(0.09 / 10_000)
    strided = tessera.ops.aten.slice(tessera.zeros(6, 3), 0, 0, None, 2)  # not dense
    strided.bernoulli_(tessera.ones(3))
    assert strided.tolist() == [[1.0] * 3] * 3


def test_bernoulli_tensor_p_is_seeded():
    p = tessera.full((1000,), 0.5)
    a = tessera.zeros(1000).bernoulli_(p, generator=tessera.Generator().manual_seed(5))
    b = tessera.zeros(1000).bernoulli_(p, generator=tessera.Generator().manual_seed(5))
    c = tessera.zeros(1000).bernoulli_(p, generator=tessera.Generator().manual_seed(6))
    assert a.tolist() == b.tolist() != c.tolist()
    tessera.manual_seed(8)
    d = tessera.zeros(1000).bernoulli_(p)
    tessera.manual_seed(8)
    assert tessera.zeros(1000).bernoulli_(p).tolist() == d.tolist()


def test_bernoulli_out_and_functional_tensor_forms():
    tessera.manual_seed(23)
    probs = tessera.tensor([[0.1, 0.9]] * 20_000, dtype=tessera.float64)
    o = tessera.empty(0, dtype=tessera.int64)
    assert tessera.bernoulli(probs, out=o) is o  # bernoulli.out: self is p
    assert name(o.dtype) == "int64" and tuple(o.shape) == (20_000, 2)
    means = as_torch(o).double().mean(0).tolist()
    assert abs(means[0] - 0.1) < 0.015 and abs(means[1] - 0.9) < 0.015
    # out is resized from any shape, as torch's resize_ does, and takes self's shape
    for lib in (tessera, torch):
        small = lib.zeros(5)
        r = lib.bernoulli(lib.tensor([[0.0, 1.0, 1.0]]).t(), out=small)
        assert r is small and tuple(small.shape) == (3, 1) and small.stride() == (1, 1)
        assert small.tolist() == [[0.0], [1.0], [1.0]]
    # bernoulli.Tensor: self's shape, dtype and layout, p broadcast to it
    for lib in (tessera, torch):
        s = lib.zeros(3, 2, dtype=lib.int32).t()
        r = lib.ops.aten.bernoulli.Tensor(s, lib.tensor([1.0, 0.0, 1.0]))
        assert r.stride() == (1, 2) and name(r.dtype) == "int32" and r.tolist() == [[1, 0, 1], [1, 0, 1]]
        assert s.tolist() == [[0, 0, 0], [0, 0, 0]]
    g = tessera.ops.aten.bernoulli.Tensor(tessera.zeros(20_000), tessera.tensor(0.25))
    assert abs(as_torch(g).mean().item() - 0.25) < 6 * math.sqrt(0.1875 / 20_000)


def test_bernoulli_tensor_forms_on_meta():
    m = tessera.empty(2, 3, device="meta")
    assert m.bernoulli_(tessera.empty(3, device="meta")) is m
    r = tessera.ops.aten.bernoulli.Tensor(m, tessera.empty(2, 1, device="meta"))
    assert r.is_meta and tuple(r.shape) == (2, 3)
    o = tessera.empty(0, device="meta")
    assert tessera.bernoulli(m, out=o) is o and tuple(o.shape) == (2, 3)
    # the meta kernel runs the CPU kernel's checks (torch 1.13's meta bernoulli_ skips them)
    for expr in ["lib.empty(2, 3, device=d).bernoulli_(lib.empty(4, device=d))",
                 "lib.empty(2, device=d).bernoulli_(lib.empty(2, device=d, dtype=lib.int64))",
                 "lib.empty(2, device=d, dtype=lib.complex64).bernoulli_(lib.empty(2, device=d))"]:
        _, want = outcome(lambda: run(expr, torch, d="cpu"))
        _, got = outcome(lambda: run(expr, tessera, d="meta"))
        assert isinstance(got, Exception) and isinstance(want, Exception), expr
        assert type(got).__name__ == type(want).__name__ and str(got) == str(want), expr


def test_multinomial_out():
    tessera.manual_seed(24)
    o = tessera.empty(7, dtype=tessera.int64)  # resized, as torch's multinomial_out does
    assert tessera.multinomial(tessera.tensor([0.2, 0.0, 0.8]), 20_000, True, out=o) is o
    assert tuple(o.shape) == (20_000,)
    counts = torch.bincount(as_torch(o), minlength=3).tolist()
    assert counts[1] == 0 and chi_square([counts[0], counts[2]], [4000, 16000]) < CHI2_CRIT[1]
    o2 = tessera.empty(0, dtype=tessera.int64)
    tessera.multinomial(tessera.ones(3, 4), 4, out=o2)
    assert tuple(o2.shape) == (3, 4) and (as_torch(o2).sort(1).values == torch.arange(4)).all()
    om = tessera.empty(0, dtype=tessera.int64, device="meta")
    assert tessera.multinomial(tessera.ones(2, 5, device="meta"), 3, out=om) is om and tuple(om.shape) == (2, 3)
    for expr in ["lib.multinomial(lib.ones(3), 1, out=lib.empty(0, dtype=lib.int32))",
                 "lib.multinomial(lib.ones(3), 1, out=lib.empty(0))",
                 "lib.multinomial(lib.ones(3), 4, out=lib.empty(0, dtype=lib.int64))",
                 "lib.multinomial(lib.ones(2, 2, 2), 1, out=lib.empty(0, dtype=lib.int32))",
                 "lib.multinomial(lib.tensor([1, 2]), 1, out=lib.empty(0, dtype=lib.int32))"]:
        got, want = check_expr(expr)
        assert isinstance(want, Exception) and isinstance(got, Exception), expr
        assert str(want).split("\n")[0].startswith(str(got).split("\n")[0]), expr


# ================================================================ random: seeding and generators

def test_same_seed_same_numbers_different_seed_different():
    tessera.manual_seed(1234)
    a = tessera.rand(100).tolist()
    b = tessera.randn(10).tolist()
    tessera.manual_seed(1234)
    assert tessera.rand(100).tolist() == a
    assert tessera.randn(10).tolist() == b
    tessera.manual_seed(1235)
    assert tessera.rand(100).tolist() != a
    # consecutive calls continue the stream
    tessera.manual_seed(1234)
    tessera.rand(100)
    assert tessera.randn(10).tolist() == b


@pytest.mark.parametrize("expr", [
    "lib.rand(50, generator=g)", "lib.randn(50, generator=g)", "lib.randint(0, 100, (50,), generator=g)",
    "lib.randint(100, (50,), generator=g)", "lib.randperm(50, generator=g)",
    "lib.multinomial(lib.ones(10), 5, generator=g)", "lib.multinomial(lib.ones(10), 20, True, generator=g)",
    "lib.bernoulli(lib.full((50,), 0.5), generator=g)", "lib.bernoulli(lib.ones(50), 0.5, generator=g)",
    "lib.zeros(50).normal_(generator=g)", "lib.zeros(50).uniform_(generator=g)", "lib.zeros(50).random_(generator=g)",
    "lib.zeros(50).random_(10, generator=g)", "lib.zeros(50).bernoulli_(0.5, generator=g)",
])
def test_generator_objects_are_deterministic_and_independent(expr):
    g1 = tessera.Generator().manual_seed(7)
    g2 = tessera.Generator().manual_seed(7)
    tessera.manual_seed(99)
    x = tessera.rand(5).tolist()
    a = run(expr, tessera, g=g1).tolist()
    tessera.manual_seed(99)
    b = run(expr, tessera, g=g2).tolist()   # the default generator's draws do not disturb g2
    y = tessera.rand(5).tolist()            # and g2's draws do not advance the default one
    assert a == b
    assert x == y
    assert run(expr, tessera, g=g1).tolist() != a or "bernoulli" in expr  # the stream moves on


def test_generator_api():
    g = tessera.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert g.device == tessera.device("cpu")
    assert tessera.Generator(device="cpu").initial_seed() == 67280421310721
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert g.manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    with pytest.raises(RuntimeError):
        g.manual_seed(2**64)
    with pytest.raises(TypeError):
        g.manual_seed(1.5)
    with pytest.raises(RuntimeError, match="Device type META is not supported for torch.Generator"):
        tessera.Generator(device="meta")
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s
    state = g.get_state()
    assert name(state.dtype) == "uint8"
    first = tessera.rand(8, generator=g).tolist()
    g.set_state(state)
    assert tessera.rand(8, generator=g).tolist() == first
    with pytest.raises(RuntimeError):
        g.set_state(tessera.zeros(3, dtype=tessera.uint8))


def test_default_generator_functions():
    assert tessera.manual_seed(5) is tessera.default_generator
    assert tessera.initial_seed() == 5
    assert tessera.manual_seed(7.9).initial_seed() == 7  # int(seed), as torch.manual_seed
    s = tessera.seed()
    assert tessera.initial_seed() == s
    state = tessera.get_rng_state()
    a = tessera.rand(4).tolist()
    tessera.set_rng_state(state)
    assert tessera.rand(4).tolist() == a
    tessera.default_generator.manual_seed(11)
    b = tessera.rand(3).tolist()
    tessera.manual_seed(11)
    assert tessera.rand(3).tolist() == b


def test_generator_rejected_where_not_a_generator():
    with pytest.raises(TypeError):
        tessera.rand(3, generator=5)


# ================================================================ random: distributions

N = 200_000


def moments(t):
    x = as_torch(t).double().flatten()
    return x.mean().item(), x.var().item(), x.min().item(), x.max().item()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_rand_uniform_moments_and_range(dtype):
    tessera.manual_seed(0)
    t = tessera.rand(N, dtype=getattr(tessera, dtype))
    assert name(t.dtype) == dtype and tuple(t.shape) == (N,)
    mean, var, lo, hi = moments(t)
    assert 0 <= lo and hi < 1
    se = math.sqrt(1 / 12 / N)
    assert abs(mean - 0.5) < 6 * se + (2e-3 if "16" in dtype else 0)
    assert abs(var - 1 / 12) < 0.003


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_randn_moments(dtype):
    tessera.manual_seed(1)
    t = tessera.randn(N, dtype=getattr(tessera, dtype))
    mean, var, _, _ = moments(t)
    assert abs(mean) < 6 / math.sqrt(N) + (5e-3 if "16" in dtype else 0)
    assert abs(var - 1) < 6 * math.sqrt(2 / N) + (1e-2 if "16" in dtype else 0)
    x = as_torch(t).double()
    # a normal, not just any unit-variance law: the fourth moment is 3
    assert abs((x ** 4).mean().item() - 3) < 0.1
    assert abs((x.abs() < 1).double().mean().item() - 0.6826894921) < 0.005


def test_randn_complex():
    tessera.manual_seed(2)
    t = as_torch(tessera.randn(N, dtype=tessera.complex128))
    assert abs(t.real.var().item() - 0.5) < 0.01 and abs(t.imag.var().item() - 0.5) < 0.01
    assert abs((t.real * t.imag).mean().item()) < 0.01
    u = as_torch(tessera.rand(N, dtype=tessera.complex64))
    assert 0 <= u.real.min().item() and u.real.max().item() < 1 and 0 <= u.imag.min().item() and u.imag.max().item() < 1


@pytest.mark.parametrize("mean,std,dtype", [(3.0, 2.0, "float64"), (-1.0, 0.5, "float32"), (0.0, 0.0, "float32")])
def test_normal_(mean, std, dtype):
    tessera.manual_seed(3)
    t = tessera.zeros(N, dtype=getattr(tessera, dtype))
    assert t.normal_(mean, std) is t
    m, v, _, _ = moments(t)
    assert abs(m - mean) < 6 * std / math.sqrt(N) + 1e-6
    assert abs(v - std * std) < 6 * std * std * math.sqrt(2 / N) + 1e-6


@pytest.mark.parametrize("lo,hi,dtype", [(-2.0, 5.0, "float64"), (10.0, 10.5, "float32"), (-1.0, 1.0, "float16"),
                                         (0.0, 0.0, "float32"), (0.0, 1.0, "bfloat16")])
def test_uniform_(lo, hi, dtype):
    tessera.manual_seed(4)
    t = tessera.zeros(N, dtype=getattr(tessera, dtype))
    assert t.uniform_(lo, hi) is t
    m, v, mn, mx = moments(t)
    assert lo <= mn and (mx < hi or lo == hi)
    assert abs(m - (lo + hi) / 2) < 6 * (hi - lo) / math.sqrt(12 * N) + (hi - lo) * (4e-3 if "16" in dtype else 0) + 1e-9


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_exponential_(dtype):
    tessera.manual_seed(6)
    t = tessera.zeros(N, dtype=getattr(tessera, dtype))
    assert t.exponential_(2.0) is t
    m, v, mn, _ = moments(t)
    assert mn >= 0
    tol = 0.02 if dtype == "bfloat16" else 0
    assert abs(m - 0.5) < 6 * 0.5 / math.sqrt(N) + tol and abs(v - 0.25) < 0.02 + tol
    assert math.isinf(tessera.zeros(3).exponential_(0).min().item())  # rate 0: infinity, as torch


@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8"])
def test_geometric_(dtype):
    tessera.manual_seed(7)
    p = 0.3
    t = tessera.zeros(N, dtype=getattr(tessera, dtype)).geometric_(p)
    m, v, mn, _ = moments(t)
    assert mn >= 1 and as_torch(t).eq(as_torch(t).round()).all()  # whole numbers of trials, at least one
    assert abs(m - 1 / p) < 6 * math.sqrt((1 - p) / p ** 2 / N) + (0.05 if dtype == "uint8" else 0)
    assert abs(v - (1 - p) / p ** 2) < 0.1 * (1 - p) / p ** 2 + (0.5 if dtype == "uint8" else 0)
    assert abs(as_torch(t).eq(1).double().mean().item() - p) < 0.01  # P(X = 1) = p


def test_log_normal_():
    tessera.manual_seed(8)
    t = tessera.zeros(N, dtype=tessera.float64).log_normal_(0.5, 0.25)
    logs = as_torch(t).log()
    assert abs(logs.mean().item() - 0.5) < 6 * 0.25 / math.sqrt(N)
    assert abs(logs.std().item() - 0.25) < 0.01


def test_cauchy_():
    tessera.manual_seed(9)
    t = as_torch(tessera.zeros(N, dtype=tessera.float64).cauchy_(1.0, 2.0))
    # median and quartiles: median -+ sigma
    q = torch.quantile(t, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64))
    assert abs(q[1].item() - 1.0) < 0.1 and abs(q[0].item() + 1.0) < 0.15 and abs(q[2].item() - 3.0) < 0.15


def test_new_samplers_are_seeded_and_fill_non_contiguous_targets():
    for name, args in [("exponential_", ()), ("geometric_", (0.5,)), ("log_normal_", ()), ("cauchy_", ())]:
        tessera.manual_seed(11)
        a = getattr(tessera.zeros(6, 4).t(), name)(*args)
        tessera.manual_seed(11)
        b = getattr(tessera.zeros(6, 4).t(), name)(*args)
        tessera.manual_seed(12)
        c = getattr(tessera.zeros(4, 6), name)(*args)
        assert a.stride() == (1, 4) and as_torch(a).ne(0).all(), name  # every element written
        assert torch.equal(as_torch(a), as_torch(b)), name
        assert not torch.equal(as_torch(a), as_torch(c)), name


def test_random_fills_non_contiguous_targets():
    tessera.manual_seed(5)
    base = tessera.zeros(4, 6)
    view = tessera.as_strided(base, (4, 3), (6, 2))
    view.uniform_(1, 2)
    values = as_torch(base)
    assert (values[:, ::2] >= 1).all() and (values[:, 1::2] == 0).all()
    t = tessera.as_strided(tessera.zeros(6, 4), (4, 6), (1, 4))  # transposed: dense, filled in place
    t.normal_()
    assert (as_torch(t) != 0).all()


def chi_square(counts, expected):
    return sum((c - e) ** 2 / e for c, e in zip(counts, expected))


# chi-square critical values at p = 1e-5, by degrees of freedom
CHI2_CRIT = {1: 19.5, 3: 25.9, 4: 28.5, 6: 32.9, 9: 37.3, 19: 51.9}


@pytest.mark.parametrize("low,high,dtype", [(0, 10, "int64"), (-5, 5, "int8"), (0, 20, "float32"), (3, 7, "int32"),
                                            (0, 2, "bool"), (250, 255, "uint8"), (-1000, -990, "int16")])
def test_randint_range_and_chi_square(low, high, dtype):
    tessera.manual_seed(6)
    t = tessera.randint(low, high, (N,), dtype=getattr(tessera, dtype))
    assert name(t.dtype) == dtype
    x = as_torch(t).long() if dtype != "bool" else as_torch(t).long()
    assert x.min().item() >= low and x.max().item() < high
    k = high - low
    counts = torch.bincount(x - low, minlength=k).tolist()
    assert chi_square(counts, [N / k] * k) < CHI2_CRIT[k - 1]


def test_randint_default_dtype_and_forms():
    assert name(tessera.randint(10, (3,)).dtype) == "int64"
    assert name(tessera.randint(3, 10, (2, 2)).dtype) == "int64"
    assert tuple(tessera.randint(5, size=(2, 3)).shape) == (2, 3)
    assert tuple(tessera.randint(low=1, high=5, size=(4,)).shape) == (4,)
    t = tessera.randint(2**40, 2**40 + 3, (1000,))
    assert set(as_torch(t).tolist()) <= {2**40, 2**40 + 1, 2**40 + 2}


def test_randint_like():
    x = tessera.zeros(3, 4, dtype=tessera.int16)
    t = tessera.randint_like(x, 5)
    assert name(t.dtype) == "int16" and tuple(t.shape) == (3, 4)
    v = as_torch(tessera.randint_like(x, -3, 3, dtype=tessera.float64))
    assert v.min().item() >= -3 and v.max().item() < 3 and (v == v.round()).all()


@pytest.mark.parametrize("dtype,hi", [("int8", 127), ("uint8", 255), ("bool", 1), ("float16", 2048), ("int16", 32767)])
def test_random_no_bounds(dtype, hi):
    tessera.manual_seed(7)
    x = as_torch(tessera.zeros(50_000, dtype=getattr(tessera, dtype)).random_()).double()
    assert x.min().item() >= 0 and x.max().item() <= hi
    assert abs(x.mean().item() - hi / 2) < 0.03 * hi + 0.01


def test_random_to_and_from():
    tessera.manual_seed(8)
    x = as_torch(tessera.zeros(10_000).random_(7))
    assert x.min().item() == 0 and x.max().item() == 6
    y = as_torch(tessera.zeros(10_000, dtype=tessera.int64).random_(-3, 2))
    assert y.min().item() == -3 and y.max().item() == 1
    z = as_torch(tessera.zeros(10_000, dtype=tessera.int8).random_(100, None))
    assert z.min().item() >= 100 and z.max().item() <= 127


@pytest.mark.parametrize("n,dtype", [(0, "int64"), (1, "int64"), (10, "int32"), (1000, "int64"), (50, "float32"),
                                     (100, "int8"), (2049, "float16")])
def test_randperm_is_a_permutation(n, dtype):
    tessera.manual_seed(9)
    t = tessera.randperm(n, dtype=getattr(tessera, dtype))
    assert name(t.dtype) == dtype and tuple(t.shape) == (n,)
    assert sorted(int(v) for v in t.tolist()) == list(range(n))


def test_randperm_is_uniform():
    # the position of element 0 over many permutations of 5 is uniform
    tessera.manual_seed(10)
    counts = [0] * 5
    for _ in range(2000):
        counts[tessera.randperm(5).tolist().index(0)] += 1
    assert chi_square(counts, [400] * 5) < CHI2_CRIT[4]
    tessera.manual_seed(10)
    a = tessera.randperm(100).tolist()
    tessera.manual_seed(11)
    assert tessera.randperm(100).tolist() != a


def test_bernoulli():
    tessera.manual_seed(11)
    p = tessera.full((N,), 0.3, dtype=tessera.float64)
    b = tessera.bernoulli(p)
    assert name(b.dtype) == "float64"
    x = as_torch(b)
    assert set(x.unique().tolist()) <= {0.0, 1.0}
    assert abs(x.mean().item() - 0.3) < 6 * math.sqrt(0.21 / N)
    assert as_torch(tessera.bernoulli(tessera.tensor([0.0, 1.0, 0.0, 1.0]))).tolist() == [0.0, 1.0, 0.0, 1.0]
    y = as_torch(p.bernoulli(0.8))
    assert abs(y.mean().item() - 0.8) < 6 * math.sqrt(0.16 / N)
    z = tessera.zeros(N, dtype=tessera.int32)
    assert z.bernoulli_(0.25) is z
    assert abs(as_torch(z).double().mean().item() - 0.25) < 6 * math.sqrt(0.1875 / N)
    assert name(tessera.bernoulli(tessera.ones(3, dtype=tessera.int64), 0.5).dtype) == "int64"
    # p per element
    probs = tessera.tensor([[0.1, 0.9]] * 20000)
    draws = as_torch(tessera.bernoulli(probs)).mean(0).tolist()
    assert abs(draws[0] - 0.1) < 0.015 and abs(draws[1] - 0.9) < 0.015


def test_multinomial_with_replacement_chi_square():
    tessera.manual_seed(12)
    probs = [0.1, 0.2, 0.0, 0.3, 0.4]
    s = tessera.multinomial(tessera.tensor(probs), N, True)
    assert name(s.dtype) == "int64" and tuple(s.shape) == (N,)
    counts = torch.bincount(as_torch(s), minlength=5).tolist()
    assert counts[2] == 0
    nonzero = [(c, p * N) for c, p in zip(counts, probs) if p > 0]
    assert chi_square([c for c, _ in nonzero], [e for _, e in nonzero]) < CHI2_CRIT[3]
    # unnormalised weights and rows
    s2 = tessera.multinomial(tessera.tensor([[1.0, 3.0], [3.0, 1.0]], dtype=tessera.float64), 20000, replacement=True)
    means = as_torch(s2).double().mean(1).tolist()
    assert abs(means[0] - 0.75) < 0.02 and abs(means[1] - 0.25) < 0.02


def test_multinomial_without_replacement():
    tessera.manual_seed(13)
    probs = [0.1, 0.2, 0.3, 0.4]
    rows = 40_000
    s = as_torch(tessera.multinomial(tessera.tensor([probs] * rows), 4))
    assert tuple(s.shape) == (rows, 4)
    assert (s.sort(1).values == torch.arange(4)).all()  # every row a permutation
    counts = torch.bincount(s[:, 0], minlength=4).tolist()  # the first draw follows probs
    assert chi_square(counts, [p * rows for p in probs]) < CHI2_CRIT[3]
    # the second draw follows the conditional law: P(second = j) = sum_i p_i p_j / (1 - p_i)
    second = [sum(pi * pj / (1 - pi) for i, pi in enumerate(probs) if i != j) for j, pj in enumerate(probs)]
    counts2 = torch.bincount(s[:, 1], minlength=4).tolist()
    assert chi_square(counts2, [p * rows for p in second]) < CHI2_CRIT[3]
    z = tessera.multinomial(tessera.tensor([1.0, 0.0, 0.0]), 2).tolist()
    assert z[0] == 0 and sorted(z) != [0, 0]


RANDOM_ERRORS = [
    "lib.rand(3, dtype=lib.int64)", "lib.rand(2, dtype=lib.bool)", "lib.randn(3, dtype=lib.int64)",
    "lib.randint(5, 3, (2,))", "lib.randint(-1, (2,))", "lib.randint(0, (2,))",
    "lib.randint(300, (2,), dtype=lib.uint8)", "lib.randint(-5, 5, (2,), dtype=lib.uint8)",
    "lib.randperm(-1)", "lib.randperm(300, dtype=lib.uint8)", "lib.randperm(3000, dtype=lib.float16)",
    "lib.randperm(3, dtype=lib.bool)",
    "lib.zeros(3).normal_(0, -1)", "lib.zeros(3).uniform_(2, 1)", "lib.zeros(3, dtype=lib.int32).uniform_()",
    "lib.zeros(3, dtype=lib.int32).normal_()", "lib.zeros(3).random_(5, 5)", "lib.zeros(3, dtype=lib.int8).random_(0, 300)",
    "lib.zeros(3, dtype=lib.int8).random_(-300, 0)",
    "lib.bernoulli(lib.tensor([0.5, 2.0]))", "lib.bernoulli(lib.tensor([1, 0]))", "lib.bernoulli(lib.ones(3), 1.5)",
    "lib.zeros(3).bernoulli_(1.5)", "lib.zeros(3).bernoulli_(-0.1)",
    "lib.zeros(2, 3).bernoulli_(lib.zeros(4))", "lib.zeros(3).bernoulli_(lib.zeros(2, 3))",
    "lib.zeros(3).bernoulli_(lib.tensor([0, 1, 1]))", "lib.zeros(3).bernoulli_(lib.tensor([True, False, True]))",
    "lib.zeros(3).bernoulli_(lib.tensor([0., 2., 1.]))", "lib.zeros(3).bernoulli_(lib.tensor([0., -1., 1.]))",
    "lib.zeros(3).bernoulli_(lib.tensor([0., float('nan'), 1.]))",
    "lib.zeros(3, dtype=lib.complex64).bernoulli_(lib.ones(3))", "lib.zeros(3, dtype=lib.complex64).bernoulli_(lib.ones(2))",
    "lib.bernoulli(lib.tensor([1, 0]), out=lib.empty(0))", "lib.bernoulli(lib.tensor([0.5, 2.0]), out=lib.empty(0))",
    "lib.multinomial(lib.tensor([1., 2.]), 3)", "lib.multinomial(lib.tensor([0., 0.]), 1, True)",
    "lib.multinomial(lib.tensor([1., -1.]), 1)", "lib.multinomial(lib.ones(2, 2, 2), 1)", "lib.multinomial(lib.ones(2), 0)",
    "lib.multinomial(lib.tensor([1, 2]), 1)", "lib.multinomial(lib.tensor([1., float('nan')]), 1)",
    "lib.multinomial(lib.tensor([1., float('inf')]), 1)", "lib.multinomial(lib.ones(0), 1)",
    "lib.zeros(3).exponential_(-1)", "lib.zeros(3, dtype=lib.int64).exponential_()",
    "lib.zeros(3, dtype=lib.complex64).exponential_()", "lib.zeros(3).geometric_(0)", "lib.zeros(3).geometric_(1)",
    "lib.zeros(3, dtype=lib.bool).geometric_(0.5)", "lib.zeros(3, dtype=lib.complex64).geometric_(0.5)",
    "lib.zeros(3).log_normal_(1, 0)", "lib.zeros(3, dtype=lib.int64).log_normal_()",
    "lib.zeros(3, dtype=lib.int32).cauchy_()", "lib.zeros(3, dtype=lib.complex64).cauchy_()",
    "lib.poisson(lib.tensor([1, 2]))", "lib.poisson(lib.tensor([-1.0, 2.0]))",
    "lib.normal(lib.zeros(2), -1.0)", "lib.normal(0.0, lib.tensor([1.0, -1.0]))",
]


@pytest.mark.parametrize("expr", RANDOM_ERRORS)
def test_random_errors(expr):
    got, want = check_expr(expr)
    assert isinstance(want, Exception), f"{expr}: torch raised nothing"
    # torch appends "(Could this error message be improved? ...)" to some of its checks
    assert str(want).split("\n")[0].startswith(str(got).split("\n")[0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_poisson_moments_and_zero_rate(dtype):
    tessera.manual_seed(13)
    rates = tessera.tensor([0.0, 0.5, 4.0, 40.0], dtype=getattr(tessera, dtype)).repeat(50_000)
    draws = as_torch(tessera.poisson(rates)).reshape(-1, 4).double()
    assert draws[:, 0].eq(0).all() and draws.eq(draws.round()).all() and draws.ge(0).all()
    for j, rate in enumerate([0.5, 4.0, 40.0], start=1):
        assert abs(draws[:, j].mean().item() - rate) < 6 * math.sqrt(rate / 50_000)
        assert abs(draws[:, j].var().item() - rate) < 0.05 * rate


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_moments_and_edges(dtype):
    tessera.manual_seed(15)
    count = tessera.tensor([10.0, 10.0, 200.0, 0.0, 7.0, 5.0, 3.5], dtype=getattr(tessera, dtype)).repeat(40_000)
    prob = tessera.tensor([0.5, 0.05, 0.3, 0.5, 1.0, 0.0, 0.5], dtype=getattr(tessera, dtype)).repeat(40_000)
    draws = as_torch(tessera.binomial(count, prob)).reshape(-1, 7).double()
    assert draws.eq(draws.round()).all() and draws.ge(0).all()
    for j, (n, p) in enumerate([(10, 0.5), (10, 0.05), (200, 0.3)]):
        assert draws[:, j].le(n).all()
        assert abs(draws[:, j].mean().item() - n * p) < 6 * math.sqrt(n * p * (1 - p) / 40_000)
        assert abs(draws[:, j].var().item() - n * p * (1 - p)) < 0.05 * n * p * (1 - p)
    # no trials, certain success, no chance; a fractional count is floored (3 trials)
    assert draws[:, 3].eq(0).all() and draws[:, 4].eq(7).all() and draws[:, 5].eq(0).all()
    assert draws[:, 6].le(3).all() and abs(draws[:, 6].mean().item() - 1.5) < 0.02
    # torch's results for the same edge cases (its draws differ, its laws agree)
    t = torch.binomial(torch.tensor([0.0, 7.0, 5.0]), torch.tensor([0.5, 1.0, 0.0]))
    assert t.tolist() == [0.0, 7.0, 0.0]


def test_binomial_broadcasts_checks_and_is_reproducible():
    count, prob = tessera.tensor([[10.0], [20.0]]), tessera.tensor([0.1, 0.5, 0.9])
    g = tessera.Generator().manual_seed(3)
    first = tessera.binomial(count, prob, generator=g)
    assert first.shape == torch.binomial(torch.tensor([[10.0], [20.0]]), torch.tensor([0.1, 0.5, 0.9])).shape
    assert tessera.equal(first, tessera.binomial(count, prob, generator=tessera.Generator().manual_seed(3)))
    assert tessera.isnan(tessera.binomial(tessera.tensor([float("nan"), 3.0]), tessera.tensor([0.5, float("nan")]))).all()
    # counts past int64 (and infinite ones) as torch: the normal limit, infinity
    huge = tessera.binomial(tessera.tensor([float("inf"), 1e30], dtype=tessera.float64),
                            tessera.tensor([0.5, 0.5], dtype=tessera.float64))
    assert huge[0].item() == float("inf") and abs(huge[1].item() / 5e29 - 1) < 1e-6
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        tessera.binomial(tessera.tensor([1.0]), tessera.tensor([0.5], dtype=tessera.float64))
    with pytest.raises(RuntimeError, match="not implemented for 'Half'"):
        tessera.binomial(tessera.tensor([1.0]).half(), tessera.tensor([0.5]).half())
    out = tessera.binomial(tessera.tensor([4.0], requires_grad=True), tessera.tensor([0.5]))
    with pytest.raises(RuntimeError, match="binomial"):
        out.sum().backward()


def test_normal_with_tensor_moments():
    tessera.manual_seed(14)
    mean = tessera.tensor([-3.0, 0.0, 5.0], dtype=tessera.float64).repeat(40_000)
    std = tessera.tensor([0.5, 1.0, 2.0], dtype=tessera.float64).repeat(40_000)
    for draws in (tessera.normal(mean, std), tessera.normal(mean, 1.0), tessera.normal(2.0, std)):
        assert tuple(draws.shape) == (120_000,)
    d = as_torch(tessera.normal(mean, std)).reshape(-1, 3)
    assert torch.allclose(d.mean(0), torch.tensor([-3.0, 0.0, 5.0], dtype=torch.float64), atol=0.05)
    assert torch.allclose(d.std(0), torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64), rtol=0.02)
    assert tuple(tessera.normal(0.0, 1.0, (2, 5)).shape) == (2, 5)


# ---------------------------------------------------------------- the gamma-family samplers
# Their draws differ from torch's (another generator); the laws are tested against scipy's
# Gamma and Dirichlet, the edges and errors against torch, and the reparameterized
# derivative against finite differences of scipy's regularized incomplete gamma.

def _gamma_grad_reference(alpha, x):
    """dx/dalpha at a fixed quantile: -(dP/dalpha) / pdf, dP/dalpha by central differences."""
    from scipy import special, stats
    h = 1e-6 * alpha
    dp = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
    return -dp / stats.gamma.pdf(x, alpha)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_standard_gamma_follows_the_gamma_law(dtype):
    from scipy import stats
    tessera.manual_seed(21)
    alphas = [0.05, 0.5, 1.0, 2.5, 30.0, 1e4]
    draws = as_torch(tessera._standard_gamma(
        tessera.tensor(alphas, dtype=getattr(tessera, dtype)).repeat(20_000))).reshape(-1, len(alphas)).double()
    assert draws.gt(0).all()
    for j, a in enumerate(alphas):
        assert stats.kstest(draws[:, j].numpy(), stats.gamma(a).cdf).pvalue > 1e-4, a
        assert abs(draws[:, j].mean().item() - a) < 6 * math.sqrt(a / 20_000)


def test_standard_gamma_edges_errors_and_seeding():
    # a shape that is not positive (or NaN) draws the smallest normal number, as torch's
    edge = [0.0, -1.0, float("nan"), float("inf")]
    for dt in ("float32", "float64"):
        got = tessera._standard_gamma(tessera.tensor(edge, dtype=getattr(tessera, dt))).tolist()
        want = torch._standard_gamma(torch.tensor(edge, dtype=getattr(torch, dt))).tolist()
        assert got == want
    for make in (lambda lib: lib.ones(2, dtype=lib.half), lambda lib: lib.ones(2, dtype=lib.int64),
                 lambda lib: lib.ones(2, dtype=lib.bfloat16)):
        same_error(lambda: torch._standard_gamma(make(torch)), lambda: tessera._standard_gamma(make(tessera)))
    alpha = tessera.full((3, 4), 2.0).t()  # non-contiguous input, its shape kept
    a = tessera._standard_gamma(alpha, tessera.Generator().manual_seed(5))
    b = tessera._standard_gamma(alpha.contiguous(), tessera.Generator().manual_seed(5))
    assert tuple(a.shape) == (4, 3) and tessera.equal(a, b)
    assert tuple(tessera._standard_gamma(tessera.ones(0, 2)).shape) == (0, 2)
    meta = tessera._standard_gamma(tessera.ones(2, 3, device="meta"))
    assert meta.is_meta and tuple(meta.shape) == (2, 3)


def test_standard_gamma_grad_matches_finite_differences_and_torch():
    from scipy import stats
    alphas, xs = [], []
    for a in (0.01, 0.1, 0.7, 1.0, 3.0, 20.0, 500.0, 1e5):
        for q in (1e-4, 0.02, 0.3, 0.5, 0.8, 0.999):
            x = stats.gamma.ppf(q, a)
            if x > 1e-300:
                alphas.append(a)
                xs.append(x)
    got = tessera._standard_gamma_grad(tessera.tensor(alphas, dtype=tessera.float64),
                                       tessera.tensor(xs, dtype=tessera.float64))
    want = torch.tensor([_gamma_grad_reference(a, x) for a, x in zip(alphas, xs)], dtype=torch.float64)
    torch.testing.assert_close(as_torch(got), want, rtol=1e-5, atol=0)
    # torch's own approximation is good to about 1e-3
    theirs = torch._standard_gamma_grad(torch.tensor(alphas, dtype=torch.float64), torch.tensor(xs, dtype=torch.float64))
    torch.testing.assert_close(as_torch(got), theirs, rtol=2e-3, atol=0)
    # float32 and broadcasting, as torch
    f = tessera._standard_gamma_grad(tessera.tensor([[0.5], [4.0]]), tessera.tensor([0.3, 1.5, 6.0]))
    assert tuple(f.shape) == (2, 3) and f.dtype == tessera.float32
    same_error(lambda: torch._standard_gamma_grad(torch.ones(2), torch.ones(3)),
               lambda: tessera._standard_gamma_grad(tessera.ones(2), tessera.ones(3)))


def test_standard_gamma_is_reparameterized():
    # the derivative of a draw is _standard_gamma_grad at it, and it is unbiased: E[x] = alpha
    # has derivative 1, so the average derivative of many draws is 1
    tessera.manual_seed(22)
    alpha = tessera.tensor([0.3, 2.0, 50.0], dtype=tessera.float64).repeat(20_000).requires_grad_()
    x = tessera._standard_gamma(alpha)
    x.sum().backward()
    want = tessera._standard_gamma_grad(alpha.detach(), x.detach())
    assert tessera.equal(alpha.grad, want)
    means = as_torch(alpha.grad).reshape(-1, 3).mean(0)
    torch.testing.assert_close(means, torch.ones(3, dtype=torch.float64), rtol=0.03, atol=0)
    # no second derivative, as torch
    g = tessera._standard_gamma_grad(tessera.tensor([2.0], requires_grad=True), tessera.tensor([1.0]))
    with pytest.raises(RuntimeError, match="the derivative for '_standard_gamma_grad' is not implemented"):
        g.sum().backward()


def test_sample_dirichlet_law_edges_and_no_derivative():
    from scipy import stats
    tessera.manual_seed(23)
    conc = [0.5, 2.0, 7.5]
    draws = as_torch(tessera._sample_dirichlet(tessera.tensor([conc], dtype=tessera.float64).repeat(30_000, 1)))
    torch.testing.assert_close(draws.sum(-1), torch.ones(30_000, dtype=torch.float64))
    for j, a in enumerate(conc):  # each marginal is Beta(a_j, sum - a_j)
        assert stats.kstest(draws[:, j].numpy(), stats.beta(a, sum(conc) - a).cdf).pvalue > 1e-4
    # all-zero concentrations split evenly; a 0-dim input is its own last dim, as torch's
    assert tessera._sample_dirichlet(tessera.zeros(2, 2)).tolist() == torch._sample_dirichlet(torch.zeros(2, 2)).tolist()
    assert tessera._sample_dirichlet(tessera.tensor(2.0)).item() == torch._sample_dirichlet(torch.tensor(2.0)).item()
    assert tessera._sample_dirichlet(tessera.ones(3, dtype=tessera.float64)).dtype == tessera.float64
    same_error(lambda: torch._sample_dirichlet(torch.ones(2, dtype=torch.int64)),
               lambda: tessera._sample_dirichlet(tessera.ones(2, dtype=tessera.int64)))
    out = tessera._sample_dirichlet(tessera.ones(3, requires_grad=True))
    with pytest.raises(RuntimeError, match="_sample_dirichlet"):
        out.sum().backward()


def test_standard_gamma_grad_edges_and_huge_shapes():
    # NaN where torch has NaN (no shape, an infinite shape or draw), 0 at a zero draw
    a = [0.0, 2.0, 2.0, float("inf"), 2.0, -1.0]
    x = [1.0, 0.0, float("inf"), 1.0, float("nan"), 1.0]
    got = tessera._standard_gamma_grad(tessera.tensor(a, dtype=tessera.float64), tessera.tensor(x, dtype=tessera.float64))
    want = torch._standard_gamma_grad(torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64))
    torch.testing.assert_close(as_torch(got), want, equal_nan=True)
    # huge shapes (Wilson-Hilferty past 1e6, bounded cost) against torch's asymptotic form,
    # and no jump where the series hands over
    alphas, xs = [], []
    for alpha in (1e6 * (1 - 1e-9), 1e6 * (1 + 1e-9), 1e8, 1e12, 1e14):
        for z in (-3.0, -0.3, 0.0, 2.0):
            alphas.append(alpha)
            xs.append(alpha + z * math.sqrt(alpha))
    got = as_torch(tessera._standard_gamma_grad(tessera.tensor(alphas, dtype=tessera.float64),
                                                tessera.tensor(xs, dtype=tessera.float64)))
    want = torch._standard_gamma_grad(torch.tensor(alphas, dtype=torch.float64), torch.tensor(xs, dtype=torch.float64))
    torch.testing.assert_close(got, want, rtol=1e-3, atol=0)
    torch.testing.assert_close(got[:4], got[4:8], rtol=1e-7, atol=0)


def test_dirichlet_of_small_concentrations_stays_inside_the_simplex():
    # drawn in double and clamped as torch's: float32 rows neither tie at 1/2 nor hit 1
    tessera.manual_seed(24)
    conc = tessera.full((20_000, 2), 0.01)
    for draws in (tessera._sample_dirichlet(conc), tessera.distributions.Dirichlet(conc).sample(),
                  tessera.distributions.Beta(conc[:, 0], conc[:, 1]).sample()):
        d = as_torch(draws)
        assert d.dtype == torch.float32 and d.lt(1).all() and d.gt(0).all()
        assert d.eq(0.5).float().mean().item() < 1e-3
