"""OpInfo entries for the quantized tensor's operators (aten/native/quantized/): quantizing
float32 tensors, the qparams, dequantize and int_repr, the quantized factories. Each call
ends in dense results (int_repr's integers, dequantize's floats, the qparams as tensors),
which the registry compares with torch 1.13's exactly. On meta inputs the same calls make
QuantizedMeta tensors, whose dense results (on the meta device) are compared by shape and
dtype (torch 1.13 has the key but no kernels: current torch's factories make them); nothing
quantized is differentiable (quantizing records no
Node in either library, and dequantize of a float tensor records torch's NotImplemented
one). Views, copy_, clone, equal and printing of quantized tensors are checked against
torch in test_quantized_tensor.py."""
import torch

from opinfo import OpInfo, make_torch, register

# torch's qscheme names in enum order.
QSCHEMES = ["per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
            "per_channel_affine_float_qparams"]
NOT_DIFFERENTIABLE = {"grad": "quantized tensors hold integers: quantizing records no Node in torch or tessera "
                              "(test_quantized_tensor.py checks the results never require grad)"}


def T(shape, seed, low=-4.0, high=4.0):
    return make_torch(shape, "float32", seed, low, high)


def _described(lib, q):
    """A quantized tensor as dense tensors on its device: its integers, its real values, its
    qscheme."""
    scheme = QSCHEMES.index(str(q.qscheme()).split(".")[-1])
    return q.int_repr(), q.dequantize(), lib.tensor(scheme, device=q.device)


def _per_tensor(lib, q):
    return _described(lib, q) + (lib.tensor(q.q_scale(), dtype=lib.float64, device=q.device),
                                  lib.tensor(q.q_zero_point(), device=q.device))


def _per_channel(lib, q):
    return _described(lib, q) + (q.q_per_channel_scales().to(q.device), q.q_per_channel_zero_points().to(q.device),
                                  lib.tensor(q.q_per_channel_axis(), device=q.device))


def per_tensor_samples(dtype):
    # Halves (x / scale = k + 0.5) check rounding half to even; the wide range checks clamping.
    halves = make_torch((4, 5), dtype, 1, -40.0, 40.0).round() * 0.05 + 0.025
    for qtype, zp in (("qint8", 3), ("quint8", 128), ("qint32", -7)):
        yield f"halves {qtype}", [halves], {"scale": 0.05, "zero_point": zp, "dtype": qtype}
        yield f"wide {qtype}", [T((3, 7), 2, -300.0, 300.0)], {"scale": 0.5, "zero_point": zp, "dtype": qtype}
    yield "transposed", [T((5, 3), 3).t()], {"scale": 0.1, "zero_point": 0, "dtype": "quint8"}
    yield "stepped", [T((4, 8), 4)[:, ::2]], {"scale": 0.1, "zero_point": 0, "dtype": "qint8"}
    yield "channels_last", [T((2, 3, 4, 5), 5).contiguous(memory_format=torch.channels_last)], \
        {"scale": 0.02, "zero_point": 1, "dtype": "qint8"}
    yield "0-dim", [T((), 6)], {"scale": 0.3, "zero_point": 0, "dtype": "qint8"}
    yield "empty", [T((0, 3), 7)], {"scale": 0.3, "zero_point": 0, "dtype": "qint8"}
    yield "nan and inf", [T((3,), 8) / 0.0], {"scale": 0.1, "zero_point": 0, "dtype": "qint8"}


def _quantize_per_tensor(lib, x, scale, zero_point, dtype):
    return _per_tensor(lib, lib.quantize_per_tensor(x, scale, zero_point, getattr(lib, dtype)))


def _quantize_tensor_qparams(lib, x, scale, zero_point, dtype):
    return _per_tensor(lib, lib.quantize_per_tensor(x, lib.tensor(scale), lib.tensor(zero_point),
                                                    getattr(lib, dtype)))


