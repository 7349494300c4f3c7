"""OpInfo entries for the quantized batch and layer norms
(aten/native/quantized/Normalization.cpp): quantized::batch_norm, batch_norm1d/2d/3d and
their _relu forms, on quint8, qint8 and qint32, contiguous and channels-last inputs, channel
counts that split between torch's vector loop (C - C % 8 channels) and its lrintf tail;
quantized::layer_norm over rows that split between torch's 32-element vector blocks and its
scalar tail, with and without weight and bias. Each call ends in dense results (int_repr,
dequantize, the qparams and the result's strides), compared with torch 1.13's exactly (Note
[Quantized batch norm arithmetic]). On meta inputs the same calls make QuantizedMeta
tensors. Nothing quantized is differentiable."""
import torch

from opinfo_quantized import NOT_DIFFERENTIABLE, _per_tensor
from opinfo import OpInfo, make_torch, register

QOP = dict(dtypes=("float32",), supports_out=False, exempt=NOT_DIFFERENTIABLE, rtol=0, atol=0)
QTYPES = (("quint8", 0.05, 100), ("qint8", 0.04, -3), ("qint32", 0.001, 12))


def _params(channels, seed):
    return [make_torch((channels,), "float32", seed, -1.5, 1.5), make_torch((channels,), "float32", seed + 1),
            make_torch((channels,), "float32", seed + 2), make_torch((channels,), "float32", seed + 3, 0.2, 2.0)]


