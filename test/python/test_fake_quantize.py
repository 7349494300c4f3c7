"""Fake quantization for quantization-aware training against torch 1.13: the per-tensor and
per-channel ops with their cachemask forms, the learnable (LSQ) forms, and
fused_moving_avg_obs_fake_quant with its observer state. Outputs and masks are compared
exactly (torch's float32 arithmetic, Note [Fake quantization arithmetic] in
aten/native/quantized/FakeQuantize.cpp), gradients against torch's autograd.

Finite differences cannot check these gradients where they are estimators: the output is
piecewise constant in the input, so its true derivative is 0 almost everywhere, while the
straight-through gradient is 1 inside the range; LSQ's scale gradient adds the same
estimator's term. Where the gradient is a true derivative (the scale of clamped elements,
whose output is (quant_min - zero_point) * scale) gradcheck runs."""
import numpy as np
import pytest
import torch

import tessera

LIBS = (torch, tessera)
EDGES = [0.05, 0.15, 0.25, 0.35, -0.05, -0.15, 1.45, 1.55, 2.0, -3.0, 0.0, -0.0, 1e10, -1e10, 3e9, -3e9, 1e20,
         float("inf"), float("-inf"), float("nan")]


def _np(t):
    return t.detach().numpy()


def _same(a, b):
    """a (tessera) and b (torch) equal in dtype, shape and every value (NaN where NaN)."""
    assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1] and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(_np(a), _np(b))


def _data(shape, seed, dtype="float32"):
    rng = np.random.default_rng(seed)
    arr = rng.standard_normal(shape) * 2
    arr.reshape(-1)[: len(EDGES)] = EDGES[: arr.size]
    # values exactly halfway between grid points of scale 0.1
    arr.reshape(-1)[len(EDGES): len(EDGES) + 6] = np.array([0.05, 0.25, 0.45, -0.35, 0.65, 1.05])[
        : max(0, arr.size - len(EDGES))]
    return arr.astype(dtype)


def _both(arr):
    return torch.from_numpy(arr.copy()), tessera.from_numpy(arr.copy())


def _aten(lib):
    return lib.ops.aten


# ---------------------------------------------------------------------------- per tensor

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("qparams", [(0.1, 3, 0, 15), (0.1, 0, -128, 127), (0.037, 128, 0, 255), (1.0, 0, 0, 1),
                                     (0.0, 2, 0, 7), (-0.25, 1, 0, 15), (3e-8, 5, 0, 255)])
def test_per_tensor_cachemask_matches_torch(dtype, qparams):
    th, ts = _both(_data((4, 9), 1, dtype))
    want = _aten(torch).fake_quantize_per_tensor_affine_cachemask(th, *qparams)
    got = _aten(tessera).fake_quantize_per_tensor_affine_cachemask(ts, *qparams)
    _same(got[0], want[0])
    _same(got[1], want[1])
    _same(tessera.fake_quantize_per_tensor_affine(ts, *qparams), torch.fake_quantize_per_tensor_affine(th, *qparams))


@pytest.mark.parametrize("make", [lambda t: t.t(), lambda t: t[:, ::2], lambda t: t[1]])
def test_per_tensor_strided_inputs(make):
    th, ts = _both(_data((4, 6), 2))
    _same(tessera.fake_quantize_per_tensor_affine(make(ts), 0.1, 2, 0, 15),
          torch.fake_quantize_per_tensor_affine(make(th), 0.1, 2, 0, 15))


