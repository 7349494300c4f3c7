"""The quantized GEMM family against torch 1.13 on its default engine (oneDNN):
quantized::linear_prepack / linear_unpack / linear / linear_relu / linear_dynamic /
linear_relu_dynamic (integers bit for bit, Note [Quantized linear arithmetic]), the packed
weight as a custom-class object (tessera.ScriptObject: methods, pickling), and the modules
(nnq.Linear, nnqd.Linear, nniq.LinearReLU): outputs, reprs, from_float and state dicts
moved between the two libraries.

torch's oneDNN engine keys its primitive cache without the zero points (ideep), so a second
call with the same shapes and scales but other zero points reuses the first one's: every
case here has its own random scales, so no two torch calls share a key."""
import copy
import io
import pickle
import types

import numpy as np
import pytest
import torch
import torch.nn.intrinsic.quantized as tnniq  # torch.ao.nn.intrinsic came after 1.13
import torch.ao.nn.quantized as tnnq
import torch.ao.nn.quantized.dynamic as tnnqd

import tessera
import tessera.ao.nn.intrinsic as nni
import tessera.ao.nn.intrinsic.quantized as nniq
import tessera.ao.nn.quantized as nnq
import tessera.ao.nn.quantized.dynamic as nnqd
from tessera.ao.quantization import MinMaxObserver, PerChannelMinMaxObserver

torch.set_num_threads(1)
PACKED = "__torch__.torch.classes.quantized.LinearPackedParamsBase"


def ints(lib, array, dtype):
    return lib.tensor(array.tolist(), dtype=getattr(lib, dtype))


def qtensor(lib, q, scale, zero_point, qtype):
    """A per-tensor quantized tensor with integers q (exact)."""
    integer = {"quint8": "uint8", "qint8": "int8", "qint32": "int32"}[qtype]
    return lib._make_per_tensor_quantized_tensor(ints(lib, q, integer), scale, zero_point)


def qweight(lib, q, scales, axis=0):
    """A qint8 weight with integers q: per tensor (a float scale) or per channel."""
    if np.ndim(scales) == 0:
        return qtensor(lib, q, float(scales), 0, "qint8")
    return lib._make_per_channel_quantized_tensor(ints(lib, q, "int8"), lib.tensor(scales, dtype=lib.float64),
                                                  lib.zeros(len(scales), dtype=lib.int64), axis)


