"""Training with sparse gradients against torch 1.13: nn.Embedding(sparse=True) and
nn.EmbeddingBag(sparse=True) give the weight a sparse COO grad (one entry per looked-up
index), which accumulates over backward calls and which optim.SGD (with momentum,
Nesterov, maximize), Adagrad and SparseAdam consume; the trajectories of a small model
with an embedding and a dense layer are compared step by step with torch's."""
import pytest
import torch

import tessera

from opinfo import to_tessera, to_torch

IDX = [[1, 3, 3, 0], [7, 1, 2, 3]]
BAG_IDX = [1, 3, 3, 0, 7, 1, 2]
BAG_OFFSETS = [0, 2, 2, 5]


def _weight(lib, rows=9, dim=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, dim, generator=g, dtype=torch.float64)
    return (w if lib is torch else to_tessera(w)).requires_grad_()


def _same_grad(got, want):
    assert got.is_sparse and want.is_sparse
    assert tuple(got.shape) == tuple(want.shape)
    assert got._nnz() == want._nnz()
    assert torch.allclose(to_torch(got.to_dense()), want.to_dense())


@pytest.mark.parametrize("kw", [{}, dict(padding_idx=3), dict(padding_idx=-6)])
def test_embedding_sparse_grad(kw):
    grads = []
    for lib in (torch, tessera):
        w = _weight(lib)
        out = lib.nn.functional.embedding(lib.tensor(IDX), w, sparse=True, **kw)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        assert w.grad.layout == lib.sparse_coo and not w.grad.is_coalesced()
        grads.append(w.grad)
    _same_grad(grads[1], grads[0])
    assert torch.equal(to_torch(grads[1]._indices()), grads[0]._indices())


def test_embedding_sparse_grad_accumulates():
    grads = []
    for lib in (torch, tessera):
        emb = lib.nn.Embedding(9, 3, sparse=True)
        for idx in ([[0, 2]], [[2, 5, 5]]):
            emb(lib.tensor(idx)).pow(2).sum().backward()
        grads.append((emb.weight.detach().clone(), emb.weight.grad))
    # each library's grad is 2 * weight rows, summed per occurrence
    for (w, g), lib in zip(grads, (torch, tessera)):
        want = torch.zeros(9, 3)
        wt = w if lib is torch else to_torch(w)
        for i in (0, 2, 2, 5, 5):
            want[i] += 2 * wt[i]
        assert torch.allclose(g.to_dense() if lib is torch else to_torch(g.to_dense()), want, atol=1e-6)
        # (torch merges two sorted index lists, so its nnz may be smaller: the rows are the same)
        assert sorted(set(g._indices()[0].tolist())) == [0, 2, 5]