def test_tensor_qparams_forms():
    th, ts = _both(_data((3, 7), 3))
    for zp in (3, 3.7, 30):  # torch reads the zero point with toInt, and checks no range here
        want = torch.fake_quantize_per_tensor_affine(th, torch.tensor(0.1), torch.tensor(zp), 0, 15)
        got = tessera.fake_quantize_per_tensor_affine(ts, tessera.tensor(0.1), tessera.tensor(zp), 0, 15)
        _same(got, want)
    for enabled in (0, 1):
        want = torch._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
            th, torch.tensor([0.2]), torch.tensor([1], dtype=torch.int32), torch.tensor([enabled]), -8, 7)
        got = tessera._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
            ts, tessera.tensor([0.2]), tessera.tensor([1], dtype=tessera.int32), tessera.tensor([enabled]), -8, 7)
        _same(got.output, want.output)
        _same(got.mask, want.mask)
        assert got.output.data_ptr() != ts.data_ptr()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_per_tensor_gradient_is_torchs(dtype):
    grads = []
    for lib in LIBS:
        x = lib.from_numpy(_data((5, 4), 4, dtype)).requires_grad_()
        y = lib.fake_quantize_per_tensor_affine(x, 0.1, 2, 0, 15)
        assert y.grad_fn.name() == "FakeQuantizePerTensorAffineCachemaskBackward0"
        y.backward(lib.from_numpy(np.arange(20, dtype=dtype).reshape(5, 4)))
        grads.append(x.grad)
        x2 = lib.from_numpy(_data((5, 4), 4, dtype)).requires_grad_()
        y2 = lib.fake_quantize_per_tensor_affine(x2, lib.tensor(0.1), lib.tensor(2), 0, 15)
        assert y2.grad_fn.name() == "FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0"
    _same(grads[1], grads[0])


@pytest.mark.parametrize("call, message", [
    ("lib.fake_quantize_per_tensor_affine(x, 0.1, 3, 15, 0)", "`quant_min` should be less than or"),
    ("lib.fake_quantize_per_tensor_affine(x, 0.1, 30, 0, 15)", "`zero_point` must be between"),
    ("lib.fake_quantize_per_tensor_affine(x.long(), 0.1, 3, 0, 15)", "not implemented for 'Long'"),
    ("lib.fake_quantize_per_tensor_affine(x.bfloat16(), 0.1, 3, 0, 15)", "not implemented for 'BFloat16'"),
    ("lib.fake_quantize_per_tensor_affine(x, lib.tensor([0.1, 0.2]), lib.tensor([3, 3]), 0, 15)",
     "Tensor with 2 elements cannot be converted to Scalar"),
    ("lib.fake_quantize_per_tensor_affine(x, lib.tensor(0.1, requires_grad=True), lib.tensor(3), 0, 15)",
     "not differentiable with respect to argument 'scale'"),
])
def test_per_tensor_errors_match_torch(call, message):
    for lib in LIBS:
        x = lib.ones(3, 4)
        with pytest.raises(RuntimeError, match=message):
            eval(call, {"lib": lib, "x": x})


# ---------------------------------------------------------------------------- per channel

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("zp_dtype", ["int32", "float32", "float16"])
def test_per_channel_cachemask_matches_torch(dtype, axis, zp_dtype):
    th, ts = _both(_data((3, 4, 5), 5, dtype))
    n = th.shape[axis]
    scales = np.linspace(0.05, 0.3, n).astype(np.float32)
    zps = (np.arange(n) % 4 + (0.4 if zp_dtype != "int32" else 0)).astype(zp_dtype)
    want = _aten(torch).fake_quantize_per_channel_affine_cachemask(th, torch.from_numpy(scales),
                                                                   torch.from_numpy(zps), axis, 0, 15)
    got = _aten(tessera).fake_quantize_per_channel_affine_cachemask(ts, tessera.from_numpy(scales),
                                                                    tessera.from_numpy(zps), axis, 0, 15)
    _same(got[0], want[0])
    _same(got[1], want[1])


def test_per_channel_gradient_is_torchs():
    grads = []
    for lib in LIBS:
        x = lib.from_numpy(_data((4, 6), 6)).t().requires_grad_()
        y = lib.fake_quantize_per_channel_affine(x, lib.tensor([0.1, 0.2, 0.05, 0.3]),
                                                 lib.tensor([0, 1, 2, 3], dtype=lib.int32), 1, -4, 11)
        assert y.grad_fn.name() == "FakeQuantizePerChannelAffineCachemaskBackward0"
        y.backward(lib.ones(6, 4) * 3)
        grads.append(x.grad)
    _same(grads[1], grads[0])