def assert_same_q(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert str(got.qscheme()).split(".")[-1] == str(want.qscheme()).split(".")[-1]
    if want.qscheme() == torch.per_channel_affine:
        assert got.q_per_channel_scales().tolist() == want.q_per_channel_scales().tolist()
        assert got.q_per_channel_zero_points().tolist() == want.q_per_channel_zero_points().tolist()
        assert got.q_per_channel_axis() == want.q_per_channel_axis()
    else:
        assert (got.q_scale(), got.q_zero_point()) == (want.q_scale(), want.q_zero_point())
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(np.asarray(got.int_repr().tolist()).reshape(want.shape), want.int_repr().numpy())


def random_case(rng, x_shape, n, per_channel, with_bias):
    k = x_shape[-1]
    return dict(
        xq=rng.integers(0, 256, size=x_shape), x_scale=float(rng.uniform(0.002, 0.05)), x_zp=int(rng.integers(0, 256)),
        wq=rng.integers(-128, 128, size=(n, k)),
        w_scale=(rng.uniform(0.001, 0.03, size=n) if per_channel else float(rng.uniform(0.001, 0.03))),
        bias=(rng.normal(0, 2, size=n).astype(np.float32) if with_bias else None),
        out_scale=float(rng.uniform(0.01, 0.5)), out_zp=int(rng.integers(0, 256)))


def run_static(lib, case, relu):
    x = qtensor(lib, case["xq"], case["x_scale"], case["x_zp"], "quint8")
    w = qweight(lib, case["wq"], case["w_scale"])
    b = None if case["bias"] is None else lib.tensor(case["bias"].tolist())
    packed = lib.ops.quantized.linear_prepack(w, b)
    fn = lib.ops.quantized.linear_relu if relu else lib.ops.quantized.linear
    return fn(x, packed, case["out_scale"], case["out_zp"])


SHAPES = [((1, 1), 1), ((3, 5), 7), ((17, 32), 16), ((64, 100), 33), ((2, 3, 24), 9), ((40,), 12), ((8, 256), 64)]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_matches_torch_bit_for_bit(relu, per_channel, with_bias):
    rng = np.random.default_rng([relu, per_channel, with_bias, 7])
    for x_shape, n in SHAPES:
        case = random_case(rng, x_shape, n, per_channel, with_bias)
        assert_same_q(run_static(tessera, case, relu), run_static(torch, case, relu))


def test_linear_large_accumulators_and_ties():
    """Accumulators past 2**24 (the float conversion rounds) and many results on .5."""
    rng = np.random.default_rng(3)
    k, n = 1024, 24
    case = dict(xq=np.where(rng.random((6, k)) < 0.5, 255, 0), x_scale=0.0173, x_zp=0,
                wq=np.where(rng.random((n, k)) < 0.5, 127, -128), w_scale=0.0625, bias=None,
                out_scale=0.0173 * 0.0625 * 2, out_zp=128)
    for relu in (False, True):
        assert_same_q(run_static(tessera, case, relu), run_static(torch, case, relu))
    case.update(out_scale=0.0173 * 0.0625 * 4096 * 2, bias=rng.normal(0, 3, size=n).astype(np.float32))
    assert_same_q(run_static(tessera, case, False), run_static(torch, case, False))


def test_non_contiguous_input_and_a_repeated_packed_weight():
    rng = np.random.default_rng(11)
    case = random_case(rng, (10, 12), 5, True, True)
    got = run_static(tessera, case, False)
    x = qtensor(tessera, case["xq"].T.copy(), case["x_scale"], case["x_zp"], "quint8").t()
    packed = tessera.ops.quantized.linear_prepack(qweight(tessera, case["wq"], case["w_scale"]),
                                                  tessera.tensor(case["bias"].tolist()))
    for _ in range(3):  # the blocked weight is made once and reused
        assert_same_q(tessera.ops.quantized.linear(x, packed, case["out_scale"], case["out_zp"]), got)


def test_packed_weight_is_a_script_object():
    w = qweight(tessera, np.arange(12).reshape(3, 4) - 6, 0.1)
    b = tessera.tensor([1.0, 2.0, 3.0])
    packed = tessera.ops.quantized.linear_prepack(w, b)
    assert isinstance(packed, tessera.ScriptObject)
    assert packed._type().qualified_name() == PACKED
    assert packed._has_method("unpack") and not packed._has_method("nope")
    w2, b2 = packed.unpack()
    assert w2.data_ptr() == w.data_ptr() and b2.data_ptr() == b.data_ptr()  # the very tensors, as torch
    w3, b3 = tessera.ops.quantized.linear_unpack(packed)
    assert w3.data_ptr() == w.data_ptr() and b3.data_ptr() == b.data_ptr()
    assert packed.bias().data_ptr() == b.data_ptr()
    assert tessera.ops.quantized.linear_unpack(tessera.ops.quantized.linear_prepack(w))[1] is None
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        packed.nope
    with pytest.raises(TypeError, match="takes no arguments"):
        packed.unpack(1)
    with pytest.raises(TypeError, match="LinearPackedParamsBase"):
        tessera.ops.quantized.linear(qtensor(tessera, np.zeros((2, 4)), 0.1, 0, "quint8"), w, 0.1, 0)


def test_packed_weight_pickles_and_deep_copies():
    w = qweight(tessera, np.arange(12).reshape(3, 4) - 6, np.array([0.1, 0.2, 0.3]))
    packed = tessera.ops.quantized.linear_prepack(w, tessera.tensor([1.0, -2.0, 0.5]))
    for clone in (copy.deepcopy(packed), pickle.loads(pickle.dumps(packed))):
        w2, b2 = clone.unpack()
        assert w2.data_ptr() != w.data_ptr()
        assert w2.equal(w) and b2.tolist() == [1.0, -2.0, 0.5]
        x = qtensor(tessera, np.arange(8).reshape(2, 4), 0.05, 3, "quint8")
        assert tessera.ops.quantized.linear(x, clone, 0.07, 9).int_repr().equal(
            tessera.ops.quantized.linear(x, packed, 0.07, 9).int_repr())
    with pytest.raises(RecursionError):  # a pickle may hold a list that contains itself
        loop = []
        loop.append(loop)
        tessera._classes._script_object_from_state(PACKED, (loop, None))
    buf = io.BytesIO()
    tessera.save({"p": packed}, buf)
    loaded = tessera.load(io.BytesIO(buf.getvalue()), weights_only=False)["p"]
    assert loaded.unpack()[0].equal(w)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, str(e).split("\n")[0]
    return None


ERRORS = {
    "qint8 input": lambda L: L.ops.quantized.linear(
        L._make_per_tensor_quantized_tensor(L.zeros(2, 4, dtype=L.int8), 0.1, 0),
        L.ops.quantized.linear_prepack(L.quantize_per_tensor(L.ones(3, 4), 0.1, 0, L.qint8)), 0.1, 0),
    "weight zero point": lambda L: L.ops.quantized.linear_prepack(L.quantize_per_tensor(L.ones(3, 4), 0.1, 3,
                                                                                         L.qint8)),
    "per-channel zero point": lambda L: L.ops.quantized.linear_prepack(L.quantize_per_channel(
        L.ones(3, 4), L.tensor([0.1, 0.1, 0.1], dtype=L.float64), L.tensor([0, 2, 0]), 0, L.qint8)),
    "3-d weight": lambda L: L.ops.quantized.linear_prepack(L.quantize_per_tensor(L.ones(2, 3, 4), 0.1, 0, L.qint8)),
    "bias size": lambda L: L.ops.quantized.linear_prepack(L.quantize_per_tensor(L.ones(3, 4), 0.1, 0, L.qint8),
                                                          L.ones(5)),
    "0-d input": lambda L: L.ops.quantized.linear(L.quantize_per_tensor(L.tensor(1.0), 0.1, 0, L.quint8),
                                                  L.ops.quantized.linear_prepack(
                                                      L.quantize_per_tensor(L.ones(3, 4), 0.1, 0, L.qint8)), 0.1, 0),
    "dynamic double input": lambda L: L.ops.quantized.linear_dynamic(L.ones(2, 4, dtype=L.float64), L.ops.quantized.
                                                                     linear_prepack(L.quantize_per_tensor(
                                                                         L.ones(3, 4), 0.1, 0, L.qint8))),
    "dynamic 1-d input": lambda L: L.ops.quantized.linear_dynamic(L.ones(4), L.ops.quantized.linear_prepack(
        L.quantize_per_tensor(L.ones(3, 4), 0.1, 0, L.qint8))),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    got, want = _error(lambda: ERRORS[case](tessera)), _error(lambda: ERRORS[case](torch))
    assert got is not None and want is not None
    assert got == want


CLEARER = {  # torch 1.13 accepts these and computes garbage, or fails inside oneDNN
    "quint8 weight": (lambda: tessera.ops.quantized.linear_prepack(
        tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.quint8)), "the weight must be a qint8 tensor"),
    "axis-1 weight": (lambda: tessera.ops.quantized.linear_prepack(tessera.quantize_per_channel(
        tessera.ones(3, 4), tessera.full((4,), 0.1, dtype=tessera.float64), tessera.zeros(4, dtype=tessera.int64), 1,
        tessera.qint8)), "along axis 0"),
    "double bias": (lambda: tessera.ops.quantized.linear_prepack(
        tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8), tessera.ones(3, dtype=tessera.float64)),
        "must be a float32 tensor"),
    "in_features": (lambda: tessera.ops.quantized.linear(
        tessera.quantize_per_tensor(tessera.ones(2, 5), 0.1, 0, tessera.quint8), tessera.ops.quantized.linear_prepack(
            tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8)), 0.1, 0), r"\(5\) does not match"),
    "output scale": (lambda: tessera.ops.quantized.linear(
        tessera.quantize_per_tensor(tessera.ones(2, 4), 0.1, 0, tessera.quint8), tessera.ops.quantized.linear_prepack(
            tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8)), -0.5, 0), "positive and finite"),
    "no input features": (lambda: tessera.ops.quantized.linear_prepack(  # torch 1.13 divides by zero in linear
        tessera.quantize_per_tensor(tessera.ones(3, 0), 0.1, 0, tessera.qint8)), "leave nothing to multiply"),
    "bias on another device": (lambda: tessera.ops.quantized.linear_prepack(
        tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8), tessera.ones(3, device="meta")),
        "the bias is on meta"),
    "output zero point": (lambda: tessera.ops.quantized.linear(
        tessera.quantize_per_tensor(tessera.ones(2, 4), 0.1, 0, tessera.quint8), tessera.ops.quantized.linear_prepack(
            tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8)), 0.5, 300), "above upper bound"),
}


