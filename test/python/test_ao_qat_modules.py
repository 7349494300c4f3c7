"""The quantization-aware-training modules against torch 1.13: tessera.ao.nn.qat (Linear,
Conv1d/2d/3d, Embedding, EmbeddingBag) and tessera.ao.nn.intrinsic.qat (ConvBn*, ConvBnReLU*,
ConvReLU*, LinearReLU, LinearBn1d), each made by from_float from the same float (fused) module
in both libraries: train-mode outputs and gradients over several steps, running statistics,
freeze_bn_stats / update_bn_stats, eval mode, state dicts both ways, to_float, the errors, and
the conversion to the quantized modules (integers compared on torch's oneDNN engine, with
scales of their own per torch call since its plan cache ignores the zero points)."""
import io
import types

import numpy as np
import pytest
import torch
import torch.ao.nn.qat as tnnqat
import torch.ao.nn.quantized as tnnq
import torch.ao.quantization as ttq
import torch.nn.intrinsic as tnni
import torch.nn.intrinsic.qat as tnniqat
import torch.nn.intrinsic.quantized as tnniq

import tessera
import tessera.ao.nn.intrinsic as nni
import tessera.ao.nn.intrinsic.qat as nniqat
import tessera.ao.nn.intrinsic.quantized as nniq
import tessera.ao.nn.qat as nnqat
import tessera.ao.nn.quantized as nnq
import tessera.ao.quantization as tq

torch.set_num_threads(1)
torch.backends.quantized.engine = "onednn"

TORCH = types.SimpleNamespace(lib=torch, nn=torch.nn, nni=tnni, nnqat=tnnqat, nniqat=tnniqat, nnq=tnnq, nniq=tnniq,
                              q=ttq)
OURS = types.SimpleNamespace(lib=tessera, nn=tessera.nn, nni=nni, nnqat=nnqat, nniqat=nniqat, nnq=nnq, nniq=nniq,
                             q=tq)
QCONFIGS = {"per_tensor": ("default_fake_quant", "default_weight_fake_quant"),
            "per_channel": ("default_fake_quant", "default_per_channel_weight_fake_quant"),
            "fused": ("default_fused_act_fake_quant", "default_fused_per_channel_wt_fake_quant")}
CASES = [("Linear", 1), ("LinearReLU", 1), ("LinearBn1d", 1)] + [
    (kind, dims) for kind in ("Conv", "ConvReLU", "ConvBn", "ConvBnReLU") for dims in (1, 2, 3)]
HAS_BN = ("LinearBn1d", "ConvBn", "ConvBnReLU")


def qconfig(ns, name):
    act, wt = QCONFIGS[name]
    return ns.q.QConfig(activation=getattr(ns.q, act), weight=getattr(ns.q, wt))


def t(ns, arr, grad=False):
    out = ns.lib.from_numpy(np.array(arr, dtype=np.float32))
    return out.requires_grad_() if grad else out


def npy(x):
    return x.detach().numpy()


def close(got, want, rtol=2e-4, atol=2e-5):
    np.testing.assert_allclose(npy(got), npy(want), rtol=rtol, atol=atol)


def float_module(ns, kind, dims, bias, seed):
    """The float (fused) module of `kind` with weights and batch-norm state drawn from `seed`."""
    rng = np.random.default_rng(seed)
    linear = kind.startswith("Linear")
    parts = [ns.nn.Linear(5, 6, bias=bias) if linear else
             getattr(ns.nn, f"Conv{dims}d")(4, 6, 3, stride=(1, 2, 1)[:dims] if dims > 1 else 1, padding=1,
                                            groups=2, bias=bias)]
    if kind in HAS_BN:
        parts.append(getattr(ns.nn, f"BatchNorm{1 if linear else dims}d")(6))
    if kind.endswith("ReLU"):
        parts.append(ns.nn.ReLU())
    ranges = {"0.weight": (-0.6, 0.6), "1.weight": (0.5, 1.5), "1.running_var": (0.5, 2.0)}
    with ns.lib.no_grad():
        for i, part in enumerate(parts):
            for name, value in list(part.named_parameters()) + list(part.named_buffers()):
                if name != "num_batches_tracked":
                    low, high = ranges.get(f"{i}.{name}", (-0.3, 0.3))
                    value.copy_(t(ns, rng.uniform(low, high, size=tuple(value.shape))))
    if len(parts) == 1:
        return parts[0]
    name = kind if linear else f"{kind}{dims}d"
    return getattr(ns.nni, name)(*parts)


