"""tessera.ao.quantization's observers and fake quantizers against torch.ao.quantization
(torch 1.13): the same inputs through the same module in both libraries, then the running
statistics, calculate_qparams (values and dtypes), outputs, gradients, state_dict and the
on/off switches compared, exactly."""
import warnings

import numpy as np
import pytest
import torch
import torch.ao.quantization as tq

import tessera
import tessera.ao.quantization as sq


def _inputs(shape, steps=4, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * (1 + k) + (0.5 * k - 1)).astype(np.float32) for k in range(steps)]


def _lib_kwargs(lib, kwargs):
    """kwargs naming dtypes and qschemes by string, as lib's objects."""
    out = {}
    for k, v in kwargs.items():
        out[k] = getattr(lib, v) if k in ("dtype", "qscheme") else v
    return out


def _np(t):
    return t.detach().numpy()


def _same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(_np(got), _np(want))


def _same_qparams(obs_ts, obs_th):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = obs_ts.calculate_qparams(), obs_th.calculate_qparams()
    _same(got[0], want[0])
    _same(got[1], want[1])


OBSERVERS = [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"dtype": "qint8", "reduce_range": True}),
    ("MinMaxObserver", {"dtype": "quint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 127}),
    ("MinMaxObserver", {"dtype": "qint8", "quant_min": -64, "quant_max": 63, "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"dtype": "qint32"}),
    ("MovingAverageMinMaxObserver", {}),
    ("MovingAverageMinMaxObserver", {"averaging_constant": 0.5, "dtype": "qint8",
                                     "qscheme": "per_tensor_symmetric"}),
    ("PerChannelMinMaxObserver", {}),
    ("PerChannelMinMaxObserver", {"ch_axis": 1, "dtype": "qint8", "qscheme": "per_channel_symmetric"}),
    ("PerChannelMinMaxObserver", {"ch_axis": 2, "qscheme": "per_channel_affine_float_qparams"}),
    ("PerChannelMinMaxObserver", {"qscheme": "per_channel_affine_float_qparams", "dtype": "quint4x2"}),
    ("MovingAveragePerChannelMinMaxObserver", {"averaging_constant": 0.25}),
    ("MovingAveragePerChannelMinMaxObserver", {"ch_axis": 1, "qscheme": "per_channel_symmetric",
                                               "dtype": "qint8"}),
]


@pytest.mark.parametrize("name, kwargs", OBSERVERS, ids=[f"{n}-{k}" for n, k in OBSERVERS])
def test_observer_matches_torch(name, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reduce_range's deprecation warning
        obs_th = getattr(tq, name)(**_lib_kwargs(torch, kwargs))
        obs_ts = getattr(sq, name)(**_lib_kwargs(tessera, kwargs))
    assert (obs_ts.quant_min, obs_ts.quant_max) == (obs_th.quant_min, obs_th.quant_max)
    _same_qparams(obs_ts, obs_th)  # nothing observed yet: the default qparams (and a warning)
    for arr in _inputs((3, 4, 5)):
        x_th, x_ts = torch.from_numpy(arr.copy()), tessera.from_numpy(arr.copy())
        assert obs_ts(x_ts) is x_ts and obs_th(x_th) is x_th
        _same(obs_ts.min_val, obs_th.min_val)
        _same(obs_ts.max_val, obs_th.max_val)
        _same_qparams(obs_ts, obs_th)
    assert list(obs_ts.state_dict()) == list(obs_th.state_dict())
    # a fresh observer takes the statistics from the state_dict (per-channel buffers resize)
    fresh = getattr(sq, name)(**_lib_kwargs(tessera, kwargs))
    fresh.load_state_dict(obs_ts.state_dict())
    _same_qparams(fresh, obs_th)


def test_observer_refusals_match_torch():
    for lib, mod in ((torch, tq), (tessera, sq)):
        with pytest.raises(NotImplementedError, match="Cannot reduce range for symmetric\\s+quantization for quint8"):
            mod.MinMaxObserver(qscheme=lib.per_tensor_symmetric, reduce_range=True)
        with pytest.raises(NotImplementedError, match="PerChannelMinMaxObserver's qscheme only support"):
            mod.PerChannelMinMaxObserver(qscheme=lib.per_tensor_affine)
        with pytest.raises(AssertionError, match="Used-specified quantization range must include 0"):
            mod.MinMaxObserver(quant_min=1, quant_max=10)
        obs = mod.MinMaxObserver()
        with pytest.raises(AssertionError):
            obs._calculate_qparams(lib.tensor(2.0), lib.tensor(1.0))  # min above max


def test_observers_without_statistics():
    x = tessera.ones(2, 3)
    for name in ("PlaceholderObserver", "NoopObserver", "RecordingObserver", "ReuseInputObserver"):
        obs, ref = getattr(sq, name)(), getattr(tq, name)()
        assert obs(x) is x
        assert str(obs.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
        with pytest.raises(Exception, match="calculate_qparams should not be called"):
            obs.calculate_qparams()
    rec = sq.RecordingObserver()
    rec(x)
    rec(x * 2)
    assert [t.tolist() for t in rec.get_tensor_value()] == [[[1.0] * 3] * 2, [[2.0] * 3] * 2]
    fixed, fixed_th = sq.default_fixed_qparams_range_0to1_observer(), tq.default_fixed_qparams_range_0to1_observer()
    _same(fixed.calculate_qparams()[0], fixed_th.calculate_qparams()[0])
    _same(fixed.calculate_qparams()[1], fixed_th.calculate_qparams()[1])


@pytest.mark.parametrize("name", ["default_observer", "default_weight_observer", "default_per_channel_weight_observer",
                                  "default_float_qparams_observer", "default_float_qparams_observer_4bit",
                                  "default_dynamic_quant_observer", "default_fixed_qparams_range_neg1to1_observer"])
def test_default_observers_are_torchs(name):
    obs, ref = getattr(sq, name)(), getattr(tq, name)()
    assert type(obs).__name__ == type(ref).__name__
    for attr in ("dtype", "qscheme", "quant_min", "quant_max", "ch_axis"):
        assert str(getattr(obs, attr, None)).split(".")[-1] == str(getattr(ref, attr, None)).split(".")[-1], attr


def test_observer_state_dict_helpers():
    model = tessera.nn.Sequential(tessera.nn.Linear(3, 2))
    model.activation_post_process = sq.PerChannelMinMaxObserver()
    model.activation_post_process(tessera.arange(6.0).view(2, 3))
    state = sq.get_observer_state_dict(model)
    assert list(state) == ["activation_post_process.eps", "activation_post_process.min_val",
                           "activation_post_process.max_val"]
    other = tessera.nn.Sequential(tessera.nn.Linear(3, 2))
    other.activation_post_process = sq.PerChannelMinMaxObserver()
    sq.load_observer_state_dict(other, state)
    assert other.activation_post_process.min_val.tolist() == [0.0, 3.0]


# ---------------------------------------------------------------------------- fake quantizers

FAKE_QUANTS = ["default_fake_quant", "default_weight_fake_quant", "default_per_channel_weight_fake_quant",
               "default_dynamic_fake_quant", "default_fused_act_fake_quant", "default_fused_wt_fake_quant",
               "default_fused_per_channel_wt_fake_quant", "default_fixed_qparams_range_neg1to1_fake_quant",
               "default_embedding_fake_quant"]


@pytest.mark.parametrize("name", FAKE_QUANTS)
def test_fake_quantize_module_matches_torch(name):
    fq_th, fq_ts = getattr(tq, name)(), getattr(sq, name)()
    assert type(fq_ts).__name__ == type(fq_th).__name__
    assert list(fq_ts.state_dict()) == list(fq_th.state_dict())
    # step 2 stops the observer, step 3 turns fake quantization off, step 4 back on
    for step, arr in enumerate(_inputs((4, 6), steps=5, seed=3)):
        for fq in (fq_th, fq_ts):
            if step == 2:
                fq.disable_observer()
            if step == 3:
                fq.disable_fake_quant()
            if step == 4:
                fq.enable_fake_quant()
                fq.enable_observer()
        x_th = torch.from_numpy(arr.copy()).requires_grad_()
        x_ts = tessera.from_numpy(arr.copy()).requires_grad_()
        y_th, y_ts = fq_th(x_th), fq_ts(x_ts)
        _same(y_ts, y_th)
        y_th.backward(torch.ones_like(y_th))
        y_ts.backward(tessera.ones_like(y_ts))
        _same(x_ts.grad, x_th.grad)
        for key, want in fq_th.state_dict().items():
            _same(fq_ts.state_dict()[key], want)


def test_fake_quantize_state_dict_round_trip_resizes_per_channel_qparams():
    src = sq.default_per_channel_weight_fake_quant()
    src(tessera.from_numpy(_inputs((5, 3))[0]))
    dst = sq.default_per_channel_weight_fake_quant()
    assert dst.scale.shape == (1,)
    dst.load_state_dict(src.state_dict())
    assert dst.scale.shape == (5,) and dst.zero_point.tolist() == src.zero_point.tolist()


def test_fake_quantize_switches_and_apply_helpers():
    model = tessera.nn.Sequential(tessera.nn.Identity())
    model.fq = sq.default_fake_quant()
    model.apply(sq.disable_fake_quant)
    model.apply(sq.disable_observer)
    assert model.fq.fake_quant_enabled.tolist() == [0] and model.fq.observer_enabled.tolist() == [0]
    model.apply(sq.enable_fake_quant)
    model.apply(sq.enable_observer)
    assert model.fq.fake_quant_enabled.tolist() == [1] and model.fq.observer_enabled.tolist() == [1]
    with pytest.raises(AssertionError, match="quant_min out of bound"):
        sq.FakeQuantize(quant_min=-1, quant_max=255)
    with pytest.raises(AssertionError, match="Fused observer\\+fake_quant module only works with"):
        sq.FusedMovingAvgObsFakeQuantize(observer=sq.MinMaxObserver)


def test_qscheme_refusals_name_the_class_as_torch():
    cases = [("MinMaxObserver", "per_channel_affine"), ("MovingAverageMinMaxObserver", "per_channel_symmetric"),
             ("PerChannelMinMaxObserver", "per_tensor_affine"),
             ("MovingAveragePerChannelMinMaxObserver", "per_tensor_symmetric")]
    for name, scheme in cases:
        messages = []
        for lib, mod in ((torch, tq), (tessera, sq)):
            with pytest.raises(NotImplementedError) as err:
                getattr(mod, name)(qscheme=getattr(lib, scheme))
            messages.append(" ".join(str(err.value).split()))
        assert messages[0] == messages[1] and messages[0].startswith(name + "'s qscheme only support")


def test_fake_quantize_clamps_to_its_observers_range():
    """torch reads the range from activation_post_process at each call: the module's own
    quant_min/quant_max are copies kept for compatibility."""
    arr = _inputs((3, 4), steps=1, seed=7)[0]
    outs = []
    for mod, lib in ((tq, torch), (sq, tessera)):
        fq = mod.default_fake_quant()
        fq.quant_max = 3
        outs.append(fq(lib.from_numpy(arr.copy())))
    _same(outs[1], outs[0])


def test_with_callable_args_and_the_range_neg_127_to_127_defaults():
    counter = iter(range(1, 100))
    factory = sq.MinMaxObserver.with_callable_args(eps=lambda: 2.0 ** -next(counter))
    assert factory().eps.tolist() == [0.5] and factory().eps.tolist() == [0.25]  # a fresh value per instance
    assert factory(eps=1.0).eps.tolist() == [1.0]
    assert repr(factory).endswith("{'eps': " + repr(factory.callable_args["eps"]) + "}")
    for name in ("weight_observer_range_neg_127_to_127", "per_channel_weight_observer_range_neg_127_to_127",
                 "fused_wt_fake_quant_range_neg_127_to_127", "fused_per_channel_wt_fake_quant_range_neg_127_to_127"):
        obs, ref = getattr(sq, name)(), getattr(tq, name)()
        assert type(obs).__name__ == type(ref).__name__ and obs.quant_min == ref.quant_min == -127
        assert name in sq.__all__


def test_old_per_channel_checkpoints_load():
    """Version 1 observers saved no eps, and before version 3 the per-channel buffers were
    min_vals / max_vals."""
    obs = sq.PerChannelMinMaxObserver()
    state = {"min_vals": tessera.tensor([-1.0, -2.0]), "max_vals": tessera.tensor([1.0, 3.0])}
    state = type(obs.state_dict())(state)
    state._metadata = {"": {"version": 1}}
    obs.load_state_dict(state)
    assert obs.min_val.tolist() == [-1.0, -2.0] and obs.eps.tolist() == [torch.finfo(torch.float32).eps]


def test_iinfo_of_quantized_dtypes_as_torch():
    for name in ("qint8", "quint8", "qint32"):
        got, want = tessera.iinfo(getattr(tessera, name)), torch.iinfo(getattr(torch, name))
        assert (got.min, got.max, got.bits) == (want.min, want.max, want.bits)