@pytest.mark.parametrize("case", sorted(CLEARER))
def test_clear_errors_where_torch_computes_garbage(case):
    fn, message = CLEARER[case]
    with pytest.raises(RuntimeError, match=message):
        fn()


def test_float_input_has_no_kernel():
    packed = tessera.ops.quantized.linear_prepack(
        tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8))
    with pytest.raises(NotImplementedError):
        tessera.ops.quantized.linear(tessera.ones(2, 4), packed, 0.1, 0)


def test_empty_batch_keeps_the_batch_shape():
    packed = tessera.ops.quantized.linear_prepack(
        tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8))
    x = tessera.quantize_per_tensor(tessera.ones(2, 0, 4), 0.1, 0, tessera.quint8)
    # torch 1.13 returns (0, 3) here (it flattens and forgets the batch shape); current torch keeps it
    assert tuple(tessera.ops.quantized.linear(x, packed, 0.1, 0).shape) == (2, 0, 3)
    assert tuple(tessera.ops.quantized.linear_dynamic(tessera.ones(2, 0, 4), packed).shape) == (2, 0, 3)


def test_meta_inputs_give_shapes_and_qparams():
    packed = tessera.ops.quantized.linear_prepack(
        tessera.quantize_per_tensor(tessera.ones(3, 4), 0.1, 0, tessera.qint8), tessera.ones(3))
    x = tessera.quantize_per_tensor(tessera.ones(5, 2, 4), 0.1, 7, tessera.quint8).to("meta")
    y = tessera.ops.quantized.linear_relu(x, packed, 0.25, 9)
    assert y.is_meta and tuple(y.shape) == (5, 2, 3) and y.dtype == tessera.quint8
    assert (y.q_scale(), y.q_zero_point()) == (0.25, 9)
    d = tessera.ops.quantized.linear_dynamic(tessera.ones(5, 4, device="meta"), packed)
    assert d.is_meta and tuple(d.shape) == (5, 3) and d.dtype == tessera.float32


