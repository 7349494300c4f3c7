"""torch.ao.quantization's eager workflow on tessera against torch 1.13 (oneDNN engine): the
per-engine default qconfigs and QConfigMapping, fuse_modules / fuse_modules_qat, prepare
(where observers go and what they see), convert and quantize (a fused CNN's int8 output
against torch's converted model), prepare_qat / quantize_qat, quantize_dynamic's forms,
quantized models' state dicts moved between the two libraries, and
backends.quantized.engine.

Each model gets its own random weights and calibration data, so torch's oneDNN primitive
cache (keyed without zero points) never meets two calls with the same scales."""
import io
import warnings

import numpy as np
import pytest
import torch
import torch.ao.quantization as tq

import tessera
import tessera.ao.quantization as q
from tessera import nn

torch.set_num_threads(1)
torch.backends.quantized.engine = "onednn"


def _name(obj):
    return getattr(obj, "__name__", None) or type(obj).__name__


def _observer_facts(observer):
    """What an observer or fake quantizer is configured to do, in library-neutral terms."""
    facts = {"class": type(observer).__name__}
    for attr in ("dtype", "qscheme", "quant_min", "quant_max", "reduce_range", "averaging_constant", "ch_axis",
                 "bins", "eps"):
        if hasattr(observer, attr):
            value = getattr(observer, attr)
            if hasattr(value, "tolist"):
                value = value.tolist()
            facts[attr] = str(value).split(".")[-1] if attr in ("dtype", "qscheme") else value
    inner = getattr(observer, "activation_post_process", None)
    if inner is not None:
        facts["observer"] = _observer_facts(inner)
    return facts


def _qconfig_facts(qconfig):
    if qconfig is None:
        return None
    return _observer_facts(qconfig.activation()), _observer_facts(qconfig.weight())


@pytest.mark.parametrize("backend", ["fbgemm", "x86", "qnnpack", "onednn", "something_else"])
def test_default_qconfigs_match_torch(backend):
    assert _qconfig_facts(q.get_default_qconfig(backend)) == _qconfig_facts(tq.get_default_qconfig(backend))
    for version in (0, 1):
        assert (_qconfig_facts(q.get_default_qat_qconfig(backend, version))
                == _qconfig_facts(tq.get_default_qat_qconfig(backend, version)))


def test_default_qconfig_versions_refused_as_torch():
    with pytest.raises(AssertionError, match="Version number must be 0"):
        q.get_default_qconfig("onednn", 1)
    with pytest.raises(AssertionError, match="Version number must be 0 or 1"):
        q.get_default_qat_qconfig("onednn", 2)


@pytest.mark.parametrize("name", ["default_qconfig", "default_debug_qconfig", "default_per_channel_qconfig",
                                  "default_dynamic_qconfig", "per_channel_dynamic_qconfig", "default_qat_qconfig",
                                  "default_dynamic_qat_qconfig", "default_qat_qconfig_v2",
                                  "default_reuse_input_qconfig", "default_symmetric_qnnpack_qconfig",
                                  "default_per_channel_symmetric_qnnpack_qconfig",
                                  "default_symmetric_qnnpack_qat_qconfig",
                                  "default_per_channel_symmetric_qnnpack_qat_qconfig",
                                  "float_qparams_weight_only_qconfig", "float16_dynamic_qconfig"])
def test_named_qconfigs_match_torch(name):
    assert _qconfig_facts(getattr(q, name)) == _qconfig_facts(getattr(tq, name))


def test_qconfig_helpers():
    assert q.qconfig_equals(q.get_default_qconfig("onednn"), q.get_default_qconfig("onednn"))
    assert not q.qconfig_equals(q.get_default_qconfig("onednn"), q.get_default_qconfig("fbgemm"))
    assert q.qconfig_equals(None, None) and not q.qconfig_equals(q.default_qconfig, None)
    memoryless = q.QConfig(activation=q.MovingAverageMinMaxObserver.with_args(averaging_constant=1),
                           weight=q.default_weight_observer)
    assert q.activation_is_memoryless(memoryless) and not q.activation_is_memoryless(q.default_qconfig)
    assert q.is_reuse_input_qconfig(q.default_reuse_input_qconfig) and not q.is_reuse_input_qconfig(q.default_qconfig)
    with pytest.raises(ValueError, match="QConfig received observer instance"):
        q.QConfig(activation=q.MinMaxObserver(), weight=q.default_weight_observer)


def _mapping_facts(mapping):
    d = mapping.to_dict()
    return (_qconfig_facts(d[""]), [(_name(k), _qconfig_facts(v)) for k, v in d["object_type"]])


@pytest.mark.parametrize("backend", ["fbgemm", "qnnpack", "onednn"])
def test_default_qconfig_mappings_match_torch(backend):
    assert _mapping_facts(q.get_default_qconfig_mapping(backend)) == \
        _mapping_facts(tq.get_default_qconfig_mapping(backend))
    assert _mapping_facts(q.get_default_qat_qconfig_mapping(backend)) == \
        _mapping_facts(tq.get_default_qat_qconfig_mapping(backend))


def test_qconfig_mapping_round_trips_through_its_dict():
    m = (q.QConfigMapping().set_global(q.default_qconfig).set_object_type(nn.Linear, q.default_per_channel_qconfig)
         .set_module_name_regex("foo.*", None).set_module_name("a.b", q.default_qat_qconfig)
         .set_module_name_object_type_order("a", nn.functional.linear, 0, q.default_qconfig))
    d = m.to_dict()
    assert d["module_name_object_type_order"] == [("a", nn.functional.linear, 0, q.default_qconfig)]
    assert q.QConfigMapping.from_dict(d).to_dict() == d


