"""tessera.nn's activation, loss and distance modules against torch.nn's: outputs and input
(and PReLU weight) grads for the same constructor arguments and inputs, reprs, state_dict
keys and buffers, the legacy size_average/reduce mapping, class hierarchy and errors."""
import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest
import torch

import tessera
import tessera.nn as tnn


def rand(shape, seed, low=-2.0, high=2.0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)


def classes(shape, n, seed):
    return torch.randint(0, n, shape, generator=torch.Generator().manual_seed(seed))


def signs(shape, seed):
    return classes(shape, 2, seed).double() * 2 - 1


def probs(shape, seed):
    return rand(shape, seed).softmax(-1)


def to_t(x):
    return None if x is None else tessera.from_numpy(x.detach().numpy().copy())


def to_torch(x):
    return torch.from_numpy(x.detach().numpy().copy())


def close(got, want, tol=1e-6):
    torch.testing.assert_close(to_torch(got), want, rtol=tol, atol=tol)


def convert_kwargs(kw):
    def conv(v):
        if isinstance(v, torch.Tensor):
            return to_t(v)
        return getattr(tessera, str(v).split(".")[1]) if isinstance(v, torch.dtype) else v
    return {k: conv(v) for k, v in kw.items()}


def both(name, *args, **kw):
    """The torch module and the tessera module built from the same arguments."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(torch.nn, name)(*args, **kw)
        got = getattr(tnn, name)(*args, **convert_kwargs(kw))
    return want, got


def run_and_compare(want_mod, got_mod, inputs, grad_idx, tol=1e-6):
    """Forward on both sides, then backward with the same output grad; compares outputs and
    the grads of inputs[grad_idx] and of every parameter."""
    want_in = [x.clone().requires_grad_(i in grad_idx) for i, x in enumerate(inputs)]
    got_in = [to_t(x).requires_grad_(i in grad_idx) for i, x in enumerate(inputs)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = want_mod(*want_in)
        got = got_mod(*got_in)
    close(got, want.detach(), tol)
    out_grad = rand(tuple(want.shape), 99)
    want.backward(out_grad)
    got.backward(to_t(out_grad))
    for i in grad_idx:
        close(got_in[i].grad, want_in[i].grad, tol)
    for (wn, wp), (gn, gp) in zip(want_mod.named_parameters(), got_mod.named_parameters()):
        assert wn == gn
        close(gp.grad, wp.grad, tol)


# ---------------------------------------------------------------- activations

# (class name, constructor args, constructor kwargs, input shape)
ACTS = [
    ("ReLU", (), {}, (3, 4)), ("ReLU6", (), {}, (3, 4)), ("LeakyReLU", (), {}, (3, 4)),
    ("LeakyReLU", (0.2,), {}, (3, 4)), ("ELU", (), {}, (3, 4)), ("ELU", (), {"alpha": 0.5}, (3, 4)),
    ("SELU", (), {}, (3, 4)), ("CELU", (), {"alpha": 1.5}, (3, 4)), ("GELU", (), {}, (3, 4)),
    ("GELU", (), {"approximate": "tanh"}, (3, 4)), ("SiLU", (), {}, (3, 4)), ("Mish", (), {}, (3, 4)),
    ("Softplus", (), {"beta": 2.0, "threshold": 1.5}, (3, 4)), ("Softsign", (), {}, (3, 4)),
    ("Hardtanh", (), {}, (3, 4)), ("Hardtanh", (-0.5, 1.5), {}, (3, 4)), ("Hardsigmoid", (), {}, (3, 4)),
    ("Hardswish", (), {}, (3, 4)), ("GLU", (), {}, (3, 4)), ("GLU", (0,), {}, (4, 3)),
    ("LogSigmoid", (), {}, (3, 4)), ("Threshold", (0.1, 20.0), {}, (3, 4)), ("Tanhshrink", (), {}, (3, 4)),
    ("Softshrink", (), {}, (3, 4)), ("Softshrink", (0.8,), {}, (3, 4)), ("Hardshrink", (), {}, (3, 4)),
    ("Hardshrink", (), {"lambd": 1.2}, (3, 4)), ("Sigmoid", (), {}, (3, 4)), ("Tanh", (), {}, (3, 4)),
    ("Softmax", (), {"dim": 1}, (3, 4)), ("Softmax", (0,), {}, (3, 4)), ("LogSoftmax", (), {"dim": -1}, (2, 3, 4)),
    ("Softmin", (), {"dim": 1}, (3, 4)), ("Softmax2d", (), {}, (2, 3, 2, 2)), ("Softmax2d", (), {}, (3, 2, 2)),
    ("PReLU", (), {}, (2, 3, 4)), ("PReLU", (3,), {"init": 0.1}, (2, 3, 4)), ("PReLU", (), {}, (5,)),
]
INPLACE = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "SiLU", "Mish", "Hardtanh", "Hardsigmoid",
           "Hardswish", "Threshold"]


def act_id(case):
    return case[0] + "".join(f"-{a}" for a in case[1]) + "".join(f"-{k}={v}" for k, v in case[2].items())


@pytest.mark.parametrize("case", ACTS, ids=act_id)
def test_activation_matches_torch(case):
    name, args, kw, shape = case
    want_mod, got_mod = both(name, *args, **kw)
    if name == "PReLU":  # a non-constant slope, copied across, so that its grad is a real check
        want_mod.double()
        got_mod.double()
        with torch.no_grad():
            want_mod.weight.copy_(rand(want_mod.weight.shape, 7, 0.05, 0.5))
        with tessera.no_grad():
            got_mod.weight.copy_(to_t(want_mod.weight))
    run_and_compare(want_mod, got_mod, [rand(shape, 1, -3.5, 3.5)], (0,))
    assert repr(got_mod) == repr(want_mod)
    assert list(got_mod.state_dict()) == list(want_mod.state_dict())
    assert [n for n, _ in got_mod.named_parameters()] == [n for n, _ in want_mod.named_parameters()]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_activation_matches_torch(name):
    args = (0.1, 20.0) if name == "Threshold" else ()
    want_mod, got_mod = both(name, *args, inplace=True)
    assert got_mod.inplace is True
    assert repr(got_mod) == repr(want_mod)
    x = rand((3, 4), 2, -3.5, 3.5)
    want_leaf, got_leaf = x.clone().requires_grad_(), to_t(x).requires_grad_()
    want_mid, got_mid = want_leaf * 1.5, got_leaf * 1.5
    want, got = want_mod(want_mid), got_mod(got_mid)
    close(got_mid, want_mid.detach())  # the input itself was overwritten
    close(got, want.detach())
    g = rand((3, 4), 3)
    want.backward(g)
    got.backward(to_t(g))
    close(got_leaf.grad, want_leaf.grad)


def test_activation_float32_values():
    x = rand((4, 5), 4, -3.0, 3.0, torch.float32)
    for name, args, kw, shape in ACTS:
        if shape != (3, 4) or name == "GLU":
            continue
        want_mod, got_mod = both(name, *args, **kw)
        got = got_mod(to_t(x))
        assert got.dtype == tessera.float32
        close(got, want_mod(x), 1e-5)


def test_default_constructed_attributes_match_torch():
    for name in ["ReLU", "LeakyReLU", "ELU", "CELU", "GELU", "Hardtanh", "GLU", "Softshrink", "Hardshrink",
                 "Softmax", "LogSoftmax", "Softmin", "PReLU", "Softplus"]:
        want_mod, got_mod = both(name)
        for attr in ["inplace", "negative_slope", "alpha", "approximate", "min_val", "max_val", "dim", "lambd",
                     "num_parameters", "beta", "threshold"]:
            if hasattr(want_mod, attr):
                assert getattr(got_mod, attr) == getattr(want_mod, attr), (name, attr)


def test_softplus_float_defaults_as_current_torch():
    # Current torch defaults beta=1.0, threshold=20.0 (1.13: the ints 1 and 20).
    got = tnn.Softplus()
    assert repr(got) == repr(torch.nn.Softplus(1.0, 20.0)) == "Softplus(beta=1.0, threshold=20.0)"
    x = rand((3, 4), 5, -30.0, 30.0)
    close(got(to_t(x)), torch.nn.Softplus()(x))


def test_prelu_parameter_and_factory_kwargs():
    want, got = both("PReLU", 4, init=-0.3, dtype=torch.float64)
    assert isinstance(got.weight, tnn.Parameter) and got.weight.requires_grad
    assert got.weight.dtype == tessera.float64 and tuple(got.weight.shape) == (4,)
    close(got.weight, want.weight.detach())
    assert got.init == -0.3  # current torch keeps init and offers reset_parameters()
    with tessera.no_grad():
        got.weight.fill_(2.0)
    got.reset_parameters()
    close(got.weight, want.weight.detach())
    sd = got.state_dict()
    assert list(sd) == ["weight"] and not sd["weight"].requires_grad


def test_softmax_implicit_dim_warns_like_torch():
    x = rand((3, 4), 6)
    for name in ["Softmax", "LogSoftmax", "Softmin"]:
        want_mod, got_mod = both(name)
        assert repr(got_mod) == repr(want_mod) == f"{name}(dim=None)"
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            got = got_mod(to_t(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close(got, want_mod(x))


def test_softmax_dim_survives_pickle_and_old_state():
    m = tnn.LogSoftmax(dim=1)
    assert pickle.loads(pickle.dumps(m)).dim == 1
    assert copy.deepcopy(tnn.Softmin(0)).dim == 0
    old = tnn.Softmax.__new__(tnn.Softmax)
    state = dict(tnn.Softmax(1).__dict__)
    del state["dim"]
    old.__setstate__(state)
    assert old.dim is None


def test_hardtanh_deprecated_bound_names():
    with pytest.warns(FutureWarning, match="min_value"):
        got = tnn.Hardtanh(min_value=-2.0)
    with pytest.warns(FutureWarning, match="max_value"):
        got2 = tnn.Hardtanh(max_value=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(got) == repr(torch.nn.Hardtanh(min_value=-2.0))
        assert repr(got2) == repr(torch.nn.Hardtanh(max_value=3.0))


# ---------------------------------------------------------------- losses

W5 = torch.tensor([0.5, 1.0, 2.0, 0.25, 1.5], dtype=torch.float64)
W4 = torch.tensor([0.5, 1.0, 2.0, 0.25], dtype=torch.float64)


def _bce_inputs():
    return [rand((3, 4), 30, 0.05, 0.95), rand((3, 4), 31, 0.0, 1.0)]


# (class name, constructor kwargs, inputs, indices of inputs that take a grad)
LOSSES = [
    ("L1Loss", {}, [rand((3, 4), 10), rand((3, 4), 11)], (0, 1)),
    ("MSELoss", {}, [rand((3, 4), 12), rand((3, 4), 13)], (0, 1)),
    ("SmoothL1Loss", {"beta": 0.5}, [rand((3, 4), 14), rand((3, 4), 15)], (0, 1)),
    ("SmoothL1Loss", {}, [rand((3, 4), 14), rand((3, 4), 15)], (0, 1)),
    ("HuberLoss", {"delta": 0.7}, [rand((3, 4), 16), rand((3, 4), 17)], (0, 1)),
    ("CrossEntropyLoss", {}, [rand((4, 5), 18), classes((4,), 5, 19)], (0,)),
    ("CrossEntropyLoss", {"weight": W5, "ignore_index": 2, "label_smoothing": 0.1},
     [rand((4, 5), 18), classes((4,), 5, 19)], (0,)),
    ("CrossEntropyLoss", {"weight": W5}, [rand((4, 5), 20), probs((4, 5), 21)], (0, 1)),
    ("CrossEntropyLoss", {}, [rand((2, 3, 2, 2), 22), classes((2, 2, 2), 3, 23)], (0,)),
    ("NLLLoss", {}, [rand((4, 5), 24).log_softmax(1), classes((4,), 5, 25)], (0,)),
    ("NLLLoss", {"weight": W5, "ignore_index": 1}, [rand((4, 5), 24).log_softmax(1), classes((4,), 5, 25)], (0,)),
    ("BCELoss", {}, _bce_inputs(), (0, 1)),
    ("BCELoss", {"weight": W4}, _bce_inputs(), (0,)),
    ("BCEWithLogitsLoss", {}, [rand((3, 4), 32), rand((3, 4), 33, 0.0, 1.0)], (0, 1)),
    ("BCEWithLogitsLoss", {"weight": W4, "pos_weight": W4 * 2}, [rand((3, 4), 32), rand((3, 4), 33, 0.0, 1.0)],
     (0, 1)),
    ("KLDivLoss", {}, [probs((3, 4), 34).log(), probs((3, 4), 35)], (0, 1)),
    ("KLDivLoss", {"log_target": True}, [probs((3, 4), 34).log(), probs((3, 4), 35).log()], (0, 1)),
    ("PoissonNLLLoss", {}, [rand((3, 4), 36), rand((3, 4), 37, 0.0, 4.0)], (0,)),
    ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-4},
     [rand((3, 4), 38, 0.1, 3.0), rand((3, 4), 39, 0.0, 4.0)], (0,)),
    ("GaussianNLLLoss", {}, [rand((3, 4), 40), rand((3, 4), 41), rand((3, 4), 42, 0.2, 2.0)], (0, 1, 2)),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-3}, [rand((3, 4), 40), rand((3, 4), 41), rand((3, 1), 43, 0.2, 2.0)],
     (0, 1, 2)),
    ("MarginRankingLoss", {"margin": 0.3}, [rand((5,), 44), rand((5,), 45), signs((5,), 46)], (0, 1)),
    ("CosineEmbeddingLoss", {}, [rand((4, 6), 47), rand((4, 6), 48), signs((4,), 49)], (0, 1)),
    ("CosineEmbeddingLoss", {"margin": 0.2}, [rand((4, 6), 47), rand((4, 6), 48), signs((4,), 49)], (0, 1)),
    ("TripletMarginLoss", {}, [rand((4, 6), 50), rand((4, 6), 51), rand((4, 6), 52)], (0, 1, 2)),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True},
     [rand((4, 6), 50), rand((4, 6), 51), rand((4, 6), 52)], (0, 1, 2)),
]


def loss_id(case):
    return case[0] + "".join(f"-{k}" for k in case[1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", LOSSES, ids=loss_id)
def test_loss_matches_torch(case, reduction):
    name, kw, inputs, grad_idx = case
    want_mod, got_mod = both(name, reduction=reduction, **kw)
    assert got_mod.reduction == want_mod.reduction == reduction
    run_and_compare(want_mod, got_mod, inputs, grad_idx)
    assert repr(got_mod) == repr(want_mod)
    assert list(got_mod.state_dict()) == list(want_mod.state_dict())
    assert [n for n, _ in got_mod.named_buffers()] == [n for n, _ in want_mod.named_buffers()]
    for key, value in want_mod.state_dict().items():
        close(got_mod.state_dict()[key], value)


def test_kldiv_batchmean_matches_torch():
    want_mod, got_mod = both("KLDivLoss", reduction="batchmean")
    run_and_compare(want_mod, got_mod, [probs((3, 4), 34).log(), probs((3, 4), 35)], (0, 1))


def test_weight_buffers_like_torch():
    for name, kw in [("CrossEntropyLoss", {}), ("CrossEntropyLoss", {"weight": W5}), ("NLLLoss", {"weight": W5}),
                     ("BCELoss", {}), ("BCEWithLogitsLoss", {"pos_weight": W4}),
                     ("BCEWithLogitsLoss", {"weight": W4, "pos_weight": W4}), ("MSELoss", {})]:
        want_mod, got_mod = both(name, **kw)
        assert list(got_mod.state_dict()) == list(want_mod.state_dict()), (name, kw)
        assert list(got_mod._buffers) == list(want_mod._buffers), (name, kw)
        assert list(got_mod.parameters()) == []
    # buffers follow dtype conversions and load from a state_dict
    got = tnn.CrossEntropyLoss(weight=to_t(W5.float())).double()
    assert got.weight.dtype == tessera.float64
    other = tnn.CrossEntropyLoss(weight=tessera.zeros(5, dtype=tessera.float64))
    other.load_state_dict(got.state_dict())
    close(other.weight, W5)


def test_weight_can_be_reassigned_like_torch():
    want_mod, got_mod = both("NLLLoss")
    want_mod.weight = W5
    got_mod.weight = to_t(W5)
    assert list(got_mod.state_dict()) == list(want_mod.state_dict()) == ["weight"]
    run_and_compare(want_mod, got_mod, [rand((4, 5), 24).log_softmax(1), classes((4,), 5, 25)], (0,))


LEGACY = ["L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
          "PoissonNLLLoss", "SmoothL1Loss", "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_size_average_and_reduce(name):
    for size_average, reduce in itertools.product([None, True, False], repeat=2):
        if size_average is None and reduce is None:
            continue
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = getattr(torch.nn, name)(size_average=size_average, reduce=reduce, reduction="sum")
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = getattr(tnn, name)(size_average=size_average, reduce=reduce, reduction="sum")
        assert got.reduction == want.reduction, (size_average, reduce)
        assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
        assert [w.category for w in got_w] == [w.category for w in want_w]


def test_legacy_reduction_drives_forward():
    # the legacy pair wins over reduction=, even an invalid one
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        got_mod = tnn.L1Loss(size_average=True, reduce=True, reduction="bad")
    assert got_mod.reduction == "mean"
    close(got_mod(to_t(rand((3,), 1)), to_t(rand((3,), 2))), torch.nn.L1Loss()(rand((3,), 1), rand((3,), 2)))
    want_mod, got_mod = both("MSELoss", size_average=False)
    assert got_mod.reduction == "sum"
    run_and_compare(want_mod, got_mod, [rand((3, 4), 12), rand((3, 4), 13)], (0, 1))
    want_mod, got_mod = both("CrossEntropyLoss", reduce=False)
    assert got_mod.reduction == "none"
    run_and_compare(want_mod, got_mod, [rand((4, 5), 18), classes((4,), 5, 19)], (0,))


def test_nllloss2d_deprecated_alias():
    with pytest.warns(FutureWarning, match="NLLLoss2d has been deprecated"):
        got = tnn.NLLLoss2d(reduction="sum")
    assert isinstance(got, tnn.NLLLoss) and repr(got) == "NLLLoss2d()"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.nn.NLLLoss2d(reduction="sum")
    run_and_compare(want, got, [rand((2, 3, 2, 2), 22).log_softmax(1), classes((2, 2, 2), 3, 23)], (0,))


# ---------------------------------------------------------------- distances

@pytest.mark.parametrize("name,kw,shape", [
    ("PairwiseDistance", {}, (4, 6)), ("PairwiseDistance", {"p": 1.0, "eps": 1e-3, "keepdim": True}, (4, 6)),
    ("PairwiseDistance", {"p": 3.0}, (6,)), ("CosineSimilarity", {}, (4, 6)),
    ("CosineSimilarity", {"dim": 0, "eps": 1e-4}, (4, 6)), ("CosineSimilarity", {"dim": -1}, (2, 3, 5)),
])
def test_distance_matches_torch(name, kw, shape):
    want_mod, got_mod = both(name, **kw)
    run_and_compare(want_mod, got_mod, [rand(shape, 60), rand(shape, 61)], (0, 1))
    assert repr(got_mod) == repr(want_mod)
    for attr in ["norm", "eps", "keepdim", "dim"]:
        if hasattr(want_mod, attr):
            assert getattr(got_mod, attr) == getattr(want_mod, attr)


# ---------------------------------------------------------------- hierarchy and errors

def public_bases(cls, names):
    return [c.__name__ for c in cls.__mro__ if c.__name__ in names]


def test_class_hierarchy_like_torch():
    names = set(torch.nn.modules.__all__) | {"_Loss", "_WeightedLoss"}
    ours = [n for n in tnn.__all__ if n in names and isinstance(getattr(tnn, n), type)]
    wanted = {c[0] for c in ACTS} | {c[0] for c in LOSSES} | {"NLLLoss2d", "PairwiseDistance", "CosineSimilarity"}
    assert wanted <= set(ours)
    for n in wanted:
        assert public_bases(getattr(tnn, n), names) == public_bases(getattr(torch.nn, n), names), n


def raises_like_torch(build):
    """build(nn) must raise the same exception class with the same message for both."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            build(torch.nn, torch)
        with pytest.raises(Exception) as got:
            build(tnn, tessera)
    assert got.type is want.type, (got.value, want.value)
    want_msg = str(want.value).replace("torch.Size", "tessera.Size")
    assert str(got.value).split("\n")[0] == want_msg.split("\n")[0]


