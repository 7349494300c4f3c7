"""tessera.onnx.export against torch 1.13's exporter: the same module (same weights) and
inputs exported by both, at opsets 14 and 17, must give ONNX models that pass
onnx.checker and agree in node types and attributes (constants' values included), in
initializer shapes and values (names differ where torch invents them), in the outputs'
shapes, dynamic axes and in the IR version. Unsupported operators raise an error naming
the operator."""
import io
import re

import numpy as np
import pytest
import torch

import tessera

from opinfo import to_tessera

onnx = pytest.importorskip("onnx")
import onnx.numpy_helper  # noqa: E402


def _facts(data):
    """What two exports must share: nodes (type, attributes, constants' values, and which
    values they read, with names made canonical: inputs by position, initializers by shape
    and values, node outputs in order), initializers, outputs' shapes and types, versions."""
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model)
    graph = model.graph
    arrays = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
    canon = {"": ""}
    for k, v in enumerate(graph.input):
        canon[v.name] = f"input{k}"
    for name, a in arrays.items():
        canon[name] = ("init", a.shape, str(a.dtype), tuple(np.round(a.astype(np.float64).ravel(), 5)))
    nodes = []
    for node in graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if "value" in attrs:
            value = onnx.numpy_helper.to_array(attrs["value"])
            attrs["value"] = (str(value.dtype), value.tolist())
        reads = [canon[i] for i in node.input]
        for out in node.output:
            canon[out] = f"v{len(canon)}"
        nodes.append((node.op_type, attrs, reads))
    initializers = sorted((tuple(a.shape), str(a.dtype), np.round(a.astype(np.float64).ravel(), 5).tolist())
                          for a in arrays.values())
    outputs = [(canon[v.name], [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim])
               for v in graph.output]
    types = [v.type.tensor_type.elem_type for v in list(graph.input) + list(graph.output)]
    return nodes, initializers, outputs, types, model.ir_version, [o.version for o in model.opset_import]


def _export(lib, module, args, **kwargs):
    f = io.BytesIO()
    lib.onnx.export(module, args, f, **kwargs)
    return f.getvalue()


class Arithmetic:
    @staticmethod
    def make(nn):
        class M(nn.Module):
            def forward(self, x):
                y = (x + 1) * x - 2.5
                z = torch_or_tessera(x).cat([y, x], dim=1) / 2
                return torch_or_tessera(x).matmul(z.transpose(0, 1), x).unsqueeze(1).squeeze(1)
        return M()


def torch_or_tessera(x):
    return tessera if isinstance(x, tessera.Tensor) else torch


def _math(nn):
    class Math(nn.Module):
        def forward(self, x):
            lib = torch_or_tessera(x)
            y = lib.exp(x).log() + x.abs().sqrt() - lib.neg(x)
            z = (1.5 * lib.erf(y) + 2 + lib.tanh(y) * lib.sigmoid(x)).clamp(-1.0, 2.5)
            return z.clamp(min=0.5) + z.clamp(max=0.2) + lib.clamp(z, -1, 1) + z.clamp_max(max=0.7)
    return Math()


def _flat(nn):
    class Flat(nn.Module):
        def forward(self, x):
            return x.reshape(x.shape[0], -1).view(-1, 4).transpose(0, 1).permute(1, 0)
    return Flat()


def _tied(nn):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.norm = nn.LayerNorm(4)
            self.out = nn.Linear(4, 3)

        def forward(self, idx):
            return nn.functional.log_softmax(self.out(self.norm(self.emb(idx))), dim=-1)
    return Tied()


def _attention(batch_first=False, cross=False, need_weights=True):
    def make(nn):
        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.att = nn.MultiheadAttention(4, 2, batch_first=batch_first)

            def forward(self, x, memory=None):
                kv = memory if cross else x
                return self.att(x, kv, kv, need_weights=need_weights)[0]
        return Attention()
    return make


def _in_place(nn):
    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 2, 3, padding=1)
            self.act = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.act(self.conv(x))
            out += x
            out.mul_(0.5)
            return out.flatten(1).T
    return Residual()