def qat_class(ns, kind, dims):
    if kind == "Linear":
        return ns.nnqat.Linear
    return getattr(ns.nnqat, f"Conv{dims}d") if kind == "Conv" else getattr(
        ns.nniqat, kind if kind.startswith("Linear") else f"{kind}{dims}d")


def qat_module(ns, kind, dims, bias=True, qname="per_channel", seed=0):
    mod = float_module(ns, kind, dims, bias, seed)
    qc = qconfig(ns, qname)
    for m in mod.modules():  # as propagate_qconfig_ leaves them
        m.qconfig = qc
    return qat_class(ns, kind, dims).from_float(mod)


def input_shape(kind, dims, batch=4):
    return (batch, 5) if kind.startswith("Linear") else (batch, 4) + (7, 6, 5)[:dims]


def train_step(pair, x, rng):
    """One forward and backward (of a random weighting of the output, drawn from rng) in both
    libraries; outputs and every gradient compared."""
    outs, g = [], None
    for ns, m in pair:
        for p in m.parameters():
            p.grad = None
        xin = t(ns, x, grad=True)
        out = m(xin)
        g = rng.normal(0, 1, size=tuple(out.shape)) if g is None else g
        (out * t(ns, g)).sum().backward()
        outs.append((out, xin.grad, dict(m.named_parameters())))
    (got, got_dx, got_p), (want, want_dx, want_p) = outs
    close(got, want)
    close(got_dx, want_dx)
    assert list(got_p) == list(want_p)
    for name in want_p:
        close(got_p[name].grad, want_p[name].grad, rtol=5e-4, atol=5e-5)
    return got, want


def pair_of(*args, **kwargs):
    return [(OURS, qat_module(OURS, *args, **kwargs)), (TORCH, qat_module(TORCH, *args, **kwargs))]


def sync_bn(pair):
    """torch's running statistics into tessera's module (after comparing them): the next step
    scales the weight by them before fake quantization, where a last-bit difference could move
    a value across a rounding boundary."""
    (_, got), (_, want) = pair
    if hasattr(want, "bn"):
        with tessera.no_grad():
            got.bn.running_mean.copy_(t(OURS, npy(want.bn.running_mean)))
            got.bn.running_var.copy_(t(OURS, npy(want.bn.running_var)))


def same_state(got_m, want_m, rtol=2e-4, atol=2e-5):
    got, want = got_m.state_dict(), want_m.state_dict()
    assert list(got) == list(want)
    for key in want:
        np.testing.assert_allclose(np.asarray(got[key].numpy(), dtype=np.float64),
                                   np.asarray(want[key].numpy(), dtype=np.float64), rtol=rtol, atol=atol, err_msg=key)


@pytest.mark.parametrize("kind,dims", CASES)
@pytest.mark.parametrize("qname", list(QCONFIGS))
def test_training_steps_match_torch(kind, dims, qname):
    rng = np.random.default_rng([len(kind), dims, len(qname)])
    pair = pair_of(kind, dims, bias=qname != "per_tensor", qname=qname, seed=dims)
    for step in range(3):
        x = rng.normal(0, 1, size=input_shape(kind, dims))
        train_step(pair, x, rng)
        same_state(pair[0][1], pair[1][1])
        sync_bn(pair)
    if kind in HAS_BN:
        assert int(pair[0][1].bn.num_batches_tracked) == int(pair[1][1].bn.num_batches_tracked) == 3


