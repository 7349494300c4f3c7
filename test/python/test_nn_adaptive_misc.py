"""nn.AdaptiveLogSoftmaxWithLoss, the nn.grad convolution gradients (also F.grad),
nn.SyncBatchNorm without a process group, and the small public names (nn.factory_kwargs,
nn.common_types, nn.init.Tensor, nn.utils.rnn.PackedSequence_/bind,
optim.lr_scheduler.inf, hub.ENV_GITHUB_TOKEN), each against torch 1.13."""
import pytest
import torch

import tessera


from torch_compare import close_to_torch as close, rand, tn as to_torch, tt as to_t  # noqa: E402


# -- AdaptiveLogSoftmaxWithLoss

def asm_pair(in_features, n_classes, cutoffs, **kwargs):
    torch.manual_seed(0)
    want = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, **kwargs).double()
    got = tessera.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, **kwargs).double()
    got.load_state_dict({k: to_t(v) for k, v in want.state_dict().items()})
    return want, got


ASM_CASES = [(8, 10, [3, 6], {}), (16, 20, [5], {"head_bias": True}), (12, 30, [2, 10, 25], {"div_value": 2.0}),
             (6, 7, [1, 2, 3, 4, 5, 6], {"head_bias": True, "div_value": 1.5})]


@pytest.mark.parametrize("in_features,n_classes,cutoffs,kwargs", ASM_CASES)
def test_asm_structure_matches_torch(in_features, n_classes, cutoffs, kwargs):
    want, got = asm_pair(in_features, n_classes, cutoffs, **kwargs)
    # (the whole repr differs only where tessera's ModuleList folds equal entries, as newer torch does)
    assert repr(got.head) == repr(want.head)
    assert [repr(t) for t in got.tail] == [repr(t) for t in want.tail]
    for attr in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "in_features", "n_classes", "div_value",
                 "head_bias"):
        assert getattr(got, attr) == getattr(want, attr), attr
    assert {k: tuple(v.shape) for k, v in got.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in want.state_dict().items()}


@pytest.mark.parametrize("in_features,n_classes,cutoffs,kwargs", ASM_CASES)
def test_asm_forward_loss_and_grads(in_features, n_classes, cutoffs, kwargs):
    want, got = asm_pair(in_features, n_classes, cutoffs, **kwargs)
    x = rand((9, in_features), 1).requires_grad_(True)
    xt = to_t(x).requires_grad_(True)
    # every region hit, including the first and last class
    target = torch.tensor([0, n_classes - 1] + [(5 * i + 1) % n_classes for i in range(7)])
    out_w = want(x, target)
    out_g = got(xt, to_t(target))
    assert type(out_g).__name__ == type(out_w).__name__ == "_ASMoutput"
    assert out_g._fields == out_w._fields == ("output", "loss")
    close(out_g.output, out_w.output)
    close(out_g.loss, out_w.loss)
    (out_w.loss + out_w.output[2]).backward()
    (out_g.loss + out_g.output[2]).backward()
    close(xt.grad, x.grad)
    for (k, p), (_, q) in zip(want.named_parameters(), got.named_parameters()):
        if p.grad is None:  # a cluster no target falls in
            assert q.grad is None, k
        else:
            close(q.grad, p.grad)


@pytest.mark.parametrize("in_features,n_classes,cutoffs,kwargs", ASM_CASES)
def test_asm_log_prob_and_predict(in_features, n_classes, cutoffs, kwargs):
    want, got = asm_pair(in_features, n_classes, cutoffs, **kwargs)
    x = rand((11, in_features), 2) * 3
    close(got.log_prob(to_t(x)), want.log_prob(x))
    assert to_torch(got.predict(to_t(x))).tolist() == want.predict(x).tolist()
    # the three predict paths: every row in the shortlist, none, and a mix
    shortlist, in_features = want.shortlist_size, want.in_features
    with torch.no_grad(), tessera.no_grad():
        head_w = torch.zeros(want.head_size, in_features, dtype=torch.float64)
        head_w[:shortlist, 0] = 10.0          # feature 0 votes for the shortlist
        head_w[shortlist:, 1] = 10.0          # feature 1 for the clusters
        want.head.weight.copy_(head_w)
        got.head.weight.copy_(to_t(head_w))
        if want.head.bias is not None:
            want.head.bias.zero_()
            got.head.bias.zero_()
    xp = torch.zeros(6, in_features, dtype=torch.float64)
    for rows in ([0, 1, 2, 3, 4, 5], [], [0, 2, 5]):
        xp.zero_()
        xp[:, 1] = 1.0
        xp[rows, 0] = 1.0
        xp[rows, 1] = 0.0
        in_shortlist = want.head(xp).argmax(1) < shortlist
        assert in_shortlist.tolist() == [i in rows for i in range(6)]
        assert to_torch(got.predict(to_t(xp))).tolist() == want.predict(xp).tolist()
        assert want.predict(xp).tolist() == want.log_prob(xp).argmax(1).tolist()


