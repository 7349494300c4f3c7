"""The quantized convolutions against torch 1.13 on its default engine (oneDNN):
quantized::conv{1,2,3}d_prepack / _unpack / conv{1,2,3}d / conv{1,2,3}d_relu (integers bit for
bit, channels-last results with torch's strides), the packed params (Conv2dPackedParamsBase,
Conv3dPackedParamsBase: methods, geometry getters, pickling) and the modules (nnq.Conv1d/2d/3d,
nniq.ConvReLU1d/2d/3d): outputs, reprs, from_float and state dicts moved between the two
libraries. As in test_quantized_linear.py, every torch call has scales of its own (torch's
oneDNN engine keys its plans without the zero points)."""
import copy
import io
import pickle
import types

import numpy as np
import pytest
import torch
import torch.ao.nn.quantized as tnnq
import torch.nn.intrinsic as tnni  # torch.ao.nn.intrinsic.quantized came after 1.13
import torch.nn.intrinsic.quantized as tnniq

import tessera
import tessera.ao.nn.intrinsic as nni
import tessera.ao.nn.intrinsic.quantized as nniq
import tessera.ao.nn.quantized as nnq
from tessera.ao.quantization import MinMaxObserver, PerChannelMinMaxObserver

torch.set_num_threads(1)


def ints(lib, array, dtype):
    return lib.tensor(np.asarray(array).tolist(), dtype=getattr(lib, dtype))


def make_weight(lib, wq, scales):
    if np.ndim(scales) == 0:
        return lib._make_per_tensor_quantized_tensor(ints(lib, wq, "int8"), float(scales), 0)
    return lib._make_per_channel_quantized_tensor(ints(lib, wq, "int8"), lib.tensor(scales, dtype=lib.float64),
                                                  lib.zeros(len(scales), dtype=lib.int64), 0)


def run(lib, case, relu):
    dims = case["dims"]
    x = lib._make_per_tensor_quantized_tensor(ints(lib, case["xq"], "uint8"), case["x_scale"], case["x_zp"])
    bias = None if case["bias"] is None else lib.tensor(case["bias"].tolist())
    packed = getattr(lib.ops.quantized, f"conv{dims}d_prepack")(make_weight(lib, case["wq"], case["w_scale"]), bias,
                                                                case["stride"], case["padding"], case["dilation"],
                                                                case["groups"])
    fn = getattr(lib.ops.quantized, f"conv{dims}d_relu" if relu else f"conv{dims}d")
    return fn(x, packed, case["out_scale"], case["out_zp"])