@pytest.mark.parametrize("call, exc, message", [
    ("lib.fake_quantize_per_channel_affine(x, s.double(), z, 0, 0, 15)", RuntimeError, None),
    ("lib.fake_quantize_per_channel_affine(x, s, z.long(), 0, 0, 15)", RuntimeError,
     "Zero-point must be Int32, Float or Half, found Long"),
    ("lib.fake_quantize_per_channel_affine(x, s.view(3, 1), z.view(3, 1), 0, 0, 15)", RuntimeError,
     "scale should be a 1-D tensor"),
    ("lib.fake_quantize_per_channel_affine(x, s, z[:2], 0, 0, 15)", RuntimeError,
     "scale and zero-point need to have the same dimensions"),
    ("lib.fake_quantize_per_channel_affine(x, s[:2], z[:2], 0, 0, 15)", RuntimeError,
     "dimensions of scale and zero-point are not consistent with input tensor"),
    ("lib.fake_quantize_per_channel_affine(x, s, z + 20, 0, 0, 15)", RuntimeError, "`zero_point` must be between"),
    ("lib.fake_quantize_per_channel_affine(x, s, z, 0, 15, 0)", RuntimeError, "`quant_min` should be less than or"),
    ("lib.fake_quantize_per_channel_affine(x, s.requires_grad_(), z, 0, 0, 15)", RuntimeError,
     "not differentiable with respect to argument 'scale'"),
    ("lib.fake_quantize_per_channel_affine(x.t(), s, z, -1, 0, 15)", RuntimeError,
     "`axis` must be between 0 and number of dimensions of input"),
    ("lib.fake_quantize_per_channel_affine(x, s, z, 2, 0, 15)", IndexError, "Dimension out of range"),
])
def test_per_channel_errors_match_torch(call, exc, message):
    for lib in LIBS:
        env = {"lib": lib, "x": lib.ones(3, 4), "s": lib.tensor([0.1, 0.2, 0.3]),
               "z": lib.tensor([0, 3, 5], dtype=lib.int32)}
        with pytest.raises(exc, match=message):
            eval(call, env)


# ---------------------------------------------------------------------------- learnable (LSQ)

def _learnable_per_tensor(lib, arr, scale, zp, qmin, qmax, grad_factor, upstream):
    x = lib.from_numpy(arr.copy()).requires_grad_()
    s = lib.tensor([scale], requires_grad=True)
    z = lib.tensor([zp], requires_grad=True)
    y = lib._fake_quantize_learnable_per_tensor_affine(x, s, z, qmin, qmax, grad_factor)
    y.backward(lib.from_numpy(upstream.copy()))
    return y, x.grad, s.grad, z.grad


@pytest.mark.parametrize("qparams", [(0.1, 3.0, 0, 15), (0.1, 2.5, 0, 15), (0.2, 2.5, -8, 7), (0.05, 30.0, 0, 15),
                                     (0.3, -1.4, -128, 127)])
@pytest.mark.parametrize("grad_factor", [1.0, 0.25])
def test_learnable_per_tensor_matches_torch(qparams, grad_factor):
    arr = _data((6, 7), 7)
    upstream = np.random.default_rng(8).standard_normal((6, 7)).astype(np.float32)
    want = _learnable_per_tensor(torch, arr, *qparams, grad_factor, upstream)
    got = _learnable_per_tensor(tessera, arr, *qparams, grad_factor, upstream)
    _same(got[0], want[0])
    _same(got[1], want[1])
    for g, w in zip(got[2:], want[2:]):  # sums over the elements: the order of the additions may differ
        assert tuple(g.shape) == tuple(w.shape) == (1,)
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-5, atol=1e-5)


def test_learnable_per_tensor_backward_refuses_a_range_without_zero():
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="the quantization range should include 0"):
            _learnable_per_tensor(lib, _data((3,), 9), 0.1, 3.0, 2, 15, 1.0, np.ones(3, dtype=np.float32))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("zps", [[3.0, 4.4, 0.5], [-1.5, 2.5, 20.0]])
def test_learnable_per_channel_matches_torch(axis, zps):
    arr = _data((3, 3, 5), 10)
    upstream = np.random.default_rng(11).standard_normal((3, 3, 5)).astype(np.float32)
    results = []
    for lib in LIBS:
        x = lib.from_numpy(arr.copy()).requires_grad_()
        s = lib.tensor([0.1, 0.2, 0.05], requires_grad=True)
        z = lib.tensor(zps, requires_grad=True)
        y = lib._fake_quantize_learnable_per_channel_affine(x, s, z, axis, -2, 13, 0.5)
        y.backward(lib.from_numpy(upstream.copy()))
        results.append((y, x.grad, s.grad, z.grad))
    got, want = results[1], results[0]
    _same(got[0], want[0])
    _same(got[1], want[1])
    for g, w in zip(got[2:], want[2:]):
        assert tuple(g.shape) == tuple(w.shape) == (3,)
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-5, atol=1e-5)


