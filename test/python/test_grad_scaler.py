"""tessera.amp.GradScaler("cpu") and its two operators. torch 1.13 has GradScaler for CUDA
only (on this machine torch.cuda.amp.GradScaler warns and disables itself, and so does
tessera's); the CPU form follows current PyTorch's documented behaviour: scale() multiplies
by the scale, step() unscales and skips the step on inf/NaN, update() halves the scale after
an overflow and doubles it after growth_interval clean steps. Expected values below come
from that definition, computed with torch."""
import math
import pickle

import pytest
import torch

import tessera

from opinfo import to_tessera, to_torch


def _model(lib, seed=0):
    g = torch.Generator().manual_seed(seed)
    lin = lib.nn.Linear(4, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(torch.randn(3, 4, generator=g).tolist()))
        lin.bias.copy_(lib.tensor(torch.randn(3, generator=g).tolist()))
    return lin


def _batch(lib, seed=1):
    g = torch.Generator().manual_seed(seed)
    return lib.tensor(torch.randn(8, 4, generator=g).tolist()), lib.tensor(torch.randn(8, 3, generator=g).tolist())


def test_a_scaled_step_equals_torchs_plain_step():
    # The scale is a power of two, so scaling and unscaling are exact: the parameters after
    # scaler.step must equal those after torch's unscaled SGD step.
    ref = _model(torch)
    x, y = _batch(torch)
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    torch.nn.functional.mse_loss(ref(x), y).backward()
    opt.step()

    model = _model(tessera)
    tx, ty = _batch(tessera)
    topt = tessera.optim.SGD(model.parameters(), lr=0.1)
    scaler = tessera.amp.GradScaler("cpu")
    loss = tessera.nn.functional.mse_loss(model(tx), ty)
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(loss.item() * 65536.0, rel=1e-6)
    scaled.backward()
    assert scaler.step(topt) is None  # SGD.step returns None; the step ran
    scaler.update()
    torch.testing.assert_close(to_torch(model.weight.detach()), ref.weight.detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(to_torch(model.bias.detach()), ref.bias.detach(), rtol=1e-6, atol=1e-6)
    assert scaler.get_scale() == 65536.0 and scaler._get_growth_tracker() == 1


def test_inf_skips_the_step_and_backs_off_then_growth_after_the_interval():
    model = _model(tessera)
    before = model.weight.detach().clone()
    opt = tessera.optim.SGD(model.parameters(), lr=0.1)
    scaler = tessera.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    x, y = _batch(tessera)
    scaler.scale(tessera.nn.functional.mse_loss(model(x), y)).backward()
    model.weight.grad[0, 0] = math.inf
    scaler.step(opt)
    scaler.update()
    assert tessera.equal(model.weight.detach(), before)   # skipped
    assert scaler.get_scale() == 4.0 and scaler._get_growth_tracker() == 0
    for expected_scale, expected_tracker in ((4.0, 1), (8.0, 0), (8.0, 1)):
        opt.zero_grad()
        scaler.scale(tessera.nn.functional.mse_loss(model(x), y)).backward()
        scaler.step(opt)
        scaler.update()
        assert (scaler.get_scale(), scaler._get_growth_tracker()) == (expected_scale, expected_tracker)
    assert not tessera.equal(model.weight.detach(), before)
    # A NaN backs off too; new_scale sets the scale directly.
    opt.zero_grad()
    scaler.scale(tessera.nn.functional.mse_loss(model(x), y)).backward()
    model.bias.grad[1] = math.nan
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 4.0
    scaler.update(new_scale=1024.0)
    assert scaler.get_scale() == 1024.0
    scaler.update(new_scale=tessera.tensor(32.0))
    assert scaler.get_scale() == 32.0
    scaler.update(new_scale=tessera.tensor(16.0, dtype=tessera.float64))  # copied in, as current torch
    assert scaler.get_scale() == 16.0
    with pytest.raises(AssertionError, match="new_scale should be a float"):
        scaler.update(new_scale=tessera.tensor([1.0, 2.0]))


def test_unscale_then_clip_then_step():
    model = _model(tessera)
    opt = tessera.optim.SGD(model.parameters(), lr=0.1)
    scaler = tessera.amp.GradScaler("cpu")
    x, y = _batch(tessera)
    loss = tessera.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    ref = _model(torch)
    tx, ty = _batch(torch)
    torch.nn.functional.mse_loss(ref(tx), ty).backward()
    torch.testing.assert_close(to_torch(model.weight.grad), ref.weight.grad, rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this optimizer"):
        scaler.unscale_(opt)
    tessera.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called since the last update\(\)"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)
    scaler.update()


def test_misuse_messages():
    scaler = tessera.amp.GradScaler("cpu")
    opt = tessera.optim.SGD(_model(tessera).parameters(), lr=0.1)
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        scaler.step(opt)
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        tessera.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
        tessera.amp.GradScaler("cpu", backoff_factor=1.0)
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale([1.0])
    # Iterables of outputs come back in kind.
    a, b = tessera.ones(2), tessera.ones(3)
    out = scaler.scale((a, [b]))
    assert isinstance(out, tuple) and isinstance(out[1], list) and out[1][0].tolist() == [65536.0] * 3


def test_float16_grads_are_refused_by_unscale():
    model = _model(tessera).half()
    opt = tessera.optim.SGD(model.parameters(), lr=0.1)
    scaler = tessera.amp.GradScaler("cpu")
    x, y = _batch(tessera)
    scaler.scale(tessera.nn.functional.mse_loss(model(x.half()).float(), y)).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.step(opt)


def test_state_dict_and_pickle():
    scaler = tessera.amp.GradScaler("cpu", init_scale=16.0, growth_factor=4.0, backoff_factor=0.25,
                                    growth_interval=3)
    model = _model(tessera)
    opt = tessera.optim.SGD(model.parameters(), lr=0.1)
    x, y = _batch(tessera)
    scaler.scale(tessera.nn.functional.mse_loss(model(x), y)).backward()
    scaler.step(opt)
    scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 16.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 3,
                     "_growth_tracker": 1}
    other = tessera.amp.GradScaler("cpu")
    other.load_state_dict(state)
    assert other.state_dict() == state
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy.state_dict() == state and copy._scale is None
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        other.load_state_dict({})
    scaler.scale(tessera.nn.functional.mse_loss(model(x), y)).backward()
    scaler.step(opt)
    with pytest.raises(AssertionError, match="may only be pickled at the beginning of an iteration"):
        pickle.dumps(scaler)


def test_disabled_and_cuda_scalers_pass_through_like_torch():
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."):
        want = torch.cuda.amp.GradScaler()
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."):
        got = tessera.cuda.amp.GradScaler()
    for scaler in (got, tessera.amp.GradScaler("cpu", enabled=False)):
        assert scaler.is_enabled() is want.is_enabled() is False
        assert scaler.get_scale() == want.get_scale() == 1.0
        assert scaler.state_dict() == want.state_dict() == {}
        loss = tessera.ones(())
        assert scaler.scale(loss) is loss
    with pytest.warns(FutureWarning, match="tessera.amp.GradScaler\\('cpu', args...\\)"):
        legacy = tessera.cpu.amp.GradScaler(init_scale=4.0)
    assert legacy.is_enabled() and legacy.get_scale() == 4.0


def test_float16_training_with_scaler_learns():
    # A small regression under float16 autocast with loss scaling: the loss falls.
    g = torch.Generator().manual_seed(3)
    x = to_tessera(torch.randn(64, 8, generator=g))
    y = to_tessera(torch.randn(64, 1, generator=g))
    tessera.manual_seed(0)
    model = tessera.nn.Sequential(tessera.nn.Linear(8, 16), tessera.nn.Tanh(), tessera.nn.Linear(16, 1))
    opt = tessera.optim.SGD(model.parameters(), lr=0.05)
    scaler = tessera.amp.GradScaler("cpu")
    losses = []
    for _ in range(40):
        opt.zero_grad()
        with tessera.autocast("cpu", dtype=tessera.float16):
            out = model(x)
            loss = tessera.nn.functional.mse_loss(out, y)
        assert out.dtype is tessera.float16 and loss.dtype is tessera.float32
        scaler.scale(loss).backward()
        assert model[0].weight.grad.dtype is tessera.float32
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]