@pytest.mark.parametrize("kind,dims", [("LinearBn1d", 1), ("ConvBn", 2), ("ConvBnReLU", 1), ("ConvBnReLU", 3)])
def test_freeze_and_update_bn_stats(kind, dims):
    rng = np.random.default_rng(dims)
    pair = pair_of(kind, dims)
    x = rng.normal(0, 1, size=input_shape(kind, dims))
    for ns, m in pair:
        m.apply(ns.nniqat.freeze_bn_stats)  # LinearBn1d is not among the modules it freezes
        assert m.freeze_bn == (kind != "LinearBn1d")
        m.freeze_bn_stats()
        m.train()
        assert m.freeze_bn and not m.bn.training and m.training
    before = npy(pair[0][1].bn.running_var).copy()
    train_step(pair, x, rng)
    np.testing.assert_array_equal(npy(pair[0][1].bn.running_var), before)
    same_state(pair[0][1], pair[1][1])
    for ns, m in pair:
        m.apply(ns.nniqat.update_bn_stats)
        m.update_bn_stats()
        assert not m.freeze_bn and m.bn.training
    train_step(pair, x, rng)
    assert not np.array_equal(npy(pair[0][1].bn.running_var), before)
    same_state(pair[0][1], pair[1][1])
    for ns, m in pair:
        m.reset_running_stats()
        assert int(m.bn.num_batches_tracked) == 0 and float(m.bn.running_var.sum()) == 6.0


@pytest.mark.parametrize("kind,dims", [("ConvBn", 1), ("ConvBn", 2), ("ConvBnReLU", 2), ("ConvBnReLU", 3)])
@pytest.mark.parametrize("fake_quant", [True, False])
def test_slow_path_matches_torch(kind, dims, fake_quant):
    # The slow path scales the weight by the running statistics it has just updated, so with
    # fake quantization on the update is switched off (momentum 0) to keep the bits equal.
    rng = np.random.default_rng(10 + dims)
    pair = pair_of(kind, dims, bias=dims != 1)
    for ns, m in pair:
        m._enable_slow_path_for_better_numerical_stability = True
        m.bn.momentum = 0.0 if fake_quant else 0.1
        if not fake_quant:
            m.apply(ns.q.disable_fake_quant)
    for _ in range(2):
        x = rng.normal(0, 1, size=input_shape(kind, dims))
        train_step(pair, x, rng)
        same_state(pair[0][1], pair[1][1])
        sync_bn(pair)
    for _, m in pair:
        m.freeze_bn_stats()
    train_step(pair, x, rng)


@pytest.mark.parametrize("kind,dims", CASES)
def test_eval_mode_matches_torch(kind, dims):
    rng = np.random.default_rng(20 + dims)
    pair = pair_of(kind, dims, seed=3)
    assert repr(pair[0][1]).replace("tessera", "torch") == repr(pair[1][1])
    x = rng.normal(0, 1, size=input_shape(kind, dims, batch=1))
    for _, m in pair:
        m.eval()
        if kind in HAS_BN:
            assert not m.bn.training and not m.freeze_bn
    close(pair[0][1](t(OURS, x)), pair[1][1](t(TORCH, x)))
    same_state(pair[0][1], pair[1][1])


def transfer(state, src, dst):
    buf = io.BytesIO()
    src.save(state, buf)
    return dst.load(io.BytesIO(buf.getvalue()))


@pytest.mark.parametrize("kind,dims", CASES)
def test_state_dicts_move_both_ways(kind, dims):
    rng = np.random.default_rng(30 + dims)
    pair = pair_of(kind, dims, seed=4)
    x = rng.normal(0, 1, size=input_shape(kind, dims))
    for ns, m in pair:
        m(t(ns, x))  # moves the observers and the running statistics
    fresh = [(ns, qat_module(ns, kind, dims, seed=5)) for ns, _ in pair]
    fresh[0][1].load_state_dict(transfer(pair[1][1].state_dict(), torch, tessera))
    fresh[1][1].load_state_dict(transfer(pair[0][1].state_dict(), tessera, torch))
    assert list(fresh[0][1].state_dict()) == list(pair[1][1].state_dict())
    same_state(fresh[0][1], pair[1][1], rtol=0, atol=0)
    same_state(fresh[1][1], pair[0][1], rtol=0, atol=0)
    train_step(fresh, x, rng)


