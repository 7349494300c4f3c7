"""Complex autograd with torch's convention: the grad of z = x + iy is dL/dx + i dL/dy (the
conjugate Wirtinger derivative, doubled), compared with torch 1.13 and checked by the
complex gradcheck; real leaves reached through complex tensors get real grads; ops whose
formulas are not complex-ready refuse; complex parameters in every optimizer update
through their real views, as current torch's do."""
import numpy as np
import pytest
import torch

import tessera

Z = [[0.5 + 1.25j, -1.0 + 0.5j, 2.0 - 0.75j], [0.3 - 1.5j, 1.1 + 0.2j, -0.6 - 0.9j]]
W = [[1.5 - 0.5j, 0.25 + 2.0j, -1.0 + 1.0j], [0.8 + 0.4j, -2.2 + 0.1j, 0.7 - 1.3j]]


def _leaves(lib, *values, dtype="complex128"):
    return [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in values]


def _grads_like_torch(fn, *values, dtype="complex128"):
    got = _leaves(tessera, *values, dtype=dtype)
    want = _leaves(torch, *values, dtype=dtype)
    fn(tessera, *got).backward()
    fn(torch, *want).backward()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-10, atol=1e-12)
        assert g.grad.dtype == getattr(tessera, str(w.grad.dtype).split(".")[1])


EXPRESSIONS = {
    "holomorphic chain": lambda lib, z, w: (z * w + (z / w).exp() - z.sin() * w.cosh()).abs().sum(),
    "squared magnitude": lambda lib, z, w: (z * z.conj_physical()).real.sum() + (w - z).abs().pow(2).sum(),
    "angle and parts": lambda lib, z, w: (lib.angle(z * w) + z.imag * w.real).sum(),
    "matrix products": lambda lib, z, w: lib.view_as_real(z @ w.t() + lib.mm(w, z.t()).sqrt()).sum(),
    "reductions": lambda lib, z, w: (z.sum(1) * w.mean(0)[:2] + z.prod(1)).abs().sum() + z.var(),
    "indexing": lambda lib, z, w: (z[:, [0, 2]] * w.flip(0)[:, 1:]).abs().sum() + w.masked_fill(w.real > 0, 2j).imag.sum(),
    "vdot and dot": lambda lib, z, w: lib.vdot(z.reshape(-1), w.reshape(-1)).real + lib.dot(z[0], w[1]).imag,
}


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_grads_of_complex_leaves_like_torch(name):
    _grads_like_torch(EXPRESSIONS[name], Z, W)


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_complex_gradcheck_and_gradgradcheck(name):
    fn = EXPRESSIONS[name]
    z, w = _leaves(tessera, Z, W)
    assert tessera.autograd.gradcheck(lambda a, b: fn(tessera, a, b), (z, w))
    if name in ("holomorphic chain", "squared magnitude", "matrix products"):
        assert tessera.autograd.gradgradcheck(lambda a, b: fn(tessera, a, b), (z, w))


def test_real_leaves_through_complex_tensors_get_real_grads():
    def fn(lib, x, y):
        z = lib.complex(x, y * 2) * lib.polar(y.abs() + 0.5, x)
        return (z * z).abs().sum() + lib.view_as_real(z.exp()).sum()
    _grads_like_torch(fn, [0.5, -1.25, 2.0], [1.5, 0.75, -0.3], dtype="float64")
    x = tessera.tensor([0.5, -1.0], dtype=tessera.float64, requires_grad=True)
    (x.to(tessera.complex128) * (1 + 2j)).imag.sum().backward()
    assert x.grad.dtype == tessera.float64 and x.grad.tolist() == [2.0, 2.0]


def test_complex_leaf_accumulates_a_complex_grad_and_optimizer_state_is_complex():
    z = tessera.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    assert z.requires_grad and z.dtype == tessera.complex64
    (z.abs() ** 2).sum().backward()   # d|z|^2 = 2z under torch's convention
    np.testing.assert_allclose(z.grad.numpy(), [2 + 2j, 4 - 2j])
    opt = tessera.optim.Adam([z], lr=0.1)
    opt.step()
    assert opt.state[z]["exp_avg"].dtype == tessera.complex64