def random_case(rng, dims, groups, per_channel, with_bias):
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    kernel = [int(rng.integers(1, 4)) for _ in range(dims)]
    return dict(
        dims=dims, groups=groups,
        xq=rng.integers(0, 256, size=[int(rng.integers(1, 3)), cin] + [int(rng.integers(5, 9)) for _ in range(dims)]),
        x_scale=float(rng.uniform(0.002, 0.05)), x_zp=int(rng.integers(0, 256)),
        wq=rng.integers(-128, 128, size=[cout, cin // groups] + kernel),
        w_scale=rng.uniform(0.001, 0.03, size=cout) if per_channel else float(rng.uniform(0.001, 0.03)),
        bias=rng.normal(0, 2, size=cout).astype(np.float32) if with_bias else None,
        stride=[int(rng.integers(1, 3)) for _ in range(dims)], padding=[int(rng.integers(0, 2)) for _ in range(dims)],
        dilation=[int(rng.integers(1, 3)) for _ in range(dims)],
        out_scale=float(rng.uniform(0.01, 0.5)), out_zp=int(rng.integers(0, 256)))


def assert_same_q(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert (got.q_scale(), got.q_zero_point()) == (want.q_scale(), want.q_zero_point())
    assert tuple(got.shape) == tuple(want.shape) and tuple(got.stride()) == tuple(want.stride())
    np.testing.assert_array_equal(np.asarray(got.int_repr().tolist()).reshape(want.shape), want.int_repr().numpy())


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
def test_conv_matches_torch_bit_for_bit(dims, relu, per_channel):
    rng = np.random.default_rng([dims, relu, per_channel, 13])
    for trial in range(8):
        case = random_case(rng, dims, [1, 2, 3][trial % 3], per_channel, trial % 4 != 0)
        assert_same_q(run(tessera, case, relu), run(torch, case, relu))


def test_resnet_block_shape_with_channels_last_and_nchw_inputs():
    rng = np.random.default_rng(21)
    case = random_case(rng, 2, 1, True, True)
    case.update(xq=rng.integers(0, 256, size=(2, 64, 14, 14)), wq=rng.integers(-128, 128, size=(64, 64, 3, 3)),
                w_scale=rng.uniform(0.001, 0.01, size=64), bias=rng.normal(0, 1, size=64).astype(np.float32),
                stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=1)
    want = run(torch, case, True)
    assert_same_q(run(tessera, case, True), want)
    x = tessera._make_per_tensor_quantized_tensor(ints(tessera, case["xq"], "uint8"), case["x_scale"], case["x_zp"])
    packed = tessera.ops.quantized.conv2d_prepack(make_weight(tessera, case["wq"], case["w_scale"]),
                                                  tessera.tensor(case["bias"].tolist()), [1, 1], [1, 1], [1, 1], 1)
    got = tessera.ops.quantized.conv2d_relu(x.contiguous(memory_format=tessera.channels_last), packed,
                                            case["out_scale"], case["out_zp"])
    assert_same_q(got, want)


def test_packed_params_methods_getters_and_state():
    w = tessera.quantize_per_tensor(tessera.linspace(-1, 1, 60).reshape(4, 3, 5), 0.01, 0, tessera.qint8)
    p1 = tessera.ops.quantized.conv1d_prepack(w, tessera.ones(4), [2], [1], [1], 1)
    want_w = torch.quantize_per_tensor(torch.linspace(-1, 1, 60).reshape(4, 3, 5), 0.01, 0, torch.qint8)
    q1 = torch.ops.quantized.conv1d_prepack(want_w, torch.ones(4), [2], [1], [1], 1)
    assert p1._type().qualified_name() == "__torch__.torch.classes.quantized.Conv2dPackedParamsBase"
    for method in ("stride", "padding", "dilation", "output_padding", "groups", "transpose"):
        assert getattr(p1, method)() == getattr(q1, method)(), method
    assert tuple(p1.unpack()[0].shape) == (4, 3, 1, 5)  # conv1d runs as a unit-height conv2d, as in torch
    assert tuple(tessera.ops.quantized.conv1d_unpack(p1)[0].shape) == (4, 3, 5)
    assert p1.weight().int_repr().tolist() == q1.weight().int_repr().tolist()
    assert p1.bias().tolist() == [1.0] * 4
    w2 = tessera.quantize_per_tensor(tessera.ones(6, 2, 3, 3), 0.1, 0, tessera.qint8)
    p2 = tessera.ops.quantized.conv2d_prepack(w2, None, [1, 2], [0, 1], [2, 1], 3)
    q2 = torch.ops.quantized.conv2d_prepack(torch.quantize_per_tensor(torch.ones(6, 2, 3, 3), 0.1, 0, torch.qint8),
                                            None, [1, 2], [0, 1], [2, 1], 3)
    for getter in ("stride", "padding", "dilation", "output_padding", "groups", "transpose"):
        assert getattr(tessera.ops.quantized, "conv2d_" + getter)(p2) == getattr(torch.ops.quantized,
                                                                                 "conv2d_" + getter)(q2), getter
    (version, tensors, biases), = [p2.__getstate__()]
    (t_version, t_tensors, t_biases), _ = q2.__getstate__()
    assert version == t_version and tensors[0].tolist() == t_tensors[0].tolist() and biases == t_biases == [None]
    p3 = tessera.ops.quantized.conv3d_prepack(tessera.quantize_per_tensor(tessera.ones(2, 1, 1, 2, 2), 0.1, 0,
                                                                          tessera.qint8), None, [1, 1, 1], [0, 0, 0],
                                              [1, 1, 1], 1)
    assert p3._type().qualified_name() == "__torch__.torch.classes.quantized.Conv3dPackedParamsBase"
    for packed in (p1, p2, p3):
        for clone in (copy.deepcopy(packed), pickle.loads(pickle.dumps(packed))):
            assert clone.stride() == packed.stride() and clone.groups() == packed.groups()
            assert clone.unpack()[0].equal(packed.unpack()[0])


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, str(e).split("\n")[0]
    return None


def _w(L, shape=(4, 3, 3, 3), zp=0):
    return L.quantize_per_tensor(L.ones(*shape), 0.1, zp, L.qint8)


def _p(L):
    return L.ops.quantized.conv2d_prepack(_w(L), None, [1, 1], [1, 1], [1, 1], 1)


ERRORS = {
    "qint8 input": lambda L: L.ops.quantized.conv2d(L.quantize_per_tensor(L.ones(1, 3, 5, 5), 0.1, 0, L.qint8), _p(L),
                                                    0.1, 0),
    "3-d input": lambda L: L.ops.quantized.conv2d(L.quantize_per_tensor(L.ones(3, 5, 5), 0.1, 0, L.quint8), _p(L),
                                                  0.1, 0),
    "2-d conv1d input": lambda L: L.ops.quantized.conv1d(
        L.quantize_per_tensor(L.ones(3, 5), 0.1, 0, L.quint8),
        L.ops.quantized.conv1d_prepack(_w(L, (4, 3, 3)), None, [1], [1], [1], 1), 0.1, 0),
    "weight zero point": lambda L: L.ops.quantized.conv2d_prepack(_w(L, zp=2), None, [1, 1], [1, 1], [1, 1], 1),
    "stride entries": lambda L: L.ops.quantized.conv2d_prepack(_w(L), None, [1], [1, 1], [1, 1], 1),
    "bias size": lambda L: L.ops.quantized.conv2d_prepack(_w(L), L.ones(3), [1, 1], [1, 1], [1, 1], 1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    got, want = _error(lambda: ERRORS[case](tessera)), _error(lambda: ERRORS[case](torch))
    assert got is not None and got == want


def test_clear_errors_where_torch_fails_inside_onednn_or_accepts():
    with pytest.raises(RuntimeError, match=r"the input has 4 channels; the weight expects 3"):
        tessera.ops.quantized.conv2d(tessera.quantize_per_tensor(tessera.ones(1, 4, 5, 5), 0.1, 0, tessera.quint8),
                                     _p(tessera), 0.1, 0)
    with pytest.raises(RuntimeError, match="must be divisible by groups"):  # torch 1.13 packs it
        tessera.ops.quantized.conv2d_prepack(_w(tessera), None, [1, 1], [1, 1], [1, 1], 3)
    with pytest.raises(NotImplementedError):
        tessera.ops.quantized.conv2d(tessera.ones(1, 3, 5, 5), _p(tessera), 0.1, 0)
    with pytest.raises(RuntimeError, match="the bias is on meta"):  # torch 1.13 crashes in conv2d
        tessera.ops.quantized.conv2d_prepack(_w(tessera), tessera.zeros(4, device="meta"), [1, 1], [1, 1], [1, 1], 1)
    with pytest.raises(RuntimeError, match="leave nothing to multiply"):
        tessera.ops.quantized.conv2d_prepack(_w(tessera, (4, 3, 0, 3)), None, [1, 1], [1, 1], [1, 1], 1)
    with pytest.raises(RuntimeError, match="the params must be an integer CPU tensor"):
        tessera._classes._script_object_from_state("__torch__.torch.classes.quantized.Conv2dPackedParamsBase",
                                                   ("2", [tessera.zeros(11, device="meta"), _w(tessera)], [None]))


def test_empty_and_meta_inputs():
    x = tessera.quantize_per_tensor(tessera.ones(0, 3, 5, 5), 0.1, 0, tessera.quint8)
    assert tuple(tessera.ops.quantized.conv2d(x, _p(tessera), 0.1, 0).shape) == (0, 4, 5, 5)
    m = tessera.quantize_per_tensor(tessera.ones(2, 3, 7, 6), 0.1, 3, tessera.quint8).to("meta")
    y = tessera.ops.quantized.conv2d_relu(m, tessera.ops.quantized.conv2d_prepack(_w(tessera), None, [2, 1], [0, 1],
                                                                                  [1, 1], 1), 0.2, 9)
    assert y.is_meta and tuple(y.shape) == (2, 4, 3, 6) and (y.q_scale(), y.q_zero_point()) == (0.2, 9)
    assert y.is_contiguous(memory_format=tessera.channels_last)


# ---------------------------------------------------------------- modules


def observed(lib, nn_mod, fused_mod, dims, relu, per_channel, rng):
    conv = getattr(nn_mod, f"Conv{dims}d")(4, 6, 3, padding=1, groups=2)
    with lib.no_grad():
        conv.weight.copy_(lib.tensor(rng.normal(0, 0.3, size=tuple(conv.weight.shape)).astype(np.float32).tolist()))
        conv.bias.copy_(lib.tensor(rng.normal(0, 0.1, size=6).astype(np.float32).tolist()))
    if lib is torch:
        from torch.ao.quantization import MinMaxObserver as MM, PerChannelMinMaxObserver as PC
    else:
        MM, PC = MinMaxObserver, PerChannelMinMaxObserver
    weight = ((lambda: PC(dtype=lib.qint8, qscheme=lib.per_channel_symmetric)) if per_channel
              else (lambda: MM(dtype=lib.qint8, qscheme=lib.per_tensor_symmetric)))
    mod = getattr(fused_mod, f"ConvReLU{dims}d")(conv, nn_mod.ReLU()) if relu else conv
    conv.qconfig = mod.qconfig = types.SimpleNamespace(activation=MM, weight=weight)
    mod.activation_post_process = MM()
    mod.activation_post_process(lib.tensor(rng.normal(0, 2, size=(8, 6)).astype(np.float32).tolist()))
    return mod


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("relu", [False, True])
def test_modules_from_float_match_torch(dims, relu):
    ours = getattr(nniq if relu else nnq, f"ConvReLU{dims}d" if relu else f"Conv{dims}d")
    theirs = getattr(tnniq if relu else tnnq, f"ConvReLU{dims}d" if relu else f"Conv{dims}d")
    got_m = ours.from_float(observed(tessera, tessera.nn, nni, dims, relu, dims != 2, np.random.default_rng(dims)))
    want_m = theirs.from_float(observed(torch, torch.nn, tnni, dims, relu, dims != 2, np.random.default_rng(dims)))
    assert repr(got_m).replace("tessera", "torch") == repr(want_m)
    shape = (2, 4) + (5,) * dims
    x = np.random.default_rng(30 + dims).normal(0, 1, size=shape).astype(np.float32)
    assert_same_q(got_m(tessera.quantize_per_tensor(tessera.tensor(x.tolist()), 0.0313 + dims / 1000, 127,
                                                    tessera.quint8)),
                  want_m(torch.quantize_per_tensor(torch.tensor(x), 0.0313 + dims / 1000, 127, torch.quint8)))
    with pytest.raises(ValueError, match="Input shape must be"):
        got_m(tessera.quantize_per_tensor(tessera.ones(4, 5), 0.1, 0, tessera.quint8))


def transfer(state, src, dst):
    buf = io.BytesIO()
    src.save(state, buf)
    return dst.load(io.BytesIO(buf.getvalue()))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_state_dicts_move_between_the_libraries(dims):
    rng = np.random.default_rng(40 + dims)
    want_m = getattr(tnnq, f"Conv{dims}d")(4, 6, 2, stride=2, groups=2)
    wshape = (6, 2) + (2,) * dims
    want_m.set_weight_bias(torch.quantize_per_channel(torch.tensor(rng.normal(0, 1, size=wshape), dtype=torch.float),
                                                      torch.tensor(rng.uniform(0.01, 0.02, size=6)),
                                                      torch.zeros(6, dtype=torch.long), 0, torch.qint8),
                           torch.tensor(rng.normal(0, 1, size=6), dtype=torch.float))
    want_m.scale, want_m.zero_point = float(np.float32(0.0411)), 66
    got_m = getattr(nnq, f"Conv{dims}d")(4, 6, 2, stride=2, groups=2)
    got_m.load_state_dict(transfer(want_m.state_dict(), torch, tessera))
    assert list(got_m.state_dict()) == list(want_m.state_dict())
    assert (got_m.scale, got_m.zero_point) == (want_m.scale, want_m.zero_point)
    back = getattr(tnnq, f"Conv{dims}d")(4, 6, 2, stride=2, groups=2)
    back.load_state_dict(transfer(got_m.state_dict(), tessera, torch))
    assert back.weight().int_repr().tolist() == want_m.weight().int_repr().tolist()
    assert back.bias().tolist() == want_m.bias().tolist()
    x = rng.normal(0, 1, size=(1, 4) + (6,) * dims).astype(np.float32)
    assert_same_q(got_m(tessera.quantize_per_tensor(tessera.tensor(x.tolist()), 0.0277, 120, tessera.quint8)),
                  want_m(torch.quantize_per_tensor(torch.tensor(x), 0.0277, 120, torch.quint8)))
    clone = copy.deepcopy(got_m)
    assert clone.weight().equal(got_m.weight()) and (clone.scale, clone.zero_point) == (got_m.scale, got_m.zero_point)