def run_dynamic(lib, x, case, reduce_range, relu):
    w = qweight(lib, case["wq"], case["w_scale"])
    b = None if case["bias"] is None else lib.tensor(case["bias"].tolist())
    packed = lib.ops.quantized.linear_prepack(w, b)
    fn = lib.ops.quantized.linear_relu_dynamic if relu else lib.ops.quantized.linear_dynamic
    return fn(lib.tensor(x.tolist()), packed, reduce_range)


@pytest.mark.parametrize("reduce_range", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
def test_linear_dynamic_matches_torch_bit_for_bit(reduce_range, relu, per_channel):
    rng = np.random.default_rng([reduce_range, relu, per_channel, 5])
    for x_shape, n in [((3, 5), 7), ((17, 32), 16), ((2, 3, 24), 9), ((64, 128), 40)]:
        case = random_case(rng, x_shape, n, per_channel, True)
        for x in (rng.normal(0.3, 2.0, size=x_shape), rng.uniform(0.5, 3.0, size=x_shape),
                  np.zeros(x_shape), rng.normal(0, 1e-6, size=x_shape)):
            x = x.astype(np.float32)
            got = run_dynamic(tessera, x, case, reduce_range, relu)
            want = run_dynamic(torch, x, case, reduce_range, relu)
            np.testing.assert_array_equal(np.asarray(got.tolist(), dtype=np.float32), want.numpy())


# ---------------------------------------------------------------- modules


def observed_float_linear(lib, nn_mod, in_f, out_f, per_channel, rng, relu=False):
    """A float Linear (or fused LinearReLU) as prepare() leaves it: a qconfig and an observer
    that has seen the module's outputs."""
    lin = nn_mod.Linear(in_f, out_f)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(rng.normal(0, 0.3, size=(out_f, in_f)).astype(np.float32).tolist()))
        lin.bias.copy_(lib.tensor(rng.normal(0, 0.1, size=out_f).astype(np.float32).tolist()))
    if lib is torch:
        from torch.ao.quantization import MinMaxObserver as MM, PerChannelMinMaxObserver as PC
        import torch.nn.intrinsic as fused
    else:
        MM, PC, fused = MinMaxObserver, PerChannelMinMaxObserver, nni
    weight = ((lambda: PC(dtype=lib.qint8, qscheme=lib.per_channel_symmetric)) if per_channel
              else (lambda: MM(dtype=lib.qint8, qscheme=lib.per_tensor_symmetric)))
    mod = fused.LinearReLU(lin, nn_mod.ReLU()) if relu else lin
    lin.qconfig = mod.qconfig = types.SimpleNamespace(activation=MM, weight=weight)
    mod.activation_post_process = MM()
    mod.activation_post_process(lib.tensor(rng.normal(0, 2, size=(8, out_f)).astype(np.float32).tolist()))
    return mod


