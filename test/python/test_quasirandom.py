"""tessera.quasirandom.SobolEngine against torch.quasirandom.SobolEngine (torch 1.13).

Unscrambled sequences are compared bit for bit (direction integers of all 21201 dimensions,
draws, fast_forward, reset, draw_base2, out=, float32/float64). Scrambled sequences draw
their random bits from tessera's generator (Philox), not torch's (mt19937), so they cannot
equal torch's for a seed: the scramble itself is checked exactly by feeding it torch's random
bits, and tessera's own scrambled draws are checked statistically (range, stratification,
seeding).
"""
import numpy as np
import pytest
import torch

import tessera
import tessera.quasirandom as tq


def arr(t):
    """A tessera or torch tensor's values as a numpy array (dtype kept)."""
    if str(t.dtype).endswith("bfloat16"):   # numpy has no bfloat16: exact in float32
        t = t.float()
    if isinstance(t, torch.Tensor):
        return t.numpy()
    return np.asarray(t.numpy())


def same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    a, b = arr(got), arr(want)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.array_equal(a, b), f"{np.count_nonzero(a != b)} of {a.size} values differ"


def same_state(mine, theirs):
    assert mine.num_generated == theirs.num_generated
    same(mine.quasi, theirs.quasi)
    same(mine.shift, theirs.shift)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        return "error", e


def same_error(fn_tessera, fn_torch):
    want = outcome(fn_torch)
    got = outcome(fn_tessera)
    assert want[0] == "error", want
    assert got[0] == "error", f"tessera returned {got[1]!r}, torch raised {want[1]!r}"
    assert type(got[1]) is type(want[1]), (got[1], want[1])
    assert str(got[1]).split("\n")[0] == str(want[1]).split("\n")[0]


# ================================================================ module surface

def test_module_is_reachable_like_torchs():
    assert tessera.quasirandom is tq
    assert tq.SobolEngine.__module__ == "tessera.quasirandom"
    assert tq.SobolEngine.MAXBIT == torch.quasirandom.SobolEngine.MAXBIT == 30
    assert tq.SobolEngine.MAXDIM == torch.quasirandom.SobolEngine.MAXDIM == 21201
    import inspect
    for meth in ["__init__", "draw", "draw_base2", "reset", "fast_forward"]:
        mine = inspect.signature(getattr(tq.SobolEngine, meth))
        theirs = inspect.signature(getattr(torch.quasirandom.SobolEngine, meth))
        assert list(mine.parameters) == list(theirs.parameters), meth
        for p in mine.parameters.values():
            default = theirs.parameters[p.name].default
            if isinstance(default, torch.dtype):
                assert p.default == getattr(tessera, str(default).split(".")[-1]), (meth, p.name)
            else:
                assert p.default == default, (meth, p.name)


def test_attributes_and_repr():
    for args in [(5,), (5, True), (5, True, 3), (5, False, 3), (1,)]:
        mine, theirs = tq.SobolEngine(*args), torch.quasirandom.SobolEngine(*args)
        assert repr(mine) == repr(theirs)
        assert (mine.dimension, mine.scramble, mine.seed) == (theirs.dimension, theirs.scramble, theirs.seed)
        assert mine.num_generated == 0
        assert mine.sobolstate.dtype == tessera.int64 and tuple(mine.sobolstate.shape) == (args[0], 30)
        assert mine.shift.dtype == tessera.int64 and tuple(mine.shift.shape) == (args[0],)
        assert mine.quasi.dtype == tessera.int64 and tuple(mine.quasi.shape) == (args[0],)
        if len(args) == 1 or not args[1]:
            same_state(mine, theirs)
    e = tq.SobolEngine(3)
    assert e.fast_forward(2) is e and e.reset() is e


# ================================================================ direction integers and draws

def test_direction_integers_of_all_21201_dimensions_match():
    mine = tq.SobolEngine(21201)
    theirs = torch.quasirandom.SobolEngine(21201)
    same(mine.sobolstate, theirs.sobolstate)
    # a smaller engine built afterwards reads the same prefix
    same(tq.SobolEngine(7).sobolstate, theirs.sobolstate[:7])


