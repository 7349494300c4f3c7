"""OpInfo entries for the quantized GEMM family (aten/native/quantized/Linear.cpp):
quantized::linear and linear_relu on a weight packed by linear_prepack (per tensor and per
channel), the dynamic forms on float inputs, and linear_unpack. Each call quantizes float32
samples (activations quint8, weights qint8 with zero point 0), packs, runs and ends in dense
results compared with torch 1.13's (oneDNN engine) exactly (Note [Quantized linear
arithmetic]). On meta inputs the weight is packed from a meta tensor and the results are
QuantizedMeta / meta tensors, compared by shape and dtype. Nothing quantized is
differentiable.

torch's oneDNN engine caches its primitives without the zero points (test_quantized_linear.py's
docstring), so every sample has scales of its own."""

from opinfo import OpInfo, make_torch, register
from opinfo_quantized import NOT_DIFFERENTIABLE, _per_channel, _per_tensor

QOP = dict(dtypes=("float32",), supports_out=False, exempt=NOT_DIFFERENTIABLE, rtol=0, atol=0)


def linear_samples(dtype):
    # (x shape, N, x qparams, weight scales (one or N), bias, output qparams): a distinct
    # scale in every sample keeps torch's cache honest.
    yield "2-d per tensor", [make_torch((5, 24), "float32", 40, -3.0, 3.0),
                             make_torch((7, 24), "float32", 41, -1.0, 1.0), make_torch((7,), "float32", 42)], \
        {"x_q": (0.0231, 120), "w_scales": 0.00813, "out_q": (0.0517, 100)}
    yield "3-d per channel", [make_torch((2, 3, 40), "float32", 43), make_torch((9, 40), "float32", 44, -1.0, 1.0),
                              make_torch((9,), "float32", 45)], \
        {"x_q": (0.0337, 128), "w_scales": [0.0061 + 0.0007 * i for i in range(9)], "out_q": (0.1093, 60)}
    yield "1-d no bias", [make_torch((33,), "float32", 46), make_torch((16, 33), "float32", 47, -1.0, 1.0),
                          make_torch((16,), "float32", 54)], \
        {"x_q": (0.0419, 3), "w_scales": 0.0113, "out_q": (0.0771, 250), "with_bias": False}
    yield "64 rows", [make_torch((64, 100), "float32", 48), make_torch((33, 100), "float32", 49, -1.0, 1.0),
                      make_torch((33,), "float32", 50)], \
        {"x_q": (0.0287, 140), "w_scales": [0.0047 + 0.0003 * i for i in range(33)], "out_q": (0.2113, 128)}
    yield "empty batch", [make_torch((0, 12), "float32", 51), make_torch((4, 12), "float32", 52, -1.0, 1.0),
                          make_torch((4,), "float32", 53)], \
        {"x_q": (0.0301, 7), "w_scales": 0.0093, "out_q": (0.0611, 9)}


def _weight(lib, w, scales):
    if isinstance(scales, float):
        return lib.quantize_per_tensor(w, scales, 0, lib.qint8)
    # the qparams stay on the CPU for a meta weight too (a meta tensor has no values)
    return lib.quantize_per_channel(w, lib.tensor(scales, dtype=lib.float64), lib.zeros(len(scales), dtype=lib.int64),
                                    0, lib.qint8)


def _packed(lib, w, b, w_scales, with_bias):
    return lib.ops.quantized.linear_prepack(_weight(lib, w, w_scales), b if with_bias else None)


def _static(name):
    def call(lib, x, w, b, x_q, w_scales, out_q, with_bias=True):
        q = lib.quantize_per_tensor(x, x_q[0], x_q[1], lib.quint8)
        return _per_tensor(lib, getattr(lib.ops.quantized, name)(q, _packed(lib, w, b, w_scales, with_bias), *out_q))
    return call


def _dynamic(name, reduce_range):
    def call(lib, x, w, b, x_q, w_scales, out_q, with_bias=True):
        if x.dim() < 2:  # the dynamic forms take 2-d and up
            x = x.unsqueeze(0)
        return getattr(lib.ops.quantized, name)(x, _packed(lib, w, b, w_scales, with_bias), reduce_range)
    return call


def _unpack(lib, x, w, b, x_q, w_scales, out_q, with_bias=True):
    weight, bias = lib.ops.quantized.linear_unpack(_packed(lib, w, b, w_scales, with_bias))
    described = _per_tensor(lib, weight) if isinstance(w_scales, float) else _per_channel(lib, weight)
    return described + ((bias,) if bias is not None else ())


register(
    OpInfo("quantized::linear", _static("linear"), sample_inputs=linear_samples, **QOP),
    OpInfo("quantized::linear_relu", _static("linear_relu"), sample_inputs=linear_samples, **QOP),
    OpInfo("quantized::linear_dynamic", _dynamic("linear_dynamic", False), sample_inputs=linear_samples, **QOP),
    OpInfo("quantized::linear_dynamic[reduce_range]", _dynamic("linear_dynamic", True), sample_inputs=linear_samples,
           **QOP),
    OpInfo("quantized::linear_relu_dynamic", _dynamic("linear_relu_dynamic", True), sample_inputs=linear_samples,
           **QOP),
    # linear_prepack's results, unpacked
    OpInfo("quantized::linear_unpack", _unpack, sample_inputs=linear_samples, **QOP),
)
