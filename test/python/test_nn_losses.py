"""Losses and distances of tessera.nn.functional against torch.nn.functional: values for
every reduction and option, grads against torch's, gradcheck in float64, meta shapes, and
torch's errors for bad arguments."""
import math

import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch


def rand(shape, seed, low=-2.0, high=2.0):
    return make_torch(shape, "float64", seed, low, high)


def classes(shape, n, seed):
    return torch.randint(0, n, shape, generator=torch.Generator().manual_seed(seed))


def signs(shape, seed):
    return classes(shape, 2, seed).double() * 2 - 1


def probs(shape, seed, dim=-1):
    return rand(shape, seed).softmax(dim)


W5 = torch.tensor([0.5, 1.0, 2.0, 0.25, 1.5], dtype=torch.float64)
W3 = torch.tensor([0.5, 2.0, 1.25], dtype=torch.float64)

# (name, call(F, *inputs, **kw), inputs, indices of the inputs that take a grad, kwargs variants)
CASES = [
    ("cross_entropy", lambda F, x, t, **k: F.cross_entropy(x, t, **k), [rand((4, 5), 1), classes((4,), 5, 2)], (0,),
     [{}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": W5}, {"ignore_index": 2}, {"label_smoothing": 0.2},
      {"label_smoothing": 0.3, "weight": W5, "ignore_index": 1}, {"label_smoothing": 0.1, "reduction": "none"},
      {"label_smoothing": 0.1, "reduction": "sum", "weight": W5}]),
    ("cross_entropy_1d", lambda F, x, t, **k: F.cross_entropy(x, t, **k), [rand((5,), 3), torch.tensor(3)], (0,),
     [{}, {"weight": W5}, {"reduction": "none"}]),
    ("cross_entropy_spatial", lambda F, x, t, **k: F.cross_entropy(x, t, **k), [rand((2, 3, 4, 5), 4),
                                                                                 classes((2, 4, 5), 3, 5)], (0,),
     [{}, {"weight": W3, "reduction": "none"}, {"ignore_index": 0, "reduction": "sum"}, {"label_smoothing": 0.25}]),
    ("cross_entropy_3d", lambda F, x, t, **k: F.cross_entropy(x, t, **k), [rand((2, 3, 4), 6), classes((2, 4), 3, 7)],
     (0,), [{}, {"reduction": "none"}, {"weight": W3}]),
    ("cross_entropy_5d", lambda F, x, t, **k: F.cross_entropy(x, t, **k), [rand((2, 3, 2, 3, 2), 8),
                                                                            classes((2, 2, 3, 2), 3, 9)], (0,),
     [{}, {"reduction": "none"}]),
    ("cross_entropy_probs", lambda F, x, t, **k: F.cross_entropy(x, t, **k), [rand((4, 5), 10), probs((4, 5), 11)],
     (0, 1), [{}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": W5}, {"label_smoothing": 0.2}]),
    ("cross_entropy_probs_spatial", lambda F, x, t, **k: F.cross_entropy(x, t, **k),
     [rand((2, 3, 4), 12), probs((2, 3, 4), 13, dim=1)], (0, 1), [{}, {"weight": W3, "reduction": "none"}]),
    ("nll_loss", lambda F, x, t, **k: F.nll_loss(x, t, **k), [rand((6, 5), 14), classes((6,), 5, 15)], (0,),
     [{}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": W5}, {"ignore_index": 4, "weight": W5}]),
    ("nll_loss2d", lambda F, x, t, **k: F.nll_loss(x, t, **k), [rand((2, 3, 3, 4), 16), classes((2, 3, 4), 3, 17)],
     (0,), [{}, {"reduction": "none"}, {"weight": W3, "ignore_index": 1}]),
    ("mse_loss", lambda F, x, y, **k: F.mse_loss(x, y, **k), [rand((3, 4), 18), rand((3, 4), 19)], (0, 1),
     [{}, {"reduction": "sum"}, {"reduction": "none"}]),
    ("l1_loss", lambda F, x, y, **k: F.l1_loss(x, y, **k), [rand((3, 4), 20), rand((3, 4), 21)], (0, 1),
     [{}, {"reduction": "sum"}, {"reduction": "none"}]),
    ("smooth_l1_loss", lambda F, x, y, **k: F.smooth_l1_loss(x, y, **k), [rand((3, 4), 22), rand((3, 4), 23)], (0, 1),
     [{}, {"beta": 0.5, "reduction": "none"}, {"beta": 0.0}, {"beta": 2.0, "reduction": "sum"}]),
    ("huber_loss", lambda F, x, y, **k: F.huber_loss(x, y, **k), [rand((3, 4), 24), rand((3, 4), 25)], (0, 1),
     [{}, {"delta": 0.7, "reduction": "none"}, {"delta": 2.5, "reduction": "sum"}]),
    ("binary_cross_entropy", lambda F, x, y, **k: F.binary_cross_entropy(x, y, **k),
     [rand((3, 4), 26, 0.05, 0.95), rand((3, 4), 27, 0.0, 1.0)], (0, 1),
     [{}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": rand((4,), 28, 0.5, 2.0)}]),
    ("binary_cross_entropy_with_logits", lambda F, x, y, **k: F.binary_cross_entropy_with_logits(x, y, **k),
     [rand((3, 4), 29, -6, 6), rand((3, 4), 30, 0.0, 1.0)], (0, 1),
     [{}, {"reduction": "none"}, {"weight": rand((4,), 31, 0.5, 2.0)}, {"pos_weight": rand((4,), 32, 0.5, 3.0)},
      {"pos_weight": rand((4,), 33, 0.5, 3.0), "weight": rand((3, 1), 34, 0.5, 2.0), "reduction": "sum"}]),
    ("kl_div", lambda F, x, y, **k: F.kl_div(x, y, **k), [probs((3, 4), 35).log(), probs((3, 4), 36)], (0, 1),
     [{"reduction": "batchmean"}, {"reduction": "sum"}, {"reduction": "none"}]),
    ("kl_div_log_target", lambda F, x, y, **k: F.kl_div(x, y, log_target=True, **k),
     [probs((3, 4), 37).log(), probs((3, 4), 38).log()], (0, 1), [{"reduction": "batchmean"}, {"reduction": "none"}]),
    ("poisson_nll_loss", lambda F, x, y, **k: F.poisson_nll_loss(x, y, **k),
     [rand((3, 4), 39), rand((3, 4), 40, 0.0, 5.0)], (0, 1),
     [{}, {"full": True}, {"reduction": "none"}, {"reduction": "sum", "full": True}]),
    ("poisson_nll_loss_rates", lambda F, x, y, **k: F.poisson_nll_loss(x, y, log_input=False, **k),
     [rand((3, 4), 41, 0.2, 3.0), rand((3, 4), 42, 0.0, 5.0)], (0, 1), [{}, {"full": True, "eps": 0.1}]),
    ("gaussian_nll_loss", lambda F, x, y, v, **k: F.gaussian_nll_loss(x, y, v, **k),
     [rand((3, 4), 43), rand((3, 4), 44), rand((3, 4), 45, 0.1, 2.0)], (0, 1, 2),
     [{}, {"full": True}, {"reduction": "none"}, {"reduction": "sum", "eps": 0.5}]),
    ("gaussian_nll_loss_shared_var", lambda F, x, y, v, **k: F.gaussian_nll_loss(x, y, v, **k),
     [rand((3, 4), 46), rand((3, 4), 47), rand((3,), 48, 0.1, 2.0)], (0, 1, 2), [{}, {"reduction": "none"}]),
    ("margin_ranking_loss", lambda F, a, b, t, **k: F.margin_ranking_loss(a, b, t, **k),
     [rand((6,), 49), rand((6,), 50), signs((6,), 51)], (0, 1), [{}, {"margin": 0.3, "reduction": "none"}]),
    ("cosine_embedding_loss", lambda F, a, b, t, **k: F.cosine_embedding_loss(a, b, t, **k),
     [rand((4, 6), 52), rand((4, 6), 53), signs((4,), 54)], (0, 1),
     [{}, {"margin": 0.2, "reduction": "none"}, {"margin": -0.5, "reduction": "sum"}]),
    ("cosine_embedding_loss_1d", lambda F, a, b, t, **k: F.cosine_embedding_loss(a, b, t, **k),
     [rand((6,), 55), rand((6,), 56), torch.tensor(-1.0, dtype=torch.float64)], (0, 1), [{}]),
    ("triplet_margin_loss", lambda F, a, pos, neg, **k: F.triplet_margin_loss(a, pos, neg, **k),
     [rand((4, 6), 57), rand((4, 6), 58), rand((4, 6), 59)], (0, 1, 2),
     [{}, {"margin": 3.0, "p": 1.0}, {"swap": True, "margin": 2.0, "reduction": "none"}, {"p": 3.0, "eps": 1e-3}]),
    ("cosine_similarity", lambda F, a, b, **k: F.cosine_similarity(a, b, **k), [rand((3, 5), 60), rand((3, 5), 61)],
     (0, 1), [{}, {"dim": 0}, {"dim": -1, "eps": 0.5}]),
    ("cosine_similarity_broadcast", lambda F, a, b, **k: F.cosine_similarity(a, b, **k),
     [rand((1, 5), 62), rand((3, 5), 63)], (0, 1), [{}]),
    ("pairwise_distance", lambda F, a, b, **k: F.pairwise_distance(a, b, **k), [rand((3, 5), 64), rand((3, 5), 65)],
     (0, 1), [{}, {"p": 1.0, "keepdim": True}, {"p": 3.0, "eps": 0.1}]),
    ("cdist", lambda F, a, b, **k: (tessera if F is tessera.nn.functional else torch).cdist(a, b, **k),
     [rand((5, 3), 66), rand((4, 3), 67)], (0, 1),
     [{}, {"p": 1.0}, {"p": 3.0}, {"p": math.inf}, {"compute_mode": "use_mm_for_euclid_dist"}]),
    ("cdist_mm", lambda F, a, b, **k: (tessera if F is tessera.nn.functional else torch).cdist(a, b, **k),
     [rand((30, 3), 68), rand((2, 3), 69)], (0, 1), [{}, {"compute_mode": "donot_use_mm_for_euclid_dist"}]),
    ("cdist_batched", lambda F, a, b, **k: (tessera if F is tessera.nn.functional else torch).cdist(a, b, **k),
     [rand((2, 4, 3), 70), rand((2, 5, 3), 71)], (0, 1), [{}, {"p": 1.0}]),
]

FLAT = [(name, call, inputs, grads, kw) for name, call, inputs, grads, kws in CASES for kw in kws]
IDS = [f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[4].items() if not isinstance(v, torch.Tensor)) or 'default'}"
       f"{'-weighted' if any(isinstance(v, torch.Tensor) for v in c[4].values()) else ''}" for c in FLAT]


def _convert(kw):
    return {k: to_tessera(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}


def _run(lib, call, inputs, grads, kw, dtype):
    fn = tessera.nn.functional if lib is tessera else TF
    ins = []
    for i, t in enumerate(inputs):
        t = t.to(dtype) if t.is_floating_point() else t
        t = to_tessera(t) if lib is tessera else t.clone()
        ins.append(t.requires_grad_() if i in grads and dtype == torch.float64 else t)
    kwargs = _convert(kw) if lib is tessera else kw
    if dtype != torch.float64:
        kwargs = {k: v.to(getattr(lib, str(dtype).split(".")[1])) if hasattr(v, "is_floating_point") and
                  v.is_floating_point() else v for k, v in kwargs.items()}
    return fn, ins, call(fn, *ins, **kwargs)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,call,inputs,grads,kw", FLAT, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_values_and_grads_match_torch(name, call, inputs, grads, kw, dtype):
    _, t_ins, want = _run(torch, call, inputs, grads, kw, dtype)
    _, s_ins, got = _run(tessera, call, inputs, grads, kw, dtype)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-12)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    torch.testing.assert_close(to_torch(got), want, equal_nan=True, **tol)
    if dtype == torch.float64:
        weights = rand(tuple(want.shape), 99, 0.5, 1.5)  # a non-uniform upstream grad
        (want * weights).sum().backward()
        (got * to_tessera(weights)).sum().backward()
        for i in grads:
            torch.testing.assert_close(to_torch(s_ins[i].grad), t_ins[i].grad, rtol=1e-7, atol=1e-10,
                                       msg=lambda m: f"grad of input {i}: {m}")


GRADCHECKED = [c for c in FLAT if not (c[0].startswith("cdist") and c[4].get("p") == math.inf)]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,call,inputs,grads,kw", GRADCHECKED, ids=[IDS[FLAT.index(c)] for c in GRADCHECKED])
def test_gradcheck(name, call, inputs, grads, kw):
    F = tessera.nn.functional
    mine = [to_tessera(t) for t in inputs]
    kwargs = _convert(kw)
    variables = [mine[i].requires_grad_() for i in grads]

    def fn(*vs):
        ins = list(mine)
        for i, v in zip(grads, vs):
            ins[i] = v
        return call(F, *ins, **kwargs)
    assert tessera.autograd.gradcheck(fn, variables)


def test_gradgradcheck_cross_entropy_and_bce():
    F = tessera.nn.functional
    x = to_tessera(rand((4, 5), 1)).requires_grad_()
    t = to_tessera(classes((4,), 5, 2))
    w = to_tessera(W5)
    assert tessera.autograd.gradgradcheck(lambda v: F.cross_entropy(v, t, weight=w, label_smoothing=0.1), (x,))
    assert tessera.autograd.gradgradcheck(lambda v: F.nll_loss(v, t, reduction="none"), (x,))
    x4 = to_tessera(rand((2, 3, 2, 2), 3)).requires_grad_()
    t4 = to_tessera(classes((2, 2, 2), 3, 4))
    assert tessera.autograd.gradgradcheck(lambda v: F.nll_loss(v, t4, reduction="sum"), (x4,))
    p = to_tessera(rand((3, 4), 26, 0.05, 0.95)).requires_grad_()
    y = to_tessera(rand((3, 4), 27, 0.0, 1.0)).requires_grad_()
    assert tessera.autograd.gradgradcheck(lambda a, b: F.binary_cross_entropy(a, b), (p, y))


def test_grad_fn_names_like_torch():
    for lib in (torch, tessera):
        F = lib.nn.functional if lib is tessera else TF
        x = lib.zeros(2, 3, requires_grad=True)
        names = (F.nll_loss(x, lib.tensor([0, 2])).grad_fn.name(),
                 F.nll_loss(lib.zeros(1, 2, 2, 2, requires_grad=True), lib.zeros(1, 2, 2, dtype=lib.int64)).grad_fn.name(),
                 F.binary_cross_entropy(lib.full((2,), 0.5, requires_grad=True), lib.ones(2)).grad_fn.name())
        if lib is torch:
            expected = names
        else:
            assert names == expected


def test_bce_is_finite_at_zero_and_one():
    # the clamped logs give a finite loss; torch's derivative gives finite grads there
    for lib in (torch, tessera):
        F = lib.nn.functional if lib is tessera else TF
        x = lib.tensor([0.0, 1.0, 0.5], requires_grad=True)
        loss = F.binary_cross_entropy(x, lib.tensor([1.0, 0.0, 1.0]), reduction="sum")
        loss.backward()
        if lib is torch:
            want = (loss.item(), x.grad.tolist())
        else:
            assert loss.item() == pytest.approx(want[0])
            assert x.grad.tolist() == pytest.approx(want[1])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_precision_cross_entropy_and_mse(dtype):
    # torch 1.13 has no Half kernels here: compared with torch's float32 result, rounded
    x, t = rand((8, 5), 1), classes((8,), 5, 2)
    y = rand((8, 5), 3)
    for fn in (lambda F, a, b, c: F.cross_entropy(a, b), lambda F, a, b, c: F.mse_loss(a, c),
               lambda F, a, b, c: F.nll_loss(a.log_softmax(1), b, reduction="none")):
        want = fn(TF, x.float(), t, y.float()).to(getattr(torch, dtype))
        got = fn(tessera.nn.functional, to_tessera(x.to(getattr(torch, dtype))), to_tessera(t),
                 to_tessera(y.to(getattr(torch, dtype))))
        assert str(got.dtype) == f"tessera.{dtype}"
        torch.testing.assert_close(to_torch(got).float(), want.float(), rtol=2e-2, atol=2e-2)


META = [c for c in FLAT if c[0] not in ("gaussian_nll_loss", "gaussian_nll_loss_shared_var")
        and "label_smoothing" not in c[4]]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,call,inputs,grads,kw", META, ids=[IDS[FLAT.index(c)] for c in META])
def test_meta_shapes(name, call, inputs, grads, kw):
    want = call(TF if not name.startswith("cdist") else torch.nn.functional, *inputs, **kw)
    metas = [tessera.empty(tuple(t.shape), dtype=getattr(tessera, str(t.dtype).split(".")[1]), device="meta")
             for t in inputs]
    kwargs = {k: tessera.empty(tuple(v.shape), dtype=tessera.float64, device="meta") if isinstance(v, torch.Tensor)
              else v for k, v in kw.items()}
    got = call(tessera.nn.functional, *metas, **kwargs)
    assert got.is_meta and tuple(got.shape) == tuple(want.shape) and str(got.dtype) == "tessera.float64"


ERRORS = [
    "lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([0, 1]))",
    "lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([0, 1, 7]))",
    "lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([0, 1, -2]))",
    "lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([0, 1, 2], dtype=lib.int32))",
    "lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([0, 1, 2]), weight=lib.ones(4))",
    "lib.nn.functional.nll_loss(lib.zeros(2, 3, 4), lib.zeros(2, 5, dtype=lib.int64))",
    "lib.nn.functional.nll_loss(lib.zeros(2, 3, 4, 5), lib.zeros(2, 4, 6, dtype=lib.int64))",
    "lib.nn.functional.nll_loss(lib.zeros(2, 3), lib.zeros(2, 2, dtype=lib.int64))",
    "lib.nn.functional.nll_loss(lib.zeros(3, 5), lib.tensor([0, 1, 2]), reduction='average')",
    "lib.nn.functional.cross_entropy(lib.zeros(3, 5), lib.rand(3, 5), ignore_index=1)",
    "lib.nn.functional.cross_entropy(lib.zeros(3, 5), lib.zeros(3, 5, dtype=lib.int64))",
    "lib.nn.functional.cross_entropy(lib.zeros(3, 5), lib.tensor([0, 1, 2]), label_smoothing=1.5)",
    "lib.nn.functional.smooth_l1_loss(lib.zeros(3), lib.zeros(3), beta=-1.0)",
    "lib.nn.functional.huber_loss(lib.zeros(3), lib.zeros(3), delta=0.0)",
    "lib.nn.functional.binary_cross_entropy(lib.full((3,), 1.5), lib.zeros(3))",
    "lib.nn.functional.binary_cross_entropy(lib.full((3,), 0.5), lib.zeros(2, 3))",
    "lib.nn.functional.binary_cross_entropy_with_logits(lib.zeros(3), lib.zeros(2, 3))",
    "lib.nn.functional.margin_ranking_loss(lib.zeros(3), lib.zeros(3), lib.zeros(1, 3))",
    "lib.nn.functional.cosine_embedding_loss(lib.zeros(3, 2), lib.zeros(3, 2), lib.zeros(3, 1))",
    "lib.nn.functional.cosine_embedding_loss(lib.zeros(3), lib.zeros(3), lib.zeros(3))",
    "lib.nn.functional.triplet_margin_loss(lib.zeros(3, 2), lib.zeros(3, 2), lib.zeros(2))",
    "lib.nn.functional.gaussian_nll_loss(lib.zeros(3, 2), lib.zeros(3, 2), lib.ones(2, 3))",
    "lib.nn.functional.gaussian_nll_loss(lib.zeros(3, 2), lib.zeros(3, 2), -lib.ones(3, 2))",
    "lib.nn.functional.poisson_nll_loss(lib.zeros(3), lib.zeros(3), reduction='avg')",
    "lib.cosine_similarity(lib.zeros(3, dtype=lib.int64), lib.zeros(3, dtype=lib.int64), 0)",
    "lib.cdist(lib.zeros(3, 2), lib.zeros(3, 4))",
    "lib.cdist(lib.zeros(3), lib.zeros(3, 4))",
    "lib.cdist(lib.zeros(3, 2), lib.zeros(3, 2), p=-1.0)",
    "lib.cdist(lib.zeros(3, 2), lib.zeros(3, 2), compute_mode='fast')",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr)


def test_legacy_reduction_arguments_warn_and_map():
    x, t = rand((4, 5), 1), classes((4,), 5, 2)
    for size_average, reduce in [(False, None), (None, False), (True, True)]:
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            got = tessera.nn.functional.cross_entropy(to_tessera(x), to_tessera(t), size_average=size_average,
                                                      reduce=reduce)
        with pytest.warns(UserWarning):
            want = TF.cross_entropy(x, t, size_average=size_average, reduce=reduce)
        torch.testing.assert_close(to_torch(got), want)


def test_mse_loss_warns_on_broadcast_like_torch():
    with pytest.warns(UserWarning, match="Using a target size"):
        got = tessera.nn.functional.mse_loss(tessera.zeros(3, 1), tessera.ones(3))
    assert tuple(got.shape) == () and got.item() == 1.0