def test_embedding_sparse_refusals_match_torch():
    for lib in (torch, tessera):
        w = _weight(lib)
        out = lib.nn.functional.embedding(lib.tensor(IDX), w, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
            out.sum().backward()
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            lib.nn.functional.embedding_bag(lib.tensor(BAG_IDX), w, lib.tensor(BAG_OFFSETS), mode="max", sparse=True)


def test_embedding_sparse_gradcheck():
    w = _weight(tessera)
    idx = tessera.tensor(IDX)
    assert tessera.autograd.gradcheck(lambda t: tessera.nn.functional.embedding(idx, t, sparse=True), (w,))
    assert tessera.autograd.gradcheck(
        lambda t: tessera.nn.functional.embedding_bag(tessera.tensor(BAG_IDX), t, tessera.tensor(BAG_OFFSETS),
                                                      mode="mean", sparse=True), (w,))


@pytest.mark.parametrize("kw", [dict(mode="sum"), dict(mode="mean"), dict(mode="sum", padding_idx=3),
                                dict(mode="sum", per_sample_weights=True), dict(mode="mean", include_last_offset=True, offsets=BAG_OFFSETS + [7])])
def test_embedding_bag_sparse_grad(kw):
    kw = dict(kw)
    weighted = kw.pop("per_sample_weights", False)
    offsets = kw.pop("offsets", BAG_OFFSETS)
    grads = []
    for lib in (torch, tessera):
        w = _weight(lib)
        psw = lib.linspace(0.5, 2.0, len(BAG_IDX), dtype=lib.float64) if weighted else None
        out = lib.nn.functional.embedding_bag(lib.tensor(BAG_IDX), w, lib.tensor(offsets), sparse=True,
                                              per_sample_weights=psw, **kw)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        grads.append(w.grad)
    _same_grad(grads[1], grads[0])


def test_embedding_bag_module_sparse():
    grads = []
    for lib in (torch, tessera):
        bag = lib.nn.EmbeddingBag(9, 3, mode="sum", sparse=True)
        with lib.no_grad():
            bag.weight.copy_(lib.arange(27, dtype=lib.float32).reshape(9, 3))
        bag(lib.tensor([[1, 2], [2, 8]])).sum().backward()
        grads.append(bag.weight.grad)
    _same_grad(grads[1], grads[0])


# ---------------------------------------------------------------- optimizers

class _Model:
    """An embedding with sparse grads followed by a dense layer, built alike in both
    libraries from the same numbers."""

    def __init__(self, lib):
        g = torch.Generator().manual_seed(1)
        self.lib = lib
        self.emb = lib.nn.Embedding(12, 4, sparse=True, dtype=lib.float64)
        self.lin = lib.nn.Linear(4, 1, dtype=lib.float64)
        with lib.no_grad():
            for p in self.parameters():
                p.copy_(_from(lib, torch.randn(tuple(p.shape), generator=g, dtype=torch.float64)))

    def parameters(self):
        return [self.emb.weight, self.lin.weight, self.lin.bias]

    def loss(self, step):
        lib = self.lib
        idx = lib.tensor([[step % 12, (3 * step + 1) % 12, 5], [2, (step + 7) % 12, 5]])
        return self.lin(self.emb(idx)).pow(2).mean()


def _from(lib, t):
    return t if lib is torch else to_tessera(t)


def _trajectory(lib, make, steps=5, sparse_only=False):
    model = _Model(lib)
    params = [model.emb.weight] if sparse_only else model.parameters()
    opt = make(lib, params)
    seen = []
    for step in range(steps):
        opt.zero_grad()
        model.loss(step).backward()
        if sparse_only:
            model.lin.weight.grad = model.lin.bias.grad = None
        opt.step()
        seen.append([to_torch(p.detach()).clone() if lib is tessera else p.detach().clone() for p in params])
    return seen, opt


def _same_trajectory(make, **kw):
    want, topt = _trajectory(torch, make, **kw)
    got, opt = _trajectory(tessera, make, **kw)
    for step, (g, w) in enumerate(zip(got, want)):
        for a, b in zip(g, w):
            assert torch.allclose(a, b, rtol=1e-10, atol=1e-12), (step, a, b)
    return opt, topt


SGD_CASES = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, dampening=0.3),
             dict(lr=0.05, momentum=0.8, nesterov=True), dict(lr=0.1, momentum=0.5, maximize=True)]


@pytest.mark.parametrize("kw", SGD_CASES, ids=[str(k) for k in SGD_CASES])
def test_sgd_sparse_trajectory(kw):
    opt, topt = _same_trajectory(lambda lib, p: lib.optim.SGD(p, **kw))
    if kw.get("momentum"):
        # the embedding's momentum buffer stays sparse, as torch's does
        buf, tbuf = opt.state[opt.param_groups[0]["params"][0]]["momentum_buffer"], \
            topt.state[topt.param_groups[0]["params"][0]]["momentum_buffer"]
        assert buf.is_sparse and tbuf.is_sparse
        assert torch.allclose(to_torch(buf.to_dense()), tbuf.to_dense())


ADAGRAD_CASES = [dict(lr=0.1), dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2, eps=1e-6),
                 dict(lr=0.1, maximize=True)]


@pytest.mark.parametrize("kw", ADAGRAD_CASES, ids=[str(k) for k in ADAGRAD_CASES])
def test_adagrad_sparse_trajectory(kw):
    _same_trajectory(lambda lib, p: lib.optim.Adagrad(p, **kw))