MODULES = {
    "mlp": (lambda nn: nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2), nn.Sigmoid()), [(5, 4)]),
    "linear_3d": (lambda nn: nn.Sequential(nn.Linear(4, 3), nn.Tanh()), [(2, 5, 4)]),
    "linear_no_bias": (lambda nn: nn.Linear(4, 3, bias=False), [(5, 4)]),
    "cnn": (lambda nn: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, stride=2), nn.BatchNorm2d(4), nn.ReLU(),
                                     nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2),
                                     nn.Softmax(dim=1)), [(2, 3, 8, 8)]),
    "conv_no_bias_bn": (lambda nn: nn.Sequential(nn.Conv2d(2, 3, 3, bias=False, groups=1), nn.BatchNorm2d(3),
                                                 nn.LeakyReLU(0.2)), [(1, 2, 6, 6)]),
    "conv1d_pool": (lambda nn: nn.Sequential(nn.Conv1d(3, 4, 3, dilation=2), nn.AvgPool1d(2)), [(2, 3, 10)]),
    "grouped_conv": (lambda nn: nn.Sequential(nn.Conv2d(4, 4, 3, padding=1, groups=2), nn.ReLU()), [(1, 4, 5, 5)]),
    "pools_and_activations": (lambda nn: nn.Sequential(nn.AvgPool2d(2, stride=1, padding=1), nn.GELU(),
                                                       nn.LeakyReLU(0.2), nn.Dropout(0.5), nn.LogSoftmax(-1)),
                              [(1, 2, 4, 4)]),
    "batch_norm_alone": (lambda nn: nn.Sequential(nn.BatchNorm2d(3), nn.MaxPool2d(3, stride=1, dilation=2,
                                                                                  ceil_mode=True)), [(2, 3, 8, 8)]),
    "batch_norm_1d": (lambda nn: nn.BatchNorm1d(3), [(2, 3)]),
    "batch_norm_no_affine": (lambda nn: nn.Sequential(nn.BatchNorm2d(3, affine=False), nn.Sigmoid()), [(1, 3, 2, 2)]),
    "layer_norm": (lambda nn: nn.LayerNorm([3, 4]), [(2, 3, 4)]),
    "arithmetic": (Arithmetic.make, [(3, 3)]),
    "math": (_math, [(2, 3)]),
    "reshapes": (_flat, [(2, 3, 4)]),
    "embedding_norm_linear": (_tied, ["indices"]),
    "activations": (lambda nn: nn.Sequential(nn.ELU(0.5), nn.SELU(), nn.CELU(0.7), nn.Softplus(), nn.ReLU6(),
                                             nn.Hardtanh(-0.5, 0.7), nn.Hardsigmoid(), nn.Hardswish(), nn.SiLU(),
                                             nn.Mish(), nn.Softsign(), nn.Tanhshrink(), nn.LogSigmoid(),
                                             nn.Softmin(1), nn.GELU(approximate="tanh"), nn.Softplus(beta=2)),
                    [(1, 3, 4, 4)]),
    "prelu_glu": (lambda nn: nn.Sequential(nn.PReLU(4), nn.GLU(1), nn.PReLU()), [(1, 4, 3, 3)]),
    "instance_and_group_norm": (lambda nn: nn.Sequential(nn.InstanceNorm2d(4, affine=True), nn.InstanceNorm2d(4),
                                                         nn.GroupNorm(2, 4)), [(2, 4, 3, 3)]),
    "conv_transpose": (lambda nn: nn.Sequential(nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
                                                nn.AdaptiveMaxPool2d(1)), [(1, 3, 4, 4)]),
    "upsample": (lambda nn: nn.Sequential(nn.Upsample(scale_factor=2), nn.Upsample(scale_factor=2, mode="bilinear"),
                                          nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
                                          nn.Upsample(size=(20, 24))), [(1, 2, 3, 4)]),
    "in_place_and_properties": (_in_place, [(1, 2, 3, 3)]),
    "padding": (lambda nn: nn.Sequential(nn.ZeroPad2d((1, 2, 0, 1)), nn.ConstantPad2d(1, 0.5), nn.ReflectionPad2d(1),
                                         nn.ReplicationPad2d((1, 0, 2, 0)), nn.ConstantPad1d((1, 1), 0.0)),
                [(1, 3, 4, 4)]),
    "self_attention": (_attention(), [(3, 2, 4)]),
    "self_attention_no_weights": (_attention(need_weights=False), [(3, 2, 4)]),
    "self_attention_batch_first": (_attention(batch_first=True, need_weights=False), [(2, 3, 4)]),
    "cross_attention": (_attention(cross=True), [(3, 2, 4), (5, 2, 4)]),
    "encoder_layer": (lambda nn: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8), [(3, 2, 4)]),
}


def _inputs(lib, specs):
    g = torch.Generator().manual_seed(1)
    out = []
    for spec in specs:
        t = torch.tensor([[1, 2, 7], [3, 9, 0]]) if spec == "indices" else torch.randn(*spec, generator=g)
        out.append(to_tessera(t) if lib is tessera else t)
    return tuple(out)


def _pair(name):
    make, specs = MODULES[name]
    torch.manual_seed(0)
    reference = make(torch.nn)
    with torch.no_grad():
        # running statistics that are not the defaults, so folding shows; and no two
        # parameters alike (zero biases, unit norm weights), which torch's exporter would
        # merge into one initializer
        for t in list(reference.buffers()) + list(reference.parameters()):
            if t.dtype.is_floating_point:
                t.uniform_(0.5, 1.5)
    mine = make(tessera.nn)
    mine.load_state_dict({k: to_tessera(v) for k, v in reference.state_dict().items()})
    return reference, mine, _inputs(torch, specs), _inputs(tessera, specs)