def test_asm_unbatched_input():
    want, got = asm_pair(8, 10, [3, 6])
    x = rand((8,), 3)
    for cls in (0, 4, 9):
        out_w = want(x, torch.tensor(cls))
        out_g = got(to_t(x), tessera.tensor(cls))
        assert out_g.output.dim() == out_w.output.dim() == 0
        close(out_g.output, out_w.output)
        close(out_g.loss, out_w.loss)


def test_asm_argument_errors():
    for bad in ([], [6, 3], [0, 4], [3, 10], [3, 3], [2.5]):
        with pytest.raises(ValueError):
            torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, bad)
        with pytest.raises(ValueError, match="cutoffs should be a sequence"):
            tessera.nn.AdaptiveLogSoftmaxWithLoss(8, 10, bad)
    want, got = asm_pair(8, 10, [3, 6])
    calls = [((4, 8), [1, 2, 3]),       # batch sizes differ
             ((4, 2, 8), [1, 2, 3, 4]),  # 1-D target with 3-D input
             ((2, 8), 3),                # 0-D target with 2-D input
             ((4, 8), [[1, 2], [3, 4]]),  # 2-D target
             ((3, 8), [1, 10, 2]),       # out of range
             ((3, 8), [1, -1, 2])]
    for shape, target in calls:
        x = rand(shape, 0)
        with pytest.raises(RuntimeError) as torch_err:
            want(x, torch.tensor(target))
        with pytest.raises(RuntimeError) as tessera_err:
            got(to_t(x), tessera.tensor(target))
        assert str(tessera_err.value.args[0]).split(",")[0] == str(torch_err.value.args[0]).split(",")[0]


# -- nn.grad

GRAD_CASES = [
    (1, (2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
    (1, (1, 3, 10), (2, 3, 2), {"dilation": 3}),
    (2, (2, 2, 7, 6), (4, 2, 3, 2), {"stride": (2, 1), "padding": (1, 0)}),
    (2, (1, 6, 8, 8), (3, 2, 3, 3), {"groups": 3, "dilation": 2, "padding": 2, "stride": 3}),
    (3, (1, 2, 5, 6, 4), (4, 1, 2, 3, 2), {"groups": 2, "stride": (1, 2, 1), "padding": (0, 1, 1)}),
    (3, (2, 1, 4, 4, 4), (2, 1, 2, 2, 2), {"dilation": 2}),
]


@pytest.mark.parametrize("dims,in_shape,w_shape,kwargs", GRAD_CASES)
def test_conv_grads_match_torch(dims, in_shape, w_shape, kwargs):
    x, w = rand(in_shape, 0), rand(w_shape, 1)
    conv = getattr(torch.nn.functional, f"conv{dims}d")
    go = rand(conv(x, w, **kwargs).shape, 2)
    for name in (f"conv{dims}d_input", f"conv{dims}d_weight"):
        if name.endswith("input"):
            want = getattr(torch.nn.grad, name)(x.shape, w, go, **kwargs)
            got = getattr(tessera.nn.grad, name)(x.shape, to_t(w), to_t(go), **kwargs)
        else:
            want = getattr(torch.nn.grad, name)(x, w.shape, go, **kwargs)
            got = getattr(tessera.nn.grad, name)(to_t(x), w.shape, to_t(go), **kwargs)
        close(got, want)
    # and F.grad is the same module
    assert tessera.nn.functional.grad is tessera.nn.grad
    close(tessera.nn.functional.grad.__dict__[f"conv{dims}d_input"](list(x.shape), to_t(w), to_t(go), **kwargs),
          torch.nn.grad.__dict__[f"conv{dims}d_input"](x.shape, w, go, **kwargs))


def test_conv_grad_input_size_picks_among_output_sizes():
    # stride 2: inputs of length 9 and 10 give the same output length; input_size decides
    w, go = rand((2, 1, 3), 0), rand((1, 2, 4), 1)
    for length in (9, 10):
        close(tessera.nn.grad.conv1d_input((1, 1, length), to_t(w), to_t(go), stride=2),
              torch.nn.grad.conv1d_input((1, 1, length), w, go, stride=2))


# -- SyncBatchNorm

def test_sync_batchnorm_without_a_process_group_is_batch_norm():
    # Current torch: without an initialised process group (and in eval) the forward is the
    # plain batch norm on any device; torch 1.13 refused CPU input ("expected input tensor
    # to be on GPU"). Ranks that synchronise: test_distributed_training.py.
    want, got = torch.nn.SyncBatchNorm(3, momentum=0.2), tessera.nn.SyncBatchNorm(3, momentum=0.2)
    assert repr(got) == repr(want)
    assert list(got.state_dict()) == list(want.state_dict())
    assert got.process_group is None and isinstance(got, tessera.nn.modules.batchnorm._BatchNorm)
    ref = torch.nn.BatchNorm1d(3, momentum=0.2)
    for training in (True, False):
        ref.train(training)
        got.train(training)
        x = rand((4, 3), int(training)).float()
        close(got(to_t(x)), ref(x), tol=1e-6)
        close(got.running_mean, ref.running_mean, tol=1e-6)
        close(got.running_var, ref.running_var, tol=1e-6)
    for bad, message in [(rand((3,), 0).float(), "expected at least 2D input (got 1D input)"),
                         (rand((2, 0), 0).float(), "SyncBatchNorm number of input channels should be non zero")]:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            got(to_t(bad))


def test_convert_sync_batchnorm_keeps_weights_and_stats():
    torch.manual_seed(0)

    def build(nn):
        return nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3, momentum=None),
                             nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, affine=False)))

    want_src = build(torch.nn)
    got_src = build(tessera.nn)
    x = rand((2, 2, 3, 3), 0).float()
    want_src[1](want_src[0](x))  # some running statistics to carry over
    got_src.load_state_dict({k: to_t(v) for k, v in want_src.state_dict().items()})
    bn_weight = got_src[1].weight
    want = torch.nn.SyncBatchNorm.convert_sync_batchnorm(want_src)
    got = tessera.nn.SyncBatchNorm.convert_sync_batchnorm(got_src)
    assert repr(got) == repr(want)
    assert got[1].weight is bn_weight  # the same Parameter object, as torch keeps it
    assert type(got[0]) is tessera.nn.Conv2d and type(got[2][1]) is tessera.nn.SyncBatchNorm
    for key, value in want.state_dict().items():
        close(got.state_dict()[key], value, tol=0)
    # a lone BatchNorm comes back as a new SyncBatchNorm; other modules come back themselves
    lone = tessera.nn.BatchNorm3d(2, eps=1e-3)
    converted = tessera.nn.SyncBatchNorm.convert_sync_batchnorm(lone, process_group="group")
    assert type(converted) is tessera.nn.SyncBatchNorm and converted.eps == 1e-3
    assert converted.process_group == "group"
    relu = tessera.nn.ReLU()
    assert tessera.nn.SyncBatchNorm.convert_sync_batchnorm(relu) is relu