def run_script(dimension, script, dtype_name="float32"):
    mine, theirs = tq.SobolEngine(dimension), torch.quasirandom.SobolEngine(dimension)
    dt_mine, dt_torch = getattr(tessera, dtype_name), getattr(torch, dtype_name)
    for op, n in script:
        if op == "draw":
            same(mine.draw(n, dtype=dt_mine), theirs.draw(n, dtype=dt_torch))
        elif op == "base2":
            same(mine.draw_base2(n, dtype=dt_mine), theirs.draw_base2(n, dtype=dt_torch))
        elif op == "ff":
            mine.fast_forward(n)
            theirs.fast_forward(n)
        elif op == "reset":
            mine.reset()
            theirs.reset()
        same_state(mine, theirs)


SCRIPT = [("draw", 1), ("draw", 1), ("draw", 5), ("draw", 100), ("ff", 37), ("draw", 64), ("draw", 0),
          ("ff", 1000), ("draw", 300), ("reset", None), ("draw", 9), ("reset", None), ("ff", 3),
          ("draw", 2), ("reset", None), ("base2", 0), ("base2", 0), ("base2", 1), ("base2", 2),
          ("base2", 3), ("reset", None), ("ff", 1), ("ff", 0), ("draw", 17), ("ff", 100_000), ("draw", 33)]


@pytest.mark.parametrize("dimension", [1, 2, 3, 10, 40, 1111])
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_unscrambled_draws_match_bit_for_bit(dimension, dtype_name):
    run_script(dimension, SCRIPT, dtype_name)


def test_unscrambled_draws_of_the_largest_dimension_match():
    run_script(21201, [("draw", 1), ("draw", 300), ("ff", 4000), ("draw", 200), ("reset", None),
                       ("draw", 130), ("ff", 3000), ("draw", 3)])
    run_script(21201, [("draw", 70), ("draw", 2)], "float64")


def test_long_sequences_cross_many_gray_code_steps():
    # torch's fast_forward walks point by point: one dimension keeps the deep check quick
    run_script(1, [("draw", 1), ("ff", 2 ** 28 - 3000), ("draw", 6000)])   # crosses step 2^28 - 1
    # deeper still, from a state tessera reached by fast_forward (checked against drawing)
    mine = tq.SobolEngine(5).fast_forward(2 ** 29 - 1000)
    check = tq.SobolEngine(5).fast_forward(2 ** 29 - 3000)
    check.draw(2000)
    same(check.quasi, mine.quasi)
    theirs = torch.quasirandom.SobolEngine(5)
    theirs.quasi = torch.from_numpy(arr(mine.quasi).copy())
    theirs.num_generated = mine.num_generated
    same(mine.draw(3000, dtype=tessera.float64), theirs.draw(3000, dtype=torch.float64))  # uses the last bit
    same(mine.quasi, theirs.quasi)
    # a draw split in chunks internally
    run_script(3, [("draw", 70_000)])
    run_script(300, [("draw", 20_000)], "float64")


def test_the_sequence_ends_after_2_to_the_30_points():
    # the direction integers have 30 bits: step 2^30 - 1 has none (torch reads past its table)
    e = tq.SobolEngine(2).fast_forward(2 ** 30 - 10)
    e.draw(10)   # the last point there is
    with pytest.raises(RuntimeError, match="2\\*\\*30"):
        e.draw(1)
    with pytest.raises(RuntimeError, match="2\\*\\*30"):
        tq.SobolEngine(2).fast_forward(2 ** 30 + 1)


