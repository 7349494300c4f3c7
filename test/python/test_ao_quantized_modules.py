"""tessera.ao.nn.quantized's modules and functional against torch.ao.nn.quantized (torch
1.13): the activations, QFunctional, Quantize / DeQuantize: outputs (integers and qparams),
reprs, state dicts (saved by one library, loaded by the other) and from_float."""
import io

import numpy as np
import pytest
import torch
import torch.ao.nn.quantized as tnnq

import tessera
import tessera.ao.nn.quantized as nnq
from tessera.ao.quantization import MinMaxObserver

torch.set_num_threads(1)


def quantized_input(lib, dtype="quint8"):
    return lib.quantize_per_tensor(lib.linspace(-5, 5, 130).reshape(2, 65), 0.05, 100 if dtype == "quint8" else 0,
                                   getattr(lib, dtype))


def assert_same_q(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert (got.q_scale(), got.q_zero_point()) == (want.q_scale(), want.q_zero_point())
    np.testing.assert_array_equal(np.asarray(got.int_repr().tolist()), want.int_repr().numpy())


MODULES = {
    "ReLU6": lambda m: m.ReLU6(),
    "ReLU6 inplace": lambda m: m.ReLU6(inplace=True),
    "Hardswish": lambda m: m.Hardswish(0.03, 10),
    "ELU": lambda m: m.ELU(0.03, 100, 0.5),
    "LeakyReLU": lambda m: m.LeakyReLU(0.04, 30, 0.2),
    "Sigmoid": lambda m: m.Sigmoid(1 / 256, 0),
}


@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_activation_modules(name, dtype):
    got_m, want_m = MODULES[name](nnq), MODULES[name](tnnq)
    assert repr(got_m) == repr(want_m)
    assert_same_q(got_m(quantized_input(tessera, dtype)), want_m(quantized_input(torch, dtype)))
    assert list(got_m.state_dict()) == list(want_m.state_dict())


FUNCTIONAL = {
    "celu": lambda F, q: F.celu(q, 0.02, 120, 1.5),
    "elu": lambda F, q: F.elu(q, 0.02, 120, 0.7),
    "hardswish": lambda F, q: F.hardswish(q, 0.03, 4),
    "hardtanh": lambda F, q: F.hardtanh(q, -0.5, 2.0),
    "hardtanh inplace": lambda F, q: F.hardtanh(q, -0.5, 2.0, inplace=True),
    "leaky_relu": lambda F, q: F.leaky_relu(q, 0.3),
    "leaky_relu rescaled": lambda F, q: F.leaky_relu(q, 0.3, scale=0.01, zero_point=200),
    "leaky_relu inplace": lambda F, q: F.leaky_relu(q, 0.3, inplace=True),
    "threshold": lambda F, q: F.threshold(q, 0.5, -2.0),
    "hardsigmoid": lambda F, q: F.hardsigmoid(q),
    "clamp": lambda F, q: F.clamp(q, -1.0, 0.5),
    "avg_pool2d": lambda F, q: F.avg_pool2d(q.reshape(1, 2, 5, 13), 3, 2, 1, count_include_pad=False),
    "adaptive_avg_pool2d": lambda F, q: F.adaptive_avg_pool2d(q.reshape(1, 2, 5, 13), (2, 4)),
    "max_pool1d": lambda F, q: F.max_pool1d(q, 3, padding=1),
    "max_pool2d": lambda F, q: F.max_pool2d(q.reshape(1, 2, 5, 13), 2, 1, dilation=2),
    "avg_pool3d": lambda F, q: F.avg_pool3d(q.reshape(1, 2, 5, 13, 1), (2, 3, 1), 1, (1, 1, 0)),
    "adaptive_avg_pool3d": lambda F, q: F.adaptive_avg_pool3d(q.reshape(1, 2, 5, 13, 1), (2, 4, 1)),
    "interpolate nearest": lambda F, q: F.interpolate(q.reshape(1, 2, 5, 13), scale_factor=1.5),
    "interpolate bilinear": lambda F, q: F.interpolate(q.reshape(1, 2, 5, 13), size=(7, 9), mode="bilinear"),
    "upsample": lambda F, q: F.upsample(q.reshape(1, 2, 5, 13), size=(8, 8)),
    "upsample_bilinear": lambda F, q: F.upsample_bilinear(q.reshape(1, 2, 5, 13), scale_factor=2),
    "upsample_nearest": lambda F, q: F.upsample_nearest(q.reshape(1, 2, 5, 13), size=(3, 20)),
}


def _weight(lib, *shape):
    values = np.random.default_rng(len(shape)).uniform(-1, 1, shape).astype(np.float32)
    return lib.quantize_per_tensor(lib.tensor(values), 0.01, 0, lib.qint8)


WEIGHTED = {
    "linear": lambda lib, F, q: F.linear(q, _weight(lib, 4, 65), lib.linspace(-1, 1, 4)),
    "linear rescaled": lambda lib, F, q: F.linear(q, _weight(lib, 3, 65), None, 0.2, 30),
    "conv1d": lambda lib, F, q: F.conv1d(q.reshape(1, 2, 65), _weight(lib, 3, 2, 4), None, stride=2, padding=1,
                                         scale=0.1, zero_point=60),
    "conv2d": lambda lib, F, q: F.conv2d(q.reshape(1, 2, 5, 13), _weight(lib, 4, 2, 3, 3), lib.ones(4),
                                         padding=(1, 0), dilation=(1, 2), scale=0.1, zero_point=60),
    "conv3d": lambda lib, F, q: F.conv3d(q.reshape(1, 2, 5, 13, 1), _weight(lib, 2, 2, 2, 2, 1), None, scale=0.1,
                                         zero_point=60),
}


@pytest.mark.parametrize("name", sorted(WEIGHTED))
def test_functional_with_weights(name):
    assert_same_q(WEIGHTED[name](tessera, nnq.functional, quantized_input(tessera)),
                  WEIGHTED[name](torch, tnnq.functional, quantized_input(torch)))


def test_conv1d_prepack_reads_a_longer_list_as_torch():
    """torch's 1-d prepack takes the second entry of a two-entry geometry list."""
    def run(lib):
        packed = lib.ops.quantized.conv1d_prepack(_weight(lib, 3, 2, 4), None, [2, 3], [1, 2], [1, 2], 1)
        return lib.ops.quantized.conv1d(quantized_input(lib).reshape(1, 2, 65), packed, 0.1, 60)
    assert_same_q(run(tessera), run(torch))


def test_functional_conv_refuses_what_torch_refuses():
    for lib, F in ((tessera, nnq.functional), (torch, tnnq.functional)):
        q = quantized_input(lib).reshape(1, 2, 5, 13)
        with pytest.raises(NotImplementedError, match="zero-padding"):
            F.conv2d(q, _weight(lib, 4, 2, 3, 3), None, padding_mode="reflect")
        with pytest.raises(ValueError, match="Input shape must be"):
            F.conv2d(q.reshape(2, 5, 13), _weight(lib, 4, 2, 3, 3), None)


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional(name):
    assert_same_q(FUNCTIONAL[name](nnq.functional, quantized_input(tessera)),
                  FUNCTIONAL[name](tnnq.functional, quantized_input(torch)))


def test_functional_max_pool_refuses_indices():
    for F in (nnq.functional, tnnq.functional):
        with pytest.raises(NotImplementedError, match="return_indices is not yet implemented!"):
            F.max_pool2d(None, 2, return_indices=True)


def test_functional_refuses_float_input():
    for F in (nnq.functional, tnnq.functional):
        with pytest.raises(ValueError, match="Input to 'quantized.hardswish' must be quantized!"):
            F.hardswish(torch.ones(2) if F is tnnq.functional else tessera.ones(2), 0.1, 0)


def _qfunctional(lib, m):
    f = m.QFunctional()
    f.scale, f.zero_point = 0.07, 20
    a = quantized_input(lib)
    b = lib.quantize_per_tensor(lib.linspace(3, -2, 130).reshape(2, 65), 0.03, 50, lib.quint8)
    return [f.add(a, b), f.add_relu(a, b), f.mul(a, b), f.cat([a, b], 1), f.add_scalar(a, 1.25), f.mul_scalar(a, -2.0)]


def test_qfunctional():
    for got, want in zip(_qfunctional(tessera, nnq), _qfunctional(torch, tnnq)):
        assert_same_q(got, want)
    f, g = nnq.QFunctional(), tnnq.QFunctional()
    assert repr(f) == repr(g)
    with pytest.raises(RuntimeError, match="Functional is not intended to use the 'forward'"):
        f(tessera.ones(1))


def test_qfunctional_state_dict_round_trips_with_torch():
    f = nnq.QFunctional()
    f.scale, f.zero_point = 0.25, 7
    buf = io.BytesIO()
    tessera.save(f.state_dict(), buf)
    g = tnnq.QFunctional()
    g.load_state_dict(torch.load(io.BytesIO(buf.getvalue())))
    assert (g.scale, g.zero_point) == (0.25, 7)
    buf = io.BytesIO()
    torch.save(g.state_dict(), buf)
    h = nnq.QFunctional()
    h.load_state_dict(tessera.load(io.BytesIO(buf.getvalue())))
    assert (h.scale, h.zero_point) == (0.25, 7)


def test_qfunctional_from_float_reads_the_observer():
    ff = nnq.FloatFunctional()
    ff.activation_post_process = MinMaxObserver()
    ff.add(tessera.linspace(-1, 3, 10), tessera.ones(10))
    q = nnq.QFunctional.from_float(ff)
    scale, zero_point = ff.activation_post_process.calculate_qparams()
    assert (q.scale, q.zero_point) == (float(scale), int(zero_point))


def test_quantize_and_dequantize():
    got, want = nnq.Quantize(0.1, 3, tessera.qint8), tnnq.Quantize(0.1, 3, torch.qint8)
    assert repr(got).replace("tessera", "torch") == repr(want)
    assert_same_q(got(tessera.linspace(-20, 20, 77)), want(torch.linspace(-20, 20, 77)))
    assert list(got.state_dict()) == list(want.state_dict()) == ["scale", "zero_point"]
    x = got(tessera.linspace(-2, 2, 9))
    np.testing.assert_array_equal(np.asarray(nnq.DeQuantize()(x).tolist()),
                                  tnnq.DeQuantize()(want(torch.linspace(-2, 2, 9))).numpy())