SPARSE_ADAM_CASES = [{}, dict(lr=0.05, betas=(0.5, 0.7), eps=1e-4), dict(lr=0.01, maximize=True)]


@pytest.mark.parametrize("kw", SPARSE_ADAM_CASES, ids=[str(k) for k in SPARSE_ADAM_CASES])
def test_sparse_adam_trajectory(kw):
    opt, topt = _same_trajectory(lambda lib, p: lib.optim.SparseAdam(p, **kw), sparse_only=True)
    state, tstate = opt.state[opt.param_groups[0]["params"][0]], topt.state[topt.param_groups[0]["params"][0]]
    for name in ("exp_avg", "exp_avg_sq"):
        assert torch.allclose(to_torch(state[name]), tstate[name])
    # (1.13 counts steps in a Python int; current torch and tessera in a float32 tensor)
    assert float(state["step"]) == float(tstate["step"]) == 5


@pytest.mark.parametrize("name, kw, message", [
    ("SGD", dict(lr=0.1, weight_decay=0.1), r"add\(sparse, dense\) is not supported"),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1), "weight_decay option is not compatible with sparse gradients")])
def test_weight_decay_with_sparse_grads_fails_as_torch(name, kw, message):
    for lib in (torch, tessera):
        model = _Model(lib)
        opt = getattr(lib.optim, name)(model.parameters(), **kw)
        model.loss(0).backward()
        before = [p.detach().clone() for p in model.parameters()]
        with pytest.raises(RuntimeError, match=message):
            opt.step()
        if lib is tessera:  # a failed step leaves tessera's parameters as they were
            for p, b in zip(model.parameters(), before):
                assert tessera.equal(p.detach(), b)


def test_zero_grad_keeps_sparse_grads_zeroed():
    for lib in (torch, tessera):
        model = _Model(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        model.loss(0).backward()
        opt.zero_grad(set_to_none=False)
        g = model.emb.weight.grad
        assert g.is_sparse and g._nnz() == 0 and float(g.to_dense().abs().sum()) == 0.0


def test_embedding_sparse_grad_owns_its_members():
    # Reusing the index tensor after backward must not move the grad's rows (torch copies too).
    for lib in (torch, tessera):
        emb = lib.nn.Embedding(5, 3, sparse=True)
        idx = lib.tensor([1, 2])
        emb(idx).sum().backward()
        idx[0] = 4
        assert emb.weight.grad._indices().tolist() == [[1, 2]]
        emb.weight.grad._values().mul_(2)  # writable, not an expanded view
        assert emb.weight.grad.to_dense().sum().item() == 12.0


def test_gradcheck_sparse_inputs():
    # torch's masked semantics: only specified values move; an uncoalesced input's repeated
    # position is one element, and an input without entries still checks its outputs.
    x = tessera.sparse_coo_tensor([[0, 0, 1]], [1.0, 2.0, 3.0], (3,), dtype=tessera.float64).requires_grad_()
    assert tessera.autograd.gradcheck(lambda t: t.to_dense() * 2, (x,))
    m = tessera.randn(4, 2, dtype=tessera.float64, requires_grad=True)
    for layout in ("sparse_coo", "sparse_csr"):
        d = tessera.tensor([[0.0, 2.0, 0.0, 1.0], [3.0, 0.0, 4.0, 0.0]], dtype=tessera.float64)
        s = (d.to_sparse() if layout == "sparse_coo" else d.to_sparse_csr()).requires_grad_()
        assert tessera.autograd.gradcheck(lambda a, b: tessera.sparse.mm(a, b) if layout == "sparse_coo"
                                          else a.to_dense() @ b, (s, m))
    empty = tessera.sparse_coo_tensor(tessera.zeros(1, 0, dtype=tessera.int64), tessera.zeros(0, dtype=tessera.float64),
                                      (3,)).requires_grad_()
    assert tessera.autograd.gradcheck(lambda t: t.to_dense() + 1, (empty,))

    class Wrong(tessera.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.to_dense() * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(tessera.autograd.GradcheckError, match="Jacobian mismatch"):
        tessera.autograd.gradcheck(Wrong.apply, (x,))