@pytest.mark.parametrize("build", [
    lambda nn, lib: nn.Threshold(0.5),
    lambda nn, lib: nn.ReLU(inplace=True, alpha=1.0),
    lambda nn, lib: nn.PReLU(-1),
    lambda nn, lib: nn.PReLU(init="a"),
    lambda nn, lib: nn.PReLU(3)(lib.ones(2, 4)),
    lambda nn, lib: nn.GELU(approximate="bad")(lib.ones(2)),
    lambda nn, lib: nn.GLU()(lib.ones(3)),
    lambda nn, lib: nn.Softmax(dim=5)(lib.ones(2)),
    lambda nn, lib: nn.GaussianNLLLoss(True),
    lambda nn, lib: nn.HuberLoss(size_average=True),
    lambda nn, lib: nn.CrossEntropyLoss(weight=[1.0, 2.0]),
    lambda nn, lib: nn.BCEWithLogitsLoss(pos_weight=2.0),
    lambda nn, lib: nn.CrossEntropyLoss(reduction="bad")(lib.ones(2, 3), lib.zeros(2, dtype=lib.long)),
    lambda nn, lib: nn.MSELoss(reduction="avg")(lib.ones(2), lib.ones(2)),
    lambda nn, lib: nn.PoissonNLLLoss(reduction="bad")(lib.ones(2), lib.ones(2)),
    lambda nn, lib: nn.BCELoss()(lib.full((2, 3), 0.5), lib.ones(3)),
    lambda nn, lib: nn.GaussianNLLLoss()(lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 2)),
])
def test_errors_like_torch(build):
    raises_like_torch(build)