def test_learnable_backward_ops_directly():
    x = _data((11,), 12)
    for lib in LIBS:
        dx, ds, dz = lib.ops.aten._fake_quantize_learnable_per_tensor_affine_backward(
            lib.ones(11), lib.from_numpy(x.copy()), lib.tensor([0.1]), lib.tensor([3.0]), 0, 15)
        if lib is torch:
            want = (dx, ds, dz)
        else:
            _same(dx, want[0])
            np.testing.assert_allclose(_np(ds), _np(want[1]), rtol=1e-6)
            np.testing.assert_allclose(_np(dz), _np(want[2]), rtol=1e-6)
    empty = tessera.ops.aten._fake_quantize_learnable_per_tensor_affine_backward(
        tessera.ones(0), tessera.ones(0), tessera.tensor([0.1]), tessera.tensor([3.0]), 0, 15)
    assert [tuple(t.shape) for t in empty] == [(0,), (1,), (1,)]


def test_scale_gradient_of_clamped_elements_passes_gradcheck():
    """Elements far outside the range give (quant_min or quant_max - zero_point) * scale: a
    smooth function of the scale, whose LSQ gradient is its true derivative. The forward
    reads the scale as float32 (as torch), so the finite differences take a step of 1e-3."""
    x = tessera.tensor([[50.0, -40.0, 70.0], [-90.0, 65.0, -55.0]], dtype=tessera.float64)

    def f(scale):
        return tessera._fake_quantize_learnable_per_tensor_affine(x, scale, tessera.tensor([3.0]), 0, 15, 1.0)

    assert tessera.autograd.gradcheck(f, (tessera.tensor([0.7], dtype=tessera.float64, requires_grad=True),),
                                      eps=1e-3, atol=1e-4)

    def g(scales):
        # per-channel scales are float32 (torch's check); the cast carries the gradient back
        return tessera._fake_quantize_learnable_per_channel_affine(x, scales.float(), tessera.tensor([1.0, 2.0]), 0,
                                                                   -4, 11, 1.0)

    assert tessera.autograd.gradcheck(g, (tessera.tensor([0.5, 0.9], dtype=tessera.float64, requires_grad=True),),
                                      eps=1e-3, atol=1e-4)


# ---------------------------------------------------------------------------- fused observer

def _observer_state(lib, per_row, rows):
    if per_row:
        return [lib.tensor([]), lib.tensor([]), lib.tensor([]), lib.tensor([], dtype=lib.int32)]
    return [lib.tensor([float("inf")]), lib.tensor([float("-inf")]), lib.tensor([1.0]),
            lib.tensor([0], dtype=lib.int32)]


@pytest.mark.parametrize("per_row, ch_axis, shape", [(False, 0, (4, 6)), (True, 0, (4, 6)), (True, 0, (2, 3, 4)),
                                                     (False, 1, (2, 3, 4))])
@pytest.mark.parametrize("symmetric, qrange", [(False, (0, 255)), (True, (-128, 127)), (True, (0, 255))])
def test_fused_observer_steps_match_torch(per_row, ch_axis, shape, symmetric, qrange):
    states = {lib: _observer_state(lib, per_row, shape[ch_axis]) for lib in LIBS}
    # (observer_on, fake_quant_on) per step; torch takes any non-zero flag as on
    schedule = [(1, 1), (1, 1), (0, 1), (1, 0), (2, 3)]
    for step, (observe, quantize) in enumerate(schedule):
        arr = (np.random.default_rng(20 + step).standard_normal(shape) * (1 + step)).astype(np.float32)
        outs = {}
        for lib in LIBS:
            x = lib.from_numpy(arr.copy()).requires_grad_()
            y = lib.fused_moving_avg_obs_fake_quant(x, lib.tensor([observe]), lib.tensor([quantize]), *states[lib],
                                                    0.01, *qrange, ch_axis, per_row, symmetric)
            y.backward(lib.ones(shape))
            outs[lib] = (y, x.grad)
        _same(outs[tessera][0], outs[torch][0])
        _same(outs[tessera][1], outs[torch][1])
        for got, want in zip(states[tessera], states[torch]):
            _same(got, want)


