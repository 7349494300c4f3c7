"""OpInfo entries for the nn activations, called through the bindings torch exposes them
by (torch._C._nn.gelu, torch.threshold, ...), whose out= forms are tested too; the
tensor-level behaviour of torch.nn.functional's wrappers is in test_nn_functional.py."""
from opinfo import FLOATING, OpInfo, register


def nn_op(name, **kw):
    """An operator of torch._C._nn (tessera._C._nn); its fused backward operator is run by
    the gradient cases and differentiated again by gradgradcheck."""
    kw.setdefault("gradgrad", True)
    kw.setdefault("covers", (f"{name}_backward",))
    if name + "_" in NN_IN_PLACE:
        kw.setdefault("inplace", lambda lib, a, _n=name + "_", **k: getattr(lib._C._nn, _n)(a, **k))
    return OpInfo(name, lambda lib, a, _n=name, **k: getattr(lib._C._nn, _n)(a, **k), **kw)


# the in-place forms torch._C._nn binds (F.elu(x, inplace=True) reaches elu_, ...)
NN_IN_PLACE = {"elu_", "hardtanh_", "leaky_relu_", "hardsigmoid_", "hardswish_", "silu_", "mish_", "relu6_"}


def top_op(name, *args, inplace=False, **kw):
    """An operator bound at the top level (torch.threshold, torch.selu, ...), and its
    in-place form torch.<name>_ where torch has one."""
    if inplace:
        kw["inplace"] = lambda lib, a, _n=name + "_", **k: getattr(lib, _n)(a, *args, **k)
    return OpInfo(name, lambda lib, a, _n=name, **k: getattr(lib, _n)(a, *args, **k), **kw)


def _prelu(lib, a, **k):
    # one slope, or one per channel (dim 1) when there is a channel dim
    channels = a.shape[1] if a.dim() >= 2 else 1
    kind = dict(dtype=a.dtype, device=a.device)
    weight = lib.linspace(0.1, 0.4, channels, **kind) if a.dtype.is_floating_point else lib.ones(channels, **kind)
    return lib.prelu(a, weight, **k)


register(
    nn_op("gelu", kwargs=({}, {"approximate": "tanh"})),
    nn_op("silu"),
    nn_op("mish"),
    nn_op("elu", kwargs=({}, {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5})),
    nn_op("leaky_relu", kwargs=({}, {"negative_slope": 0.3})),
    nn_op("softplus", kwargs=({}, {"beta": 2.0, "threshold": 3.0})),
    nn_op("hardtanh", kwargs=({}, {"min_val": -2.0, "max_val": 0.5})),
    nn_op("hardsigmoid"),
    nn_op("hardswish"),
    nn_op("softshrink", kwargs=({}, {"lambd": 1.5})),
    nn_op("log_sigmoid"),
    nn_op("relu6", supports_out=False, covers=()),
    nn_op("glu", kwargs=({}, {"dim": 0}), covers=()),
    top_op("threshold", 0.5, 2.0, inplace=True, gradgrad=True, covers=("threshold_backward",)),
    top_op("hardshrink", method="hardshrink", kwargs=({}, {"lambd": 1.5}), gradgrad=True,
           covers=("hardshrink_backward",)),
    top_op("selu", inplace=True, supports_out=False),
    top_op("celu", inplace=True, supports_out=False, kwargs=({}, {"alpha": 2.0})),
    OpInfo("prelu", _prelu, supports_out=False, covers=("_prelu_kernel",)),
)
