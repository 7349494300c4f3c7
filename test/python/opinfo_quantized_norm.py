"""OpInfo entries for the quantized batch and layer norms
(aten/native/quantized/Normalization.cpp): quantized::batch_norm, batch_norm1d/2d/3d and their _relu forms, on quint8, qint8 and qint32,
contiguous and channels-last inputs, channel counts that split between torch's vector loop
(C - C % 8 channels) and its lrintf tail; quantized::layer_norm over rows that split between
torch's 32-element vector blocks and its scalar tail, with and without weight and bias. Each call ends in dense results (int_repr,
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
