"""tessera.optim's LBFGS, Rprop, ASGD, SparseAdam and swa_utils against torch 1.13: parameter
trajectories (float32 and float64) for the options that change the arithmetic, the state
torch keeps, state_dict round trips, argument errors, SWALR's lr sequence, AveragedModel's
averages and update_bn's BatchNorm statistics."""
import copy
from unittest import mock

import numpy as np
import pytest
import torch

import tessera
from tessera.optim import lbfgs as lbfgs_module
from optim_common import (assert_close, assert_trajectories_close, data, loss_fn, make_params, snapshot,
                          state_value, torch_state_dict_to_tessera, trajectory)

DTYPES = ["float32", "float64"]


def _case_id(kw):
    return ",".join("%s=%s" % (k, v) for k, v in sorted(kw.items())) or "defaults"


def _make(name, kw):
    return lambda lib, P: getattr(lib.optim, name)(P, **kw)


# ---------------------------------------------------------------- Rprop and ASGD trajectories

RPROP_CASES = [
    dict(), dict(lr=0.05), dict(lr=0.05, etas=(0.3, 1.7)), dict(lr=0.02, maximize=True),
    dict(lr=0.1, step_sizes=(1e-3, 0.12)), dict(lr=0.05, etas=(0.25, 1.5), foreach=True),
    dict(lr=0.05, maximize=True, foreach=True, step_sizes=(0.01, 0.2)),
]

