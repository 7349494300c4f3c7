"""The composite losses of tessera.nn.functional (hinge embedding, soft margin, multi-label
and multi-class margin, triplet with a distance function, CTC) and rrelu against torch:
values for each reduction, grads against torch's, gradcheck in float64, the modules'
reprs, and torch's errors."""
import pytest
import torch
import torch.nn.functional as TF

import tessera
from opinfo import assert_raises_like_torch, make_torch, to_tessera, to_torch

F = tessera.nn.functional


def rand(shape, seed, low=-2.0, high=2.0):
    return make_torch(shape, "float64", seed, low, high)


def classes(shape, n, seed):
    return torch.randint(0, n, shape, generator=torch.Generator().manual_seed(seed))


def signs(shape, seed):
    return classes(shape, 2, seed).double() * 2 - 1


W5 = torch.tensor([0.5, 1.0, 2.0, 0.25, 1.5], dtype=torch.float64)
# rows of class lists ended by -1; the second repeats class 1, the third lists none
MULTILABEL = torch.tensor([[3, 0, -1, 1, 2], [1, 1, 4, -1, 0], [-1, 2, 2, 2, 2]])


def _cosine_distance(F_):
    return lambda a, b: 1.0 - F_.cosine_similarity(a, b)


# (name, call(F, *inputs, **kw), inputs, indices of the inputs that take a grad, kwargs variants)
CASES = [
    ("hinge_embedding_loss", lambda F_, x, t, **k: F_.hinge_embedding_loss(x, t, **k),
     [rand((4, 5), 1), signs((4, 5), 2)], (0,),
     [{}, {"margin": 0.5, "reduction": "none"}, {"margin": 2.0, "reduction": "sum"}]),
    # targets other than +-1 get both terms, as torch's kernel adds them
    ("hinge_embedding_loss_other_targets", lambda F_, x, t, **k: F_.hinge_embedding_loss(x, t, **k),
     [rand((6,), 3), torch.tensor([1.0, -1.0, 0.0, 0.5, -1.0, 2.0], dtype=torch.float64)], (0,),
     [{"reduction": "none"}]),
    ("hinge_embedding_loss_broadcast", lambda F_, x, t, **k: F_.hinge_embedding_loss(x, t, **k),
     [rand((3, 4), 4), signs((4,), 5)], (0,), [{"reduction": "none"}]),
    # torch's soft_margin_loss has no derivative for target (tessera's composite does)
    ("soft_margin_loss", lambda F_, x, t, **k: F_.soft_margin_loss(x, t, **k), [rand((3, 4), 6), signs((3, 4), 7)],
     (0,), [{}, {"reduction": "none"}, {"reduction": "sum"}]),
    ("multilabel_soft_margin_loss", lambda F_, x, t, **k: F_.multilabel_soft_margin_loss(x, t, **k),
     [rand((3, 5), 8), classes((3, 5), 2, 9).double()], (0, 1),
     [{}, {"reduction": "none"}, {"reduction": "sum"}, {"weight": W5}, {"weight": W5, "reduction": "none"}]),
    ("multilabel_soft_margin_loss_1d", lambda F_, x, t, **k: F_.multilabel_soft_margin_loss(x, t, **k),
     [rand((5,), 10), classes((5,), 2, 11).double()], (0,), [{}, {"reduction": "none"}]),
    ("multi_margin_loss", lambda F_, x, t, **k: F_.multi_margin_loss(x, t, **k), [rand((4, 5), 12),
                                                                                  classes((4,), 5, 13)], (0,),
     [{}, {"p": 2}, {"margin": 0.5, "reduction": "none"}, {"weight": W5, "reduction": "sum"},
      {"p": 2, "margin": 2.0, "weight": W5, "reduction": "none"}]),
    ("multi_margin_loss_1d", lambda F_, x, t, **k: F_.multi_margin_loss(x, t, **k),
     [rand((5,), 14), torch.tensor(2)], (0,), [{}, {"reduction": "none"}, {"p": 2, "weight": W5}]),
    ("multi_margin_loss_1d_target1", lambda F_, x, t, **k: F_.multi_margin_loss(x, t, **k),
     [rand((5,), 15), torch.tensor([4])], (0,), [{"reduction": "none"}]),
    ("multilabel_margin_loss", lambda F_, x, t, **k: F_.multilabel_margin_loss(x, t, **k),
     [rand((3, 5), 16), MULTILABEL], (0,), [{}, {"reduction": "none"}, {"reduction": "sum"}]),
    ("multilabel_margin_loss_1d", lambda F_, x, t, **k: F_.multilabel_margin_loss(x, t, **k),
     [rand((5,), 17), MULTILABEL[1]], (0,), [{}, {"reduction": "none"}]),
    ("triplet_margin_with_distance_loss",
     lambda F_, a, p, n, **k: F_.triplet_margin_with_distance_loss(a, p, n, **k),
     [rand((4, 6), 18), rand((4, 6), 19), rand((4, 6), 20)], (0, 1, 2),
     [{}, {"swap": True}, {"margin": 2.0, "reduction": "none"}, {"margin": 0.5, "reduction": "sum"}]),
    ("triplet_margin_with_cosine_distance",
     lambda F_, a, p, n, **k: F_.triplet_margin_with_distance_loss(a, p, n, distance_function=_cosine_distance(F_),
                                                                    **k),
     [rand((4, 6), 21), rand((4, 6), 22), rand((4, 6), 23)], (0, 1, 2),
     [{}, {"swap": True, "margin": 0.3, "reduction": "none"}]),
]