IN_PLACE_THROUGH_PARTS = {
    "real scaled": lambda lib, y, w: y.real.mul_(2),
    "imag of a row": lambda lib, y, w: y[0].imag.add_(w[0].real),
    "imag assigned": lambda lib, y, w: setattr(y, "imag", w.real * 3),
    "view_as_real sliced": lambda lib, y, w: lib.view_as_real(y)[:, 1:, 0].mul_(w[:, 1:].imag),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_THROUGH_PARTS))
def test_in_place_writes_through_real_views_of_complex_tensors_like_torch(name):
    def fn(lib, z, w):
        y = z * 1
        IN_PLACE_THROUGH_PARTS[name](lib, y, w)
        return (y * y.conj_physical()).real.sum() + (y * w).imag.sum()
    _grads_like_torch(fn, Z, W)


def test_implicit_grad_of_a_complex_output_is_refused_like_current_torch():
    # torch 1.13 seeds a complex scalar with 1 silently; current torch (since 2.0,
    # torch/autograd/__init__.py _make_grads) refuses, as a complex loss has no gradient.
    z = tessera.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        (z * 2).sum().backward()
    (z * 2).sum().backward(tessera.tensor(1 + 0j))   # an explicit grad is taken
    assert z.grad.tolist() == [2 + 0j]


def test_ops_without_complex_formulas_refuse_clearly():
    z = tessera.tensor([1 + 1j, 2 - 1j], dtype=tessera.complex128, requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative of 'logcumsumexp' is not implemented for complex"):
        z.logcumsumexp(0)
    x = tessera.tensor([1.0, 2.0], dtype=tessera.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative of 'logaddexp' is not implemented for complex"):
        tessera.logaddexp(x.to(tessera.complex128), z)


class _Square(tessera.autograd.Function):
    """z^2 with a backward that forgets the conjugate when asked to: gradcheck must tell."""
    conjugate = True

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        factor = (2 * z).conj_physical() if _Square.conjugate else 2 * z
        return grad * factor


def test_complex_gradcheck_tells_a_missing_conjugate():
    z = tessera.tensor([0.5 + 1.5j, -1.0 + 0.25j], dtype=tessera.complex128, requires_grad=True)
    _Square.conjugate = True
    assert tessera.autograd.gradcheck(_Square.apply, (z,))
    _Square.conjugate = False
    try:
        assert not tessera.autograd.gradcheck(_Square.apply, (z,), raise_exception=False)
    finally:
        _Square.conjugate = True


def test_polar_grad_at_zero_magnitude_is_the_direction():
    # d polar(r, t) / dr = exp(i t) at r = 0 too; torch 1.13's formula multiplies by
    # sgn(result), which is 0 there (and flips sign for r < 0): tessera differentiates the
    # function itself, which gradcheck confirms.
    r = tessera.tensor([0.0, 0.0], dtype=tessera.float64, requires_grad=True)
    t = tessera.tensor([0.3, -2.0], dtype=tessera.float64, requires_grad=True)
    assert tessera.autograd.gradcheck(tessera.polar, (r, t))
    tessera.view_as_real(tessera.polar(r, t))[:, 0].sum().backward()
    np.testing.assert_allclose(r.grad.numpy(), np.cos([0.3, -2.0]), rtol=1e-12)


def test_new_complex_ops_forward_like_torch():
    z = torch.tensor(Z, dtype=torch.complex64)
    t = tessera.tensor(Z, dtype=tessera.complex64)
    for name in ("real", "imag", "angle", "conj_physical"):
        np.testing.assert_allclose(getattr(tessera, name)(t).numpy(), getattr(torch, name)(z).numpy(), rtol=1e-6)
    r = tessera.real(t)
    r.fill_(7.0)   # a view: writes the input
    assert tessera.real(t).tolist() == [[7.0] * 3] * 2
    t.imag = tessera.ones(3)
    z.real = 7.0
    z.imag = torch.ones(3)
    np.testing.assert_allclose(t.numpy(), z.numpy())
    c = t.clone()
    c.conj_physical_()
    np.testing.assert_allclose(c.numpy(), np.conj(t.numpy()))
    x = tessera.tensor([1.0, -2.0])
    assert tessera.real(x) is not None and tessera.real(x).data_ptr() == x.data_ptr()
    # Half parts make complex32, as in torch
    z32 = tessera.complex(x.half(), x.half())
    assert z32.dtype == tessera.complex32
    assert z32.cfloat().tolist() == torch.complex(torch.tensor([1.0, -2.0]).half(),
                                                  torch.tensor([1.0, -2.0]).half()).to(torch.complex64).tolist()


ALL = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]
KWARGS = {"SGD": dict(lr=0.1, momentum=0.9, weight_decay=0.01), "Adam": dict(lr=0.05, amsgrad=True),
          "AdamW": dict(lr=0.05), "RMSprop": dict(lr=0.01, centered=True, momentum=0.5),
          "Adagrad": dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.1), "Adadelta": dict(lr=1.0), "Adamax": dict(lr=0.05),
          "NAdam": dict(lr=0.05), "RAdam": dict(lr=0.05), "ASGD": dict(lr=0.05, t0=1), "Rprop": dict(lr=0.05)}