@pytest.mark.parametrize("per_channel", [False, True])
def test_quantized_linear_module_from_float_matches_torch(per_channel):
    got_m = nnq.Linear.from_float(observed_float_linear(tessera, tessera.nn, 20, 6, per_channel,
                                                        np.random.default_rng(1)))
    want_m = tnnq.Linear.from_float(observed_float_linear(torch, torch.nn, 20, 6, per_channel,
                                                          np.random.default_rng(1)))
    assert repr(got_m).replace("tessera", "torch") == repr(want_m)
    assert_same_q(got_m.weight(), want_m.weight())
    x = np.random.default_rng(2).normal(0, 1, size=(4, 20)).astype(np.float32)
    got = got_m(tessera.quantize_per_tensor(tessera.tensor(x.tolist()), 0.031, 131, tessera.quint8))
    want = want_m(torch.quantize_per_tensor(torch.tensor(x), 0.031, 131, torch.quint8))
    assert_same_q(got, want)


def test_quantized_linear_relu_module_matches_torch():
    got_m = nniq.LinearReLU.from_float(observed_float_linear(tessera, tessera.nn, 16, 5, True,
                                                             np.random.default_rng(4), relu=True))
    want_m = tnniq.LinearReLU.from_float(observed_float_linear(torch, torch.nn, 16, 5, True,
                                                               np.random.default_rng(4), relu=True))
    assert repr(got_m).replace("tessera", "torch") == repr(want_m)
    x = np.random.default_rng(5).normal(0, 1, size=(3, 16)).astype(np.float32)
    assert_same_q(got_m(tessera.quantize_per_tensor(tessera.tensor(x.tolist()), 0.029, 120, tessera.quint8)),
                  want_m(torch.quantize_per_tensor(torch.tensor(x), 0.029, 120, torch.quint8)))