def test_fused_helper_returns_the_mask():
    for lib in LIBS:
        state = _observer_state(lib, False, 1)
        out, mask = lib._fused_moving_avg_obs_fq_helper(lib.tensor([0.5, 100.0, -3.0]), lib.tensor([1]),
                                                        lib.tensor([1]), *state, 0.01, 0, 15, 0)
        assert mask.dtype == lib.bool and mask.tolist() == [True, True, True] and not mask.requires_grad
        # fake quantization from a range never observed: (inf, -inf) has no qparams
        with pytest.raises(RuntimeError, match="min should be less than or equal to max"):
            lib._fused_moving_avg_obs_fq_helper(lib.tensor([0.5, 100.0]), lib.tensor([0]), lib.tensor([1]),
                                                *_observer_state(lib, False, 1), 0.01, 0, 15, 0)


def test_fused_observer_refusals():
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="only supported on axis == 0"):
            lib.fused_moving_avg_obs_fake_quant(lib.ones(2, 3), lib.tensor([1]), lib.tensor([1]),
                                                *_observer_state(lib, True, 3), 0.01, 0, 255, 1, True, False)
        two = [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]), lib.tensor([1.0, 1.0]), lib.tensor([0, 0])]
        with pytest.raises(RuntimeError):  # a per-tensor observer holds one value each
            lib.fused_moving_avg_obs_fake_quant(lib.ones(2, 3), lib.tensor([1]), lib.tensor([1]), *two, 0.01, 0, 255,
                                                0, False, False)


def test_cpu_input_with_meta_qparams_refused():
    x = tessera.ones(3, 4)
    meta = tessera.ones(4, device="meta")
    for call in (lambda: tessera.fake_quantize_per_channel_affine(x, meta, tessera.zeros(4, dtype=tessera.int32), 1,
                                                                  0, 15),
                 lambda: tessera._fake_quantize_learnable_per_tensor_affine(x, tessera.ones(1, device="meta"),
                                                                            tessera.zeros(1), 0, 15),
                 lambda: tessera.ops.aten._fake_quantize_learnable_per_tensor_affine_backward(
                     tessera.ones(3, 4, device="meta"), x, tessera.ones(1), tessera.zeros(1), 0, 15)):
        with pytest.raises(RuntimeError, match="expected all tensors to be on the same device"):
            call()


# ---------------------------------------------------------------------------- meta

def test_meta_shapes():
    x = tessera.empty(3, 4, device="meta")
    out, mask = tessera.ops.aten.fake_quantize_per_tensor_affine_cachemask(x, 0.1, 0, 0, 15)
    assert out.is_meta and mask.is_meta and mask.dtype == tessera.bool and out.shape == (3, 4)
    y = tessera.fake_quantize_per_channel_affine(x, tessera.ones(4), tessera.zeros(4, dtype=tessera.int32), 1, 0, 15)
    assert y.is_meta and y.shape == (3, 4)
    with pytest.raises(RuntimeError, match="dimensions of scale and zero-point are not consistent"):
        tessera.fake_quantize_per_channel_affine(x, tessera.ones(3), tessera.zeros(3, dtype=tessera.int32), 1, 0, 15)
    y = tessera._fake_quantize_learnable_per_tensor_affine(x, tessera.tensor([0.1]), tessera.tensor([1.0]), 0, 15)
    assert y.is_meta and y.shape == (3, 4)
    state = _observer_state(tessera, False, 1)
    y = tessera.fused_moving_avg_obs_fake_quant(x, tessera.tensor([1]), tessera.tensor([1]), *state, 0.01, 0, 255, 0)
    assert y.is_meta and y.shape == (3, 4) and state[0].item() == float("inf")


def test_learnable_empty_qparams_raise_index_error_as_torch():
    for lib in LIBS:
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(IndexError):
            lib._fake_quantize_learnable_per_tensor_affine(x, lib.tensor([]), lib.tensor([0.0]), 0, 15)
        with pytest.raises(IndexError):
            lib.ops.aten._fake_quantize_learnable_per_tensor_affine_backward(lib.ones(3), x.detach(), lib.tensor([]),
                                                                            lib.tensor([0.0]), 0, 15)