ASGD_CASES = [
    dict(), dict(lr=0.05), dict(lr=0.05, weight_decay=0.1), dict(lr=0.05, t0=2), dict(lr=0.05, t0=0),
    dict(lr=0.1, lambd=0.05, alpha=0.5, t0=3, weight_decay=0.05), dict(lr=0.05, t0=2, maximize=True),
    dict(lr=0.05, t0=2, foreach=True, weight_decay=0.1), dict(lr=0.05, t0=1.5, lambd=0.01, foreach=True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", RPROP_CASES, ids=_case_id)
def test_rprop_trajectory(kw, dtype):
    want, topt, _ = trajectory(torch, _make("Rprop", kw), dtype, steps=8)
    got, opt, _ = trajectory(tessera, _make("Rprop", kw), dtype, steps=8)
    assert_trajectories_close(got, want, dtype)
    for i in range(3):
        w, g = topt.state_dict()["state"][i], opt.state_dict()["state"][i]
        assert set(g) == set(w) == {"step", "prev", "step_size"}
        assert float(g["step"]) == w["step"] == 8
        for key in ("prev", "step_size"):
            assert g[key].dtype == getattr(tessera, dtype)
            assert_close(state_value(g[key]), state_value(w[key]), dtype, key)


def test_rprop_sign_flips_happen():
    """The cases above exercise both branches: some gradient changes sign (its step shrinks)
    and some keeps it (its step grows)."""
    _, topt, _ = trajectory(torch, _make("Rprop", dict(lr=0.05)), "float64", steps=8)
    sizes = np.concatenate([s["step_size"].numpy().ravel() for s in topt.state.values()])
    assert (sizes < 0.05).any() and (sizes > 0.05).any()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", ASGD_CASES, ids=_case_id)
def test_asgd_trajectory_and_average(kw, dtype):
    want, topt, _ = trajectory(torch, _make("ASGD", kw), dtype, steps=8)
    got, opt, _ = trajectory(tessera, _make("ASGD", kw), dtype, steps=8)
    assert_trajectories_close(got, want, dtype)
    for i in range(3):
        w, g = topt.state_dict()["state"][i], opt.state_dict()["state"][i]
        assert list(g) == list(w) == ["step", "eta", "mu", "ax"]
        for key in ("step", "eta", "mu"):
            assert w[key].dtype == torch.float32 and g[key].dtype == tessera.float32, key
            np.testing.assert_array_equal(state_value(g[key]), state_value(w[key]), err_msg=key)
        assert g["ax"].dtype == getattr(tessera, dtype)
        assert_close(state_value(g["ax"]), state_value(w["ax"]), dtype, "ax")


def test_asgd_averaging_kicks_in():
    """With a small t0 the average 'ax' differs from the parameters (mu < 1)."""
    _, topt, P = trajectory(torch, _make("ASGD", dict(lr=0.05, t0=2)), "float64", steps=8)
    s = topt.state[P[0]]
    assert float(s["mu"]) < 1
    assert not np.allclose(s["ax"].numpy(), P[0].detach().numpy())


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_param_getting_grad_later_follows_torch(name):
    """A parameter whose gradient appears only from the third step has its own step count
    (ASGD: its own eta and mu) from then on."""
    def run(lib):
        P = make_params(lib, "float64", extra=1)
        x, y = data(lib, "float64")
        opt = getattr(lib.optim, name)(P, lr=0.05, **({"t0": 1} if name == "ASGD" else {}))
        out = []
        for k in range(6):
            opt.zero_grad(set_to_none=True)
            loss_fn(P, x, y, extra_scale=[1.0 if k >= 2 else 0.0]).backward()
            opt.step()
            out.append(snapshot(P))
        return out
    assert_trajectories_close(run(tessera), run(torch), "float64")


# ---------------------------------------------------------------- LBFGS
#
# L-BFGS amplifies rounding: an ulp of difference in one iteration grows through the
# curvature pairs and can flip a line-search branch. tessera's kernels round as torch's to
# within an ulp, not bit for bit: torch 1.13's CPU add/sub with alpha (and addcmul) is a
# fused multiply-add, tessera's rounds twice, and a float sum of five or more elements adds
# in another order. So the checks are in three parts:
# - the algorithm itself, run on torch's kernels (the module's _C swapped for torch), must
#   reproduce torch.optim.LBFGS bit for bit on an ill-conditioned (Rosenbrock) problem;
# - on tessera's kernels, trajectories within TOL on a well-conditioned convex problem whose
#   values come from numpy (the same closure values in both libraries); it is scaled so
#   that sum |grad| < 1 at the start, making the first step length lr exactly instead of
#   depending on the order of that sum;
# - the shared autograd model, float64, with a tolerance that allows for the amplification.

def _rosen(x):
    """f(x) = sum (1 - x_i)^2 + 10 (x_{i+1} - x_i^2)^2 and its gradient, in float64."""
    a, b = x[:-1], x[1:]
    r = b - a * a
    f = ((1 - a) ** 2).sum() + 10 * (r ** 2).sum()
    g = np.zeros_like(x)
    g[:-1] += -2 * (1 - a) - 40 * a * r
    g[1:] += 20 * r
    return f, g


def _softplus_chain(x, scale=0.02):
    """scale * (sum w_i (x_i - m_i)^2 / 2 + sum softplus(x_i - 2 x_{i+1})): convex, smooth."""
    n = len(x)
    w = 1 + (np.arange(n) % 4)
    m = np.cos(np.arange(n))
    z = x[:-1] - 2 * x[1:]
    f = 0.5 * (w * (x - m) ** 2).sum() + np.logaddexp(0, z).sum()
    s = 1 / (1 + np.exp(-z))
    g = w * (x - m)
    g[:-1] += s
    g[1:] -= 2 * s
    return f * scale, g * scale


def _grid_start(dtype):
    vals = []
    k = 0
    for shape in [(3, 4), (3,), (3, 2)]:
        n = int(np.prod(shape))
        vals.append(torch.tensor([((k + i) * 7 % 9 - 4) / 4 for i in range(n)], dtype=torch.float64).reshape(shape))
        k += n
    return make_params(torch, dtype, values=vals), vals


def numpy_run(lib, kw, dtype, steps=3, P=None, opt=None, fn=_softplus_chain):
    """LBFGS on fn (numpy values): parameters and the returned loss after each step, the optimizer,
    the parameters and the number of closure calls."""
    if P is None:
        _, vals = _grid_start(dtype)
        P = make_params(lib, dtype, values=vals)
    opt = lib.optim.LBFGS(P, **kw) if opt is None else opt
    np_dtype = np.float32 if dtype == "float32" else np.float64
    calls = []

    def closure():
        calls.append(1)
        x = np.concatenate([p.detach().numpy().astype(np.float64).ravel() for p in P])
        f, g = fn(x)
        offset = 0
        for p in P:
            n = p.numel()
            grad = g[offset:offset + n].astype(np_dtype).reshape(tuple(p.shape))
            p.grad = torch.from_numpy(grad) if lib is torch else tessera.from_numpy(grad)
            offset += n
        return torch.tensor(f).to(getattr(torch, dtype)) if lib is torch else \
            tessera.tensor(f).to(getattr(tessera, dtype))

    out, losses = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure)))
        out.append(snapshot(P))
    return out, losses, opt, P, len(calls)


def lbfgs_run(lib, kw, dtype, steps=4, P=None, opt=None, extra=0):
    """LBFGS on the shared model's loss through autograd."""
    P = make_params(lib, dtype, extra=extra) if P is None else P
    x, y = data(lib, dtype)
    opt = lib.optim.LBFGS(P, **kw) if opt is None else opt

    def closure():
        opt.zero_grad()
        loss = loss_fn(P, x, y, extra_scale=[0.0] * extra)
        loss.backward()
        return loss

    out, losses = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure)))
        out.append(snapshot(P))
    return out, losses, opt, P