FLAT = [(name, call, inputs, grads, kw) for name, call, inputs, grads, kws in CASES for kw in kws]
IDS = [f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[4].items() if not isinstance(v, torch.Tensor)) or 'default'}"
       f"{'-weighted' if any(isinstance(v, torch.Tensor) for v in c[4].values()) else ''}" for c in FLAT]


def _convert(kw, dtype):
    return {k: to_tessera(v.to(dtype)) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}


@pytest.mark.parametrize("name,call,inputs,grads,kw", FLAT, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_values_and_grads_match_torch(name, call, inputs, grads, kw, dtype):
    def operands(lib):
        out = []
        for i, t in enumerate(inputs):
            t = t.to(dtype) if t.is_floating_point() else t
            t = to_tessera(t) if lib is tessera else t.clone()
            out.append(t.requires_grad_() if i in grads and dtype == torch.float64 else t)
        return out
    t_ins, s_ins = operands(torch), operands(tessera)
    want = call(TF, *t_ins, **{k: v.to(dtype) if isinstance(v, torch.Tensor) else v for k, v in kw.items()})
    got = call(F, *s_ins, **_convert(kw, dtype))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-12)
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(to_torch(got), want, **tol)
    if dtype == torch.float64:
        weights = rand(tuple(want.shape), 99, 0.5, 1.5)  # a non-uniform upstream grad
        (want * weights).sum().backward()
        (got * to_tessera(weights)).sum().backward()
        for i in grads:
            torch.testing.assert_close(to_torch(s_ins[i].grad), t_ins[i].grad, rtol=1e-7, atol=1e-10,
                                       msg=lambda m: f"grad of input {i}: {m}")


GRADCHECKED = [c for c in FLAT if not c[4]]  # the default options of every case


@pytest.mark.parametrize("name,call,inputs,grads,kw", GRADCHECKED, ids=[IDS[FLAT.index(c)] for c in GRADCHECKED])
def test_gradcheck(name, call, inputs, grads, kw):
    mine = [to_tessera(t) for t in inputs]
    variables = [mine[i].requires_grad_() for i in grads]

    def fn(*vs):
        ins = list(mine)
        for i, v in zip(grads, vs):
            ins[i] = v
        return call(F, *ins)
    assert tessera.autograd.gradcheck(fn, variables)


def test_gradcheck_weighted_margin_losses():
    x = to_tessera(rand((3, 5), 30)).requires_grad_()
    w = to_tessera(W5)
    t = to_tessera(classes((3,), 5, 31))
    assert tessera.autograd.gradcheck(lambda v: F.multi_margin_loss(v, t, p=2, weight=w, reduction="none"), (x,))
    y = to_tessera(classes((3, 5), 2, 32).double())
    assert tessera.autograd.gradcheck(lambda v: F.multilabel_soft_margin_loss(v, y, weight=w), (x,))
    assert tessera.autograd.gradcheck(lambda v: F.multilabel_margin_loss(v, to_tessera(MULTILABEL),
                                                                         reduction="none"), (x,))