# ---------------------------------------------------------------- fusion

def _pair(build):
    """The same float model in torch and tessera (torch's random weights copied across)."""
    theirs = build(torch.nn)
    ours = build(nn)
    ours.load_state_dict({k: tessera.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


class _Names:
    """Builds the same small models from either library's nn."""

    @staticmethod
    def conv_stack(lib_nn):
        return lib_nn.Sequential(lib_nn.Conv2d(3, 8, 3, padding=1), lib_nn.BatchNorm2d(8), lib_nn.ReLU(),
                                 lib_nn.Conv2d(8, 8, 3), lib_nn.BatchNorm2d(8), lib_nn.Conv2d(8, 4, 1), lib_nn.ReLU(),
                                 lib_nn.BatchNorm2d(4), lib_nn.ReLU(), lib_nn.Flatten(), lib_nn.Linear(4 * 36, 16),
                                 lib_nn.BatchNorm1d(16), lib_nn.Linear(16, 10), lib_nn.ReLU())


FUSE_LISTS = [["0", "1", "2"], ["3", "4"], ["5", "6"], ["7", "8"], ["10", "11"], ["12", "13"]]


def _randomize_bn(theirs, ours, seed):
    """Batch norms with non-trivial statistics, the same in both."""
    rng = np.random.default_rng(seed)
    for (name, t), (_, o) in zip(theirs.named_modules(), ours.named_modules()):
        if isinstance(t, torch.nn.modules.batchnorm._BatchNorm):
            for attr in ("running_mean", "running_var", "weight", "bias"):
                value = rng.uniform(0.5, 1.5, t.num_features) if attr != "running_mean" else \
                    rng.normal(0, 0.3, t.num_features)
                getattr(t, attr).data = torch.tensor(value, dtype=torch.float32)
                getattr(o, attr).data = tessera.tensor(value, dtype=tessera.float32)


def test_fuse_modules_for_inference_matches_torch():
    torch.manual_seed(0)
    theirs, ours = _pair(_Names.conv_stack)
    _randomize_bn(theirs, ours, 1)
    theirs.eval(), ours.eval()
    fused_t = tq.fuse_modules(theirs, FUSE_LISTS)
    fused_o = q.fuse_modules(ours, FUSE_LISTS)
    assert [type(m).__name__ for m in fused_o] == [type(m).__name__ for m in fused_t]
    assert type(ours[1]).__name__ == "BatchNorm2d"  # not in place: the original is untouched
    x = np.random.default_rng(2).normal(size=(2, 3, 8, 8)).astype(np.float32)
    want = fused_t(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(fused_o(tessera.tensor(x)).detach().numpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours(tessera.tensor(x)).detach().numpy(), want, rtol=1e-4, atol=1e-5)


def test_fuse_modules_qat_keeps_batch_norms_in_fused_containers():
    torch.manual_seed(3)
    theirs, ours = _pair(_Names.conv_stack)
    fused_t = tq.fuse_modules_qat(theirs, FUSE_LISTS)
    fused_o = q.fuse_modules_qat(ours, FUSE_LISTS)
    assert [type(m).__name__ for m in fused_o] == [type(m).__name__ for m in fused_t]
    assert [type(m).__name__ for m in fused_o[0]] == ["Conv2d", "BatchNorm2d", "ReLU"]


def test_fuse_modules_inplace_nested_names_and_hooks():
    model = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
    calls = []
    model[0][0].register_forward_pre_hook(lambda m, i: calls.append("pre"))
    model[0][1].register_forward_hook(lambda m, i, o: calls.append("post"))
    result = q.fuse_modules(model.eval(), ["0.0", "0.1"], inplace=True)
    assert result is model and type(model[0][0]).__name__ == "LinearReLU" and type(model[0][1]) is nn.Identity
    model(tessera.randn(2, 4))
    assert calls == ["pre", "post"]


def test_fuse_modules_errors_as_torch():
    """torch's errors; and the custom fuser mapping honoured as current torch does (1.13's
    fuse_modules drops it)."""
    conv, bn = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        q.fuse_modules(nn.Sequential(conv, bn), ["0", "1"])  # in training mode
    with pytest.raises(AssertionError, match="did not find fuser method for"):
        q.fuse_modules(nn.Sequential(nn.ReLU(), nn.Linear(2, 2)).eval(), ["0", "1"])
    with pytest.raises(AssertionError, match="same mode"):
        q.fuse_modules(nn.Sequential(nn.Conv2d(2, 2, 1).eval(), nn.BatchNorm2d(2)), ["0", "1"])
    with pytest.raises(AssertionError, match="Only support fusing BatchNorm2d with affine"):
        q.fuse_modules_qat(nn.Sequential(nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2, affine=False)), ["0", "1"])
    custom = {"additional_fuser_method_mapping": {(nn.ReLU, nn.Linear): lambda is_qat, a, b: nn.Sequential(a, b)}}
    fused = q.fuse_modules(nn.Sequential(nn.ReLU(), nn.Linear(2, 2)).eval(), ["0", "1"],
                           fuse_custom_config_dict=custom)
    assert type(fused[0]) is nn.Sequential and type(fused[1]) is nn.Identity


# ---------------------------------------------------------------- prepare, convert, quantize

def _cnn(lib_nn, quant_stub, dequant_stub):
    class CNN(lib_nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = quant_stub()
            self.body = lib_nn.Sequential(lib_nn.Conv2d(1, 8, 3, padding=1), lib_nn.BatchNorm2d(8), lib_nn.ReLU(),
                                          lib_nn.MaxPool2d(2), lib_nn.Conv2d(8, 16, 3, padding=1),
                                          lib_nn.BatchNorm2d(16), lib_nn.ReLU(), lib_nn.MaxPool2d(2),
                                          lib_nn.Flatten(), lib_nn.Dropout(0.2), lib_nn.Linear(16 * 4, 32),
                                          lib_nn.ReLU(), lib_nn.Linear(32, 10))
            self.dequant = dequant_stub()

        def forward(self, x):
            return self.dequant(self.body(self.quant(x)))

    return CNN()


CNN_FUSE = [["body.0", "body.1", "body.2"], ["body.4", "body.5", "body.6"], ["body.10", "body.11"]]


def _cnn_pair(seed):
    torch.manual_seed(seed)
    theirs = _cnn(torch.nn, tq.QuantStub, tq.DeQuantStub)
    ours = _cnn(nn, q.QuantStub, q.DeQuantStub)
    ours.load_state_dict({k: tessera.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    _randomize_bn(theirs, ours, seed)
    return theirs, ours


def _images(seed, n=16):
    return np.random.default_rng(seed).uniform(-1, 2, size=(n, 1, 8, 8)).astype(np.float32)


def test_prepare_puts_observers_where_torch_does():
    theirs, ours = _cnn_pair(10)
    theirs.eval(), ours.eval()
    theirs.qconfig, ours.qconfig = tq.default_qconfig, q.default_qconfig
    prepared_t = tq.prepare(tq.fuse_modules(theirs, CNN_FUSE))
    prepared_o = q.prepare(q.fuse_modules(ours, CNN_FUSE))
    observed_t = {n: type(m.activation_post_process).__name__ for n, m in prepared_t.named_modules()
                  if hasattr(m, "activation_post_process")}
    observed_o = {n: type(m.activation_post_process).__name__ for n, m in prepared_o.named_modules()
                  if hasattr(m, "activation_post_process")}
    assert observed_o == observed_t
    x = _images(11)
    prepared_t(torch.tensor(x)), prepared_o(tessera.tensor(x))
    for name in observed_t:
        obs_t = prepared_t.get_submodule(name).activation_post_process
        obs_o = prepared_o.get_submodule(name).activation_post_process
        np.testing.assert_allclose([float(obs_o.min_val), float(obs_o.max_val)],
                                   [float(obs_t.min_val), float(obs_t.max_val)], rtol=1e-5, atol=1e-6)
    observers_o, observers_t = {}, {}
    q.get_observer_dict(prepared_o, observers_o)
    tq.get_observer_dict(prepared_t, observers_t)
    assert sorted(observers_o) == sorted(observers_t)


def test_parametrized_modules_are_observed_and_converted_as_torch():
    """A parametrized Linear counts as a Linear leaf (torch's type_before_parametrizations)."""
    from torch.nn.utils import parametrize as tparam
    from tessera.nn.utils import parametrize as oparam

    class Double(torch.nn.Module):
        def forward(self, w):
            return 2 * w

    class DoubleO(nn.Module):
        def forward(self, w):
            return 2 * w

    def build(lib_nn, stubs):
        return lib_nn.Sequential(stubs.QuantStub(), lib_nn.Linear(4, 3), lib_nn.ReLU(), stubs.DeQuantStub()).eval()

    theirs, ours = build(torch.nn, tq), build(nn, q)
    ours.load_state_dict({k: tessera.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    tparam.register_parametrization(theirs[1], "weight", Double())
    oparam.register_parametrization(ours[1], "weight", DoubleO())
    theirs.qconfig, ours.qconfig = tq.default_qconfig, q.default_qconfig
    prepared_t, prepared_o = tq.prepare(theirs), q.prepare(ours)
    observed = [sorted(n for n, m in p.named_modules() if hasattr(m, "activation_post_process"))
                for p in (prepared_t, prepared_o)]
    assert observed[0] == observed[1] and "1" in observed[1]
    x = np.random.default_rng(50).normal(size=(6, 4)).astype(np.float32)
    prepared_t(torch.tensor(x)), prepared_o(tessera.tensor(x))
    converted = q.convert(prepared_o)
    assert type(converted[1]).__name__ == "Linear" and type(converted[1]).__module__.startswith("tessera.ao.nn.quant")
    _int_outputs_agree(converted(tessera.tensor(x)).numpy(), tq.convert(prepared_t)(torch.tensor(x)).numpy(),
                       converted[1].scale)


def test_modules_torch_makes_quantizable_are_refused():
    model = nn.Sequential(nn.LSTM(4, 4)).eval()
    model.qconfig = q.default_qconfig
    with pytest.raises(NotImplementedError, match="static quantization of LSTM"):
        q.prepare(model)
    attention = nn.Sequential(nn.MultiheadAttention(4, 2)).eval()
    attention.qconfig = q.default_qconfig
    with pytest.raises(NotImplementedError, match="static quantization of MultiheadAttention"):
        q.prepare(attention)


def test_prepare_without_qconfig_warns():
    with pytest.warns(UserWarning, match="None of the submodule got qconfig applied"):
        q.prepare(nn.Sequential(nn.Linear(2, 2)))


def _in_tessera(torch_state_dict):
    """A torch state dict (quantized tensors and packed params included) read by tessera,
    through torch's file format."""
    buf = io.BytesIO()
    torch.save(torch_state_dict, buf)
    buf.seek(0)
    return tessera.load(buf)


def _int_outputs_agree(got, want, scale):
    """Integers equal but for ties rounded apart after float accumulation: within one step."""
    diff = np.abs(got - want)
    assert diff.max() <= scale * 1.0001, diff.max()
    assert (diff > scale * 0.5).mean() < 0.05


@pytest.mark.parametrize("engine_qconfig", ["default", "onednn", "per_channel"])
def test_static_quantization_of_a_fused_cnn_matches_torch(engine_qconfig):
    seed = {"default": 20, "onednn": 21, "per_channel": 22}[engine_qconfig]
    theirs, ours = _cnn_pair(seed)
    theirs.eval(), ours.eval()
    if engine_qconfig == "default":
        theirs.qconfig, ours.qconfig = tq.default_qconfig, q.default_qconfig
    elif engine_qconfig == "onednn":
        theirs.qconfig, ours.qconfig = tq.get_default_qconfig("onednn"), q.get_default_qconfig("onednn")
    else:
        theirs.qconfig, ours.qconfig = tq.default_per_channel_qconfig, q.default_per_channel_qconfig
    calibration = [_images(seed * 10 + i) for i in range(3)]
    prepared_t = tq.prepare(tq.fuse_modules(theirs, CNN_FUSE))
    prepared_o = q.prepare(q.fuse_modules(ours, CNN_FUSE))
    for batch in calibration:
        prepared_t(torch.tensor(batch)), prepared_o(tessera.tensor(batch))
    for name, module in prepared_t.named_modules():
        if hasattr(module, "activation_post_process"):
            want = module.activation_post_process.calculate_qparams()
            got = prepared_o.get_submodule(name).activation_post_process.calculate_qparams()
            # the float layers' sums differ from torch's in the last bit, which can move a
            # histogram's chosen range by one bin: qparams agree to 1%, not bit for bit
            assert float(got[0]) == pytest.approx(float(want[0]), rel=1e-2) and int(got[1]) == int(want[1])
    # from the same observed statistics (torch's, loaded into tessera's observers), the
    # quantized models agree to the integer
    prepared_o.load_state_dict({k: tessera.tensor(v.numpy()) for k, v in prepared_t.state_dict().items()})
    quant_t, quant_o = tq.convert(prepared_t), q.convert(prepared_o)
    assert [type(m).__name__ for m in quant_o.body] == [type(m).__name__ for m in quant_t.body]
    assert (float(quant_o.quant.scale), int(quant_o.quant.zero_point)) == \
        (float(quant_t.quant.scale), int(quant_t.quant.zero_point))
    x = _images(seed * 10 + 9)
    want = quant_t(torch.tensor(x)).numpy()
    got = quant_o(tessera.tensor(x)).numpy()
    _int_outputs_agree(got, want, quant_t.body[12].scale)
    assert not any(hasattr(m, "qconfig") or hasattr(m, "activation_post_process") for m in quant_o.modules())


def test_quantized_model_state_dict_moves_between_libraries():
    theirs, ours = _cnn_pair(30)
    theirs.eval(), ours.eval()
    theirs.qconfig, ours.qconfig = tq.default_qconfig, q.default_qconfig
    data = _images(31)
    quant_t = tq.quantize(tq.fuse_modules(theirs, CNN_FUSE), lambda m: m(torch.tensor(data)), [])
    quant_o = q.quantize(q.fuse_modules(ours, CNN_FUSE), lambda m: m(tessera.tensor(data)), [])
    assert list(quant_o.state_dict()) == list(quant_t.state_dict())
    # tessera's state dict into a torch model built differently (other seed), and back
    other_t, other_o = _cnn_pair(32)
    other_t.eval(), other_o.eval()
    other_t.qconfig, other_o.qconfig = tq.default_qconfig, q.default_qconfig
    data2 = _images(33)
    target_t = tq.quantize(tq.fuse_modules(other_t, CNN_FUSE), lambda m: m(torch.tensor(data2)), [])
    target_o = q.quantize(q.fuse_modules(other_o, CNN_FUSE), lambda m: m(tessera.tensor(data2)), [])
    buf = io.BytesIO()
    tessera.save(quant_o.state_dict(), buf)
    buf.seek(0)
    target_t.load_state_dict(torch.load(buf))
    buf = io.BytesIO()
    torch.save(quant_t.state_dict(), buf)
    buf.seek(0)
    target_o.load_state_dict(tessera.load(buf))
    x = _images(34)
    scale = quant_t.body[12].scale
    # a scale read back from a float32 buffer may differ from the float it came from by an ulp
    np.testing.assert_allclose(target_o(tessera.tensor(x)).numpy(), quant_o(tessera.tensor(x)).numpy(), rtol=1e-6,
                               atol=1e-6)
    _int_outputs_agree(target_o(tessera.tensor(x)).numpy(), quant_t(torch.tensor(x)).numpy(), scale)
    _int_outputs_agree(target_t(torch.tensor(x)).numpy(), quant_o(tessera.tensor(x)).numpy(), scale)


def test_convert_refuses_what_has_no_quantized_kernel():
    model = nn.Sequential(q.QuantStub(), nn.Conv2d(1, 2, 1), nn.PReLU(), q.DeQuantStub()).eval()
    model.qconfig = q.default_qconfig
    prepared = q.prepare(model)
    prepared(tessera.randn(2, 1, 4, 4))
    with pytest.raises(NotImplementedError, match="PReLU"):
        q.convert(prepared)
    with pytest.raises(NotImplementedError, match="is_reference"):
        q.convert(prepared, is_reference=True)
    # kept in float, it stays float; so it does when the caller's own mapping leaves it out
    assert type(q.convert(prepared, mapping=q.get_default_static_quant_module_mappings())[2]) is nn.PReLU
    model[2].qconfig = None
    converted = q.convert(q.prepare(model))
    assert type(converted[2]) is nn.PReLU


def test_quant_wrapper_and_add_quant_dequant():
    linear = nn.Linear(4, 3)
    linear.qconfig = q.default_qconfig
    wrapped = q.add_quant_dequant(linear)
    assert isinstance(wrapped, q.QuantWrapper)
    prepared = q.prepare(wrapped.eval())
    prepared(tessera.randn(5, 4))
    converted = q.convert(prepared)
    assert type(converted.module).__name__ == "Linear" and converted.module.__module__.endswith("quantized.linear")
    out = converted(tessera.randn(5, 4))
    assert not out.is_quantized and tuple(out.shape) == (5, 3)


def test_quantize_dynamic_forms():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    converted = q.quantize_dynamic(model, {nn.Linear}, dtype=tessera.qint8)
    assert [type(m).__module__.rsplit(".", 2)[-2] for m in (converted[0], converted[2])] == ["dynamic", "dynamic"]
    with pytest.raises(NotImplementedError, match="float16"):
        q.quantize_dynamic(model, dtype=tessera.float16)
    with pytest.raises(NotImplementedError, match="LSTM"):
        q.quantize_dynamic(nn.Sequential(nn.LSTM(2, 2)))
    with pytest.raises(ValueError, match="Don't know how to quantize"):
        q.quantize_dynamic(model, dtype=tessera.int32)
    fused = q.fuse_modules(model.eval(), ["0", "1"])
    with pytest.raises(NotImplementedError, match="LinearReLU"):
        q.quantize_dynamic(fused, {tessera.ao.nn.intrinsic.LinearReLU, nn.Linear})


# ---------------------------------------------------------------- quantization-aware training

def _train_steps(model, lib, steps, seed):
    opt = lib.optim.SGD(model.parameters(), lr=0.05)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        x = lib.tensor(rng.uniform(-1, 2, size=(8, 1, 8, 8)).astype(np.float32))
        target = lib.tensor(rng.integers(0, 10, size=8))
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), target).backward()
        opt.step()


def test_prepare_qat_train_and_convert_match_torch():
    theirs, ours = _cnn_pair(40)
    theirs.body[9].p = ours.body[9].p = 0.0  # the two libraries' dropout masks differ
    theirs.qconfig = tq.get_default_qat_qconfig("onednn")
    ours.qconfig = q.get_default_qat_qconfig("onednn")
    prepared_t = tq.prepare_qat(tq.fuse_modules_qat(theirs, CNN_FUSE))
    prepared_o = q.prepare_qat(q.fuse_modules_qat(ours, CNN_FUSE))
    assert [type(m).__name__ for m in prepared_o.body] == [type(m).__name__ for m in prepared_t.body]
    assert sorted(prepared_o.state_dict()) == sorted(prepared_t.state_dict())
    _train_steps(prepared_t, torch, 3, 41)
    _train_steps(prepared_o, tessera, 3, 41)
    for (name, p_t), (_, p_o) in zip(prepared_t.named_parameters(), prepared_o.named_parameters()):
        np.testing.assert_allclose(p_o.detach().numpy(), p_t.detach().numpy(), rtol=1e-3, atol=1e-4, err_msg=name)
    prepared_t.eval(), prepared_o.eval()
    quant_t, quant_o = tq.convert(prepared_t), q.convert(prepared_o)
    assert [type(m).__name__ for m in quant_o.body] == [type(m).__name__ for m in quant_t.body]
    x = _images(42)
    want = quant_t(torch.tensor(x)).numpy()
    got = quant_o(tessera.tensor(x)).numpy()
    # three steps of float training may move an observed range by an ulp: compare in output steps
    assert np.abs(got - want).max() <= 2 * quant_t.body[12].scale


def test_prepare_qat_needs_training_mode():
    model = nn.Sequential(nn.Linear(2, 2)).eval()
    model.qconfig = q.default_qat_qconfig
    with pytest.raises(AssertionError, match="prepare_qat only works on models in training mode"):
        q.prepare_qat(model)


def test_quantize_qat_in_one_call():
    model = nn.Sequential(q.QuantStub(), nn.Linear(6, 4), nn.ReLU(), q.DeQuantStub())
    model.qconfig = q.get_default_qat_qconfig("onednn")
    data = tessera.randn(16, 6)
    seen = []

    def train(m, x):
        seen.append(type(m[1]).__module__)
        m(x).sum().backward()

    converted = q.quantize_qat(model, train, [data])
    assert len(seen) == 1 and seen[0].startswith("tessera.ao.nn.qat")
    assert type(converted[1]).__name__ == "Linear" and not converted(data).is_quantized
    assert type(model[1]) is nn.Linear  # not in place


# ---------------------------------------------------------------- the engine setting

def test_quantized_engine_setting():
    engines = tessera.backends.quantized.supported_engines
    assert engines == ["none", "onednn"] and set(engines) <= set(torch.backends.quantized.supported_engines)
    assert tessera.backends.quantized.engine == "onednn"
    tessera.backends.quantized.engine = None
    assert tessera.backends.quantized.engine == "none"
    tessera.backends.quantized.engine = "onednn"
    with pytest.raises(RuntimeError, match="foo is not a valid value for quantized engine"):
        tessera.backends.quantized.engine = "foo"
    with pytest.raises(RuntimeError, match="quantized engine QNNPACK is not supported"):
        tessera.backends.quantized.engine = "qnnpack"
    with pytest.raises(RuntimeError, match="Assignment not supported"):
        tessera.backends.quantized.supported_engines = ["x"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import tessera.backends.quantized as module
    assert module.engine == "onednn"


def test_smaller_names_as_torch():
    assert _observer_facts(q.default_histogram_fake_quant()) == _observer_facts(tq.default_histogram_fake_quant())
    assert [(t.name, int(t), q.quant_type_to_str(t)) for t in q.QuantType] == \
        [(t.name, int(t), tq.quant_type_to_str(t)) for t in tq.QuantType]
    seen = []
    q.default_eval_fn(lambda x: seen.append(x), [(1, "a"), (2, "b")])
    assert seen == [1, 2]
    torch.manual_seed(5)
    theirs, ours = _pair(lambda lib_nn: lib_nn.Sequential(lib_nn.ConvTranspose2d(3, 4, 3, stride=2),
                                                          lib_nn.BatchNorm2d(4)))
    _randomize_bn(theirs, ours, 6)
    theirs.eval(), ours.eval()
    fused_t = tq.fuse_convtranspose_bn(False, theirs[0], theirs[1])
    fused_o = q.fuse_convtranspose_bn(False, ours[0], ours[1])
    x = np.random.default_rng(7).normal(size=(2, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(fused_o(tessera.tensor(x)).detach().numpy(), fused_t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(Exception, match="Fusing ConvTranspose\\+BatchNorm not yet supported in QAT"):
        q.fuse_convtranspose_bn(True, ours[0], ours[1])


# ---------------------------------------------------------------- quantized batch norm

def _bn_model(lib_nn, stubs, dims, fuse_relu):
    bn = {2: lib_nn.BatchNorm2d, 3: lib_nn.BatchNorm3d}[dims]
    return lib_nn.Sequential(stubs.QuantStub(), bn(6), lib_nn.ReLU(), stubs.DeQuantStub())


@pytest.mark.parametrize("dims,fuse_relu", [(2, False), (2, True), (3, False), (3, True)])
def test_standalone_batch_norm_quantizes_as_torch(dims, fuse_relu):
    """A batch norm (fused with its ReLU or not) becomes nnq.BatchNorm2d/3d or nniq.BNReLU2d/3d,
    with torch's state dict, and computes torch's integers."""
    torch.manual_seed(60 + dims)
    theirs, ours = _pair(lambda lib_nn: _bn_model(lib_nn, tq if lib_nn is torch.nn else q, dims, fuse_relu))
    _randomize_bn(theirs, ours, 61 + dims)
    theirs.eval(), ours.eval()
    if fuse_relu:
        theirs, ours = tq.fuse_modules(theirs, ["1", "2"]), q.fuse_modules(ours, ["1", "2"])
    theirs.qconfig, ours.qconfig = tq.default_qconfig, q.default_qconfig
    shape = (3, 6, 5, 7) if dims == 2 else (2, 6, 3, 4, 5)
    data = np.random.default_rng(62 + dims * 2 + fuse_relu).normal(size=shape).astype(np.float32)
    quant_t = tq.quantize(theirs, lambda m: m(torch.tensor(data)), [])
    quant_o = q.quantize(ours, lambda m: m(tessera.tensor(data)), [])
    assert repr(quant_o) == repr(quant_t).replace("torch.", "tessera.")
    assert list(quant_o.state_dict()) == list(quant_t.state_dict())
    x = np.random.default_rng(63 + dims).normal(size=shape).astype(np.float32)
    # from the same observed statistics the integers agree exactly
    quant_o.load_state_dict(_in_tessera(quant_t.state_dict()))
    np.testing.assert_array_equal(quant_o(tessera.tensor(x)).numpy(), quant_t(torch.tensor(x)).numpy())


def test_quantized_batch_norm_errors_as_torch():
    """Each bad call raises torch's error type with torch's message (the first line)."""
    def args(lib, shape=(2, 3, 4, 4), channels=(3, 3, 3, 3)):
        x = lib.quantize_per_tensor(lib.ones(shape), 0.1, 3, lib.quint8)
        w, b, m, v = (lib.ones(channels[0]), lib.zeros(channels[1]), lib.zeros(channels[2]), lib.ones(channels[3]))
        return x, w, b, m, v

    cases = {
        "no weight": lambda lib: lib.ops.quantized.batch_norm2d(args(lib)[0], None, *args(lib)[2:], 1e-5, 0.1, 0),
        "no bias": lambda lib: lib.ops.quantized.batch_norm2d(*args(lib)[:2], None, *args(lib)[3:], 1e-5, 0.1, 0),
        "rank 3d": lambda lib: lib.ops.quantized.batch_norm3d(*args(lib), 1e-5, 0.1, 0),
        "rank 1d": lambda lib: lib.ops.quantized.batch_norm1d(*args(lib), 1e-5, 0.1, 0),
        "rank generic": lambda lib: lib.ops.quantized.batch_norm(*args(lib, (3,)), 1e-5, 0.1, 0),
        "weight size": lambda lib: lib.ops.quantized.batch_norm2d(*args(lib, channels=(4, 3, 3, 3)), 1e-5, 0.1, 0),
        "mean size": lambda lib: lib.ops.quantized.batch_norm2d(*args(lib, channels=(3, 3, 2, 3)), 1e-5, 0.1, 0),
        "var size": lambda lib: lib.ops.quantized.batch_norm2d(*args(lib, channels=(3, 3, 3, 5)), 1e-5, 0.1, 0),
        "double weight": lambda lib: lib.ops.quantized.batch_norm2d(args(lib)[0], args(lib)[1].double(),
                                                                    *args(lib)[2:], 1e-5, 0.1, 0),
        "float input": lambda lib: lib.ops.quantized.batch_norm2d(args(lib)[0].dequantize(), *args(lib)[1:], 1e-5,
                                                                  0.1, 0),
    }
    for name, call in cases.items():
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(tessera)
        if name == "float input":  # tessera words its no-kernel error its own way
            assert "quantized::batch_norm2d" in str(got.value)
            continue
        assert str(got.value).splitlines()[0].replace("tessera", "torch").startswith(
            str(want.value).splitlines()[0].split(" (Could this")[0][:60]), name
    # an empty input comes back as it is (torch's early return), whatever the op's rank
    for lib in (torch, tessera):
        empty = lib.quantize_per_tensor(lib.ones(0, 3, 2, 2), 0.1, 3, lib.quint8)
        out = lib.ops.quantized.batch_norm3d(empty, *args(lib)[1:], 1e-5, 0.5, 9)
        assert tuple(out.shape) == (0, 3, 2, 2) and (out.q_scale(), out.q_zero_point()) == (0.1, 3)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_quantizes_as_torch(affine):
    """nn.LayerNorm becomes nnq.LayerNorm (torch's repr and state dict) and computes torch's
    integers from the same observed statistics."""
    torch.manual_seed(70 + affine)
    theirs, ours = _pair(lambda lib_nn: lib_nn.Sequential(
        (tq if lib_nn is torch.nn else q).QuantStub(), lib_nn.Linear(12, 40),
        lib_nn.LayerNorm([40], elementwise_affine=affine), (tq if lib_nn is torch.nn else q).DeQuantStub()))
    if affine:
        with torch.no_grad():
            theirs[2].weight.uniform_(0.5, 1.5), theirs[2].bias.uniform_(-0.5, 0.5)
        ours[2].weight.data, ours[2].bias.data = (tessera.tensor(theirs[2].weight.detach().numpy()),
                                                  tessera.tensor(theirs[2].bias.detach().numpy()))
    theirs.eval(), ours.eval()
    theirs.qconfig, ours.qconfig = tq.default_qconfig, q.default_qconfig
    data = np.random.default_rng(72 + affine).normal(size=(16, 12)).astype(np.float32)
    quant_t = tq.quantize(theirs, lambda m: m(torch.tensor(data)), [])
    quant_o = q.quantize(ours, lambda m: m(tessera.tensor(data)), [])
    assert repr(quant_o[2]) == repr(quant_t[2])
    assert list(quant_o.state_dict()) == list(quant_t.state_dict())
    quant_o.load_state_dict(_in_tessera(quant_t.state_dict()))
    x = np.random.default_rng(74).normal(size=(9, 12)).astype(np.float32)
    np.testing.assert_array_equal(quant_o(tessera.tensor(x)).numpy(), quant_t(torch.tensor(x)).numpy())


@pytest.mark.parametrize("kind", ["group", "instance1d", "instance2d", "instance3d"])
def test_group_and_instance_norms_quantize_as_torch(kind):
    """nn.GroupNorm / InstanceNorm*d become their quantized modules (torch's repr and state
    dict) and compute torch's integers from the same observed statistics, on the contiguous
    and the channels-last kernel."""
    dims = {"group": 2, "instance1d": 1, "instance2d": 2, "instance3d": 3}[kind]

    def build(lib_nn):
        stubs = tq if lib_nn is torch.nn else q
        norm = (lib_nn.GroupNorm(3, 6) if kind == "group"
                else getattr(lib_nn, f"InstanceNorm{dims}d")(6, affine=kind != "instance3d"))
        return lib_nn.Sequential(stubs.QuantStub(), norm, stubs.DeQuantStub())

    torch.manual_seed(80 + dims)
    theirs, ours = _pair(build)
    theirs.eval(), ours.eval()
    theirs.qconfig, ours.qconfig = tq.default_qconfig, q.default_qconfig
    shape = (2, 6) + (5, 4, 3)[:dims]
    data = np.random.default_rng(81 + dims).normal(size=shape).astype(np.float32) * 2
    quant_t = tq.quantize(theirs, lambda m: m(torch.tensor(data)), [])
    quant_o = q.quantize(ours, lambda m: m(tessera.tensor(data)), [])
    assert repr(quant_o[1]) == repr(quant_t[1])
    assert list(quant_o.state_dict()) == list(quant_t.state_dict())
    quant_o.load_state_dict(_in_tessera(quant_t.state_dict()))
    x = np.random.default_rng(82).normal(size=shape).astype(np.float32)
    layouts = [None] + (["channels_last"] if dims == 2 else [])
    for layout in layouts:
        xt, xo = torch.tensor(x), tessera.tensor(x)
        if layout:
            xt, xo = xt.contiguous(memory_format=torch.channels_last), xo.contiguous(memory_format=tessera.channels_last)
        torch.set_num_threads(1)  # torch's sums over 512 pixels and more follow its thread count
        np.testing.assert_array_equal(quant_o(xo).numpy(), quant_t(xt).numpy())


@pytest.mark.parametrize("qtype", ["quint8", "qint32"])
def test_group_norm_on_large_channels_last_maps_as_torch(qtype):
    """Feature maps of 512 pixels and more take torch's float per-channel sums on its
    channels-last kernel; tessera sums in torch's one-thread order."""
    rng = np.random.default_rng(90)
    x = rng.normal(size=(2, 40, 24, 25)).astype(np.float32) * 3
    w, b = rng.normal(size=40).astype(np.float32), rng.normal(size=40).astype(np.float32)
    results = []
    for lib in (torch, tessera):
        torch.set_num_threads(1)
        qx = lib.quantize_per_tensor(lib.tensor(x), 0.04, 1 if qtype == "qint32" else 120, getattr(lib, qtype))
        qx = qx.contiguous(memory_format=lib.channels_last)
        out = lib.ops.quantized.group_norm(qx, 4, lib.tensor(w), lib.tensor(b), 1e-5, 0.02, 5)
        results.append((out.int_repr().numpy(), out.stride()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert tuple(results[1][1]) == tuple(results[0][1])


def _norm_calls(lib, x, channels):
    w, b = lib.linspace(0.5, 1.5, channels), lib.linspace(-0.3, 0.3, channels)
    m, v = lib.linspace(-0.2, 0.2, channels), lib.linspace(0.5, 2.0, channels)
    return {"batch_norm": lambda: lib.ops.quantized.batch_norm(x, w, b, m, v, 1e-5, 0.7, 2 ** 33 + 3),
            "layer_norm": lambda: lib.ops.quantized.layer_norm(x, list(x.shape[-1:]), None, None, 1e-5, 0.7,
                                                               2 ** 33 + 3),
            "group_norm": lambda: lib.ops.quantized.group_norm(x, 1, w, b, 1e-5, 0.7, 2 ** 33 + 3),
            "instance_norm": lambda: lib.ops.quantized.instance_norm(x, w, b, 1e-5, 0.7, 2 ** 33 + 3)}


def test_qint32_norms_past_float_precision_as_torch():
    """qint32 integers and zero points past 2^24, and an output zero point past int32: torch's
    vector loops dequantize in float and take the zero point as int32, its tails do not."""
    values = (2 ** 25 + np.array([[1, 3, -1, 5, 0, 7, -3, 2, 1]] * 18)).reshape(2, 9, 9)
    for name in ("batch_norm", "layer_norm", "group_norm", "instance_norm"):
        results = []
        for lib in (torch, tessera):
            ints = lib.tensor(values.tolist(), dtype=lib.int32)
            x = lib._make_per_tensor_quantized_tensor(ints, 1.0, 2 ** 25)
            results.append(_norm_calls(lib, x, 9)[name]().int_repr().numpy())
        np.testing.assert_array_equal(results[1], results[0], err_msg=name)


def test_norm_errors_as_torch():
    """layer, group and instance norm refuse what torch refuses, with torch's messages; empty
    batches come back empty (new qparams) before the other checks, as in torch."""
    def q(lib, shape):
        return lib.quantize_per_tensor(lib.ones(shape), 0.1, 3, lib.quint8)

    cases = {
        "ln empty shape": lambda lib: lib.ops.quantized.layer_norm(q(lib, (2, 3)), [], None, None, 1e-5, 0.1, 0),
        "ln mismatch": lambda lib: lib.ops.quantized.layer_norm(q(lib, (2, 4, 3, 3)), [4, 3], None, None, 1e-5, 0.1,
                                                                0),
        "ln weight": lambda lib: lib.ops.quantized.layer_norm(q(lib, (2, 3, 3)), [3, 3], lib.ones(9), None, 1e-5,
                                                              0.1, 0),
        "ln double": lambda lib: lib.ops.quantized.layer_norm(q(lib, (2, 3)), [3], lib.ones(3).double(), None, 1e-5,
                                                              0.1, 0),
        "gn rank": lambda lib: lib.ops.quantized.group_norm(q(lib, (2, 3)), 1, None, None, 1e-5, 0.1, 0),
        "gn groups": lambda lib: lib.ops.quantized.group_norm(q(lib, (2, 4, 3)), 0, None, None, 1e-5, 0.1, 0),
        "gn divisible": lambda lib: lib.ops.quantized.group_norm(q(lib, (2, 4, 3)), 3, None, None, 1e-5, 0.1, 0),
        "in channels": lambda lib: lib.ops.quantized.instance_norm(q(lib, (2, 0, 3)), None, None, 1e-5, 0.1, 0),
        "in rank": lambda lib: lib.ops.quantized.instance_norm(q(lib, (2, 3)), None, None, 1e-5, 0.1, 0),
    }
    for name, call in cases.items():
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(tessera)
        assert str(got.value).splitlines()[0] == str(want.value).splitlines()[0], name
    for lib in (torch, tessera):
        out = lib.ops.quantized.group_norm(q(lib, (0, 4, 3, 3)), 2, lib.ones(5), None, 1e-5, 0.5, 7)
        assert tuple(out.shape) == (0, 4, 3, 3) and (out.q_scale(), out.q_zero_point()) == (0.5, 7)
    # parameters on another device than the input are refused, never read as absent
    x = q(tessera, (2, 4, 3, 3))
    meta = tessera.ones(4, device="meta")
    for call in (lambda: tessera.ops.quantized.batch_norm2d(x, meta, meta, meta, meta, 1e-5, 0.1, 0),
                 lambda: tessera.ops.quantized.layer_norm(x, [3], None, tessera.ones(3, device="meta"), 1e-5, 0.1, 0),
                 lambda: tessera.ops.quantized.group_norm(x, 2, meta, None, 1e-5, 0.1, 0)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            call()
