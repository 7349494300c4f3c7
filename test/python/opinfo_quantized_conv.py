"""OpInfo entries for the quantized convolutions (aten/native/quantized/Conv.cpp):
quantized::conv{1,2,3}d and conv{1,2,3}d_relu on weights packed by conv{1,2,3}d_prepack (per
tensor and per channel, grouped, strided, padded, dilated), and conv{1,2,3}d_unpack. Each call
quantizes float32 samples (activations quint8, weights qint8 with zero point 0), packs, runs
and ends in dense results (integers, values, qparams and the result's strides: torch's are
channels-last) compared with torch 1.13's (oneDNN engine) exactly. On meta inputs the weight
is packed from a meta tensor and the results are QuantizedMeta tensors, compared by shape and
dtype. Nothing quantized is differentiable. Every sample has scales of its own
(opinfo_quantized_linear.py's docstring)."""
from opinfo import OpInfo, make_torch, register
from opinfo_quantized import NOT_DIFFERENTIABLE, _per_channel, _per_tensor

QOP = dict(dtypes=("float32",), supports_out=False, exempt=NOT_DIFFERENTIABLE, rtol=0, atol=0)


def conv_samples(dims):
    def samples(dtype):
        seed = 60 + 10 * dims
        spatial = (9, 7, 6)[:dims]
        kernel = (3, 2, 3)[:dims]
        yield "plain", [make_torch((2, 4) + spatial, "float32", seed, -3.0, 3.0),
                        make_torch((6, 4) + kernel, "float32", seed + 1, -1.0, 1.0),
                        make_torch((6,), "float32", seed + 2)], \
            {"x_q": (0.0233 + dims / 1e4, 120), "w_scales": 0.00811 + dims / 1e5, "out_q": (0.0513, 100),
             "geometry": ([1] * dims, [1] * dims, [1] * dims, 1)}
        yield "grouped strided per channel", [make_torch((1, 6) + spatial, "float32", seed + 3),
                                              make_torch((4, 3) + kernel, "float32", seed + 4, -1.0, 1.0),
                                              make_torch((4,), "float32", seed + 5)], \
            {"x_q": (0.0341 + dims / 1e4, 7), "w_scales": [0.0061 + 0.0007 * i + dims / 1e5 for i in range(4)],
             "out_q": (0.1091, 250), "geometry": ([2] * dims, [0] * dims, [2] * dims, 2), "with_bias": False}
        yield "empty batch", [make_torch((0, 4) + spatial, "float32", seed + 6),
                              make_torch((6, 4) + kernel, "float32", seed + 7, -1.0, 1.0),
                              make_torch((6,), "float32", seed + 8)], \
            {"x_q": (0.0301, 7), "w_scales": 0.0093 + dims / 1e5, "out_q": (0.0611, 9),
             "geometry": ([1] * dims, [0] * dims, [1] * dims, 1)}
    return samples


def _weight(lib, w, scales):
    if isinstance(scales, float):
        return lib.quantize_per_tensor(w, scales, 0, lib.qint8)
    # the qparams stay on the CPU for a meta weight too (a meta tensor has no values)
    return lib.quantize_per_channel(w, lib.tensor(scales, dtype=lib.float64), lib.zeros(len(scales), dtype=lib.int64),
                                    0, lib.qint8)


def _packed(lib, dims, w, b, w_scales, geometry, with_bias):
    stride, padding, dilation, groups = geometry
    return getattr(lib.ops.quantized, f"conv{dims}d_prepack")(_weight(lib, w, w_scales), b if with_bias else None,
                                                              stride, padding, dilation, groups)


def _conv(dims, relu):
    def call(lib, x, w, b, x_q, w_scales, out_q, geometry, with_bias=True):
        q = lib.quantize_per_tensor(x, x_q[0], x_q[1], lib.quint8)
        fn = getattr(lib.ops.quantized, f"conv{dims}d_relu" if relu else f"conv{dims}d")
        r = fn(q, _packed(lib, dims, w, b, w_scales, geometry, with_bias), *out_q)
        return _per_tensor(lib, r) + (lib.tensor(list(r.stride()), device=r.device),)
    return call


def _unpack(dims):
    def call(lib, x, w, b, x_q, w_scales, out_q, geometry, with_bias=True):
        packed = _packed(lib, dims, w, b, w_scales, geometry, with_bias)
        weight, bias = getattr(lib.ops.quantized, f"conv{dims}d_unpack")(packed)
        described = _per_tensor(lib, weight) if isinstance(w_scales, float) else _per_channel(lib, weight)
        return described + ((bias,) if bias is not None else ())
    return call


register(*[OpInfo(f"quantized::conv{d}d{'_relu' if relu else ''}", _conv(d, relu), sample_inputs=conv_samples(d), **QOP)
           for d in (1, 2, 3) for relu in (False, True)],
         *[OpInfo(f"quantized::conv{d}d_unpack", _unpack(d), sample_inputs=conv_samples(d), **QOP) for d in (1, 2, 3)])