@pytest.mark.parametrize("dims", [1, 2])
def test_conv_bn_loads_version_1_state_dicts(dims):
    v1_names = {"bn.weight": "gamma", "bn.bias": "beta", "bn.running_mean": "running_mean",
                "bn.running_var": "running_var", "bn.num_batches_tracked": "num_batches_tracked"}
    loaded = []
    for ns in (OURS, TORCH):
        state = qat_module(ns, "ConvBn", dims, seed=6).state_dict()
        old = type(state)((v1_names.get(k, k), v) for k, v in state.items())
        old._metadata = type(state._metadata)(state._metadata)
        old._metadata[""] = {"version": 1}
        m = qat_module(ns, "ConvBn", dims, seed=7)
        m.load_state_dict(old)
        loaded.append(m)
    same_state(*loaded, rtol=0, atol=0)
    close(loaded[0].bn.weight, qat_module(TORCH, "ConvBn", dims, seed=6).bn.weight, rtol=0, atol=0)


@pytest.mark.parametrize("kind,dims", CASES)
def test_to_float_matches_torch(kind, dims):
    got, want = (qat_module(ns, kind, dims, seed=8).to_float() for ns in (OURS, TORCH))
    assert repr(got).replace("tessera", "torch") == repr(want) and got.training == want.training
    same_state(got, want, rtol=1e-6, atol=1e-7)
    x = np.random.default_rng(dims).normal(0, 1, size=input_shape(kind, dims))
    close(got.eval()(t(OURS, x)), want.eval()(t(TORCH, x)))


def quantized_class(ns, kind, dims):
    relu = kind.endswith("ReLU")
    if kind.startswith("Linear"):
        return ns.nniq.LinearReLU if relu else ns.nnq.Linear
    return getattr(ns.nniq, f"ConvReLU{dims}d") if relu else getattr(ns.nnq, f"Conv{dims}d")


@pytest.mark.parametrize("kind,dims", CASES)
@pytest.mark.parametrize("qname", ["per_tensor", "fused"])
def test_convert_to_quantized_matches_torch(kind, dims, qname):
    rng = np.random.default_rng([40, dims, len(kind)])
    pair = pair_of(kind, dims, qname=qname, seed=9)
    for _ in range(2):
        x = rng.normal(0, 1, size=input_shape(kind, dims))
        train_step(pair, x, rng)
    seen = npy(pair[1][1](t(TORCH, x)))
    # torch's state (statistics included) in both, so the folded weights agree to the bit
    pair[0][1].load_state_dict(transfer(pair[1][1].state_dict(), torch, tessera))
    converted = []
    for ns, m in pair:
        m.eval()
        m.activation_post_process = qconfig(ns, qname).activation()
        m.activation_post_process(t(ns, seen))
        converted.append(quantized_class(ns, kind, dims).from_float(m))
    got_m, want_m = converted
    assert got_m._get_name() == want_m._get_name() and (got_m.scale, got_m.zero_point) == (want_m.scale,
                                                                                           want_m.zero_point)
    assert got_m.weight().int_repr().tolist() == want_m.weight().int_repr().tolist()
    if kind in HAS_BN:  # from_float folded the batch norm into the QAT module's weight and bias
        close(pair[0][1].bias, pair[1][1].bias, rtol=0, atol=0)
    scale = 0.0231 + 0.0007 * dims + 0.0001 * len(kind) + (0.003 if qname == "fused" else 0)
    got = got_m(tessera.quantize_per_tensor(t(OURS, x), scale, 121, tessera.quint8))
    want = want_m(torch.quantize_per_tensor(t(TORCH, x), scale, 121, torch.quint8))
    assert (got.q_scale(), got.q_zero_point()) == (want.q_scale(), want.q_zero_point())
    np.testing.assert_array_equal(np.asarray(got.int_repr().tolist()), want.int_repr().numpy())


def error_of(fn):
    with pytest.raises(AssertionError) as info:
        fn()
    return str(info.value).replace("tessera", "torch")