def test_first_point_alone_in_any_dtype():
    for dtype in ["float16", "bfloat16", "float32", "float64", "int64", "int32"]:
        same(tq.SobolEngine(4).draw(1, dtype=getattr(tessera, dtype)),
             torch.quasirandom.SobolEngine(4).draw(1, dtype=getattr(torch, dtype)))
    same(tq.SobolEngine(4).draw(dtype=None), torch.quasirandom.SobolEngine(4).draw(dtype=None))
    same(tq.SobolEngine(4).draw(3, dtype=None), torch.quasirandom.SobolEngine(4).draw(3, dtype=None))


def test_first_point_takes_the_default_dtype_at_construction():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    tessera.set_default_dtype(tessera.float64)
    try:
        mine, theirs = tq.SobolEngine(3), torch.quasirandom.SobolEngine(3)
    finally:
        torch.set_default_dtype(previous)
        tessera.set_default_dtype(getattr(tessera, str(previous).split(".")[-1]))
    # the first point (float64) joined to float32 points promotes the whole draw to float64
    same(mine.draw(4), theirs.draw(4))
    mine.reset()
    theirs.reset()
    same(mine.draw(1), theirs.draw(1))


def test_integer_like_counts():
    mine, theirs = tq.SobolEngine(3), torch.quasirandom.SobolEngine(3)
    same(mine.draw(np.int64(3)), theirs.draw(np.int64(3)))
    same(mine.draw(tessera.tensor(2)), theirs.draw(torch.tensor(2)))
    assert int(mine.num_generated) == int(theirs.num_generated) == 5
    mine.fast_forward(np.int32(4))
    theirs.fast_forward(np.int32(4))
    same(mine.draw(2), theirs.draw(2))


def test_negative_fast_forward_moves_the_count_as_torch_does():
    mine, theirs = tq.SobolEngine(3), torch.quasirandom.SobolEngine(3)
    same(mine.draw(2), theirs.draw(2))
    mine.fast_forward(-1)
    theirs.fast_forward(-1)
    same_state(mine, theirs)
    same(mine.draw(2), theirs.draw(2))


def test_fast_forward_equals_drawing_and_discarding():
    a, b = tq.SobolEngine(6), tq.SobolEngine(6)
    for n in [1, 5, 64, 999]:
        a.draw(n)
        b.fast_forward(n)
        assert a.num_generated == b.num_generated
        same(a.quasi, b.quasi)
        c = tq.SobolEngine(6).fast_forward(a.num_generated)   # in one step from the start
        same(c.quasi, a.quasi)
        same(a.draw(3), b.draw(3))


# ================================================================ out= and draw_base2

def test_out_is_resized_and_filled():
    for out_mine, out_torch in [(tessera.empty(0), torch.empty(0)),
                                (tessera.zeros(2, 2, 2), torch.zeros(2, 2, 2)),
                                (tessera.zeros(5, dtype=tessera.float64), torch.zeros(5, dtype=torch.float64)),
                                (tessera.zeros(1, dtype=tessera.int64), torch.zeros(1, dtype=torch.int64))]:
        mine, theirs = tq.SobolEngine(3), torch.quasirandom.SobolEngine(3)
        r = mine.draw_base2(2, out=out_mine, dtype=tessera.float64)
        assert r is out_mine
        same(out_mine, theirs.draw_base2(2, out=out_torch, dtype=torch.float64))
        r = mine.draw(3, out=out_mine)
        assert r is out_mine
        same(out_mine, theirs.draw(3, out=out_torch))
        same_state(mine, theirs)


def test_draw_base2_requires_a_power_of_two_in_all():
    mine, theirs = tq.SobolEngine(2), torch.quasirandom.SobolEngine(2)
    same(mine.draw(3), theirs.draw(3))
    same_error(lambda: mine.draw_base2(1), lambda: theirs.draw_base2(1))
    same_state(mine, theirs)
    same(mine.draw_base2(0), theirs.draw_base2(0))   # 3 + 1 = 4
    same(mine.draw_base2(2), theirs.draw_base2(2))   # 4 + 4 = 8
    same_error(lambda: mine.draw_base2(4), lambda: theirs.draw_base2(4))
    same(mine.draw_base2(3), theirs.draw_base2(3))
    same_error(lambda: tq.SobolEngine(2).draw_base2(-1), lambda: torch.quasirandom.SobolEngine(2).draw_base2(-1))
    same_error(lambda: tq.SobolEngine(2).draw_base2(2.0), lambda: torch.quasirandom.SobolEngine(2).draw_base2(2.0))


