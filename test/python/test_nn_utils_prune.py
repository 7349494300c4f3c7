"""tessera.nn.utils.prune against torch: deterministic methods (l1, ln-structured,
custom masks, global_unstructured) give the same masks, outputs and gradients as torch on
the same weights; random methods are checked by the counts and structure torch
documents; hooks, state_dict keys, remove(), is_pruned and the errors compared."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TP

import tessera
import tessera.nn.utils.prune as SP


from torch_compare import same_error, tt
from torch_compare import close as _close


def close(got, want, atol=1e-6):
    _close(got, want, rtol=1e-5, atol=atol)


def pair(kind="linear"):
    torch.manual_seed(0)
    if kind == "linear":
        t, s = torch.nn.Linear(6, 5), tessera.nn.Linear(6, 5)
    else:
        t, s = torch.nn.Conv2d(3, 4, 3), tessera.nn.Conv2d(3, 4, 3)
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    return t, s


def check_same_module(t, s, shape=(3, 6)):
    assert list(s.state_dict().keys()) == list(t.state_dict().keys())
    for k, v in t.state_dict().items():
        close(s.state_dict()[k], v)
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    yt, ys = t(torch.from_numpy(x)), s(tessera.from_numpy(x))
    close(ys, yt, atol=1e-5)
    yt.sum().backward()
    ys.sum().backward()
    for (n, pt), (_, ps) in zip(t.named_parameters(), s.named_parameters()):
        close(ps.grad, pt.grad, atol=1e-5)


@pytest.mark.parametrize("amount", [0, 3, 0.4, 1.0, 30])
def test_l1_unstructured(amount):
    t, s = pair()
    TP.l1_unstructured(t, "weight", amount)
    SP.l1_unstructured(s, "weight", amount)
    assert SP.is_pruned(s) and isinstance(s.weight_orig, tessera.nn.Parameter) and "weight" not in s._parameters
    close(s.weight_mask, t.weight_mask)
    close(s.weight, t.weight)
    check_same_module(t, s)


def test_l1_importance_scores_and_bias():
    t, s = pair()
    scores = np.random.RandomState(4).rand(5, 6).astype(np.float32)
    TP.l1_unstructured(t, "weight", 0.5, importance_scores=torch.from_numpy(scores))
    SP.l1_unstructured(s, "weight", 0.5, importance_scores=tessera.from_numpy(scores))
    TP.l1_unstructured(t, "bias", 2)
    SP.l1_unstructured(s, "bias", 2)
    close(s.weight_mask, t.weight_mask)
    close(s.bias_mask, t.bias_mask)
    check_same_module(t, s)
    same_error(lambda: TP.l1_unstructured(torch.nn.Linear(6, 5), "weight", 1, importance_scores=torch.ones(3)),
               lambda: SP.l1_unstructured(s.__class__(6, 5), "weight", 1, importance_scores=tessera.ones(3)))


@pytest.mark.parametrize("n,dim,amount", [(1, 0, 2), (2, 1, 0.5), (float("inf"), -1, 1), (2, -2, 0),
                                          (float("-inf"), 0, 0.25)])
def test_ln_structured(n, dim, amount):
    t, s = pair("conv")
    TP.ln_structured(t, "weight", amount, n, dim)
    SP.ln_structured(s, "weight", amount, n, dim)
    close(s.weight_mask, t.weight_mask)
    check_same_module(t, s, (2, 3, 5, 5))


def test_custom_from_mask_and_remove():
    t, s = pair()
    mask = (np.random.RandomState(2).rand(5, 6) > 0.5).astype(np.float32)
    TP.custom_from_mask(t, "weight", torch.from_numpy(mask))
    SP.custom_from_mask(s, "weight", tessera.from_numpy(mask))
    check_same_module(t, s)
    orig = s.weight_orig
    TP.remove(t, "weight")
    SP.remove(s, "weight")
    assert s.weight is orig and not SP.is_pruned(s) and not s._forward_pre_hooks
    check_same_module(t, s)
    same_error(lambda: TP.remove(t, "weight"), lambda: SP.remove(s, "weight"))


def test_iterative_pruning_builds_container():
    t, s = pair("conv")
    steps = [("l1_unstructured", ("weight", 20)), ("ln_structured", ("weight", 1, 2, 0)),
             ("l1_unstructured", ("weight", 0.3)), ("identity", ("weight",))]
    for fn, args in steps:
        getattr(TP, fn)(t, *args)
        getattr(SP, fn)(s, *args)
        close(s.weight_mask, t.weight_mask)
    hooks = [h for h in s._forward_pre_hooks.values() if isinstance(h, SP.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], SP.PruningContainer) and len(hooks[0]) == 4
    assert [type(m).__name__ for m in hooks[0]] == ["L1Unstructured", "LnStructured", "L1Unstructured", "Identity"]
    check_same_module(t, s, (2, 3, 5, 5))


def test_global_unstructured():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    s = tessera.nn.Sequential(tessera.nn.Linear(4, 5), tessera.nn.ReLU(), tessera.nn.Linear(5, 3))
    s.load_state_dict({k: tt(v) for k, v in t.state_dict().items()})
    TP.l1_unstructured(t[0], "bias", 2)
    SP.l1_unstructured(s[0], "bias", 2)
    tparams = [(t[0], "weight"), (t[0], "bias"), (t[2], "weight")]
    sparams = [(s[0], "weight"), (s[0], "bias"), (s[2], "weight")]
    scores = np.random.RandomState(5).rand(3, 5).astype(np.float32)
    TP.global_unstructured(tparams, TP.L1Unstructured, importance_scores={(t[2], "weight"): torch.from_numpy(scores)},
                           amount=0.5)
    SP.global_unstructured(sparams, SP.L1Unstructured,
                           importance_scores={(s[2], "weight"): tessera.from_numpy(scores)}, amount=0.5)
    for (tm, n), (sm, _) in zip(tparams, sparams):
        close(getattr(sm, n + "_mask"), getattr(tm, n + "_mask"))
    check_same_module(t, s, (3, 4))
    same_error(lambda: TP.global_unstructured(tparams, TP.LnStructured, amount=1, n=1, dim=0),
               lambda: SP.global_unstructured(sparams, SP.LnStructured, amount=1, n=1, dim=0))
    same_error(lambda: TP.global_unstructured(5, TP.L1Unstructured, amount=1),
               lambda: SP.global_unstructured(5, SP.L1Unstructured, amount=1))
    same_error(lambda: TP.global_unstructured(tparams, TP.L1Unstructured, importance_scores=[], amount=1),
               lambda: SP.global_unstructured(sparams, SP.L1Unstructured, importance_scores=[], amount=1))


@pytest.mark.parametrize("amount", [0, 7, 0.3, 1.0])
def test_random_unstructured_counts(amount):
    t, s = pair()
    TP.random_unstructured(t, "weight", amount)
    SP.random_unstructured(s, "weight", amount)
    # the documented invariant: exactly `amount` entries (or round(amount * numel)) pruned
    assert int((s.weight_mask == 0).sum()) == int((t.weight_mask == 0).sum())
    assert set(np.unique(s.weight_mask.numpy())) <= {0.0, 1.0}
    np.testing.assert_array_equal(s.weight.detach().numpy(), (s.weight_orig * s.weight_mask).detach().numpy())
    # pruning again only prunes among what is left: the count grows by round(amount * left)
    TP.random_unstructured(t, "weight", amount)
    SP.random_unstructured(s, "weight", amount)
    assert int((s.weight_mask == 0).sum()) == int((t.weight_mask == 0).sum())


@pytest.mark.parametrize("amount,dim", [(2, 0), (0.5, 1), (1, -1), (0, 0)])
def test_random_structured_channels(amount, dim):
    t, s = pair("conv")
    TP.random_structured(t, "weight", amount, dim)
    SP.random_structured(s, "weight", amount, dim)

    def pruned_channels(mask):
        m = mask.numpy()
        axes = tuple(d for d in range(m.ndim) if d != dim % m.ndim)
        zero = (m == 0).all(axis=axes)
        one = (m == 1).all(axis=axes)
        assert (zero | one).all()  # whole channels only
        return int(zero.sum())

    assert pruned_channels(s.weight_mask) == pruned_channels(t.weight_mask)


def test_methods_prune_and_container_errors():
    x = np.random.RandomState(6).randn(4, 5).astype(np.float32)
    got = SP.L1Unstructured(amount=5).prune(tessera.from_numpy(x))
    want = TP.L1Unstructured(amount=5).prune(torch.from_numpy(x))
    close(got, want)
    got = SP.LnStructured(amount=1, n=2, dim=0).prune(tessera.from_numpy(x))
    close(got, TP.LnStructured(amount=1, n=2, dim=0).prune(torch.from_numpy(x)))
    a, b = SP.L1Unstructured(1), SP.L1Unstructured(1)
    a._tensor_name, b._tensor_name = "weight", "bias"
    ta, tb = TP.L1Unstructured(1), TP.L1Unstructured(1)
    ta._tensor_name, tb._tensor_name = "weight", "bias"
    c = SP.PruningContainer(a)
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'weight'"):
        c.add_pruning_method(b)
    with pytest.raises(ValueError):
        TP.PruningContainer(ta).add_pruning_method(tb)
    same_error(lambda: TP.PruningContainer(ta).add_pruning_method(3),
               lambda: SP.PruningContainer(a).add_pruning_method(3))


@pytest.mark.parametrize("call", [
    ("l1_unstructured", ("weight", -1)), ("l1_unstructured", ("weight", 1.5)), ("l1_unstructured", ("weight", "x")),
    ("l1_unstructured", ("weight", 31)), ("random_unstructured", ("weight", -0.1)),
    ("random_structured", ("bias", 1, 0)), ("random_structured", ("weight", 1, 2)),
    ("ln_structured", ("weight", 6, 2, 0)), ("ln_structured", ("bias", 1, 2, -1)),
])
def test_amount_and_dim_errors(call):
    fn, args = call
    t, s = pair()
    same_error(lambda: getattr(TP, fn)(t, *args), lambda: getattr(SP, fn)(s, *args))
    # a failed first pruning leaves the parameter where it was
    assert "weight" in s._parameters and "bias" in s._parameters and not SP.is_pruned(s)


def test_is_pruned_nested():
    s = tessera.nn.Sequential(tessera.nn.Linear(2, 2), tessera.nn.Sequential(tessera.nn.Linear(2, 2)))
    assert not SP.is_pruned(s)
    SP.identity(s[1][0], "bias")
    assert SP.is_pruned(s)
    t = torch.nn.Linear(2, 2)
    TP.identity(t, "bias")
    close(SP.identity(tessera.nn.Linear(2, 2), "bias").bias_mask, t.bias_mask)