def _quantize_tensors(lib, x, scale, zero_point, dtype):
    qs = lib.quantize_per_tensor([x, x * 2], lib.tensor([scale, scale * 3]), lib.tensor([zero_point, 0]),
                                 getattr(lib, dtype))
    return tuple(t for q in qs for t in _per_tensor(lib, q)) + tuple(lib.dequantize(list(qs)))


def dynamic_samples(dtype):
    for qtype in ("quint8", "qint8"):
        for reduce_range in (False, True):
            yield f"{qtype} reduce_range={reduce_range}", [T((6, 5), 1, -3.0, 5.0)], \
                {"dtype": qtype, "reduce_range": reduce_range}
    yield "positive only", [T((7,), 2, 0.5, 9.0)], {"dtype": "quint8", "reduce_range": False}
    yield "all zero", [T((3,), 3) * 0], {"dtype": "qint8", "reduce_range": False}
    yield "tiny range", [T((5,), 4) * 1e-7], {"dtype": "quint8", "reduce_range": False}


def per_channel_samples(dtype):
    x = T((3, 4, 5), 1, -6.0, 6.0)
    for axis in (0, 1, 2):
        n = x.shape[axis]
        scales = torch.linspace(0.02, 0.2, n, dtype=torch.float64)
        yield f"axis {axis} qint8", [x], {"scales": scales, "zero_points": torch.arange(n) - 1, "axis": axis,
                                          "dtype": "qint8"}
    yield "float zero points", [x], {"scales": torch.tensor([0.1, 0.2, 0.05, 0.3]),
                                     "zero_points": torch.tensor([2.5, 0.0, -1.0, 7.25]), "axis": 1,
                                     "dtype": "quint8"}
    yield "float32 scales, int32 zero points", [x.transpose(0, 2)], {
        "scales": torch.tensor([0.1, 0.2, 0.05, 0.3]), "zero_points": torch.tensor([0, 1, 2, 3], dtype=torch.int32),
        "axis": 1, "dtype": "quint8"}


def _lib_tensor(lib, t):
    return lib.tensor(t.tolist(), dtype=getattr(lib, str(t.dtype).split(".")[-1]))


def _quantize_per_channel(lib, x, scales, zero_points, axis, dtype):
    q = lib.quantize_per_channel(x, _lib_tensor(lib, scales), _lib_tensor(lib, zero_points), axis,
                                 getattr(lib, dtype))
    return _per_channel(lib, q)


def make_samples(dtype):
    yield "uint8", [make_torch((3, 4), "uint8", 1)], {"scale": 0.5, "zero_point": 3}
    yield "int8 transposed", [make_torch((4, 3), "int8", 2).t()], {"scale": 0.25, "zero_point": -1}
    yield "int32", [make_torch((5,), "int32", 3)], {"scale": 2.0, "zero_point": 0}


def _make_per_tensor(lib, ints, scale, zero_point):
    return _per_tensor(lib, lib._make_per_tensor_quantized_tensor(ints, scale, zero_point))


def make_channel_samples(dtype):
    yield "uint8 axis 1", [make_torch((3, 4), "uint8", 1)], {
        "scales": torch.tensor([0.5, 0.25, 1.0, 2.0], dtype=torch.float64), "zero_points": torch.tensor([0, 1, 2, 3]),
        "axis": 1}
    yield "int8 axis 0", [make_torch((2, 5), "int8", 2)], {
        "scales": torch.tensor([0.5, 0.1], dtype=torch.float64), "zero_points": torch.tensor([-1, 4]), "axis": 0}


def _make_per_channel(lib, ints, scales, zero_points, axis):
    return _per_channel(lib, lib._make_per_channel_quantized_tensor(ints, _lib_tensor(lib, scales),
                                                                    _lib_tensor(lib, zero_points), axis))


def _empty_affine(lib, size, **k):
    q = lib._empty_affine_quantized(size, scale=k["scale"], zero_point=k["zero_point"], dtype=getattr(lib, k["dtype"]),
                                    device=k.get("device"))
    d = q.device
    scheme = QSCHEMES.index(str(q.qscheme()).split(".")[-1])
    return (lib.tensor(list(q.shape), device=d), lib.tensor(q.q_scale(), dtype=lib.float64, device=d),
            lib.tensor(q.q_zero_point(), device=d), lib.tensor(scheme, device=d), lib.tensor(q.is_quantized, device=d))