LBFGS_CASES = [
    dict(), dict(lr=0.5, max_iter=5), dict(history_size=1, max_iter=6), dict(history_size=3, max_iter=8),
    dict(lr=0.8, history_size=2, max_iter=4, max_eval=6), dict(max_iter=3, tolerance_change=1e-4),
    dict(max_iter=30, tolerance_grad=1e-3), dict(lr=0.1, max_iter=40),
    dict(line_search_fn="strong_wolfe"), dict(line_search_fn="strong_wolfe", history_size=1, max_iter=6),
    dict(line_search_fn="strong_wolfe", history_size=4, max_iter=10, lr=2),
    dict(line_search_fn="strong_wolfe", max_iter=5, max_eval=7),
    dict(line_search_fn="strong_wolfe", history_size=2, max_iter=50),
]


# ro = 1 / (y . s) and H_diag = (y . s) / (y . y) come from y, the difference of two nearly
# equal gradients near the optimum: their relative error is that cancellation's, far above
# an ulp, so they are compared with a relative tolerance of their own: a few times the
# square root of the dtype's epsilon (the cancellation's scale; 1e-8 was exceeded on an
# AVX-512 machine, where torch's sums round differently from tessera's AVX2 ones).
CURVATURE_RTOL = {"float32": 1e-3, "float64": 1e-7}