def test_dynamic_linear_module_matches_torch():
    got_m = nnqd.Linear.from_float(observed_float_linear(tessera, tessera.nn, 24, 7, False, np.random.default_rng(6)))
    want_m = tnnqd.Linear.from_float(observed_float_linear(torch, torch.nn, 24, 7, False, np.random.default_rng(6)))
    assert repr(got_m).replace("tessera", "torch") == repr(want_m)
    x = np.random.default_rng(7).normal(0, 1, size=(2, 3, 24)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(got_m(tessera.tensor(x.tolist())).tolist(), dtype=np.float32),
                                  want_m(torch.tensor(x)).numpy())


def transfer(state, src, dst):
    buf = io.BytesIO()
    src.save(state, buf)
    return dst.load(io.BytesIO(buf.getvalue()))


@pytest.mark.parametrize("kind", ["static", "relu", "dynamic"])
def test_state_dicts_move_between_the_libraries(kind):
    make = {"static": (nnq.Linear, tnnq.Linear), "relu": (nniq.LinearReLU, tnniq.LinearReLU),
            "dynamic": (nnqd.Linear, tnnqd.Linear)}[kind]
    want_m = make[1](12, 5)
    rng = np.random.default_rng(8)
    want_m.set_weight_bias(torch.quantize_per_channel(torch.tensor(rng.normal(0, 1, size=(5, 12)), dtype=torch.float),
                                                      torch.tensor(rng.uniform(0.01, 0.02, size=5)),
                                                      torch.zeros(5, dtype=torch.long), 0, torch.qint8),
                           torch.tensor(rng.normal(0, 1, size=5), dtype=torch.float))
    want_m.scale, want_m.zero_point = float(np.float32(0.0371)), 77  # what a float32 tensor keeps
    got_m = make[0](12, 5)
    got_m.load_state_dict(transfer(want_m.state_dict(), torch, tessera))
    assert list(got_m.state_dict()) == list(want_m.state_dict())
    assert (got_m.scale, got_m.zero_point) == (want_m.scale, want_m.zero_point)
    assert_same_q(got_m.weight(), want_m.weight())
    back = make[1](12, 5)
    back.load_state_dict(transfer(got_m.state_dict(), tessera, torch))
    assert_same_q(got_m.weight(), back.weight())
    assert back.bias().tolist() == want_m.bias().tolist()
    x = rng.normal(0, 1, size=(3, 12)).astype(np.float32)
    if kind == "dynamic":
        np.testing.assert_array_equal(np.asarray(got_m(tessera.tensor(x.tolist())).tolist(), dtype=np.float32),
                                      want_m(torch.tensor(x)).numpy())
    else:
        assert_same_q(got_m(tessera.quantize_per_tensor(tessera.tensor(x.tolist()), 0.027, 125, tessera.quint8)),
                      want_m(torch.quantize_per_tensor(torch.tensor(x), 0.027, 125, torch.quint8)))


def test_modules_deep_copy():
    m = nnq.Linear(6, 3)
    m.set_weight_bias(tessera.quantize_per_tensor(tessera.ones(3, 6), 0.1, 0, tessera.qint8), tessera.ones(3))
    c = copy.deepcopy(m)
    assert c.weight().equal(m.weight()) and c.weight().data_ptr() != m.weight().data_ptr()


def test_old_names():
    import tessera.nn.intrinsic.quantized as old_nniq
    import tessera.nn.quantized.dynamic as old_nnqd
    assert tessera.nn.quantized.Linear is nnq.Linear and old_nnqd.Linear is nnqd.Linear
    assert old_nniq.LinearReLU is nniq.LinearReLU


# ---------------------------------------------------------------- quantize_dynamic


