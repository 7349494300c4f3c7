"""OpInfo entries for the operators on quantized tensors (aten/native/quantized/BinaryOps.cpp,
Activation.cpp, Cat.cpp): quantized::add/mul and their relu and scalar forms, quantized::cat,
the quantized:: activations, and aten's relu, clamp, hardtanh, threshold, leaky_relu,
hardsigmoid, sigmoid, tanh, gelu and cat on QuantizedCPU. Each call quantizes float32
samples, runs the operator and ends in dense results (int_repr, dequantize, qscheme and the
qparams), compared with torch 1.13's exactly: torch's arithmetic is reproduced bit for bit,
including the split of each row between its vector and scalar loops (Note [Quantized
elementwise arithmetic]), which the samples reach with rows of 64 and more elements plus
tails. On meta inputs the same calls make QuantizedMeta tensors, compared by shape and dtype.
Nothing quantized is differentiable.

Where the function is transcendental (sigmoid, tanh, gelu, elu, celu), torch's vector loop
evaluates it with Sleef's exp/tanh/erf and tessera with its own vector functions, and the
two may differ in a float's last bit. No 8-bit sample sees that; qint32's step (2^-31 for
tanh) is finer than a float's last bit, so those entries allow one float ulp (relative
2.5e-7) on qint32's integers and the dequantized values."""
import torch

from opinfo_quantized import NOT_DIFFERENTIABLE, _per_tensor
from opinfo import OpInfo, make_torch, register

EXACT = {"rtol": 0, "atol": 0}
QOP = dict(dtypes=("float32",), supports_out=False, exempt=NOT_DIFFERENTIABLE, **EXACT)
# One float ulp, for the transcendental entries on qint32 (the module's docstring).
ULP = dict(QOP, dtype_tolerances={"int32": (2.5e-7, 0), "float32": (2.5e-7, 0)})
QTYPES = (("quint8", 0.05, 100), ("qint8", 0.04, -3), ("qint32", 0.001, 12))


def _q(lib, x, scale, zero_point, dtype):
    return lib.quantize_per_tensor(x, scale, zero_point, getattr(lib, dtype))


def unary_samples(dtype):
    for qtype, scale, zp in QTYPES:
        # 150 elements: two full chunks of torch's 8-bit vector loop (64) and a tail
        yield f"{qtype} rows", [make_torch((2, 150), "float32", 1, -5.0, 5.0)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype}
    yield "transposed", [make_torch((40, 3), "float32", 2, -5.0, 5.0).t()], \
        {"scale": 0.05, "zero_point": 128, "dtype": "quint8"}
    yield "channels_last", [make_torch((2, 3, 5, 7), "float32", 3).contiguous(memory_format=torch.channels_last)], \
        {"scale": 0.03, "zero_point": 0, "dtype": "qint8"}
    yield "0-dim", [make_torch((), "float32", 4)], {"scale": 0.1, "zero_point": 5, "dtype": "quint8"}
    yield "empty", [make_torch((0, 3), "float32", 5)], {"scale": 0.1, "zero_point": 5, "dtype": "quint8"}