def _complex_loss(z):
    return (z * z).abs().sum() + (z * (1.5 - 0.5j)).real.sum()


@pytest.mark.parametrize("name", ALL)
def test_complex_parameters_update_as_their_real_views(name):
    """Current torch's rule: a complex parameter steps as view_as_real of it would, with
    view_as_real of its grad. The twin is a real parameter of that shape given those grads."""
    z = tessera.nn.Parameter(tessera.tensor(Z, dtype=tessera.complex128))
    twin = tessera.nn.Parameter(tessera.view_as_real(z.detach()).clone())
    cls = getattr(tessera.optim, name)
    opt_z, opt_twin = cls([z], **KWARGS[name]), cls([twin], **KWARGS[name])
    for _ in range(4):
        opt_z.zero_grad()
        opt_twin.zero_grad()
        _complex_loss(z).backward()
        twin.grad = tessera.view_as_real(z.grad).clone()
        opt_z.step()
        opt_twin.step()
        np.testing.assert_allclose(tessera.view_as_real(z.detach()).numpy(), twin.detach().numpy(), rtol=1e-12,
                                   atol=1e-14)


def test_lbfgs_steps_a_complex_parameter_as_its_real_view():
    def run(make_param, loss_of):
        p = make_param()
        opt = tessera.optim.LBFGS([p], lr=0.5, max_iter=5)

        def closure():
            opt.zero_grad()
            loss = loss_of(p)
            loss.backward()
            return loss
        for _ in range(2):
            opt.step(closure)
        return p.detach()
    z = run(lambda: tessera.nn.Parameter(tessera.tensor(Z, dtype=tessera.complex128)), _complex_loss)
    twin = run(lambda: tessera.nn.Parameter(tessera.view_as_real(tessera.tensor(Z, dtype=tessera.complex128)).clone()),
               lambda r: _complex_loss(tessera.view_as_complex(r)))
    np.testing.assert_allclose(tessera.view_as_real(z).numpy(), twin.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_complex_parameters_like_torch(name):
    """torch 1.13 already updates complex parameters of these through view_as_real."""
    def run(lib):
        z = lib.nn.Parameter(lib.tensor(Z, dtype=lib.complex128))
        kwargs = dict(KWARGS[name], amsgrad=False) if name == "Adam" else KWARGS[name]  # 1.13: no complex max
        opt = getattr(lib.optim, name)([z], **kwargs)
        for _ in range(4):
            opt.zero_grad()
            _complex_loss(z).backward()
            opt.step()
        return z.detach().numpy()
    np.testing.assert_allclose(run(tessera), run(torch), rtol=1e-10)