def _lbfgs_state_matches(state, tstate, dtype, tol=None):
    """LBFGS's state against torch's: the same keys in the same order, the same counters and
    history lengths, the values close (TOL, or tol when given)."""
    close = (lambda g, w, key: assert_close(g, w, dtype, key)) if tol is None else \
        (lambda g, w, key: np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=key))

    def curvature_close(g, w, key):
        np.testing.assert_allclose(g, w, rtol=max(tol or 0, CURVATURE_RTOL[dtype]), err_msg=key)

    def direction_close(g, w, key):
        # d and the step history are built from ro and H_diag, so they carry the curvature's
        # relative error, as vectors: an element near zero holds the whole vector's error
        # (an AVX-512 torch against tessera's AVX2 sums differ there by 3e-7 of the element)
        try:
            return close(g, w, key)
        except AssertionError:
            if tol is not None:
                raise
        g, w = np.asarray(g, dtype=np.float64), np.asarray(w, dtype=np.float64)
        assert np.linalg.norm(g - w) <= CURVATURE_RTOL[dtype] * np.linalg.norm(w), (key, g, w)

    assert list(state) == list(tstate)
    for key in ("func_evals", "n_iter"):
        assert state[key] == tstate[key], key
    close(state["prev_loss"], tstate["prev_loss"], "prev_loss")
    for key in ("t", "H_diag"):
        if isinstance(tstate[key], torch.Tensor):
            assert isinstance(state[key], tessera.Tensor) and state[key].dtype == getattr(tessera, dtype), key
        else:
            assert type(state[key]) is type(tstate[key]), key
    close(state_value(state["t"]), state_value(tstate["t"]), "t")
    curvature_close(state_value(state["H_diag"]), state_value(tstate["H_diag"]), "H_diag")
    for key in ("d", "prev_flat_grad"):
        assert state[key].dtype == getattr(tessera, dtype)
        (direction_close if key == "d" else close)(state_value(state[key]), state_value(tstate[key]), key)
    for key in ("old_dirs", "old_stps", "ro"):
        assert len(state[key]) == len(tstate[key]), key
        compare = {"ro": curvature_close, "old_stps": direction_close}.get(key, close)
        for a, b in zip(state[key], tstate[key]):
            compare(state_value(a), state_value(b), key)
    if "al" in tstate:
        assert len(state["al"]) == len(tstate["al"])
        assert [a is None for a in state["al"]] == [a is None for a in tstate["al"]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", LBFGS_CASES, ids=_case_id)
def test_lbfgs_algorithm_on_torch_kernels_is_torchs(kw, dtype):
    """tessera's LBFGS, its tensor operations routed to torch, against torch.optim.LBFGS on
    the Rosenbrock chain: the same parameters, losses, evaluation counts and state, bit for
    bit, so every branch of the iteration and the line search is torch's."""
    want, wlosses, topt, tP, wcalls = numpy_run(torch, kw, dtype, fn=_rosen)
    P, _ = _grid_start(dtype)
    opt = tessera.optim.LBFGS(make_params(tessera, dtype), **kw)
    opt._params = P  # the flat-vector work and the state on torch's tensors
    with mock.patch.object(lbfgs_module, "_C", torch), \
            mock.patch.object(lbfgs_module, "no_grad", torch.no_grad), \
            mock.patch.object(lbfgs_module, "enable_grad", torch.enable_grad):
        got, glosses, _, _, gcalls = numpy_run(torch, kw, dtype, P=P, opt=opt, fn=_rosen)
    assert gcalls == wcalls and glosses == wlosses
    for g_step, w_step in zip(got, want):
        for g, w in zip(g_step, w_step):
            np.testing.assert_array_equal(g, w)
    state, tstate = opt.state[P[0]], topt.state[tP[0]]
    assert list(state) == list(tstate)
    for key, w in tstate.items():
        g = state[key]
        if isinstance(w, list):
            assert len(g) == len(w) and all((a is None and b is None) or bool((a == b).all())
                                            for a, b in zip(g, w)), key
        elif isinstance(w, torch.Tensor):
            assert bool((g == w).all()), key
        else:
            assert g == w and type(g) is type(w), key


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", LBFGS_CASES, ids=_case_id)
def test_lbfgs_trajectory(kw, dtype):
    want, wlosses, topt, tP, wcalls = numpy_run(torch, kw, dtype)
    got, glosses, opt, P, gcalls = numpy_run(tessera, kw, dtype)
    assert gcalls == wcalls
    assert_trajectories_close(got, want, dtype)
    assert_close(glosses, wlosses, dtype, "losses")
    _lbfgs_state_matches(opt.state[P[0]], topt.state[tP[0]], dtype)
    assert len(opt.state) == 1  # all of it on the first parameter


def test_lbfgs_cases_exercise_the_line_search():
    """The strong-Wolfe cases take more than one evaluation per iteration somewhere (the
    zoom or the extrapolation runs); some plain cases stop before max_iter by tolerance."""
    _, _, opt, P, calls = numpy_run(torch, dict(line_search_fn="strong_wolfe", history_size=2, max_iter=50),
                                    "float64", fn=_rosen)
    assert calls > opt.state[P[0]]["n_iter"] + 3
    _, _, opt, P, calls = numpy_run(torch, dict(max_iter=30, tolerance_grad=1e-3), "float64")
    assert opt.state[P[0]]["n_iter"] < 90


@pytest.mark.parametrize("kw", [dict(max_iter=5), dict(history_size=2, max_iter=7), dict(line_search_fn="strong_wolfe"),
                                dict(line_search_fn="strong_wolfe", history_size=3, max_iter=6)], ids=_case_id)
def test_lbfgs_autograd_model(kw):
    """The shared model through autograd, float64: its loss and gradients agree with torch's
    to about an ulp, which these runs (up to sixty iterations) grow to ~3e-11 at most. (The
    default options, plain steps of lr=1 on this non-convex loss, part at the third step
    once an early stop falls differently: not compared.)"""
    want, wlosses, topt, tP = lbfgs_run(torch, kw, "float64", steps=3)
    got, glosses, opt, P = lbfgs_run(tessera, kw, "float64", steps=3)
    for k, (g_step, w_step) in enumerate(zip(got, want)):
        for g, w in zip(g_step, w_step):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9, err_msg="step %d" % (k + 1))
    np.testing.assert_allclose(glosses, wlosses, rtol=1e-9)
    _lbfgs_state_matches(opt.state[P[0]], topt.state[tP[0]], "float64", tol=1e-9)


def test_lbfgs_history_is_bounded_and_used():
    """The history sizes above matter: with history_size=1 one pair is kept, and the
    trajectories of history 1 and 100 differ (in torch, as tessera follows)."""
    _, _, opt, P, _ = numpy_run(tessera, dict(history_size=1, max_iter=6), "float64")
    assert len(opt.state[P[0]]["old_dirs"]) == 1
    a, _, _, _, _ = numpy_run(torch, dict(history_size=1, max_iter=6), "float64")
    b, _, _, _, _ = numpy_run(torch, dict(history_size=100, max_iter=6), "float64")
    assert not np.allclose(a[-1][0], b[-1][0])


def test_lbfgs_param_without_grad():
    """A parameter the loss does not use contributes zeros to the flat gradient."""
    want, _, _, _ = lbfgs_run(torch, dict(max_iter=3), "float64", steps=2, extra=1)
    got, _, _, _ = lbfgs_run(tessera, dict(max_iter=3), "float64", steps=2, extra=1)
    assert_trajectories_close(got, want, "float64")


