"""OpInfo entries for the multi-tensor operators (aten/native/foreach/): every
_foreach_<op> and its in-place form against torch's per-tensor <op> over a list of three
tensors of different shapes, and the fused optimizer steps (_fused_sgd_, _fused_adam_,
_fused_adamw_) against torch.optim's single-tensor steps. Argument and list errors are in
test_optim_foreach.py."""
import torch

from opinfo import OpInfo, make_torch, register

FLOAT = ("float32", "float64")
SHAPES = [(2, 3), (4,), ()]


def list_samples(n_lists, low=-3.0, high=3.0):
    """n_lists lists of three tensors each (flattened into the sample's tensors)."""
    def samples(dtype):
        yield "3 tensors", [make_torch(s, dtype, 10 * k + i, low, high) for k in range(n_lists)
                            for i, s in enumerate(SHAPES)], {}
    return samples


def _lists(tensors, n_lists):
    n = len(tensors) // n_lists
    return [list(tensors[k * n:(k + 1) * n]) for k in range(n_lists)]


def foreach(op, n_lists=1, args=(), per_tensor=None, low=-3.0, high=3.0, **kw):
    """_foreach_<op>(list, *more lists, *args) and _foreach_<op>_ against
    [torch.<op>(t, *more, *args) for each position]."""
    per_tensor = per_tensor or (lambda *t, _op=op: getattr(torch, _op)(*t, *args))

    def call(lib, *tensors):
        lists = _lists(tensors, n_lists)
        if lib is torch:
            return tuple(per_tensor(*column) for column in zip(*lists))
        return getattr(lib, f"_foreach_{op}")(*lists, *args)

    def call_inplace(lib, *tensors):
        lists = [[t.clone() for t in lst] for lst in _lists(tensors, n_lists)]
        if lib is torch:
            return tuple(per_tensor(*column) for column in zip(*lists))
        getattr(lib, f"_foreach_{op}_")(*lists, *args)
        return tuple(lists[0])

    samples = list_samples(n_lists, low, high)
    return [OpInfo(f"_foreach_{op}", call, dtypes=FLOAT, supports_out=False, sample_inputs=samples, **kw),
            OpInfo(f"_foreach_{op}_", call_inplace, dtypes=FLOAT, supports_out=False, sample_inputs=samples,
                   exempt={"grad": "in-place on clones of leaves: the functional entry holds the gradient cases"})]


POSITIVE = dict(low=0.2, high=3.0)
UNIT = dict(low=-0.9, high=0.9)
DOMAINS = {"log": POSITIVE, "log10": POSITIVE, "log1p": POSITIVE, "log2": POSITIVE, "sqrt": POSITIVE,
           "lgamma": POSITIVE, "reciprocal": POSITIVE, "acos": UNIT, "asin": UNIT}
UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac", "lgamma",
         "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh",
         "trunc"]

register(*[info for op in UNARY for info in foreach(op, **DOMAINS.get(op, {}))])
register(*[info for op in ("add", "sub", "mul", "div") for info in foreach(op, args=(2.5,))])
register(*[OpInfo(f"_foreach_{op}[list]", info.call, dtypes=FLOAT, supports_out=False, sample_inputs=info.sample_inputs)
           for op in ("add", "sub", "mul", "div", "maximum", "minimum")
           for info in foreach(op, n_lists=2, **({"low": 0.5} if op == "div" else {}))[:1]])
register(
    *foreach("addcmul", n_lists=3, args=(0.5,), per_tensor=lambda a, b, c: torch.addcmul(a, b, c, value=0.5)),
    *foreach("addcdiv", n_lists=3, args=(-2.0,), low=0.5,
             per_tensor=lambda a, b, c: torch.addcdiv(a, b, c, value=-2.0)),
    *foreach("lerp", n_lists=2, args=(0.3,)),
    OpInfo("_foreach_lerp[list]", foreach("lerp", n_lists=3)[0].call, dtypes=FLOAT, supports_out=False,
           sample_inputs=list_samples(3)),
    *foreach("norm", per_tensor=lambda t: torch.linalg.vector_norm(t, 2))[:1],
    OpInfo("_foreach_norm[ord]", foreach("norm", args=(1,), per_tensor=lambda t: torch.linalg.vector_norm(t, 1))[0].call,
           dtypes=FLOAT, supports_out=False, sample_inputs=list_samples(1)),
    foreach("zero", per_tensor=lambda t: t.zero_())[1],
)


# ---------------------------------------------------------------- fused optimizer steps

def _torch_step(optimizer, params, grads, **kw):
    ps = [torch.nn.Parameter(p.clone()) for p in params]
    for p, g in zip(ps, grads):
        p.grad = g.clone()
    optimizer(ps, **kw).step()
    return tuple(p.detach() for p in ps)