def test_errors_match_torch():
    def both(make):
        got, want = error_of(lambda: make(OURS)), error_of(lambda: make(TORCH))
        assert got == want
        return got

    assert both(lambda ns: ns.nni.ConvBn2d(ns.nn.Conv1d(2, 2, 1), ns.nn.BatchNorm2d(2))).startswith(
        "Incorrect types for input modules<class 'torch.nn.modules.conv.Conv1d'>")
    both(lambda ns: ns.nni.ConvBnReLU3d(ns.nn.Conv3d(2, 2, 1), ns.nn.BatchNorm3d(2), ns.nn.ReLU6()))
    both(lambda ns: ns.nni.BNReLU2d(ns.nn.BatchNorm3d(2), ns.nn.ReLU()))
    both(lambda ns: ns.nni.LinearBn1d(ns.nn.Linear(2, 2), ns.nn.BatchNorm2d(2)))
    assert both(lambda ns: ns.nnqat.Linear(3, 4)) == "qconfig must be provided for QAT module"
    both(lambda ns: ns.nnqat.Conv2d(3, 4, 1))
    both(lambda ns: ns.nniqat.ConvBnReLU1d(3, 4, 1))
    assert both(lambda ns: ns.nniqat.LinearBn1d(3, 4)) == "qconfig must be provded for QAT module"
    assert both(lambda ns: ns.nnqat.Linear.from_float(ns.nn.Conv2d(3, 4, 1))).endswith("only works for Linear")
    assert both(lambda ns: ns.nnqat.Conv1d.from_float(ns.nn.Conv1d(3, 4, 1))) == \
        "Input float module must have qconfig defined"
    both(lambda ns: ns.nniqat.ConvBn2d.from_float(float_module(ns, "ConvBnReLU", 2, True, 0)))
    both(lambda ns: ns.nniqat.LinearBn1d.from_float(float_module(ns, "LinearBn1d", 1, True, 0)))

    def no_qconfig(ns):
        mod = float_module(ns, "ConvReLU", 2, True, 0)
        mod.qconfig = None
        return ns.nniqat.ConvReLU2d.from_float(mod)
    assert both(no_qconfig) == "Input float module must have a valid qconfig"


@pytest.mark.parametrize("bag", [False, True])
def test_embeddings_match_torch(bag):
    rng = np.random.default_rng(bag)
    table = rng.normal(0, 1, size=(10, 4))
    pair = []
    for ns in (OURS, TORCH):
        mod = ns.nn.EmbeddingBag(10, 4, mode="sum") if bag else ns.nn.Embedding(10, 4, padding_idx=2)
        with ns.lib.no_grad():
            mod.weight.copy_(t(ns, table))
        mod.qconfig = ns.q.QConfig(activation=ns.q.default_fake_quant, weight=ns.q.default_embedding_fake_quant)
        pair.append((ns, getattr(ns.nnqat, type(mod).__name__).from_float(mod)))
        with pytest.raises(AssertionError, match="requires a qscheme of torch.per_channel_affine_float_qparams"):
            getattr(ns.nnqat, type(mod).__name__)(10, 4, qconfig=qconfig(ns, "per_tensor"))
    idx = rng.integers(0, 10, size=(3, 4))
    outs = [m(ns.lib.from_numpy(idx)) for ns, m in pair]
    close(*outs, rtol=1e-6, atol=1e-6)
    g = rng.normal(0, 1, size=tuple(outs[1].shape))
    for (ns, m), out in zip(pair, outs):
        (out * t(ns, g)).sum().backward()
    close(pair[0][1].weight.grad, pair[1][1].weight.grad, rtol=1e-6, atol=1e-6)
    same_state(pair[0][1], pair[1][1], rtol=0, atol=0)
    assert type(pair[0][1].to_float()).__name__ == type(mod).__name__


def test_old_namespaces_alias_the_ao_ones():
    import tessera.nn.intrinsic.qat as old_nniqat
    import tessera.nn.qat as old_nnqat
    assert old_nnqat.Linear is nnqat.Linear and old_nnqat.Conv3d is nnqat.Conv3d
    assert old_nniqat is nniqat and tessera.nn.intrinsic.ConvBn2d is nni.ConvBn2d
    assert sorted(nnqat.__all__) == sorted(tnnqat.modules.__all__)
    assert sorted(nniqat.__all__) == sorted(tnniqat.modules.__all__)
    assert set(tnni.__all__) <= set(nni.__all__)