def test_lbfgs_stops_at_optimum():
    """Below tolerance_grad step() evaluates once and leaves the parameters alone."""
    for lib in (torch, tessera):
        p = lib.nn.Parameter(lib.zeros(3, dtype=lib.float64))
        opt = lib.optim.LBFGS([p])
        calls = []

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        assert float(opt.step(closure)) == 0.0
        assert len(calls) == 1 and opt.state[p]["func_evals"] == 1 and opt.state[p]["n_iter"] == 0


def test_lbfgs_defaults_and_errors():
    for kw in (dict(), dict(max_iter=7), dict(max_iter=9, max_eval=3), dict(lr=0.1, history_size=5)):
        tp, p = make_params(torch, "float64"), make_params(tessera, "float64")
        assert tessera.optim.LBFGS(p, **kw).defaults == torch.optim.LBFGS(tp, **kw).defaults
    assert torch.optim.LBFGS(make_params(torch, "float64")).defaults["tolerance_grad"] == 1e-7

    def groups(lib):
        P = make_params(lib, "float64")
        return [{"params": P[:1]}, {"params": P[1:]}]
    _same_error(lambda lib: lib.optim.LBFGS(groups(lib)))

    def no_closure(lib):
        lib.optim.LBFGS(make_params(lib, "float64")).step()
    _same_error(no_closure, match_message=False)  # TypeError: missing argument 'closure'

    def bad_search(lib):
        P = make_params(lib, "float64")
        x, y = data(lib, "float64")
        opt = lib.optim.LBFGS(P, line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = loss_fn(P, x, y)
            loss.backward()
            return loss
        opt.step(closure)
    _same_error(bad_search)


# ---------------------------------------------------------------- state_dict round trips

ROUND_TRIP = [("Rprop", dict(lr=0.05, etas=(0.4, 1.3))), ("ASGD", dict(lr=0.05, t0=2, weight_decay=0.1)),
              ("ASGD", dict(lr=0.05, t0=2, foreach=True))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, kw", ROUND_TRIP)
def test_round_trip_continues_as_torch(name, kw, dtype):
    """Three steps, save, load into a fresh optimizer over copies of the parameters,
    three more steps: the same as torch's run doing the same."""
    def run(lib):
        P = make_params(lib, dtype)
        _, opt, _ = trajectory(lib, _make(name, kw), dtype, steps=3, P=P)
        saved = copy.deepcopy(opt.state_dict())
        P2 = [lib.nn.Parameter(p.detach().clone()) for p in P]
        fresh = getattr(lib.optim, name)(P2, lr=0.5)
        fresh.load_state_dict(saved)
        assert fresh.param_groups[0]["lr"] == kw["lr"]
        out, _, _ = trajectory(lib, None, dtype, steps=3, P=P2, opt=fresh)
        return out, saved, fresh.state_dict()
    got, gsaved, gafter = run(tessera)
    want, wsaved, wafter = run(torch)
    assert_trajectories_close(got, want, dtype)
    for g, w in ((gsaved, wsaved), (gafter, wafter)):
        assert [sorted(x) for x in g["param_groups"]] == [sorted(x) for x in w["param_groups"]]
        for key in w["param_groups"][0]:
            assert g["param_groups"][0][key] == w["param_groups"][0][key], key
        assert sorted(g["state"]) == sorted(w["state"]) == [0, 1, 2]
        for i in w["state"]:
            assert list(g["state"][i]) == list(w["state"][i])
            for key, value in w["state"][i].items():
                assert_close(state_value(g["state"][i][key]), state_value(value), dtype, key)


@pytest.mark.parametrize("name, kw", ROUND_TRIP)
def test_torch_state_dict_loads(name, kw):
    """A torch optimizer's state_dict (tensors converted; Rprop's int step included)
    continues torch's run in tessera."""
    P = make_params(torch, "float64")
    _, topt, _ = trajectory(torch, _make(name, kw), "float64", steps=3, P=P)
    saved = torch_state_dict_to_tessera(topt.state_dict())
    start = [p.detach().clone() for p in P]
    want, _, _ = trajectory(torch, None, "float64", steps=3, P=P, opt=topt)
    P2 = [tessera.nn.Parameter(tessera.from_numpy(p.numpy())) for p in start]
    opt = getattr(tessera.optim, name)(P2)
    opt.load_state_dict(saved)
    got, _, _ = trajectory(tessera, None, "float64", steps=3, P=P2, opt=opt)
    assert_trajectories_close(got, want, "float64")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(history_size=3, max_iter=5), dict(line_search_fn="strong_wolfe", max_iter=4)],
                         ids=_case_id)