def fused_adam(name, torch_optimizer):
    def call(lib, *tensors, weight_decay=0.01, amsgrad=False, maximize=False):
        params, grads = list(tensors[:3]), list(tensors[3:])
        if lib is torch:
            return _torch_step(torch_optimizer, params, grads, lr=0.1, weight_decay=weight_decay, amsgrad=amsgrad,
                               maximize=maximize)
        ps = [p.clone() for p in params]
        zeros = [[lib.zeros_like(p) for p in ps] for _ in range(3)]
        steps = [lib.tensor(1.0) for _ in ps]
        with lib.no_grad():
            getattr(lib, name)(ps, grads, zeros[0], zeros[1], zeros[2] if amsgrad else [], steps, lr=0.1, beta1=0.9,
                               beta2=0.999, weight_decay=weight_decay, eps=1e-8, amsgrad=amsgrad, maximize=maximize)
        return tuple(ps)
    return OpInfo(name, call, dtypes=FLOAT, supports_out=False, supports_meta=False, sample_inputs=list_samples(2),
                  kwargs=({}, {"amsgrad": True}, {"maximize": True, "weight_decay": 0.0}), rtol=1e-5, atol=1e-6,
                  exempt={"grad": "an optimizer step writes parameters under no_grad: no graph to check"})


def _fused_sgd(lib, *tensors, momentum=0.0, nesterov=False):
    params, grads = list(tensors[:3]), list(tensors[3:])
    if lib is torch:
        return _torch_step(torch.optim.SGD, params, grads, lr=0.1, momentum=momentum, nesterov=nesterov,
                           dampening=0.0, weight_decay=0.05)
    ps = [p.clone() for p in params]
    bufs = [lib.empty_like(p) for p in ps] if momentum else []
    with lib.no_grad():
        lib._fused_sgd_(ps, grads, bufs, weight_decay=0.05, momentum=momentum, lr=0.1, dampening=0.0,
                        nesterov=nesterov, maximize=False, is_first_step=True)
    return tuple(ps)


register(
    fused_adam("_fused_adam_", torch.optim.Adam),
    fused_adam("_fused_adamw_", torch.optim.AdamW),
    OpInfo("_fused_sgd_", _fused_sgd, dtypes=FLOAT, supports_out=False, supports_meta=False,
           sample_inputs=list_samples(2), kwargs=({}, {"momentum": 0.9}, {"momentum": 0.9, "nesterov": True}),
           rtol=1e-5, atol=1e-6, exempt={"grad": "an optimizer step writes parameters under no_grad: no graph to check"}),
)


# ---------------------------------------------------------------- gradient scaling

def _amp_unscale(lib, *grads, inv_scale=0.5):
    """_amp_foreach_non_finite_check_and_unscale_ against its definition in torch ops (torch
    1.13 has no CPU kernel): every grad times inv_scale, found_inf 1 if any was inf/NaN."""
    grads = [g.clone() for g in grads]
    if lib is torch:
        found = any(not bool(torch.isfinite(g).all()) for g in grads)
        return tuple(g * inv_scale for g in grads) + (torch.tensor(float(found)),)
    found = lib.zeros(())
    lib._amp_foreach_non_finite_check_and_unscale_(grads, found, lib.tensor(inv_scale))
    return tuple(grads) + (found,)


def _unscale_samples(dtype):
    yield from list_samples(1)(dtype)
    with_inf = [make_torch(s, dtype, i) for i, s in enumerate(SHAPES)]
    with_inf[0][1, 2] = float("inf")
    yield "an inf", with_inf, {"inv_scale": 0.25}
    with_nan = [make_torch(s, dtype, i) for i, s in enumerate(SHAPES)]
    with_nan[1][3] = float("nan")
    yield "a nan", with_nan, {"inv_scale": 1.0}


def _amp_update(lib, scale, found_inf, *, tracker=0, interval=3, growth=2.0, backoff=0.5):
    """_amp_update_scale_ against its definition: back off on inf, else grow after
    `interval` clean steps in a row."""
    if lib is torch:
        s, t = float(scale), tracker
        if float(found_inf):
            s, t = s * backoff, 0
        elif t + 1 == interval:
            s, t = s * growth, 0
        else:
            t += 1
        return torch.tensor(s, dtype=torch.float32), torch.tensor(t, dtype=torch.int32)
    scale = scale.clone()
    counter = lib.tensor(tracker, dtype=lib.int32)
    lib._amp_update_scale_(scale, counter, found_inf, growth, backoff, interval)
    return scale, counter


def _update_samples(dtype):
    for label, found, tracker in (("clean", 0.0, 0), ("clean, grows", 0.0, 2), ("overflow", 1.0, 2)):
        yield label, [torch.tensor(1024.0, dtype=torch.float32), torch.tensor(found)], {"tracker": tracker}


NO_GRAD = {"grad": "loss-scaling bookkeeping on gradients, under no_grad: not differentiable (no derivative, as torch)"}
register(
    OpInfo("_amp_foreach_non_finite_check_and_unscale_", _amp_unscale, dtypes=("float32", "float64", "bfloat16"),
           supports_out=False, supports_meta=False, sample_inputs=_unscale_samples, exempt=NO_GRAD),
    OpInfo("_amp_update_scale_", _amp_update, dtypes=("float32",), supports_out=False, supports_meta=False,
           sample_inputs=_update_samples, exempt=NO_GRAD),
)