# -- small public names

def test_factory_kwargs_as_torch():
    cases = [None, {}, {"device": "cpu"}, {"dtype": 1, "memory_format": 2},
             {"factory_kwargs": {"dtype": 3}, "device": "cpu"}]
    for kwargs in cases:
        assert tessera.nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)
    original = {"factory_kwargs": {"dtype": 3}, "device": "cpu"}
    tessera.nn.factory_kwargs(original)
    assert original == {"factory_kwargs": {"dtype": 3}, "device": "cpu"}
    for bad in ({"bias": True}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}):
        with pytest.raises(TypeError) as torch_err:
            torch.nn.factory_kwargs(bad)
        with pytest.raises(TypeError) as tessera_err:
            tessera.nn.factory_kwargs(bad)
        assert str(tessera_err.value) == str(torch_err.value)


def test_common_types_and_re_exports():
    ours, theirs = tessera.nn.common_types, torch.nn.common_types
    names = [n for n in dir(theirs) if n.startswith("_") and n.endswith("_t") and not n.startswith("__")]
    assert names and all(hasattr(ours, n) for n in names)
    for name in names:  # the same structure, with tessera.Tensor in torch.Tensor's place
        assert repr(getattr(ours, name)).replace("tessera.", "torch.") == repr(getattr(theirs, name))
    assert tessera.nn.init.Tensor is tessera.Tensor
    assert tessera.nn.utils.rnn.Tensor is tessera.Tensor


def test_rnn_bind_and_packed_sequence_base():
    rnn = tessera.nn.utils.rnn
    assert rnn.bind(None, len) is None and torch.nn.utils.rnn.bind(None, len) is None
    assert rnn.bind([1, 2], len) == torch.nn.utils.rnn.bind([1, 2], len) == 2
    assert rnn.PackedSequence_._fields == torch.nn.utils.rnn.PackedSequence_._fields
    assert rnn.PackedSequence_.__name__ == "PackedSequence_"
    assert issubclass(rnn.PackedSequence, rnn.PackedSequence_)
    packed = rnn.pack_sequence([tessera.ones(3), tessera.ones(1)])
    assert isinstance(packed, rnn.PackedSequence_) and repr(packed).startswith("PackedSequence(")


def test_scheduler_inf_and_hub_token_name():
    assert tessera.optim.lr_scheduler.inf == torch.optim.lr_scheduler.inf == float("inf")
    assert tessera.hub.ENV_GITHUB_TOKEN == torch.hub.ENV_GITHUB_TOKEN