def test_lbfgs_round_trip(kw, dtype):
    """LBFGS keeps lists of tensors and Python numbers in its state: a save after two steps,
    loaded into a fresh optimizer, continues as torch's does."""
    def run(lib):
        _, _, opt, P, _ = numpy_run(lib, kw, dtype, steps=2)
        saved = copy.deepcopy(opt.state_dict())
        P2 = [lib.nn.Parameter(p.detach().clone()) for p in P]
        fresh = lib.optim.LBFGS(P2, lr=0.1)
        fresh.load_state_dict(saved)
        out, losses, _, _, _ = numpy_run(lib, kw, dtype, steps=2, P=P2, opt=fresh)
        return out, losses, saved, fresh, P2
    got, glosses, gsaved, gopt, gP = run(tessera)
    want, wlosses, wsaved, wopt, wP = run(torch)
    assert_trajectories_close(got, want, dtype)
    assert_close(glosses, wlosses, dtype, "losses")
    assert gsaved["param_groups"] == wsaved["param_groups"]
    assert list(gsaved["state"]) == list(wsaved["state"]) == [0]
    _lbfgs_state_matches(gopt.state[gP[0]], wopt.state[wP[0]], dtype)
    # The loaded lists are the optimizer's own, not the saved dict's.
    assert gopt.state[gP[0]]["old_dirs"] is not gsaved["state"][0]["old_dirs"]


def test_lbfgs_load_casts_history_to_param_dtype():
    """load_state_dict casts the tensors inside LBFGS's lists to the parameters' dtype, as
    torch's does."""
    states = []
    for lib in (torch, tessera):
        _, _, opt, _, _ = numpy_run(lib, dict(max_iter=4), "float32", steps=1)
        P2 = make_params(lib, "float64")
        fresh = lib.optim.LBFGS(P2)
        fresh.load_state_dict(opt.state_dict())
        states.append(fresh.state[P2[0]])
    want, got = states
    for key in ("old_dirs", "old_stps", "ro"):
        assert [str(t.dtype).split(".")[-1] for t in got[key]] == [str(t.dtype).split(".")[-1] for t in want[key]]
        assert all(t.dtype == tessera.float64 for t in got[key])


# ---------------------------------------------------------------- constructors and errors