# The four margin losses are aten operators (ops.yaml): C++ and tessera.ops.aten reach them
# with torch.ops.aten's arguments, and their Meta forms (through the decomposition) give
# torch's shapes and dtypes without reading data.
ATEN_LOSSES = [
    ("hinge_embedding_loss", [rand((4, 5), 40), signs((4, 5), 41)], [0.5, 0]),
    ("soft_margin_loss", [rand((4, 5), 42), signs((4, 5), 43)], [2]),
    ("multi_margin_loss", [rand((4, 5), 44), classes((4,), 5, 45)], [2, 0.5, W5, 0]),
    ("multilabel_margin_loss", [rand((3, 5), 46), MULTILABEL], [0]),
]


@pytest.mark.parametrize("name,inputs,args", ATEN_LOSSES, ids=[c[0] for c in ATEN_LOSSES])
def test_margin_losses_are_aten_operators(name, inputs, args):
    expected = getattr(torch.ops.aten, name)(*inputs, *args)
    got = getattr(tessera.ops.aten, name)(*[to_tessera(t) for t in inputs],
                                           *[to_tessera(a) if isinstance(a, torch.Tensor) else a for a in args])
    torch.testing.assert_close(to_torch(got), expected)
    meta = getattr(tessera.ops.aten, name)(*[to_tessera(t).to("meta") for t in inputs],
                                            *[to_tessera(a).to("meta") if isinstance(a, torch.Tensor) else a
                                              for a in args])
    assert meta.is_meta and tuple(meta.shape) == tuple(expected.shape) and str(meta.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_legacy_size_average_and_reduce():
    x, t = rand((3, 5), 33), classes((3,), 5, 34)
    for kw in ({"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}):
        for name, args in (("multi_margin_loss", (x, t)), ("multilabel_margin_loss", (x, MULTILABEL)),
                           ("soft_margin_loss", (x, signs((3, 5), 35))),
                           ("hinge_embedding_loss", (x, signs((3, 5), 36))),
                           ("multilabel_soft_margin_loss", (x, classes((3, 5), 2, 37).double()))):
            want = getattr(TF, name)(*args, **kw)
            got = getattr(F, name)(*[to_tessera(a) for a in args], **kw)
            torch.testing.assert_close(to_torch(got), want, rtol=1e-9, atol=1e-12, msg=lambda m: f"{name}: {m}")


# ---------------------------------------------------------------- ctc_loss

def _ctc_case(steps, batch, num_classes, seed):
    logits = rand((steps, batch, num_classes), seed, -3.0, 3.0)
    return logits


def _ctc_both(logits, targets, input_lengths, target_lengths, grad=True, tensor_lengths=False, **kw):
    """loss and d loss / d logits (through log_softmax) from torch and from tessera."""
    out = []
    for lib, F_ in ((torch, TF), (tessera, F)):
        x = (logits.clone() if lib is torch else to_tessera(logits)).requires_grad_(grad)
        tg = targets if lib is torch else to_tessera(targets)
        il, tl = [v if lib is torch or not isinstance(v, torch.Tensor) else to_tessera(v)
                  for v in (input_lengths, target_lengths)]
        if tensor_lengths:
            il, tl = lib.tensor(list(il)), lib.tensor(list(tl))
        loss = F_.ctc_loss(x.log_softmax(-1), tg, il, tl, **kw)
        if grad:
            (loss * (lib.arange(loss.numel(), dtype=lib.float64).reshape(tuple(loss.shape)) + 1)).sum().backward()
        out.append((loss, x.grad))
    (want, want_grad), (got, got_grad) = out
    assert tuple(got.shape) == tuple(want.shape)
    torch.testing.assert_close(to_torch(got), want.detach(), rtol=1e-9, atol=1e-10)
    if grad:
        torch.testing.assert_close(to_torch(got_grad), want_grad, rtol=1e-7, atol=1e-10)
    return to_torch(got)


CTC_SHAPES = [
    # steps, batch, classes, padded targets, input lengths, target lengths, blank
    (5, 1, 4, [[1, 2, 3]], (5,), (3,), 0),
    (6, 3, 5, [[1, 2, 2, 4], [3, 3, 3, 0], [4, 1, 0, 0]], (6, 5, 4), (4, 3, 2), 0),   # repeats need blanks
    (7, 3, 4, [[0, 1, 3], [1, 1, 0], [3, 0, 0]], (7, 7, 3), (3, 2, 1), 2),            # blank in the middle
    (8, 2, 6, [[5, 5, 1, 2, 1], [1, 2, 3, 4, 5]], (8, 6), (5, 5), 0),
    (4, 2, 3, [[1, 2], [2, 2]], (4, 3), (2, 0), 0),                                   # an empty target
]


@pytest.mark.parametrize("case", CTC_SHAPES, ids=[f"T{c[0]}-N{c[1]}-C{c[2]}-blank{c[6]}" for c in CTC_SHAPES])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_padded_and_concatenated(case, reduction):
    steps, batch, num_classes, padded, il, tl, blank = case
    logits = _ctc_case(steps, batch, num_classes, 40 + steps)
    padded = torch.tensor(padded)
    _ctc_both(logits, padded, il, tl, blank=blank, reduction=reduction)
    concatenated = torch.cat([padded[b, :tl[b]] for b in range(batch)])
    _ctc_both(logits, concatenated, il, tl, blank=blank, reduction=reduction, tensor_lengths=True)


def test_ctc_loss_unbatched_and_int32_targets():
    logits = _ctc_case(6, 1, 4, 50)[:, 0]
    _ctc_both(logits, torch.tensor([1, 3, 3]), (6,), (3,))
    _ctc_both(logits, torch.tensor([[1, 3, 3]]), (6,), (3,), reduction="none")
    _ctc_both(logits, torch.tensor([1, 3]), torch.tensor(6), torch.tensor(2), reduction="sum")
    # padded wider than the longest target
    _ctc_both(_ctc_case(5, 2, 4, 51), torch.tensor([[1, 2, 0, 0], [3, 1, 0, 0]], dtype=torch.int32), (5, 4), (2, 2))


def test_ctc_loss_impossible_alignment_and_zero_infinity():
    logits = _ctc_case(3, 3, 4, 52)
    # batch 1 needs 3 steps for "1 1" (a blank between the repeats) but has 2; batch 2 needs 3 for 3 labels
    targets, il, tl = torch.tensor([[1, 2, 3], [1, 1, 0], [2, 3, 1]]), (3, 2, 2), (3, 2, 3)
    loss = _ctc_both(logits, targets, il, tl, grad=False, reduction="none")
    assert loss[1].item() == float("inf") and loss[2].item() == float("inf") and loss[0].item() < float("inf")
    for reduction in ("none", "mean", "sum"):
        _ctc_both(logits, targets, il, tl, zero_infinity=True, reduction=reduction)
    # the zeroed items take no gradient at all
    x = to_tessera(logits).requires_grad_()
    F.ctc_loss(x.log_softmax(2), to_tessera(targets), il, tl, zero_infinity=True, reduction="sum").backward()
    grad = to_torch(x.grad)
    assert torch.equal(grad[:, 1:], torch.zeros_like(grad[:, 1:])) and grad[:, 0].abs().sum() > 0


def test_ctc_loss_of_an_empty_input():
    # current torch: 0 for an empty target, inf otherwise (1.13 reads outside log_alpha here)
    lp = to_tessera(_ctc_case(4, 3, 3, 54)).log_softmax(2).requires_grad_()
    loss = F.ctc_loss(lp, to_tessera(torch.tensor([[1, 2], [2, 2], [1, 1]])), (0, 0, 4), (0, 1, 0), reduction="none")
    assert to_torch(loss)[:2].tolist() == [0.0, float("inf")]
    loss = F.ctc_loss(lp, to_tessera(torch.tensor([[1, 2], [2, 2], [1, 1]])), (0, 0, 4), (0, 1, 0), zero_infinity=True,
                      reduction="sum")
    loss.backward()
    assert to_torch(lp.grad)[:, :2].abs().sum().item() == 0.0


def test_ctc_loss_gradcheck_through_log_softmax():
    # torch's formula (kept) is the derivative with respect to the logits behind a
    # log_softmax: exact for the composition, which gradcheck checks
    logits = to_tessera(_ctc_case(4, 2, 3, 53)).requires_grad_()
    targets = to_tessera(torch.tensor([[1, 1], [2, 0]]))
    for kw in ({}, {"reduction": "none", "blank": 1}, {"reduction": "sum"}):
        tg = targets if kw.get("blank", 0) == 0 else to_tessera(torch.tensor([[0, 0], [2, 0]]))
        assert tessera.autograd.gradcheck(lambda v: F.ctc_loss(v.log_softmax(2), tg, (4, 3), (2, 1), **kw), (logits,))


def test_ctc_loss_grad_on_log_probs_is_torchs():
    """With log_probs the leaf, the grad is torch's formula (not d loss / d log_probs)."""
    lp_t = _ctc_case(5, 2, 4, 55).log_softmax(2).requires_grad_()
    lp_m = to_tessera(lp_t.detach()).requires_grad_()
    targets = torch.tensor([[1, 3], [2, 2]])
    for lib, F_, lp, tg in ((torch, TF, lp_t, targets), (tessera, F, lp_m, to_tessera(targets))):
        F_.ctc_loss(lp, tg, (5, 4), (2, 2), reduction="sum").backward()
    torch.testing.assert_close(to_torch(lp_m.grad), lp_t.grad, rtol=1e-9, atol=1e-12)
    # and _ctc_loss_backward (no Python binding in torch: through ops.aten) gives torch's
    nll, alpha = tessera._ctc_loss(lp_m.detach(), to_tessera(targets), [5, 4], [2, 2])
    nll_t, alpha_t = torch._ctc_loss(lp_t.detach(), targets, [5, 4], [2, 2])
    torch.testing.assert_close(to_torch(nll), nll_t, rtol=1e-12, atol=1e-12)
    g = tessera.ops.aten._ctc_loss_backward(tessera.ones(2, dtype=tessera.float64), lp_m.detach(), to_tessera(targets),
                                   [5, 4], [2, 2], nll, alpha, 0)
    g_t = torch.ops.aten._ctc_loss_backward(torch.ones(2, dtype=torch.float64), lp_t.detach(), targets, [5, 4], [2, 2],
                                   nll_t, alpha_t, 0)
    torch.testing.assert_close(to_torch(g), g_t, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- rrelu

def test_rrelu_eval_matches_torch_exactly():
    x = make_torch((4, 5), "float32", 60)
    for lower, upper in ((1.0 / 8, 1.0 / 3), (0.1, 0.1), (0.0, 0.9)):
        want = TF.rrelu(x, lower, upper)
        assert torch.equal(to_torch(F.rrelu(to_tessera(x), lower, upper)), want)
        assert torch.equal(to_torch(F.rrelu(to_tessera(x), lower, upper, training=False, inplace=True)), want)
        y = to_tessera(x)
        assert F.rrelu_(y, lower, upper) is y and torch.equal(to_torch(y), want)
    m, tm = tessera.nn.RReLU(0.2, 0.4).eval(), torch.nn.RReLU(0.2, 0.4).eval()
    assert torch.equal(to_torch(m(to_tessera(x))), tm(x))


def test_rrelu_training_statistics_and_grad():
    tessera.manual_seed(7)
    x = to_tessera(make_torch((4000,), "float64", 61, -3.0, 3.0)).requires_grad_()
    lower, upper = 0.1, 0.3
    out = F.rrelu(x, lower, upper, training=True)
    xs, ys = to_torch(x.detach()), to_torch(out.detach())
    positive = xs > 0
    assert torch.equal(ys[positive], xs[positive])
    slopes = ys[~positive] / xs[~positive]
    assert slopes.min() >= lower and slopes.max() <= upper
    assert abs(slopes.mean().item() - 0.2) < 0.01            # Uniform(0.1, 0.3): mean 0.2, sd 0.058
    assert abs(slopes.std().item() - 0.2 / 12 ** 0.5) < 0.01
    assert len(set(slopes.tolist())) > 1000                   # one draw per element
    out.backward(to_tessera(torch.ones(4000, dtype=torch.float64)))
    g = to_torch(x.grad)
    assert torch.equal(g[positive], torch.ones_like(g[positive]))
    torch.testing.assert_close(g[~positive], slopes)
    # in place, and the module in training mode
    y = to_tessera(xs.clone())
    assert F.rrelu(y, lower, upper, training=True, inplace=True) is y
    ys2 = to_torch(y)
    assert torch.equal(ys2[positive], xs[positive]) and (ys2[~positive] / xs[~positive]).max() <= upper
    m = tessera.nn.RReLU(lower, upper)
    assert m.training
    slopes_m = to_torch(m(to_tessera(xs)))[~positive] / xs[~positive]
    assert slopes_m.min() >= lower and slopes_m.max() <= upper and not torch.equal(slopes_m, slopes)


def test_rrelu_follows_tessera_seed():
    x = to_tessera(make_torch((50,), "float32", 62))
    tessera.manual_seed(3)
    a = to_torch(F.rrelu(x, training=True))
    tessera.manual_seed(3)
    assert torch.equal(to_torch(F.rrelu(x, training=True)), a)


# ---------------------------------------------------------------- modules

REPRS = [
    "nn.HingeEmbeddingLoss()", "nn.HingeEmbeddingLoss(margin=0.5, reduction='sum')", "nn.SoftMarginLoss()",
    "nn.MultiLabelSoftMarginLoss(weight=lib.ones(3))", "nn.MultiMarginLoss(p=2, margin=0.5)",
    "nn.MultiLabelMarginLoss(reduction='none')", "nn.TripletMarginWithDistanceLoss()",
    "nn.TripletMarginWithDistanceLoss(distance_function=lib.nn.functional.pairwise_distance, swap=True)",
    "nn.TripletMarginWithDistanceLoss(distance_function=lib.nn.PairwiseDistance(p=1.0))",
    "nn.CTCLoss(blank=3, zero_infinity=True)", "nn.RReLU()", "nn.RReLU(0.1, 0.3, inplace=True)",
    "nn.RReLU(lower=0, upper=1)",
]


@pytest.mark.parametrize("expr", REPRS)
def test_module_repr_like_torch(expr):
    want = repr(eval(expr, {"nn": torch.nn, "lib": torch}))
    assert repr(eval(expr, {"nn": tessera.nn, "lib": tessera})) == want


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_modules_call_their_functionals():
    x, t = rand((3, 5), 70), classes((3,), 5, 71)
    pairs = [("HingeEmbeddingLoss", dict(margin=0.7), (x, signs((3, 5), 72))),
             ("SoftMarginLoss", dict(reduction="sum"), (x, signs((3, 5), 73))),
             ("MultiLabelSoftMarginLoss", dict(weight=W5), (x, classes((3, 5), 2, 74).double())),
             ("MultiMarginLoss", dict(p=2, margin=0.5, weight=W5, reduction="none"), (x, t)),
             ("MultiLabelMarginLoss", dict(size_average=False), (x, MULTILABEL)),
             ("TripletMarginWithDistanceLoss", dict(margin=0.5, swap=True), (x, rand((3, 5), 75), rand((3, 5), 76)))]
    for name, kw, args in pairs:
        want = getattr(torch.nn, name)(**kw)(*args)
        module = getattr(tessera.nn, name)(**{k: to_tessera(v) if isinstance(v, torch.Tensor) else v
                                              for k, v in kw.items()})
        got = module(*[to_tessera(a) for a in args])
        torch.testing.assert_close(to_torch(got), want, rtol=1e-9, atol=1e-12, msg=lambda m: f"{name}: {m}")
    logits = _ctc_case(5, 2, 4, 77)
    want = torch.nn.CTCLoss(blank=1)(logits.log_softmax(2), torch.tensor([[2, 3], [3, 0]]), (5, 5), (2, 2))
    got = tessera.nn.CTCLoss(blank=1)(to_tessera(logits).log_softmax(2), to_tessera(torch.tensor([[2, 3], [3, 0]])),
                                      (5, 5), (2, 2))
    torch.testing.assert_close(to_torch(got), want, rtol=1e-9, atol=1e-12)
    assert list(tessera.nn.MultiMarginLoss(weight=to_tessera(W5)).state_dict()) == ["weight"]
    assert isinstance(tessera.nn.TripletMarginWithDistanceLoss().distance_function, tessera.nn.PairwiseDistance)


MODULE_ERRORS = ["lib.nn.MultiMarginLoss(p=3)", "lib.nn.MultiMarginLoss(weight=lib.ones(2, 2))",
                 "lib.nn.RReLU(0.5, 0.1)(lib.zeros(3))"]

ERRORS = [
    "F.hinge_embedding_loss(lib.zeros(3), lib.ones(3), reduction='avg')",
    "F.hinge_embedding_loss(lib.zeros(3), lib.ones(2))",
    "F.soft_margin_loss(lib.zeros(3), lib.ones(2))",
    "F.multilabel_soft_margin_loss(lib.zeros(3, 2), lib.ones(3, 2), reduction='avg')",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 4]))",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, -1]))",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1]))",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([[0, 1, 2]]))",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2], dtype=lib.int32))",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2]), p=3)",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2]), weight=lib.ones(2, 2))",
    "F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2]), weight=lib.ones(4, dtype=lib.float64))",
    "F.multi_margin_loss(lib.zeros(2, 3, 4), lib.tensor([0, 1]))",
    "F.multi_margin_loss(lib.zeros(3, 0), lib.tensor([0, 1, 2]))",
    "F.multi_margin_loss(lib.tensor([[1, 2]]), lib.tensor([0]))",
    "F.multilabel_margin_loss(lib.zeros(3, 4), lib.tensor([[0, 5, -1, 2]] * 3))",
    "F.multilabel_margin_loss(lib.zeros(3, 4), lib.tensor([[0, -1, -2, 2]] * 3))",
    "F.multilabel_margin_loss(lib.zeros(3, 4), lib.tensor([[0, 1, -1]] * 3))",
    "F.multilabel_margin_loss(lib.zeros(4), lib.tensor([[0, 1, -1, 2]]))",
    "F.multilabel_margin_loss(lib.zeros(3, 4), lib.tensor([[0, 1, -1, 2]] * 3, dtype=lib.int32))",
    "F.multilabel_margin_loss(lib.zeros(2, 3, 4), lib.zeros(2, 3, 4, dtype=lib.int64))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, 6), (2, 2))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5,), (2, 2))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2,))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, 3))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([1, 2, 1]), (5, 5), (2, 2))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, 2), blank=4)",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, 2), blank=-1)",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, 2), reduction='avg')",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[[1, 2], [1, 1]]]), (5, 5), (2, 2))",
    "F.ctc_loss(lib.zeros(5), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, 2))",
    "F.ctc_loss(lib.zeros(5, 2, 4, dtype=lib.int32), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, 2))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), lib.tensor([5.0, 5.0]), lib.tensor([2, 2]))",
    "F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), lib.tensor([5, 5]), lib.tensor([2.0, 2.0]))",
    "F.rrelu(lib.zeros(3), 0.5, 0.1)",
    "F.rrelu(lib.zeros(3), 0.5, 0.1, training=True)",
    "F.rrelu(lib.tensor([1, -2]), training=True)",
    "F.rrelu(lib.zeros(3, dtype=lib.complex64), training=True)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_torch(expr):
    assert_raises_like_torch(expr, first_line_only=True)