def _empty_per_channel(lib, size, **k):
    q = lib._empty_per_channel_affine_quantized(size, scales=lib.tensor([0.5, 0.25]), zero_points=lib.tensor([1, 2]),
                                                axis=k["axis"], dtype=getattr(lib, k["dtype"]),
                                                device=k.get("device"))
    d = q.device
    return (lib.tensor(list(q.shape), device=d), q.q_per_channel_scales().to(d), q.q_per_channel_zero_points().to(d),
            lib.tensor(q.q_per_channel_axis(), device=d))


def _dequantize_list(lib, x):
    return tuple(lib.dequantize([x, x * 2]))


EXACT = {"rtol": 0, "atol": 0}
QUANTIZE = dict(dtypes=("float32",), supports_out=False, exempt=NOT_DIFFERENTIABLE, **EXACT)

register(
    OpInfo("quantize_per_tensor", _quantize_per_tensor, sample_inputs=per_tensor_samples,
           covers=("int_repr", "q_scale", "q_zero_point", "qscheme"), **QUANTIZE),
    OpInfo("quantize_per_tensor[tensor_qparams]", _quantize_tensor_qparams, sample_inputs=per_tensor_samples,
           **QUANTIZE),
    OpInfo("quantize_per_tensor[tensors]", _quantize_tensors, sample_inputs=per_tensor_samples, **QUANTIZE),
    OpInfo("quantize_per_tensor_dynamic",
           lambda lib, x, dtype, reduce_range: _per_tensor(lib, lib.quantize_per_tensor_dynamic(
               x, getattr(lib, dtype), reduce_range)), sample_inputs=dynamic_samples, data_dependent=True,
           **QUANTIZE),
    OpInfo("quantize_per_channel", _quantize_per_channel, sample_inputs=per_channel_samples,
           covers=("q_per_channel_scales", "q_per_channel_zero_points", "q_per_channel_axis"), **QUANTIZE),
    # On a tensor that is not quantized, dequantize is a cast to float32 (any dtype, as torch).
    OpInfo("dequantize", lambda lib, x: lib.dequantize(x), method="dequantize", supports_out=False,
           dtypes=("bool", "uint8", "int32", "int64", "float32", "float64"), **EXACT),
    OpInfo("dequantize[tensors]", _dequantize_list, supports_out=False, 
           dtypes=("float32", "float64"), **EXACT),
    OpInfo("_make_per_tensor_quantized_tensor", _make_per_tensor, sample_inputs=make_samples, dtypes=("uint8",),
           supports_out=False, exempt=NOT_DIFFERENTIABLE, **EXACT),
    OpInfo("_make_per_channel_quantized_tensor", _make_per_channel, sample_inputs=make_channel_samples,
           dtypes=("uint8",), supports_out=False, exempt=NOT_DIFFERENTIABLE, **EXACT),
    OpInfo("_empty_affine_quantized", _empty_affine, arity=0, dtypes=("float32",), supports_out=False,
           exempt=NOT_DIFFERENTIABLE,
           sample_inputs=lambda dtype: [(f"{t}", [], {"size": [2, 3], "scale": 0.5, "zero_point": z, "dtype": t})
                                        for t, z in (("quint8", 7), ("qint8", -2), ("qint32", 0))]),
    OpInfo("_empty_per_channel_affine_quantized", _empty_per_channel, arity=0, dtypes=("float32",),
           supports_out=False, exempt=NOT_DIFFERENTIABLE,
           sample_inputs=lambda dtype: [("axis 0", [], {"size": [2, 3], "axis": 0, "dtype": "quint8"}),
                                        ("axis 1 qint8", [], {"size": [4, 2], "axis": 1, "dtype": "qint8"})]),
)
