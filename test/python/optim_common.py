"""Helpers shared by the tessera.optim tests: one small model built identically in torch
and tessera (parameters copied across), its deterministic loss, trajectories of parameters
under an optimizer, and the comparison tolerances."""
import numpy as np
import torch

import tessera

ALL_OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]

# Relative tolerance per dtype; the absolute one scales with the tensor's magnitude, since an
# element that crosses zero has no meaningful relative error.
TOL = {"float32": 1e-6, "float64": 1e-12}

_SHAPES = [(3, 4), (3,), (3, 2)]


def _g(seed):
    return torch.Generator().manual_seed(seed)


def initial_values(extra=0):
    """float64 torch values of the model's parameters (and `extra` further (2,) vectors)."""
    vals = [torch.randn(s, generator=_g(10 + i), dtype=torch.float64) for i, s in enumerate(_SHAPES)]
    vals += [torch.randn(2, generator=_g(20 + i), dtype=torch.float64) for i in range(extra)]
    return vals


_X = torch.randn(5, 4, generator=_g(1), dtype=torch.float64)
_Y = torch.randn(5, 2, generator=_g(2), dtype=torch.float64)


def to_lib(lib, t, dtype):
    """A float64 torch tensor as `lib`'s tensor of the named dtype (values copied)."""
    if lib is torch:
        return t.to(getattr(torch, dtype)).clone()
    return tessera.from_numpy(t.numpy().copy()).to(getattr(tessera, dtype))


def make_params(lib, dtype, values=None, extra=0):
    values = initial_values(extra) if values is None else values
    return [lib.nn.Parameter(to_lib(lib, v, dtype)) for v in values]


def data(lib, dtype):
    return to_lib(lib, _X, dtype), to_lib(lib, _Y, dtype)


def loss_fn(P, x, y, extra_scale=None):
    """Mean squared error of a two-layer tanh network; parameters past the third enter as a
    quadratic penalty (weighted by extra_scale) so each can be switched on and off."""
    h = (x @ P[0].t() + P[1]).tanh()
    loss = ((h @ P[2] - y) ** 2).mean()
    for k, p in enumerate(P[3:]):
        w = 1.0 if extra_scale is None else extra_scale[k]
        if w:
            loss = loss + ((p - 0.5) * (p - 0.5)).sum() * w
    return loss


def snapshot(P):
    return [p.detach().numpy().copy() for p in P]


def trajectory(lib, make_opt, dtype, steps=6, sign=1.0, pre_step=None, P=None, opt=None):
    """Parameters after each of `steps` optimizer steps on sign * loss. pre_step(P), if
    given, runs under no_grad between backward and step (an oracle for decoupled decay)."""
    P = make_params(lib, dtype) if P is None else P
    x, y = data(lib, dtype)
    opt = make_opt(lib, P) if opt is None else opt
    out = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        (loss_fn(P, x, y) * sign).backward()
        if pre_step is not None:
            with lib.no_grad():
                pre_step(P)
        opt.step()
        out.append(snapshot(P))
    return out, opt, P


def assert_close(got, want, dtype, context=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, context
    tol = TOL[dtype]
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=context)


def assert_trajectories_close(got, want, dtype):
    assert len(got) == len(want)
    for k, (g_step, w_step) in enumerate(zip(got, want)):
        for i, (g, w) in enumerate(zip(g_step, w_step)):
            assert_close(g, w, dtype, "step %d, parameter %d" % (k + 1, i))


def state_value(v):
    """A state entry as a plain value: tensors (torch's or tessera's) as numpy, numbers as float."""
    if isinstance(v, (torch.Tensor, tessera.Tensor)):
        return v.detach().numpy().copy()
    return np.asarray(float(v))


def torch_state_dict_to_tessera(sd):
    """A torch optimizer's state_dict with every tensor converted by tessera.from_numpy."""
    def conv(v):
        if isinstance(v, torch.Tensor):
            return tessera.from_numpy(v.detach().numpy().copy())
        return v
    return {"state": {k: {n: conv(v) for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": [dict(g) for g in sd["param_groups"]]}