def batch_norm_samples(dims):
    def samples(dtype):
        spatial = {1: (9,), 2: (4, 5), 3: (2, 3, 4)}[dims]
        for i, (qtype, scale, zp) in enumerate(QTYPES):
            # 11 channels: 8 through torch's vector loop, 3 through its tail
            yield f"{qtype}", [make_torch((2, 11) + spatial, "float32", 40 + i, -4.0, 4.0), *_params(11, 50)], \
                {"scale": scale, "zero_point": zp, "dtype": qtype, "out": (scale * 1.5, zp // 2)}
        if dims > 1:
            layout = torch.channels_last if dims == 2 else torch.channels_last_3d
            yield "channels_last", [make_torch((2, 16) + spatial, "float32", 44).contiguous(memory_format=layout),
                                    *_params(16, 54)], \
                {"scale": 0.03, "zero_point": 10, "dtype": "quint8", "out": (0.05, 120)}
        else:
            yield "no length", [make_torch((3, 5), "float32", 45), *_params(5, 58)], \
                {"scale": 0.03, "zero_point": 10, "dtype": "quint8", "out": (0.05, 120)}
        yield "empty", [make_torch((0, 4) + spatial, "float32", 46), *_params(4, 62)], \
            {"scale": 0.03, "zero_point": 10, "dtype": "quint8", "out": (0.05, 120)}
    return samples


def _batch_norm(name):
    def call(lib, x, weight, bias, mean, var, scale, zero_point, dtype, out):
        q = lib.quantize_per_tensor(x, scale, zero_point, getattr(lib, dtype))
        r = getattr(lib.ops.quantized, name)(q, weight, bias, mean, var, 1e-5, *out)
        return _per_tensor(lib, r) + (lib.tensor(list(r.stride()), device=r.device),)
    return call


register(*[OpInfo(f"quantized::batch_norm{d}{relu}", _batch_norm(f"batch_norm{d}{relu}"),
                  sample_inputs=batch_norm_samples({"": 2, "1d": 1, "2d": 2, "3d": 3}[d]), **QOP)
           for d in ("", "1d", "2d", "3d") for relu in ("", "_relu")])


def layer_norm_samples(dtype):
    for i, (qtype, scale, zp) in enumerate(QTYPES):
        # rows of 70: two 32-element vector blocks and a tail of 6
        yield f"{qtype}", [make_torch((3, 70), "float32", 70 + i, -4.0, 4.0),
                           make_torch((70,), "float32", 73, 0.5, 1.5), make_torch((70,), "float32", 74)], \
            {"shape": [70], "scale": scale, "zero_point": zp, "dtype": qtype, "out": (scale * 0.7, zp // 3)}
    yield "two dims, no affine", [make_torch((2, 3, 5, 7), "float32", 75, -4.0, 4.0), make_torch((5, 7), "float32", 79),
                                  make_torch((5, 7), "float32", 80)], \
        {"shape": [5, 7], "scale": 0.04, "zero_point": 120, "dtype": "quint8", "out": (0.02, 128), "affine": ()}
    yield "transposed, bias only", [make_torch((9, 4), "float32", 76, -4.0, 4.0).t(), make_torch((9,), "float32", 81),
                                    make_torch((9,), "float32", 77)], \
        {"shape": [9], "scale": 0.04, "zero_point": -5, "dtype": "qint8", "out": (0.03, 0), "affine": ("bias",)}
    yield "empty", [make_torch((0, 6), "float32", 78), make_torch((6,), "float32", 82),
                    make_torch((6,), "float32", 83)], \
        {"shape": [6], "scale": 0.04, "zero_point": 3, "dtype": "quint8", "out": (0.03, 0)}


def _layer_norm(lib, x, weight, bias, shape, scale, zero_point, dtype, out, affine=("weight", "bias")):
    q = lib.quantize_per_tensor(x, scale, zero_point, getattr(lib, dtype))
    r = lib.ops.quantized.layer_norm(q, shape, weight if "weight" in affine else None,
                                     bias if "bias" in affine else None, 1e-5, *out)
    return _per_tensor(lib, r) + (lib.tensor(list(r.stride()), device=r.device),)


register(OpInfo("quantized::layer_norm", _layer_norm, sample_inputs=layer_norm_samples, **QOP))


def group_norm_samples(dtype):
    cl = torch.channels_last
    for i, (qtype, scale, zp) in enumerate(QTYPES):
        yield f"{qtype} contiguous", [make_torch((2, 6, 5, 7), "float32", 90 + i, -4.0, 4.0),
                                      make_torch((6,), "float32", 93, 0.5, 1.5), make_torch((6,), "float32", 94)], \
            {"groups": 3, "scale": scale, "zero_point": zp, "dtype": qtype, "out": (scale * 0.7, zp // 3)}
        # 66 channels in 2 groups of 33: one 32-channel vector block per group and a tail
        yield f"{qtype} channels_last", [make_torch((2, 66, 3, 4), "float32", 95 + i, -4.0, 4.0)
                                         .contiguous(memory_format=cl), make_torch((66,), "float32", 98, 0.5, 1.5),
                                         make_torch((66,), "float32", 99)], \
            {"groups": 2, "scale": scale, "zero_point": zp, "dtype": qtype, "out": (scale * 0.7, zp // 3)}
    yield "channels_last, bias only", [make_torch((1, 8, 4, 4), "float32", 100, -4.0, 4.0).contiguous(memory_format=cl),
                                       make_torch((8,), "float32", 101), make_torch((8,), "float32", 102)], \
        {"groups": 4, "scale": 0.05, "zero_point": 7, "dtype": "quint8", "out": (0.03, 100), "affine": ("bias",)}
    yield "3-d, no affine", [make_torch((2, 4, 9), "float32", 103, -4.0, 4.0), make_torch((4,), "float32", 104),
                             make_torch((4,), "float32", 105)], \
        {"groups": 2, "scale": 0.05, "zero_point": -7, "dtype": "qint8", "out": (0.03, 3), "affine": ()}
    yield "empty", [make_torch((0, 4, 3, 3), "float32", 106), make_torch((4,), "float32", 107),
                    make_torch((4,), "float32", 108)], \
        {"groups": 2, "scale": 0.05, "zero_point": 7, "dtype": "quint8", "out": (0.03, 100)}


def _group_norm(kind):
    def call(lib, x, weight, bias, groups, scale, zero_point, dtype, out, affine=("weight", "bias")):
        q = lib.quantize_per_tensor(x, scale, zero_point, getattr(lib, dtype))
        if x.is_contiguous(memory_format=lib.channels_last) and not x.is_contiguous():
            q = q.contiguous(memory_format=lib.channels_last)
        w, b = weight if "weight" in affine else None, bias if "bias" in affine else None
        r = (lib.ops.quantized.group_norm(q, groups, w, b, 1e-5, *out) if kind == "group"
             else lib.ops.quantized.instance_norm(q, w, b, 1e-5, *out))
        return _per_tensor(lib, r) + (lib.tensor(list(r.stride()), device=r.device),)
    return call


# torch's channels-last kernel sums feature maps of 512 pixels and more in float per thread,
# so those depend on its thread count: these samples stay under it (test_ao_quantize_workflow.py
# covers the large maps at one thread).
register(OpInfo("quantized::group_norm", _group_norm("group"), sample_inputs=group_norm_samples, **QOP),
         OpInfo("quantized::instance_norm", _group_norm("instance"), sample_inputs=group_norm_samples, **QOP))