@pytest.mark.parametrize("opset", [14, 15, 16, 17])
@pytest.mark.parametrize("name", sorted(MODULES))
def test_export_matches_torch(name, opset):
    reference, mine, targs, args = _pair(name)
    want = _facts(_export(torch, reference, targs, opset_version=opset))
    got = _facts(_export(tessera, mine, args, opset_version=opset))
    want, got = list(want), list(got)
    # Where torch's shape inference gave up (it cannot see through the pads computed at run
    # time), it names the dims (Pad117_dim_0, ...); tessera writes the traced sizes there.
    unknown = [[isinstance(d, str) and re.fullmatch(r"[A-Za-z]+\d+_dim_\d+", d) is not None for d in dims]
               for _, dims in want[2]]
    want[2], got[2] = ([(v, [None if u else d for d, u in zip(dims, marks)]) for (v, dims), marks in zip(o, unknown)]
                       for o in (want[2], got[2]))
    for part, w, g in zip(("nodes", "initializers", "outputs", "types", "ir_version", "opsets"), want, got):
        assert g == w, f"{name}: {part} differ"


def test_names_and_dynamic_axes_match_torch():
    reference, mine, targs, args = _pair("mlp")
    kwargs = dict(input_names=["features"], output_names=["scores"], dynamic_axes={"features": {0: "batch"},
                                                                                   "scores": [0]})
    models = [onnx.load_from_string(_export(lib, m, a, **kwargs))
              for lib, m, a in ((torch, reference, targs), (tessera, mine, args))]
    for model in models:
        onnx.checker.check_model(model)
    (want_in, want_out), (got_in, got_out) = ((m.graph.input, m.graph.output) for m in models)
    assert [v.name for v in got_in] == [v.name for v in want_in] == ["features"]
    assert [v.name for v in got_out] == [v.name for v in want_out] == ["scores"]
    assert str(got_in[0].type) == str(want_in[0].type) and str(got_out[0].type) == str(want_out[0].type)
    assert sorted(i.name for i in models[1].graph.initializer) == sorted(i.name for i in models[0].graph.initializer)


def test_same_padding_exports_as_its_explicit_padding():
    # (torch 1.13 cannot export padding='same': "aten::_convolution_mode ... is not supported")
    same = tessera.nn.Conv2d(4, 4, 3, padding="same", groups=2)
    explicit = tessera.nn.Conv2d(4, 4, 3, padding=1, groups=2)
    explicit.load_state_dict(same.state_dict())
    x = tessera.randn(1, 4, 5, 5)
    assert _facts(_export(tessera, same, (x,))) == _facts(_export(tessera, explicit, (x,)))