def binary_samples(dtype):
    for qtype, scale, zp in QTYPES:
        yield f"{qtype} rows", [make_torch((3, 100), "float32", 6, -4.0, 4.0),
                                make_torch((3, 100), "float32", 7, -4.0, 4.0)], \
            {"qparams": ((scale, zp), (scale * 1.5, zp // 2), (scale * 2, zp)), "dtype": qtype}
    yield "broadcast row", [make_torch((4, 70), "float32", 8), make_torch((70,), "float32", 9)], \
        {"qparams": ((0.05, 10), (0.02, 200), (0.1, 60)), "dtype": "quint8"}
    yield "broadcast first", [make_torch((1, 5), "float32", 10), make_torch((3, 5), "float32", 11)], \
        {"qparams": ((0.05, 10), (0.02, -20), (0.1, 0)), "dtype": "qint8"}
    yield "transposed", [make_torch((9, 4), "float32", 12).t(), make_torch((4, 9), "float32", 13)], \
        {"qparams": ((0.05, 10), (0.05, 10), (0.07, 3)), "dtype": "quint8"}
    yield "empty", [make_torch((0, 4), "float32", 14), make_torch((0, 4), "float32", 15)], \
        {"qparams": ((0.05, 10), (0.05, 10), (0.07, 3)), "dtype": "quint8"}


def _binary(name):
    def call(lib, x, y, qparams, dtype):
        (sa, za), (sb, zb), (so, zo) = qparams
        return _per_tensor(lib, getattr(lib.ops.quantized, name)(_q(lib, x, sa, za, dtype), _q(lib, y, sb, zb, dtype),
                                                                 so, zo))
    return call


def scalar_samples(dtype):
    for qtype, scale, zp in QTYPES:
        for c in (0.75, -2.5, 0.0, 40.0):
            yield f"{qtype} {c}", [make_torch((2, 80), "float32", 16)], \
                {"scale": scale, "zero_point": zp, "dtype": qtype, "c": c}


def _scalar(name):
    def call(lib, x, scale, zero_point, dtype, c):
        return _per_tensor(lib, getattr(lib.ops.quantized, name)(_q(lib, x, scale, zero_point, dtype), c))
    return call


def _unary(fn):
    def call(lib, x, scale, zero_point, dtype):
        return _per_tensor(lib, fn(lib, _q(lib, x, scale, zero_point, dtype)))
    return call


def cat_samples(dtype):
    for qtype, scale, zp in QTYPES:
        yield f"{qtype} dim 1", [make_torch((2, 30), "float32", 17), make_torch((2, 50), "float32", 18)], \
            {"qparams": ((scale, zp), (scale * 2, zp)), "dtype": qtype, "dim": 1}
    # channels_last along the channels: torch's per-pixel loop (vector over C - C % 8 channels)
    cl = torch.channels_last
    yield "channels_last dim 1", [make_torch((2, 20, 3, 2), "float32", 19).contiguous(memory_format=cl),
                                  make_torch((2, 7, 3, 2), "float32", 20).contiguous(memory_format=cl)], \
        {"qparams": ((0.05, 10), (0.03, 130)), "dtype": "quint8", "dim": 1}
    yield "channels_last same qparams", [make_torch((1, 4, 2, 2), "float32", 21).contiguous(memory_format=cl),
                                         make_torch((1, 9, 2, 2), "float32", 22).contiguous(memory_format=cl)], \
        {"qparams": ((0.05, 10), (0.05, 10)), "dtype": "qint8", "dim": 1}
    yield "dim -1", [make_torch((3, 2), "float32", 23), make_torch((3, 4), "float32", 24)], \
        {"qparams": ((0.05, 10), (0.05, 10)), "dtype": "qint32", "dim": -1}


def _cat(kind):
    def call(lib, x, y, qparams, dtype, dim):
        (sa, za), (sb, zb) = qparams
        qs = [_q(lib, x, sa, za, dtype), _q(lib, y, sb, zb, dtype)]
        if kind == "aten":
            return _per_tensor(lib, lib.cat(qs, dim))
        if kind == "aten_out":
            out = lib._empty_affine_quantized(list(lib.cat([t.dequantize() for t in qs], dim).shape), scale=0.07,
                                              zero_point=3, dtype=getattr(lib, dtype), device=x.device)
            return _per_tensor(lib, lib.cat(qs, dim, out=out))
        return _per_tensor(lib, getattr(lib.ops.quantized, kind)(qs, dim, 0.06, None))
    return call


register(
    *[OpInfo(f"quantized::{name}", _binary(name), sample_inputs=binary_samples, **QOP)
      for name in ("add", "add_relu", "mul", "mul_relu")],
    *[OpInfo(f"quantized::{name}", _scalar(name), sample_inputs=scalar_samples, **QOP)
      for name in ("add_scalar", "add_scalar_relu", "mul_scalar", "mul_scalar_relu")],
    OpInfo("cat[quantized]", _cat("aten"), sample_inputs=cat_samples, **QOP),
    OpInfo("cat[quantized_out]", _cat("aten_out"), sample_inputs=cat_samples, **QOP),
    OpInfo("quantized::cat", _cat("cat"), sample_inputs=cat_samples, **QOP),
    OpInfo("quantized::cat_relu", _cat("cat_relu"), sample_inputs=cat_samples, **QOP),
    OpInfo("relu[quantized]", _unary(lambda lib, q: lib.relu(q)), sample_inputs=unary_samples, **QOP),
    OpInfo("relu_[quantized]", _unary(lambda lib, q: lib.relu_(q)), sample_inputs=unary_samples, **QOP),
    OpInfo("clamp[quantized]", _unary(lambda lib, q: lib.clamp(q, -0.4, 1.1)), sample_inputs=unary_samples, **QOP),
    OpInfo("hardtanh[quantized]", _unary(lambda lib, q: lib._C._nn.hardtanh(q, -0.5, 0.75)),
           sample_inputs=unary_samples, **QOP),
    OpInfo("hardtanh_[quantized]", _unary(lambda lib, q: lib._C._nn.hardtanh_(q, -0.5, 0.75)),
           sample_inputs=unary_samples, **QOP),
    OpInfo("threshold[quantized]", _unary(lambda lib, q: lib.threshold(q, 0.3, -1.0)), sample_inputs=unary_samples,
           **QOP),
    OpInfo("leaky_relu[quantized]", _unary(lambda lib, q: lib._C._nn.leaky_relu(q, 0.2)),
           sample_inputs=unary_samples, **QOP),
    OpInfo("leaky_relu_[quantized]", _unary(lambda lib, q: lib._C._nn.leaky_relu_(q, 0.2)),
           sample_inputs=unary_samples, **QOP),
    OpInfo("hardsigmoid[quantized]", _unary(lambda lib, q: lib._C._nn.hardsigmoid(q)), sample_inputs=unary_samples,
           **QOP),
    OpInfo("sigmoid[quantized]", _unary(lambda lib, q: lib.sigmoid(q)), sample_inputs=unary_samples, **ULP),
    OpInfo("tanh[quantized]", _unary(lambda lib, q: lib.tanh(q)), sample_inputs=unary_samples, **ULP),
    OpInfo("gelu[quantized]", _unary(lambda lib, q: lib._C._nn.gelu(q)), sample_inputs=unary_samples, **ULP),
    OpInfo("gelu[quantized_tanh]", _unary(lambda lib, q: lib._C._nn.gelu(q, approximate="tanh")),
           sample_inputs=unary_samples, **ULP),
    OpInfo("quantized::relu6", _unary(lambda lib, q: lib.ops.quantized.relu6(q)), sample_inputs=unary_samples, **QOP),
    OpInfo("quantized::hardswish", _unary(lambda lib, q: lib.ops.quantized.hardswish(q, 0.02, 7)),
           sample_inputs=unary_samples, **QOP),
    OpInfo("quantized::sigmoid", _unary(lambda lib, q: lib.ops.quantized.sigmoid(q, 1 / 256, 0)),
           sample_inputs=unary_samples, **ULP),
    OpInfo("quantized::elu", _unary(lambda lib, q: lib.ops.quantized.elu(q, 0.03, 40, 0.7, 1.2, 0.9)),
           sample_inputs=unary_samples, **ULP),
    OpInfo("quantized::celu", _unary(lambda lib, q: lib.ops.quantized.celu(q, 0.03, 40, 1.5)),
           sample_inputs=unary_samples, **ULP),
    OpInfo("quantized::leaky_relu", _unary(lambda lib, q: lib.ops.quantized.leaky_relu(q, 0.1, False, 0.04, 20)),
           sample_inputs=unary_samples, **QOP),
    OpInfo("quantized::clamp", _unary(lambda lib, q: lib.ops.quantized.clamp(q, None, 0.8)),
           sample_inputs=unary_samples, **QOP),
    OpInfo("quantized::threshold", _unary(lambda lib, q: lib.ops.quantized.threshold(q, -0.2, 0.5)),
           sample_inputs=unary_samples, **QOP),
)


# ---- pooling (aten/native/quantized/Pooling.cpp): integer max; averages in torch's two kernels

def pool_samples(dtype):
    cl = torch.channels_last
    for qtype, scale, zp in QTYPES:
        yield f"{qtype} NCHW", [make_torch((2, 3, 7, 9), "float32", 30, -4.0, 4.0)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype, "layout": None}
        # 11 channels: torch's NHWC kernel takes 8 of them through its vector quantizer
        yield f"{qtype} channels_last", [make_torch((2, 11, 6, 5), "float32", 31, -4.0, 4.0)
                                         .contiguous(memory_format=cl)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype, "layout": "channels_last"}
    # 24 channels: the 16-lane requantization of the NHWC kernels; a crop keeps channels_last strides
    # without being channels_last contiguous (torch's generic kernel, a contiguous result)
    yield "channels_last 24", [make_torch((1, 24, 7, 6), "float32", 34).contiguous(memory_format=cl)], \
        {"scale": 0.04, "zero_point": -3, "dtype": "qint8", "layout": "channels_last"}
    yield "cropped channels_last", [make_torch((2, 8, 7, 7), "float32", 35).contiguous(memory_format=cl)], \
        {"scale": 0.05, "zero_point": 9, "dtype": "quint8", "layout": "channels_last", "crop": True}
    yield "qint32 full range", [make_torch((2, 3, 6, 6), "float32", 36, -2.0e9, 2.0e9)], \
        {"scale": 1.0, "zero_point": 0, "dtype": "qint32", "layout": "channels_last"}
    yield "no batch", [make_torch((3, 8, 8), "float32", 32)], \
        {"scale": 0.05, "zero_point": 7, "dtype": "quint8", "layout": None}
    yield "empty batch", [make_torch((0, 3, 8, 8), "float32", 33)], \
        {"scale": 0.05, "zero_point": 7, "dtype": "quint8", "layout": None}


def _rows(q):
    """[N, C, H * W] for the 1-d poolings, contiguous: a flattened channels_last tensor is a
    [N, C, 1, L] that torch 1.13's kernels misread (test_quantized_ops.py's scramble tests)."""
    return q.contiguous().flatten(-2)


def _pool(fn):
    def call(lib, x, scale, zero_point, dtype, layout, crop=False):
        q = _q(lib, x, scale, zero_point, dtype)
        if layout:
            q = q.contiguous(memory_format=getattr(lib, layout))
        if crop:
            q = q[:, :, 1:, 1:]
        r = fn(lib, q)
        return _per_tensor(lib, r) + (lib.tensor(list(r.stride()), device=r.device),)
    return call


register(
    OpInfo("max_pool2d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.max_pool2d(q, 3, 2, 1, 1, ceil_mode=True)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("max_pool2d[quantized_dilated]",
           _pool(lambda lib, q: lib.nn.functional.max_pool2d(q, (2, 3), (1, 2), (1, 0), (2, 1))),
           sample_inputs=pool_samples, **QOP),
    OpInfo("quantized::max_pool2d",
           _pool(lambda lib, q: lib.ops.quantized.max_pool2d(q, [2, 2], [], [0, 0], [1, 1], False)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("quantized::max_pool1d",
           _pool(lambda lib, q: lib.ops.quantized.max_pool1d(_rows(q), [3], [2], [1], [1], True)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("max_pool1d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.max_pool1d(_rows(q), 4, 3, 2)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("avg_pool2d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.avg_pool2d(q, 3, 2, 1, ceil_mode=True)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("avg_pool2d[quantized_no_pad_count]",
           _pool(lambda lib, q: lib.nn.functional.avg_pool2d(q, (3, 2), 1, (1, 1), count_include_pad=False)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("avg_pool2d[quantized_divisor]",
           _pool(lambda lib, q: lib.nn.functional.avg_pool2d(q, 2, divisor_override=3)),
           sample_inputs=pool_samples, **QOP),
    # the int32 sums wrap on the qint32 sample
    OpInfo("avg_pool2d[quantized_unit_divisors]",
           _pool(lambda lib, q: lib.cat([lib.nn.functional.avg_pool2d(q, 3, 1, 1, divisor_override=1),
                                         lib.nn.functional.avg_pool2d(q, 3, 1, 1, divisor_override=-1)], 1)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("avg_pool1d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.avg_pool1d(_rows(q), 3, 2, 1)),
           sample_inputs=pool_samples, **QOP),
    OpInfo("_adaptive_avg_pool2d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.adaptive_avg_pool2d(q, (4, 3))),
           sample_inputs=pool_samples, covers=("adaptive_avg_pool2d",), **QOP),
    OpInfo("_adaptive_avg_pool2d[quantized_global]",
           _pool(lambda lib, q: lib.nn.functional.adaptive_avg_pool2d(q, 1)),
           sample_inputs=pool_samples, **QOP),
)


register(
    OpInfo("upsample_nearest2d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.interpolate(q, scale_factor=(1.5, 2.0), mode="nearest")),
           sample_inputs=pool_samples, **QOP),
    OpInfo("upsample_nearest2d[quantized_size]",
           _pool(lambda lib, q: lib.nn.functional.interpolate(q, size=(5, 11), mode="nearest")),
           sample_inputs=pool_samples, **QOP),
)


# ---- 3-d average pooling and bilinear upsampling (aten/native/quantized/Pooling3d.cpp, UpSample.cpp):
# torch's channels-last kernels (8-bit channels in blocks of 8 through its vector arithmetic,
# the rest scalar) and its contiguous ones, Notes [Quantized 3-d average pooling] and
# [Quantized bilinear upsampling]

def pool3d_samples(dtype):
    cl3 = torch.channels_last_3d
    for qtype, scale, zp in QTYPES:
        yield f"{qtype}", [make_torch((2, 3, 5, 6, 7), "float32", 60, -4.0, 4.0)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype, "layout": None}
        # 11 channels: 8 through the vector quantizer, 3 through the scalar tail
        yield f"{qtype} channels_last_3d", [make_torch((2, 11, 4, 5, 6), "float32", 61, -4.0, 4.0)
                                            .contiguous(memory_format=cl3)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype, "layout": "channels_last_3d"}
    yield "qint32 full range", [make_torch((1, 3, 4, 4, 5), "float32", 62, -2.0e9, 2.0e9)], \
        {"scale": 1.0, "zero_point": 0, "dtype": "qint32", "layout": "channels_last_3d"}
    yield "empty batch", [make_torch((0, 3, 4, 4, 4), "float32", 63)], \
        {"scale": 0.05, "zero_point": 7, "dtype": "quint8", "layout": None}


def bilinear_samples(dtype):
    cl = torch.channels_last
    for qtype, scale, zp in QTYPES:
        yield f"{qtype}", [make_torch((2, 3, 5, 7), "float32", 70, -4.0, 4.0)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype, "layout": None}
        yield f"{qtype} channels_last", [make_torch((2, 11, 5, 6), "float32", 71, -4.0, 4.0)
                                         .contiguous(memory_format=cl)], \
            {"scale": scale, "zero_point": zp, "dtype": qtype, "layout": "channels_last"}
    yield "channels_last 24", [make_torch((1, 24, 4, 3), "float32", 72).contiguous(memory_format=cl)], \
        {"scale": 0.04, "zero_point": -3, "dtype": "qint8", "layout": "channels_last"}


register(
    OpInfo("avg_pool3d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.avg_pool3d(q, 3, 2, 1, ceil_mode=True)),
           sample_inputs=pool3d_samples, **QOP),
    OpInfo("avg_pool3d[quantized_no_pad_count]",
           _pool(lambda lib, q: lib.nn.functional.avg_pool3d(q, (2, 3, 2), 1, (1, 1, 0), count_include_pad=False)),
           sample_inputs=pool3d_samples, **QOP),
    OpInfo("avg_pool3d[quantized_divisor]",
           _pool(lambda lib, q: lib.nn.functional.avg_pool3d(q, 2, divisor_override=5)),
           sample_inputs=pool3d_samples, **QOP),
    OpInfo("_adaptive_avg_pool3d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.adaptive_avg_pool3d(q, (3, 4, 5))),
           sample_inputs=pool3d_samples, covers=("adaptive_avg_pool3d",), **QOP),
    OpInfo("_adaptive_avg_pool3d[quantized_global]",
           _pool(lambda lib, q: lib.nn.functional.adaptive_avg_pool3d(q, 1)),
           sample_inputs=pool3d_samples, **QOP),
    OpInfo("upsample_bilinear2d[quantized]",
           _pool(lambda lib, q: lib.nn.functional.interpolate(q, scale_factor=(1.5, 1.7), mode="bilinear")),
           sample_inputs=bilinear_samples, **QOP),
    OpInfo("upsample_bilinear2d[quantized_align_corners]",
           _pool(lambda lib, q: lib.nn.functional.interpolate(q, size=(9, 4), mode="bilinear", align_corners=True)),
           sample_inputs=bilinear_samples, **QOP),
    OpInfo("upsample_bilinear2d[quantized_down]",
           _pool(lambda lib, q: lib.nn.functional.interpolate(q, size=(3, 4), mode="bilinear")),
           sample_inputs=bilinear_samples, **QOP),
)
