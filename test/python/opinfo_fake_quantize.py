"""OpInfo entries for fake quantization (aten/native/quantized/*FakeQuantize.cpp): float in,
float out, compared with torch 1.13 exactly (outputs and masks), on float16/32/64, meta
shapes included. Gradients: torch's are compared on the float64 samples (the learnable
forms' backward takes float32 only in torch 1.13; test_fake_quantize.py compares those in
float32); gradcheck is exempt, as finite differences cannot see a straight-through
estimator (the forward is piecewise constant in the input)."""
import torch

from opinfo import R, GradSample, OpInfo, make_torch, register

EXACT = {"rtol": 0, "atol": 0}
STE = {"gradcheck": "the straight-through gradient of a piecewise-constant forward (finite differences "
                    "give 0 almost everywhere); test_fake_quantize.py gradchecks the scale's true derivative "
                    "where elements are clamped"}
FLOATS = ("float16", "float32", "float64")


def _x(dtype, seed=1, shape=(3, 5)):
    # a wide range: values inside the grid, clamped ones, and halfway points of scale 0.25
    x = make_torch(shape, dtype, seed, -6.0, 6.0)
    return x.masked_fill(make_torch(shape, "float32", seed + 1, 0.0, 1.0) > 0.7, 0.125)


def per_tensor_samples(dtype):
    yield "uint8 grid", [_x(dtype)], {"scale": 0.25, "zero_point": 3, "quant_min": 0, "quant_max": 15}
    yield "int8 grid", [_x(dtype, 2)], {"scale": 0.05, "zero_point": -2, "quant_min": -128, "quant_max": 127}
    yield "transposed", [_x(dtype, 3, (5, 3)).t()], {"scale": 0.5, "zero_point": 0, "quant_min": -4, "quant_max": 3}
    yield "0-dim", [_x(dtype, 4, ())], {"scale": 0.25, "zero_point": 1, "quant_min": 0, "quant_max": 7}
    yield "empty", [_x(dtype, 5, (0, 2))], {"scale": 0.25, "zero_point": 1, "quant_min": 0, "quant_max": 7}


def per_channel_samples(dtype):
    x = _x(dtype, 6, (3, 4, 2))
    for axis in (0, 1, 2):
        n = x.shape[axis]
        yield f"axis {axis}", [x, torch.linspace(0.1, 0.5, n), torch.arange(n, dtype=torch.int32) % 3], \
            {"axis": axis, "quant_min": -3, "quant_max": 12}
    yield "float zero points", [x, torch.tensor([0.2, 0.3, 0.25, 0.4]), torch.tensor([0.5, 2.25, -1.0, 3.0])], \
        {"axis": 1, "quant_min": 0, "quant_max": 15}


def learnable_samples(dtype):
    yield "per tensor", [_x(dtype, 7), torch.tensor([0.25]), torch.tensor([2.5])], \
        {"quant_min": 0, "quant_max": 15, "grad_factor": 0.5}
    yield "negative zero point", [_x(dtype, 8), torch.tensor([0.3]), torch.tensor([-1.4])], \
        {"quant_min": -8, "quant_max": 7, "grad_factor": 1.0}


def learnable_channel_samples(dtype):
    yield "axis 1", [_x(dtype, 9, (2, 3)), torch.tensor([0.25, 0.5, 0.1]), torch.tensor([1.0, 4.4, -0.6])], \
        {"axis": 1, "quant_min": -2, "quant_max": 13, "grad_factor": 1.0}


def _observer_state(lib, per_row):
    if per_row:
        return [lib.tensor([]), lib.tensor([]), lib.tensor([]), lib.tensor([], dtype=lib.int32)]
    return [lib.tensor([float("inf")]), lib.tensor([float("-inf")]), lib.tensor([1.0]),
            lib.tensor([0], dtype=lib.int32)]


def _fused(lib, x, per_row, symmetric, ch_axis, helper=False):
    """Two observer steps from a fresh state (the first sets the range, the second averages
    into it), then the output of the second and the state, as dense tensors."""
    state = _observer_state(lib, per_row)
    fn = lib._fused_moving_avg_obs_fq_helper if helper else lib.fused_moving_avg_obs_fake_quant
    on = lib.tensor([1])
    qrange = (-128, 127) if symmetric else (0, 255)
    fn(x * 2, on, on, *state, 0.01, *qrange, ch_axis, per_row, symmetric)
    out = fn(x, on, on, *state, 0.01, *qrange, ch_axis, per_row, symmetric)
    state = [t.to(x.device) for t in state]
    return (tuple(out) if helper else (out,)) + tuple(state)