def test_hardtanh_bounds_error_class():
    with pytest.raises(AssertionError):
        torch.nn.Hardtanh(1.0, -1.0)
    with pytest.raises(AssertionError):
        tnn.Hardtanh(1.0, -1.0)
    with pytest.raises(AssertionError):
        tnn.Hardtanh(0.5, 0.5)


def test_softmax2d_rejects_other_ranks():
    # ValueError as current torch; 1.13 fails an assert (AssertionError) instead.
    with pytest.raises(AssertionError):
        torch.nn.Softmax2d()(torch.ones(2, 3))
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        tnn.Softmax2d()(tessera.ones(2, 3))


def test_modules_are_usable_in_a_loop():
    # A small softmax-regression step through the modules: grads flow into a leaf weight.
    x = rand((6, 4), 70)
    y = classes((6,), 3, 71)
    w0 = rand((4, 3), 72)
    results = []
    for nn_, lib, conv in [(torch.nn, torch, lambda a: a), (tnn, tessera, to_t)]:
        w = conv(w0).requires_grad_()
        act, loss = nn_.Tanh(), nn_.CrossEntropyLoss(label_smoothing=0.05)
        out = loss(act(conv(x) @ w) * 2.0, conv(y))
        out.backward()
        results.append((np.asarray(out.detach().numpy()), np.asarray(w.grad.numpy())))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6, atol=1e-9)


def test_prelu_weight_dtype_mismatch_is_an_error():
    # Both refuse a float32 slope with a float64 input (the messages differ: tessera's
    # prelu reports the promotion, torch 1.13 the dtype it expected).
    for nn_, lib in [(torch.nn, torch), (tnn, tessera)]:
        with pytest.raises(RuntimeError):
            nn_.PReLU()(lib.ones(2, 3, dtype=lib.float64))