# ---------------------------------------------------------------- the operators

def test_unscale_op_values_and_found_inf():
    grads = [tessera.tensor([2.0, 4.0]), tessera.tensor([[8.0], [16.0]]).t(), tessera.tensor([1.0], dtype=tessera.float64),
             tessera.tensor([6.0, 2.0], dtype=tessera.bfloat16)]
    found = tessera.zeros(())
    tessera._amp_foreach_non_finite_check_and_unscale_(grads, found, tessera.tensor(0.5))
    assert [g.tolist() for g in grads] == [[1.0, 2.0], [[4.0, 8.0]], [0.5], [3.0, 1.0]] and found.item() == 0.0
    bad = [tessera.tensor([1.0, math.inf]), tessera.tensor([math.nan])]
    tessera._amp_foreach_non_finite_check_and_unscale_(bad, found, tessera.tensor(1.0))
    assert found.item() == 1.0


def test_update_scale_op():
    scale, tracker = tessera.tensor(4.0), tessera.tensor(0, dtype=tessera.int32)
    out = tessera._amp_update_scale_(scale, tracker, tessera.tensor(0.0), 2.0, 0.5, 2)
    assert out is scale and (scale.item(), tracker.item()) == (4.0, 1)
    tessera._amp_update_scale_(scale, tracker, tessera.tensor(0.0), 2.0, 0.5, 2)
    assert (scale.item(), tracker.item()) == (8.0, 0)
    tessera._amp_update_scale_(scale, tracker, tessera.tensor(1.0), 2.0, 0.5, 2)
    assert (scale.item(), tracker.item()) == (4.0, 0)
    big = tessera.tensor(3e38)  # growing would overflow float32: the scale stays
    tessera._amp_update_scale_(big, tessera.tensor(0, dtype=tessera.int32), tessera.tensor(0.0), 2.0, 0.5, 1)
    assert big.item() == pytest.approx(3e38)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_op_argument_checks(device):
    def t(value, dtype=tessera.float32):
        return tessera.tensor(value, dtype=dtype).to(device)
    unscale = tessera._amp_foreach_non_finite_check_and_unscale_
    update = tessera._amp_update_scale_
    cases = [
        (lambda: unscale([t([1.0])], t([0.0, 0.0]), t(1.0)), "found_inf must be a 1-element tensor."),
        (lambda: unscale([t([1.0])], t(0.0), t(1.0, tessera.float64)), "inv_scale must be a float tensor."),
        (lambda: unscale([t([1], tessera.int64)], t(0.0), t(1.0)), "must be a floating point tensor"),
        (lambda: update(t(1.0), t(0, tessera.int64), t(0.0), 2.0, 0.5, 1), "growth_tracker must be an int tensor."),
        (lambda: update(t([1.0, 2.0]), t(0, tessera.int32), t(0.0), 2.0, 0.5, 1),
         "current_scale must be a 1-element tensor."),
        (lambda: update(t(1.0), t(0, tessera.int32), t(0, tessera.int32), 2.0, 0.5, 1),
         "found_inf must be a float tensor."),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError, match=message):
            call()
    # Good arguments pass on meta tensors too (the checks are the whole meta kernel).
    unscale([t([1.0, 2.0])], t(0.0), t(1.0))
    update(t(1.0), t(0, tessera.int32), t(0.0), 2.0, 0.5, 1)