def _same_error(fn, match_message=True):
    """fn(lib) raises the same exception type (and message) for torch and tessera."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(tessera)
    assert type(got.value) is type(want.value), (got.value, want.value)
    if match_message:
        assert str(got.value) == str(want.value)


ARG_ERRORS = [
    ("Rprop", dict(lr=-0.1)), ("Rprop", dict(etas=(1.5, 2.0))), ("Rprop", dict(etas=(0.5, 0.9))),
    ("Rprop", dict(etas=(0.0, 1.2))), ("ASGD", dict(lr=-1.0)), ("ASGD", dict(weight_decay=-0.5)),
    ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(lr=-1.0)), ("SparseAdam", dict(eps=0.0)),
    ("SparseAdam", dict(betas=(1.0, 0.9))), ("SparseAdam", dict(betas=(0.9, -0.1))),
]


@pytest.mark.parametrize("name, kw", ARG_ERRORS, ids=[n + "-" + _case_id(k) for n, k in ARG_ERRORS])
def test_argument_errors(name, kw):
    _same_error(lambda lib: getattr(lib.optim, name)(make_params(lib, "float64"), **kw))


@pytest.mark.parametrize("name", ["Rprop", "ASGD", "SparseAdam", "LBFGS"])
def test_common_constructor_errors(name):
    _same_error(lambda lib: getattr(lib.optim, name)([]))
    _same_error(lambda lib: getattr(lib.optim, name)([1.0]), match_message=False)


@pytest.mark.parametrize("name, kw", [("Rprop", {}), ("Rprop", dict(lr=0.1, etas=(0.2, 3), step_sizes=(0, 1))),
                                      ("ASGD", {}), ("ASGD", dict(lambd=0.1, alpha=0.5, t0=10, maximize=True)),
                                      ("SparseAdam", {}), ("SparseAdam", dict(lr=0.1, betas=(0.5, 0.6), eps=1e-3))])
def test_defaults_match_torch(name, kw):
    want = getattr(torch.optim, name)(make_params(torch, "float64"), **kw)
    got = getattr(tessera.optim, name)(make_params(tessera, "float64"), **kw)
    assert got.defaults == want.defaults
    assert {k: v for k, v in got.param_groups[0].items() if k != "params"} == \
        {k: v for k, v in want.param_groups[0].items() if k != "params"}


def test_sparse_adam_refuses_dense_gradients():
    _same_error(lambda lib: trajectory(lib, _make("SparseAdam", {}), "float64", steps=1))
    for lib in (torch, tessera):
        P = make_params(lib, "float64")
        opt = lib.optim.SparseAdam([{"params": P[:1]}, {"params": P[1:], "lr": 0.1}])
        assert opt.param_groups[1]["lr"] == 0.1
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            trajectory(lib, None, "float64", steps=1, P=P, opt=opt)
        # Nothing was updated and no state created.
        assert len(opt.state) == 0
        opt.zero_grad(set_to_none=True)
        opt.step()  # no gradients: nothing to do


def test_sparse_adam_lists_params_first():
    """torch lists params before the base class checks them, so a lone tensor is taken as
    its rows (which are not leaves that require grad, but are leaves)."""
    for lib in (torch, tessera):
        opt = lib.optim.SparseAdam(lib.zeros(3, 2))
        assert len(opt.param_groups[0]["params"]) == 3


# ---------------------------------------------------------------- SWALR

def _sgd(lib, lrs=(0.5,)):
    groups = [{"params": [lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))], "lr": lr} for lr in lrs]
    return lib.optim.SGD(groups, lr=lrs[0])


SWALR_CASES = [
    dict(swa_lr=0.05), dict(swa_lr=0.05, anneal_strategy="linear"), dict(swa_lr=0.05, anneal_epochs=3),
    dict(swa_lr=0.2, anneal_epochs=1, anneal_strategy="linear"), dict(swa_lr=0.05, anneal_epochs=0),
    dict(swa_lr=0.9, anneal_epochs=4),
]


def _lr_sequence(lib, kw, lrs=(0.5,), steps=14):
    opt = _sgd(lib, lrs)
    sched = lib.optim.swa_utils.SWALR(opt, **kw)
    seq = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(sched.get_last_lr())
    return seq, opt, sched


@pytest.mark.parametrize("kw", SWALR_CASES, ids=_case_id)
def test_swalr_sequence(kw):
    want, wopt, _ = _lr_sequence(torch, kw)
    got, gopt, _ = _lr_sequence(tessera, kw)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert gopt.param_groups[0]["swa_lr"] == wopt.param_groups[0]["swa_lr"]


def test_swalr_per_group_and_state_dict():
    kw = dict(swa_lr=[0.05, 0.01], anneal_epochs=3, anneal_strategy="linear")
    want, _, wsched = _lr_sequence(torch, kw, lrs=(0.5, 0.1), steps=6)
    got, _, gsched = _lr_sequence(tessera, kw, lrs=(0.5, 0.1), steps=6)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    wstate, gstate = wsched.state_dict(), gsched.state_dict()
    for key in ("anneal_epochs", "last_epoch", "_step_count", "base_lrs", "_last_lr"):
        assert gstate[key] == wstate[key], key


def test_swalr_after_another_scheduler_value():
    """SWALR starts from whatever lr the group has (here one a previous schedule left)."""
    seqs = []
    for lib in (torch, tessera):
        opt = _sgd(lib)
        opt.param_groups[0]["lr"] = 0.3
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=5)
        seq = []
        for _ in range(7):
            opt.step()
            sched.step()
            seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
    np.testing.assert_allclose(seqs[1], seqs[0], rtol=1e-12)


@pytest.mark.parametrize("kw", [dict(swa_lr=0.1, anneal_strategy="exp"), dict(swa_lr=0.1, anneal_epochs=-1),
                                dict(swa_lr=0.1, anneal_epochs=2.0), dict(swa_lr=[0.1, 0.2]),
                                dict(swa_lr=(0.1,), anneal_epochs=-3)], ids=_case_id)
def test_swalr_errors(kw):
    _same_error(lambda lib: lib.optim.swa_utils.SWALR(_sgd(lib), **kw))


def test_swalr_warns_on_get_lr_outside_step():
    for lib in (torch, tessera):
        sched = lib.optim.swa_utils.SWALR(_sgd(lib), swa_lr=0.1)
        with pytest.warns(UserWarning, match="get_last_lr"):
            sched.get_lr()


# ---------------------------------------------------------------- AveragedModel and update_bn

def _twin_models(dtype="float64"):
    """The same small model with BatchNorm in torch and tessera (values copied across)."""
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    tm = tm.to(getattr(torch, dtype))
    m = tessera.nn.Sequential(tessera.nn.Linear(4, 3), tessera.nn.BatchNorm1d(3), tessera.nn.Tanh(),
                              tessera.nn.Linear(3, 2)).to(getattr(tessera, dtype))
    m.load_state_dict({k: tessera.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, m


def _inputs(lib, n=5, seed=3, dtype="float64"):
    vals = torch.randn(n, 8, 4, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    out = [v.to(getattr(torch, dtype)) for v in vals]
    return out if lib is torch else [tessera.from_numpy(v.numpy().copy()) for v in out]


def _train_and_average(lib, model, avg_kw, dtype="float64", rounds=4):
    """SGD steps on the model in training mode (so the BatchNorm buffers move too), the
    average updated after each."""
    avg = lib.optim.swa_utils.AveragedModel(model, **avg_kw)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    for k, x in enumerate(_inputs(lib, rounds, dtype=dtype)):
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()
        avg.update_parameters(model)
    return avg


def _ema(averaged, current, num_averaged):
    return 0.8 * averaged + 0.2 * current


AVG_CASES = [dict(), dict(use_buffers=True), dict(avg_fn=_ema), dict(avg_fn=_ema, use_buffers=True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", AVG_CASES, ids=["default", "buffers", "ema", "ema-buffers"])
def test_averaged_model(kw, dtype):
    tm, m = _twin_models(dtype)
    want = _train_and_average(torch, tm, kw, dtype)
    got = _train_and_average(tessera, m, kw, dtype)
    assert int(got.n_averaged) == int(want.n_averaged) == 4
    assert got.n_averaged.dtype == tessera.int64
    wsd, gsd = want.state_dict(), got.state_dict()
    assert list(gsd) == list(wsd)
    for key, w in wsd.items():
        g = gsd[key]
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1], key
        if w.is_floating_point():
            assert_close(g.numpy(), w.numpy(), dtype, key)
        else:
            np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=key)
    # The averaged model runs like its module.
    x = _inputs(torch, 1, seed=9, dtype=dtype)[0]
    want.eval()
    got.eval()
    with torch.no_grad():
        wout = want(x).numpy()
    with tessera.no_grad():
        gout = got(tessera.from_numpy(x.numpy().copy())).numpy()
    assert_close(gout, wout, dtype, "forward")


def test_averaged_model_is_a_copy():
    _, m = _twin_models()
    avg = tessera.optim.swa_utils.AveragedModel(m)
    assert avg.module is not m
    names = [n for n, _ in avg.named_parameters()]
    assert names == ["module." + n for n, _ in m.named_parameters()]
    assert [n for n, _ in avg.named_buffers()][0] == "n_averaged"


def _scramble_bn(lib, model):
    for mod in model.modules():
        if isinstance(mod, lib.nn.BatchNorm1d):
            with lib.no_grad():
                mod.running_mean.fill_(5.0)
                mod.running_var.fill_(7.0)
            mod.num_batches_tracked.fill_(11)


@pytest.mark.parametrize("loader_kind", ["list", "dataloader", "list-of-pairs"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_update_bn(loader_kind, dtype):
    tm, m = _twin_models(dtype)
    results = []
    for lib, model in ((torch, tm), (tessera, m)):
        _scramble_bn(lib, model)
        model.eval()
        bn = model[1]
        bn.momentum = 0.3
        xs = _inputs(lib, 4, seed=5, dtype=dtype)
        if loader_kind == "list":
            loader = xs
        elif loader_kind == "list-of-pairs":
            loader = [(x, x.sum(1)) for x in xs]
        else:
            data_mod = lib.utils.data
            loader = data_mod.DataLoader(data_mod.TensorDataset(lib.cat(xs), lib.cat(xs).sum(1)), batch_size=8)
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training and bn.momentum == 0.3
        results.append((bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                        int(bn.num_batches_tracked)))
    (wm, wv, wn), (gm, gv, gn) = results
    assert gn == wn == 4
    assert_close(gm, wm, dtype, "running_mean")
    assert_close(gv, wv, dtype, "running_var")


def test_update_bn_keeps_training_mode_and_skips_models_without_bn():
    for lib in (torch, tessera):
        tm, m = _twin_models()
        model = tm if lib is torch else m
        model.train()
        lib.optim.swa_utils.update_bn(_inputs(lib, 2), model)
        assert model.training
        plain = lib.nn.Linear(4, 2).double()
        plain.eval()
        calls = []
        plain.register_forward_hook(lambda *a: calls.append(1))
        lib.optim.swa_utils.update_bn(_inputs(lib, 2), plain)
        assert calls == [] and not plain.training


def test_exports():
    for name in ("LBFGS", "Rprop", "ASGD", "SparseAdam", "swa_utils"):
        assert hasattr(tessera.optim, name)
    assert sorted(tessera.optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
    for name in ("LBFGS", "Rprop", "ASGD", "SparseAdam"):
        assert issubclass(getattr(tessera.optim, name), tessera.optim.Optimizer)
