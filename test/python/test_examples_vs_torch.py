"""The training examples (examples/char_gpt.py, resnet_classifier.py, vae.py) run a few
steps with tessera and with real torch from the same initial weights (torch builds the
model, tessera loads its state_dict through numpy) on the same data (every random choice
comes from numpy), and the losses must agree step by step: to float rounding in float32,
and to ~1e-9 in float64, where any difference beyond rounding would be a real error in an
op, a derivative, an optimizer or a scheduler. The weights (and BatchNorm's running
statistics) after the last step are compared too."""
import importlib.util
import pathlib

import numpy as np
import pytest
import torch

import tessera

ROOT = pathlib.Path(__file__).resolve().parents[2]
# (rtol, atol) for the losses and for the final weights, per dtype. Measured: the losses
# agree to ~2e-7 (float32) and ~2e-15 (float64); the margin is for other thread counts.
LOSS_TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}
WEIGHT_TOL = {"float32": (2e-3, 2e-4), "float64": (1e-8, 1e-10)}


def _example(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _twin(build):
    """The model built by torch, and the same model in tessera holding torch's initial values."""
    reference = build(torch)
    model = build(tessera)
    state = {k: tessera.from_numpy(v.detach().numpy().copy()) for k, v in reference.state_dict().items()}
    model.load_state_dict(state)
    return reference, model


def _max_rel(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))


def _assert_losses_agree(got, want, dtype, what="loss"):
    rtol, atol = LOSS_TOL[dtype]
    assert len(got) == len(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                               err_msg=f"{what} per step (max relative difference {_max_rel(got, want):.3g})")


def _assert_weights_agree(model, reference, dtype):
    rtol, atol = WEIGHT_TOL[dtype]
    want = reference.state_dict()
    got = model.state_dict()
    assert list(got) == list(want)
    for name, value in want.items():
        np.testing.assert_allclose(got[name].numpy(), value.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"{name} after training")


@pytest.mark.parametrize("attention", ["encoder", "manual"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_char_gpt_matches_torch(dtype, attention):
    demo = _example("char_gpt")
    data = demo.CharData()
    reference, model = _twin(lambda lib: demo.build_model(lib, data.vocab_size, attention=attention))
    # The tied head shares the embedding's Parameter in both libraries.
    assert model.head.weight is model.tok_emb.weight
    # warmup=3: the LambdaLR schedule both rises and starts its cosine within the 8 steps.
    want, want_norms = demo.train(torch, reference, data, steps=8, dtype=dtype, warmup=3)
    got, got_norms = demo.train(tessera, model, data, steps=8, dtype=dtype, warmup=3)
    _assert_losses_agree(got, want, dtype)
    _assert_losses_agree(got_norms, want_norms, dtype, what="gradient norm before clipping")
    assert max(want_norms) > 1.0, "clipping never acted; the comparison would not cover it"
    _assert_weights_agree(model, reference, dtype)
    # Eval mode under no_grad (torch may take its fused inference path here).
    x, _ = data.batch(np.random.RandomState(1), 4)
    reference.eval()
    model.eval()
    with torch.no_grad():
        want_logits = reference(torch.from_numpy(x)).numpy()
    with tessera.no_grad():
        got_logits = model(tessera.from_numpy(x)).numpy()
    np.testing.assert_allclose(got_logits, want_logits, rtol=WEIGHT_TOL[dtype][0], atol=WEIGHT_TOL[dtype][1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_resnet_classifier_matches_torch(dtype):
    demo = _example("resnet_classifier")
    x_train, y_train, x_test, y_test = demo.load_digits_split()
    # Eight steps of 64 images, spread over two "epochs" of 256 so that the evaluation in
    # eval mode (running statistics) runs twice and the second epoch reshuffles.
    data = (x_train[:256], y_train[:256], x_test[:200], y_test[:200])
    reference, model = _twin(lambda lib: demo.build_model(lib, width=8))
    want, want_evals = demo.train(torch, reference, data, epochs=2, dtype=dtype)
    got, got_evals = demo.train(tessera, model, data, epochs=2, dtype=dtype)
    assert len(want) == 8 and len(want_evals) == 2
    _assert_losses_agree(got, want, dtype)
    _assert_losses_agree([e[0] for e in got_evals], [e[0] for e in want_evals], dtype, what="eval loss")
    assert [e[1] for e in got_evals] == [e[1] for e in want_evals]
    _assert_weights_agree(model, reference, dtype)


@pytest.mark.parametrize("with_logits", [True, False], ids=["bce_with_logits", "bce"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vae_matches_torch(dtype, with_logits):
    demo = _example("vae")
    images = demo.load_digits_flat()
    reference, model = _twin(demo.build_model)
    want = demo.train(torch, reference, images, epochs=1, steps=10, dtype=dtype, with_logits=with_logits)
    got = demo.train(tessera, model, images, epochs=1, steps=10, dtype=dtype, with_logits=with_logits)
    assert len(want) == 10
    for i, what in enumerate(("loss", "reconstruction", "KL")):
        _assert_losses_agree([h[i] for h in got], [h[i] for h in want], dtype, what=what)
    _assert_weights_agree(model, reference, dtype)