@pytest.mark.parametrize("expr", MODULE_ERRORS)
def test_module_errors_like_torch(expr):
    with pytest.raises(Exception) as want:
        eval(expr, {"lib": torch})
    with pytest.raises(want.type):
        eval(expr, {"lib": tessera})


# current torch rejects these (1.13 reads out of bounds or accepts them); same class as current torch
CURRENT_TORCH_ERRORS = [
    ("F.multi_margin_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2]), weight=lib.ones(3))", RuntimeError),
    ("F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, -1), (2, 2))", RuntimeError),
    ("F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), (5, 5), (2, -1))", RuntimeError),
    ("F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 7]]), (5, 5), (2, 2))", RuntimeError),
    ("F.triplet_margin_with_distance_loss(lib.zeros(3, 2), lib.zeros(2), lib.zeros(3, 2))", RuntimeError),
    ("F.triplet_margin_with_distance_loss(lib.zeros(3, 2), lib.zeros(3, 2), lib.zeros(3, 2), reduction='avg')",
     ValueError),
    ("F.ctc_loss(lib.zeros(5, 2, 4), lib.tensor([[1, 2], [1, 1]]), 5, 2)", TypeError),
]


@pytest.mark.parametrize("expr,error", CURRENT_TORCH_ERRORS)
def test_errors_of_current_torch(expr, error):
    with pytest.raises(error):
        eval(expr, {"lib": tessera, "F": F})