# ================================================================ errors

@pytest.mark.parametrize("dimension", [0, -1, 21202, 10 ** 9, "a"])
def test_bad_dimensions(dimension):
    same_error(lambda: tq.SobolEngine(dimension), lambda: torch.quasirandom.SobolEngine(dimension))


def test_non_integer_dimensions_fail_in_zeros_as_torchs():
    # torch's (and tessera's) zeros() refuses the size; the wording is each library's own
    for dimension in [2.5, True]:
        with pytest.raises(TypeError):
            torch.quasirandom.SobolEngine(dimension)
        with pytest.raises(TypeError):
            tq.SobolEngine(dimension)


def test_draw_errors():
    S, T = tq.SobolEngine, torch.quasirandom.SobolEngine
    same_error(lambda: S(3).draw(0), lambda: T(3).draw(0))
    same_error(lambda: S(3).draw(-4), lambda: T(3).draw(-4))
    same_error(lambda: S(3).draw(2, dtype=tessera.float16), lambda: T(3).draw(2, dtype=torch.float16))
    for name in ["bfloat16", "int64", "int32", "uint8", "bool", "complex64"]:
        same_error(lambda: S(3).draw(4, dtype=getattr(tessera, name)),
                   lambda: T(3).draw(4, dtype=getattr(torch, name)))
    same_error(lambda: S(3).draw(2.0), lambda: T(3).draw(2.0))
    mine, theirs = S(3), T(3)
    mine.draw()
    theirs.draw()
    same_error(lambda: mine.draw(True), lambda: theirs.draw(True))
    same_error(lambda: mine.draw(1.5), lambda: theirs.draw(1.5))
    same_error(lambda: mine.draw(-1), lambda: theirs.draw(-1))
    same_error(lambda: mine.draw(-1, dtype=tessera.float16), lambda: theirs.draw(-1, dtype=torch.float16))
    same_error(lambda: mine.fast_forward(2.0), lambda: theirs.fast_forward(2.0))
    same_error(lambda: S(3).fast_forward(2.0), lambda: T(3).fast_forward(2.0))
    same_state(mine, theirs)          # a failed call changes nothing
    same(mine.draw(0), theirs.draw(0))
    same_state(mine, theirs)


def test_missing_scipy_table_raises_naming_the_package(monkeypatch):
    import importlib.util
    monkeypatch.setattr(tq, "_table", {})
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(RuntimeError, match="scipy"):
        tq.SobolEngine(3)


# ================================================================ scrambling

def torch_bits(seed):
    """tessera.randint replaced by torch's draws from a torch.Generator seeded with `seed`,
    so that a tessera engine scrambles with exactly the bits torch's engine uses."""
    g = torch.Generator()
    g.manual_seed(seed)

    def randint(high, size, **kwargs):
        return tessera.tensor(torch.randint(high, size, generator=g).tolist(), dtype=tessera.int64)
    return randint


@pytest.mark.parametrize("dimension,seed", [(1, 0), (2, 5), (7, 123), (300, 2024)])
def test_scramble_matches_torch_given_torchs_random_bits(monkeypatch, dimension, seed):
    monkeypatch.setattr(tessera, "randint", torch_bits(seed))
    mine = tq.SobolEngine(dimension, scramble=True, seed=seed)
    monkeypatch.undo()
    theirs = torch.quasirandom.SobolEngine(dimension, scramble=True, seed=seed)
    same(mine.sobolstate, theirs.sobolstate)
    same_state(mine, theirs)
    same(mine.draw(1, dtype=tessera.float64), theirs.draw(1, dtype=torch.float64))
    same(mine.draw(200), theirs.draw(200))
    mine.fast_forward(77)
    theirs.fast_forward(77)
    same(mine.draw(64, dtype=tessera.float64), theirs.draw(64, dtype=torch.float64))
    mine.reset()
    theirs.reset()
    same(mine.draw_base2(5, dtype=tessera.float64), theirs.draw_base2(5, dtype=torch.float64))