def fused_samples(dtype):
    for per_row, symmetric, ch_axis in ((False, False, 0), (False, True, 0), (True, False, 0), (True, True, 0)):
        yield f"per_row={per_row} symmetric={symmetric}", [_x(dtype, 10, (4, 3))], \
            {"per_row": per_row, "symmetric": symmetric, "ch_axis": ch_axis}


def _aten(lib):
    return lib.ops.aten


# The observer's state is float32, so the fused op's samples are float32; its gradient runs
# through a cast of float64 leaves.
FUSED_GRAD = GradSample(lambda lib, x: _fused(lib, x.float(), False, False, 0)[0], (R,), "through float32")
FAKE = dict(dtypes=FLOATS, supports_out=False, exempt=STE, **EXACT)

register(
    OpInfo("fake_quantize_per_tensor_affine", lambda lib, x, **k: lib.fake_quantize_per_tensor_affine(
        x, k["scale"], k["zero_point"], k["quant_min"], k["quant_max"]), sample_inputs=per_tensor_samples,
        covers=("fake_quantize_per_tensor_affine_cachemask", "fake_quantize_per_tensor_affine_cachemask_backward"),
        **FAKE),
    OpInfo("fake_quantize_per_tensor_affine[tensor_qparams]", lambda lib, x, **k: lib.fake_quantize_per_tensor_affine(
        x, lib.tensor(k["scale"]), lib.tensor(k["zero_point"]), k["quant_min"], k["quant_max"]),
        sample_inputs=per_tensor_samples, **FAKE),
    OpInfo("fake_quantize_per_tensor_affine_cachemask", lambda lib, x, **k: tuple(
        _aten(lib).fake_quantize_per_tensor_affine_cachemask(x, k["scale"], k["zero_point"], k["quant_min"],
                                                             k["quant_max"])), sample_inputs=per_tensor_samples,
        **FAKE),
    OpInfo("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", lambda lib, x, **k: tuple(
        lib._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(
            x, lib.tensor([k["scale"]]), lib.tensor([k["zero_point"]], dtype=lib.int32),
            lib.tensor([k["zero_point"] % 2]), k["quant_min"], k["quant_max"])),
        sample_inputs=per_tensor_samples, **FAKE),
    OpInfo("fake_quantize_per_channel_affine", lambda lib, x, s, z, **k: lib.fake_quantize_per_channel_affine(
        x, s.float(), z, k["axis"], k["quant_min"], k["quant_max"]), sample_inputs=per_channel_samples,
        no_grad_inputs=(1, 2), covers=("fake_quantize_per_channel_affine_cachemask",
                                       "fake_quantize_per_channel_affine_cachemask_backward"), **FAKE),
    OpInfo("_fake_quantize_learnable_per_tensor_affine", lambda lib, x, s, z, **k:
           lib._fake_quantize_learnable_per_tensor_affine(x, s.float(), z.float(), **k),
           sample_inputs=learnable_samples, covers=("_fake_quantize_learnable_per_tensor_affine_backward",), **FAKE),
    OpInfo("_fake_quantize_learnable_per_channel_affine", lambda lib, x, s, z, **k:
           lib._fake_quantize_learnable_per_channel_affine(x, s.float(), z.float(), **k),
           sample_inputs=learnable_channel_samples,
           covers=("_fake_quantize_learnable_per_channel_affine_backward",), **FAKE),
    OpInfo("fused_moving_avg_obs_fake_quant", lambda lib, x, **k: _fused(lib, x, k["per_row"], k["symmetric"],
                                                                          k["ch_axis"]),
           sample_inputs=fused_samples, dtypes=("float32",), supports_out=False, exempt=STE,
           grads=(FUSED_GRAD,), **EXACT),
    OpInfo("_fused_moving_avg_obs_fq_helper", lambda lib, x, **k: _fused(lib, x, k["per_row"], k["symmetric"],
                                                                          k["ch_axis"], helper=True),
           sample_inputs=fused_samples, dtypes=("float32",), supports_out=False, exempt=STE,
           grads=(FUSED_GRAD,), **EXACT),
)