def test_export_writes_a_file_and_restores_the_training_mode(tmp_path):
    seen = []

    class Probe(tessera.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = tessera.nn.Sequential(tessera.nn.Linear(3, 2), tessera.nn.Dropout(0.5))

        def forward(self, x):
            seen.append((self.training, self.inner[1].training, tessera.onnx.is_in_onnx_export()))
            return self.inner(x)

    probe = Probe().train()
    path = tmp_path / "model.onnx"
    tessera.onnx.export(probe, tessera.ones(4, 3), str(path))
    onnx.checker.check_model(onnx.load(str(path)))
    assert seen == [(False, False, True)] and not tessera.onnx.is_in_onnx_export()
    assert probe.training and probe.inner[1].training


@pytest.mark.parametrize("build,operator", [
    (lambda: tessera.nn.Sequential(tessera.nn.Linear(3, 3), tessera.nn.Softshrink()), "softshrink"),
    (lambda: tessera.nn.Sequential(tessera.nn.Conv2d(1, 1, 1), tessera.nn.AdaptiveAvgPool2d(2)), "adaptive_avg_pool"),
])
def test_unsupported_operators_are_named(build, operator):
    x = tessera.ones(1, 1, 4, 4) if "Conv" in repr(build()) else tessera.ones(2, 3)
    with pytest.raises(tessera.onnx.OnnxExporterError, match=operator):
        _export(tessera, build(), (x,))


def test_attention_masks_are_named_as_unsupported():
    att = tessera.nn.MultiheadAttention(4, 2).eval()

    class Masked(tessera.nn.Module):
        def __init__(self):
            super().__init__()
            self.att = att

        def forward(self, x):
            return self.att(x, x, x, attn_mask=tessera.zeros(3, 3))[0]

    with pytest.raises(tessera.onnx.OnnxExporterError, match="baddbmm"):
        _export(tessera, Masked(), (tessera.ones(3, 2, 4),))


def test_calls_the_outputs_do_not_need_are_pruned_first():
    class Dead(tessera.nn.Module):
        def forward(self, x):
            x.cumsum(0)  # no ONNX form here, and nothing reads it
            return x.relu()

    nodes = _facts(_export(tessera, Dead(), (tessera.ones(2, 2),)))[0]
    assert nodes == [("Relu", {}, ["input0"])]


class _Forward(tessera.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.weight = tessera.nn.Parameter(tessera.ones(3))

    def forward(self, x):
        return self.fn(self, x)


@pytest.mark.parametrize("fn,words", [
    (lambda m, x: x.long() * 0.5, "changes the type"),
    (lambda m, x: x.long().exp(), "changes the type"),
    (lambda m, x: tessera.zeros(2, 3).add_(x), "in-place write into a constant"),
    (lambda m, x: [x.view(6).relu_(), x][1], "in-place write into a constant, a view"),
    (lambda m, x: [x.view(6), tessera.nn.functional.relu(x, True)][0], "in-place write into a constant, a view"),
    (lambda m, x: tessera.sigmoid(x, out=tessera.empty(2, 3)), "out= tensor"),
    (lambda m, x: [m.weight.mul_(2), x * m.weight][1], "writes into a parameter"),
    (lambda m, x: x.div(x, rounding_mode="floor"), "'div' with these arguments"),
    (lambda m, x: tessera.batch_norm(x, m.weight, None, None, None, True, 0.1, 1e-5, False), "batch_norm"),
    (lambda m, x: x.data * 2, "the property data"),
])
def test_what_cannot_be_exported_faithfully_is_refused(fn, words):
    with pytest.raises(tessera.onnx.OnnxExporterError, match=words):
        _export(tessera, _Forward(fn), (tessera.ones(2, 3),))


def test_a_write_into_a_traced_value_is_refused_when_needed():
    def fn(m, x):
        y = x * 2
        y[0] = 1.0
        return y
    with pytest.raises(tessera.onnx.OnnxExporterError, match="__setitem__"):
        _export(tessera, _Forward(fn), (tessera.ones(2, 3),))


def test_dynamic_axes_are_refused_where_sizes_were_baked_in():
    reshaping = _Forward(lambda m, x: x.reshape(x.shape[0], -1))
    with pytest.raises(tessera.onnx.OnnxExporterError, match="dynamic_axes cannot be honoured: reshape"):
        _export(tessera, reshaping, (tessera.ones(2, 3, 2),), input_names=["x"], dynamic_axes={"x": [0]})
    reading = _Forward(lambda m, x: x.relu() * x.shape[0])
    with pytest.raises(tessera.onnx.OnnxExporterError, match="dynamic_axes cannot be honoured: shape"):
        _export(tessera, reading, (tessera.ones(2, 3),), input_names=["x"], dynamic_axes={"x": [0]})
    with pytest.warns(UserWarning, match="Provided key y for dynamic axes"):
        _export(tessera, tessera.nn.Linear(3, 2), (tessera.ones(2, 3),), dynamic_axes={"y": [0]})


def test_an_output_that_is_an_input_gets_a_name_of_its_own():
    model = onnx.load_from_string(_export(tessera, tessera.nn.Dropout(), (tessera.ones(2, 3),)))
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node] == ["Identity"]
    assert model.graph.output[0].name != model.graph.input[0].name
    twice = onnx.load_from_string(_export(tessera, _Forward(lambda m, x: (x.relu(),) * 2), (tessera.ones(2),)))
    onnx.checker.check_model(twice)
    assert len({v.name for v in twice.graph.output}) == 2


def test_outputs_must_be_tensors_computed_from_the_inputs():
    with pytest.raises(tessera.onnx.OnnxExporterError, match="must return a tensor or a tuple or list"):
        _export(tessera, _Forward(lambda m, x: {"y": x.relu()}), (tessera.ones(2),))
    with pytest.raises(tessera.onnx.OnnxExporterError, match="does not depend on its inputs"):
        _export(tessera, _Forward(lambda m, x: m.weight * 2), (tessera.ones(2),))


def test_output_names_that_clash_are_refused():
    for names in (["input"], ["weight"], ["a", "a"]):
        with pytest.raises(tessera.onnx.OnnxExporterError, match="output_names"):
            _export(tessera, _Forward(lambda m, x: (x.relu(), x.exp())), (tessera.ones(3),), output_names=names)


def test_opsets_outside_the_supported_range_are_refused():
    for opset in (12, 13, 18):  # (13 lacks HardSwish and BatchNormalization's training_mode)
        with pytest.raises(ValueError, match=f"opset_version {opset} is not supported"):
            _export(tessera, tessera.nn.Linear(2, 2), (tessera.ones(1, 2),), opset_version=opset)