def test_scramble_is_seeded_by_tesseras_generator():
    a = tq.SobolEngine(5, scramble=True, seed=11).draw(64)
    b = tq.SobolEngine(5, scramble=True, seed=11).draw(64)
    c = tq.SobolEngine(5, scramble=True, seed=12).draw(64)
    same(a, b)
    assert not np.array_equal(arr(a), arr(c))
    # seed=None: the default generator, so tessera.manual_seed makes it reproducible
    tessera.manual_seed(99)
    d = tq.SobolEngine(5, scramble=True).draw(64)
    tessera.manual_seed(99)
    e = tq.SobolEngine(5, scramble=True).draw(64)
    same(d, e)
    # a seeded engine leaves the default generator alone
    tessera.manual_seed(99)
    tq.SobolEngine(5, scramble=True, seed=1)
    same(tq.SobolEngine(5, scramble=True).draw(64), d)


@pytest.mark.parametrize("seed", [0, 1, 77])
def test_scrambled_points_are_stratified(seed):
    m, dimension = 10, 50
    engine = tq.SobolEngine(dimension, scramble=True, seed=seed)
    pts64 = arr(engine.draw_base2(m, dtype=tessera.float64))
    assert pts64.shape == (2 ** m, dimension)
    assert ((pts64 >= 0) & (pts64 < 1)).all()
    # each dimension: one point in each of the 2^m cells [k/2^m, (k+1)/2^m)
    cells = np.floor(pts64 * 2 ** m).astype(np.int64)
    for d in range(dimension):
        assert np.array_equal(np.sort(cells[:, d]), np.arange(2 ** m)), d
    # the first two dimensions form a (0, m, 2)-net: every elementary box of area 2^-m holds one point
    for a in range(m + 1):
        box = (np.floor(pts64[:, 0] * 2 ** a).astype(np.int64) << (m - a)) | \
            np.floor(pts64[:, 1] * 2 ** (m - a)).astype(np.int64)
        assert np.array_equal(np.sort(box), np.arange(2 ** m)), a
    # the next 2^m points are stratified as well
    cells = np.floor(arr(engine.draw_base2(m, dtype=tessera.float64)) * 2 ** m).astype(np.int64)
    for d in range(dimension):
        assert np.array_equal(np.sort(cells[:, d]), np.arange(2 ** m)), d


def test_scrambled_points_integrate_well():
    # a smooth integrand over [0,1)^8 with known integral 1: randomized QMC error is far below MC's
    dimension, n = 8, 2 ** 12
    for seed in range(3):
        x = arr(tq.SobolEngine(dimension, scramble=True, seed=seed).draw(n, dtype=tessera.float64))
        estimate = np.prod(1 + (x - 0.5), axis=1).mean()   # E[prod(1 + (x - 1/2))] = 1
        assert abs(estimate - 1) < 10 / n, estimate
        assert abs(x.mean() - 0.5) < 1e-3
        # the first point is the digital shift alone, and differs from 0
        assert x[0].any()


def test_scrambled_first_point_in_float64_keeps_float32_precision_as_torch():
    # torch computes the first point in the default dtype at construction; draw(dtype=float64)
    # only casts it, so it carries float32 rounding: tessera does the same.
    engine = tq.SobolEngine(16, scramble=True, seed=3)
    first = arr(engine.draw(1, dtype=tessera.float64))[0]
    shift = arr(engine.shift)
    np.testing.assert_array_equal(first, shift.astype(np.float32).astype(np.float64) / 2 ** 30)
    second = arr(engine.draw(1, dtype=tessera.float64))[0]
    state = arr(engine.quasi)
    np.testing.assert_array_equal(second, state / 2 ** 30)