def twin_models(make):
    """The same float model in both libraries (torch's initial weights copied over)."""
    torch.manual_seed(0)
    theirs = make(torch.nn)
    ours = make(tessera.nn)
    ours.load_state_dict({k: tessera.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def mlp(nn):
    # float layers whose results are exact in both libraries (a transcendental one may differ
    # in its last bit, and the next layer's dynamic qparams with it)
    return nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Sequential(nn.Linear(30, 16), nn.Hardtanh()),
                         nn.Linear(16, 5))


@pytest.mark.parametrize("spec", ["default", "set", "per-channel by name"])
def test_quantize_dynamic_matches_torch(spec):
    from tessera.ao import quantization as ours_q
    from torch.ao import quantization as torch_q
    ours, theirs = twin_models(mlp)
    if spec == "default":
        q_ours, q_theirs = ours_q.quantize_dynamic(ours), torch_q.quantize_dynamic(theirs)
    elif spec == "set":
        q_ours = ours_q.quantize_dynamic(ours, {tessera.nn.Linear}, dtype=tessera.qint8)
        q_theirs = torch_q.quantize_dynamic(theirs, {torch.nn.Linear}, dtype=torch.qint8)
    else:
        q_ours = ours_q.quantize_dynamic(ours, {"0": ours_q.per_channel_dynamic_qconfig,
                                                "2.0": ours_q.per_channel_dynamic_qconfig,
                                                "3": ours_q.default_dynamic_qconfig})
        q_theirs = torch_q.quantize_dynamic(theirs, {"0": torch_q.per_channel_dynamic_qconfig,
                                                     "2.0": torch_q.per_channel_dynamic_qconfig,
                                                     "3": torch_q.default_dynamic_qconfig})
    assert repr(q_ours).replace("tessera", "torch") == repr(q_theirs)
    assert type(ours[0]).__name__ == "Linear"  # not in place
    x = np.random.default_rng(9).normal(0, 1, size=(6, 20)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(q_ours(tessera.tensor(x.tolist())).tolist(), dtype=np.float32),
                                  q_theirs(torch.tensor(x)).detach().numpy())
    assert not hasattr(q_ours[0], "qconfig")


def test_quantize_dynamic_refuses_what_it_cannot_convert():
    from tessera.ao import quantization as ours_q
    model = tessera.nn.Sequential(tessera.nn.LSTM(4, 4), tessera.nn.Linear(4, 2))
    with pytest.raises(NotImplementedError, match="LSTM"):
        ours_q.quantize_dynamic(model)
    assert type(ours_q.quantize_dynamic(model, {tessera.nn.Linear})[1]).__name__ == "Linear"  # DynamicQuantizedLinear's
    with pytest.raises(NotImplementedError, match="float16"):
        ours_q.quantize_dynamic(model, dtype=tessera.float16)
    with pytest.raises(ValueError, match="observer instance"):
        ours_q.QConfig(activation=MinMaxObserver(), weight=MinMaxObserver)


def test_propagate_qconfig_as_torch():
    from tessera.ao import quantization as ours_q
    from torch.ao import quantization as torch_q
    ours, theirs = twin_models(mlp)
    ours[2].qconfig = ours_q.default_qconfig
    theirs[2].qconfig = torch_q.default_qconfig
    ours_q.propagate_qconfig_(ours, {tessera.nn.Linear: ours_q.default_dynamic_qconfig, "3": None})
    torch_q.propagate_qconfig_(theirs, {torch.nn.Linear: torch_q.default_dynamic_qconfig, "3": None})
    names = {id(c): n for n, c in ((ours_q.default_qconfig, "static"), (ours_q.default_dynamic_qconfig, "dynamic"),
                                   (torch_q.default_qconfig, "static"), (torch_q.default_dynamic_qconfig, "dynamic"))}
    got = {n: names.get(id(m.qconfig)) for n, m in ours.named_modules()}
    want = {n: names.get(id(m.qconfig)) for n, m in theirs.named_modules()}
    assert got == want
