"""The rest of the quantized tensor: the sub-byte dtypes quint4x2 and quint2x4 (two or four
values packed into each byte, low bits first) and quantized tensors on the meta device
(QuantizedMeta), against torch 1.13.

Torch 1.13 quantizes, dequantizes, prints, compares and saves sub-byte tensors but cannot
clone or copy them ("copy_kernel" not implemented), nor quantize them per channel with integer
zero points; it slices them by bytes rather than elements, reading the wrong values. Tessera
does the first three (checked against torch's quint8 result clamped to the 4- or 2-bit range,
which is the same arithmetic) and refuses views that would need an element offset, with a
clear error. Torch 1.13 has the QuantizedMeta key but no kernels for it; current torch makes
quantized meta tensors with _empty_affine_quantized and _empty_per_channel_affine_quantized;
tessera runs every quantized operator on them (shapes, dtypes and qparams, no data)."""
import io
import pickle

import numpy as np
import pytest
import torch

import tessera

SUB_BYTE = {"quint4x2": 4, "quint2x4": 2}
X = np.array([0.1, 0.25, 0.5, 1.0, 1.5, -0.3, 2.0, 0.05, 0.15, -1.0, 0.35], dtype=np.float32)


def _t(lib, arr):
    return lib.from_numpy(np.ascontiguousarray(arr, dtype=np.float32))


def _arr(shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 2).astype(np.float32)


def _pt(lib, arr, scale, zero_point, dtype):
    return lib.quantize_per_tensor(_t(lib, arr), scale, zero_point, getattr(lib, dtype))


def _unpacked(packed, bits, n):
    """The n values a packed byte array holds, low bits first."""
    per_byte = 8 // bits
    b = np.asarray(packed, dtype=np.uint8)
    return np.stack([(b >> (j * bits)) & ((1 << bits) - 1) for j in range(per_byte)], 1).reshape(-1)[:n]


def _same_values(ts, th):
    np.testing.assert_array_equal(ts.dequantize().numpy(), th.dequantize().numpy())


# ---------------------------------------------------------------------------- sub-byte dtypes

@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_sub_byte_dtype_objects(name):
    ts, th = getattr(tessera, name), getattr(torch, name)
    assert repr(ts) == repr(th).replace("torch", "tessera")
    assert ts.is_floating_point == th.is_floating_point and ts.is_complex == th.is_complex
    assert ts.itemsize == 1
    with pytest.raises(RuntimeError, match="isSignedType not supported for quantized types"):
        ts.is_signed
    with pytest.raises(RuntimeError, match="isSignedType not supported for quantized types"):
        th.is_signed
    assert pickle.loads(pickle.dumps(ts)) is ts


@pytest.mark.parametrize("name", list(SUB_BYTE))
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 11, 64, 1001])
@pytest.mark.parametrize("qparams", [(0.1, 2), (0.25, 0), (0.037, 1), (0.5, 20), (1.0, 255)])
def test_quantize_per_tensor_matches_torch(name, n, qparams):
    arr = np.resize(X, n) if n <= len(X) else _arr(n, seed=n)
    th, ts = _pt(torch, arr, *qparams, name), _pt(tessera, arr, *qparams, name)
    assert ts.dtype == getattr(tessera, name) and ts.shape == th.shape and ts.stride() == th.stride()
    assert ts.element_size() == th.element_size() == 1
    assert (ts.q_scale(), ts.q_zero_point()) == (th.q_scale(), th.q_zero_point())
    np.testing.assert_array_equal(ts.int_repr().numpy(), th.int_repr().numpy())  # the packed bytes
    _same_values(ts, th)
    assert ts.storage().nbytes() == th.storage().nbytes()


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_edge_values_round_half_even_and_saturate(name):
    arr = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.5, 100.0, -100.0, 7.5, 8.5, 14.5, 15.5, float("nan"),
                    float("-inf"), 0.0, -0.0], dtype=np.float32)
    th, ts = _pt(torch, arr, 1.0, 1, name), _pt(tessera, arr, 1.0, 1, name)
    np.testing.assert_array_equal(ts.int_repr().numpy(), th.int_repr().numpy())
    _same_values(ts, th)


@pytest.mark.parametrize("name", list(SUB_BYTE))
@pytest.mark.parametrize("shape, make", [((3, 4), lambda a: a), ((4, 3), lambda a: a.T),
                                         ((2, 3, 4, 5), lambda a: a)])
def test_multi_dim_and_strided_inputs(name, shape, make):
    src = make(_arr(shape, seed=3))
    th = torch.quantize_per_tensor(torch.from_numpy(np.array(src)), 0.2, 3, getattr(torch, name))
    ts = tessera.quantize_per_tensor(tessera.from_numpy(np.array(src)), 0.2, 3, getattr(tessera, name))
    assert ts.is_contiguous() and ts.shape == th.shape
    np.testing.assert_array_equal(ts.int_repr().numpy(), th.int_repr().numpy())
    _same_values(ts, th)
    # a channels_last input gives a contiguous sub-byte tensor with the same values
    if len(shape) == 4:
        cl = tessera.from_numpy(src).contiguous(memory_format=tessera.channels_last)
        q = tessera.quantize_per_tensor(cl, 0.2, 3, getattr(tessera, name))
        assert q.is_contiguous()
        _same_values(q, th)


@pytest.mark.parametrize("name", list(SUB_BYTE))
@pytest.mark.parametrize("axis", [0, 1])
def test_per_channel_float_qparams_match_torch(name, axis):
    arr = _arr((3, 5), seed=axis)
    n = arr.shape[axis]
    scales, zps = [0.1, 0.2, 0.3, 0.15, 0.4][:n], [0.5, 1.0, 2.25, 0.0, 3.0][:n]
    th = torch.quantize_per_channel(torch.from_numpy(arr), torch.tensor(scales), torch.tensor(zps), axis,
                                    getattr(torch, name))
    ts = tessera.quantize_per_channel(tessera.from_numpy(arr), tessera.tensor(scales), tessera.tensor(zps), axis,
                                      getattr(tessera, name))
    assert str(ts.qscheme()).endswith("per_channel_affine_float_qparams") and ts.q_per_channel_axis() == axis
    np.testing.assert_array_equal(ts.int_repr().numpy(), th.int_repr().numpy())
    _same_values(ts, th)


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_per_channel_integer_zero_points(name):
    """torch 1.13 has no kernel for this; its quint8 result clamped to the sub-byte range is the
    same arithmetic (clamping twice is clamping once to the narrower range)."""
    arr = _arr((4, 6), seed=9)
    scales, zps = torch.tensor([0.1, 0.3, 0.05, 0.7]), torch.tensor([0, 2, 1, 3])
    ts = tessera.quantize_per_channel(tessera.from_numpy(arr), tessera.from_numpy(scales.numpy()),
                                      tessera.from_numpy(zps.numpy()), 0, getattr(tessera, name))
    wide = torch.quantize_per_channel(torch.from_numpy(arr), scales, zps, 0, torch.quint8).int_repr().numpy()
    want = np.clip(wide, 0, (1 << SUB_BYTE[name]) - 1)
    got = _unpacked(ts.int_repr().numpy(), SUB_BYTE[name], arr.size).reshape(arr.shape)
    np.testing.assert_array_equal(got, want)
    deq = (want.astype(np.float32) - zps.numpy()[:, None].astype(np.float32)) * scales.double().numpy()[:, None]
    np.testing.assert_array_equal(ts.dequantize().numpy(), deq.astype(np.float32))


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_zero_point_checked_against_the_stored_byte_as_torch(name):
    for lib in (torch, tessera):
        with pytest.raises(RuntimeError, match="zero_point -1 is below lower bound"):
            _pt(lib, X, 0.1, -1, name)
        with pytest.raises(RuntimeError, match="zero_point 256 is above upper bound"):
            _pt(lib, X, 0.1, 256, name)
        with pytest.raises(RuntimeError, match="dtype QUInt[42]x[42]\\s?not supported"):
            lib.quantize_per_tensor_dynamic(_t(lib, X), getattr(lib, name), False)


@pytest.mark.parametrize("name", list(SUB_BYTE))
@pytest.mark.parametrize("expr", ["q.view(11, 1)", "q.reshape(1, 11)", "q.view(11, 1).t()", "q.unsqueeze(0)",
                                  "q.view(1, 11).squeeze()", "q.flatten()", "q[:5]", "q[:4]", "q.view(11, 1)[:3]"])
def test_views_that_stay_packed(name, expr):
    th, ts = _pt(torch, X, 0.1, 2, name), _pt(tessera, X, 0.1, 2, name)
    got = eval(expr, {"q": ts})
    want_values = eval(expr, {"q": th.dequantize()})
    assert got.shape == want_values.shape and got.data_ptr() == ts.data_ptr()
    np.testing.assert_array_equal(got.dequantize().numpy(), want_values.numpy())
    # int_repr of a leading slice: the packed bytes of those elements alone, as torch packs them
    fresh = torch.quantize_per_tensor(torch.from_numpy(want_values.numpy().reshape(-1).copy()), 0.1, 2,
                                      getattr(torch, name))
    np.testing.assert_array_equal(got.int_repr().numpy(), fresh.int_repr().numpy())


@pytest.mark.parametrize("name", list(SUB_BYTE))
@pytest.mark.parametrize("expr", ["q[1:3]", "q[1]", "q[-1]", "q[::2]", "q.view(11, 1).expand(11, 2)",
                                  "q2.t()", "q2[1]", "q2[:, 1:]", "q2.permute(1, 0)", "q.as_strided((2,), (1,), 1)"])
def test_views_that_would_split_a_byte_refused(name, expr):
    ts = _pt(tessera, X, 0.1, 2, name)
    q2 = _pt(tessera, _arr((3, 4)), 0.1, 2, name)
    with pytest.raises(NotImplementedError, match="packs several elements into each byte"):
        eval(expr, {"q": ts, "q2": q2})


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_clone_copy_and_equal(name):
    th, ts = _pt(torch, X, 0.1, 2, name), _pt(tessera, X, 0.1, 2, name)
    c = ts.clone()
    assert c.data_ptr() != ts.data_ptr() and tessera.equal(c, ts)
    _same_values(c, th)
    np.testing.assert_array_equal(c.int_repr().numpy(), th.int_repr().numpy())
    other = _pt(tessera, -X, 0.1, 2, name)
    assert not tessera.equal(other, ts)
    other.copy_(ts)  # quantized into quantized: the integers and the qparams
    assert tessera.equal(other, ts)
    target = tessera._empty_affine_quantized([11], scale=0.1, zero_point=2, dtype=getattr(tessera, name))
    target.copy_(_t(tessera, X))  # a float source is quantized with the target's qparams
    _same_values(target, th)
    assert tessera.equal(ts[:5], _pt(tessera, X[:5], 0.1, 2, name))  # the bits past a leading slice do not count
    with pytest.raises(RuntimeError, match="needs the same shape"):
        tessera._empty_affine_quantized([5], scale=0.1, zero_point=2, dtype=getattr(tessera, name)).copy_(ts[:1])
    with pytest.raises(NotImplementedError, match="memory format"):
        tessera._empty_affine_quantized([1, 2, 2, 2], dtype=getattr(tessera, name),
                                        memory_format=tessera.channels_last)


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_writes_through_a_leading_slice_keep_the_next_elements(name):
    """q[:5] ends inside a byte whose other bits are q[5]'s (and q[6], q[7]'s for quint2x4)."""
    ts = _pt(tessera, X, 0.1, 2, name)
    before = ts.dequantize().numpy()
    head = ts[:5]
    head.copy_(_t(tessera, -X[:5]))
    np.testing.assert_array_equal(ts.dequantize().numpy()[5:], before[5:])
    np.testing.assert_array_equal(ts.dequantize().numpy()[:5], _pt(tessera, -X[:5], 0.1, 2, name).dequantize().numpy())
    head.copy_(_pt(tessera, X[:5], 0.1, 2, name))
    np.testing.assert_array_equal(ts.dequantize().numpy(), before)


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_zero_scale_as_torch(name):
    """torch's sub-byte kernel quantizes with 1 / scale taken as 1 when the scale is 0."""
    arr = np.array([0.0, 1.0, 2.0, 3.0, -1.0, 0.5], dtype=np.float32)
    th, ts = _pt(torch, arr, 0.0, 2, name), _pt(tessera, arr, 0.0, 2, name)
    np.testing.assert_array_equal(ts.int_repr().numpy(), th.int_repr().numpy())


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_empty_storage_sizes_match_torch(name):
    for size in ([0], [5], [2, 3], [7, 1]):
        th = torch._empty_affine_quantized(size, scale=0.1, zero_point=0, dtype=getattr(torch, name))
        ts = tessera._empty_affine_quantized(size, scale=0.1, zero_point=0, dtype=getattr(tessera, name))
        assert ts.storage().nbytes() == th.storage().nbytes()
        assert ts.shape == th.shape and ts.stride() == th.stride()


@pytest.mark.parametrize("name", list(SUB_BYTE))
def test_repr_matches_torch(name):
    th, ts = _pt(torch, X, 0.1, 2, name), _pt(tessera, X, 0.1, 2, name)
    assert repr(ts) == repr(th).replace("torch.", "tessera.")


def _saved(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    return buf.getvalue()


def _per_channel(lib, name):
    arr = _arr((3, 5), seed=4)
    return lib.quantize_per_channel(lib.from_numpy(arr), lib.tensor([0.1, 0.2, 0.3]), lib.tensor([0.5, 1.0, 2.0]),
                                    0, getattr(lib, name))


@pytest.mark.parametrize("name", list(SUB_BYTE))
@pytest.mark.parametrize("kind", ["per_tensor", "per_channel"])
def test_save_and_load_both_ways_with_torch(name, kind):
    make = (lambda lib: _pt(lib, X, 0.1, 2, name)) if kind == "per_tensor" else (lambda lib: _per_channel(lib, name))
    th, ts = make(torch), make(tessera)
    from_tessera = torch.load(io.BytesIO(_saved(tessera, {"q": ts})))["q"]
    # (torch.equal compares numel() bytes of a sub-byte tensor, past its packed storage)
    assert from_tessera.dtype == th.dtype and from_tessera.shape == th.shape
    assert from_tessera.qscheme() == th.qscheme()
    np.testing.assert_array_equal(from_tessera.int_repr().numpy(), th.int_repr().numpy())
    np.testing.assert_array_equal(from_tessera.dequantize().numpy(), th.dequantize().numpy())
    for weights_only in (False, True):
        from_torch = tessera.load(io.BytesIO(_saved(torch, {"q": th})), weights_only=weights_only)["q"]
        assert tessera.equal(from_torch, ts) and from_torch.qscheme() == ts.qscheme()
    for copied in (pickle.loads(pickle.dumps(ts)), tessera.load(io.BytesIO(_saved(tessera, ts)))):
        assert tessera.equal(copied, ts) and copied.shape == ts.shape


def test_set_packed_quantized_checks_its_arguments():
    q = _pt(tessera, X, 0.1, 2, "quint4x2")
    with pytest.raises(RuntimeError, match="expected 6 uint8 bytes"):
        tessera._C._set_packed_quantized_(q, tessera.zeros(5, dtype=tessera.uint8))
    with pytest.raises(RuntimeError, match="expected a quint4x2 or quint2x4 tensor"):
        tessera._C._set_packed_quantized_(_pt(tessera, X, 0.1, 2, "quint8"), tessera.zeros(6, dtype=tessera.uint8))
    tessera._C._set_packed_quantized_(q, tessera.full((6,), 255, dtype=tessera.uint8))
    # the last byte's unused high bits are cleared: 11 values use 44 bits
    np.testing.assert_array_equal(q.int_repr().numpy(), [255] * 5 + [15])


# ---------------------------------------------------------------------------- QuantizedMeta

def test_empty_affine_quantized_on_meta():
    q = tessera._empty_affine_quantized([2, 3], scale=0.5, zero_point=4, dtype=tessera.quint8, device="meta")
    assert q.is_quantized and q.is_meta and q.device.type == "meta" and q.dtype == tessera.quint8
    assert (q.q_scale(), q.q_zero_point(), str(q.qscheme())) == (0.5, 4, "tessera.per_tensor_affine")
    assert q.shape == (2, 3) and q.stride() == (3, 1)
    d = q.dequantize()
    assert d.is_meta and d.dtype == tessera.float32 and d.shape == (2, 3)
    r = q.int_repr()
    assert r.is_meta and r.dtype == tessera.uint8 and r.shape == (2, 3)
    text = repr(q)
    assert "device='meta'" in text and "..." in text and "scale=0.5" in text


def test_empty_per_channel_affine_quantized_on_meta_and_its_views():
    q = tessera._empty_per_channel_affine_quantized([3, 4], scales=tessera.tensor([0.1, 0.2, 0.3],
                                                                                  dtype=tessera.float64),
                                                    zero_points=tessera.tensor([1, 2, 3]), axis=0,
                                                    dtype=tessera.qint8, device="meta")
    assert q.is_meta and q.q_per_channel_axis() == 0 and q.q_per_channel_scales().tolist() == [0.1, 0.2, 0.3]
    row = q[1]
    assert row.is_meta and str(row.qscheme()).endswith("per_tensor_affine") and row.q_scale() == 0.2
    part = q[1:]
    assert part.q_per_channel_zero_points().tolist() == [2, 3] and part.shape == (2, 4)
    assert q.unsqueeze(0).q_per_channel_axis() == 1
    with pytest.raises(RuntimeError, match="Setting strides is possible only on uniformly quantized tensor"):
        q.t()
    with pytest.raises(RuntimeError, match="length of scales must equal to channel"):
        tessera._empty_per_channel_affine_quantized([2, 4], scales=tessera.tensor([0.1, 0.2, 0.3]),
                                                    zero_points=tessera.tensor([1, 2, 3]), axis=0,
                                                    dtype=tessera.qint8, device="meta")


@pytest.mark.parametrize("dtype", ["quint8", "qint8", "qint32", "quint4x2"])
def test_quantize_meta_inputs(dtype):
    x = tessera.empty(4, 6, device="meta")
    q = tessera.quantize_per_tensor(x, 0.1, 3, getattr(tessera, dtype))
    assert q.is_meta and q.is_quantized and q.dtype == getattr(tessera, dtype) and q.shape == (4, 6)
    assert q.int_repr().shape == ((12,) if dtype == "quint4x2" else (4, 6))
    pc = tessera.quantize_per_channel(x, tessera.tensor([0.1] * 6), tessera.tensor([0] * 6), 1,
                                      getattr(tessera, dtype))
    assert pc.is_meta and pc.q_per_channel_axis() == 1
    with pytest.raises(RuntimeError, match="length of scales must equal to channel"):
        tessera.quantize_per_channel(x, tessera.tensor([0.1] * 4), tessera.tensor([0] * 4), 1,
                                     getattr(tessera, dtype))
    with pytest.raises(RuntimeError, match="Quantize only works on Float Tensor"):
        tessera.quantize_per_tensor(x.double(), 0.1, 3, getattr(tessera, dtype))
    made = tessera._make_per_tensor_quantized_tensor(tessera.empty(3, dtype=tessera.int8, device="meta"), 0.5, 1)
    assert made.is_meta and made.dtype == tessera.qint8


def test_meta_quantized_clone_empty_like_copy_and_to():
    cpu = tessera.quantize_per_tensor(tessera.arange(6.0).view(2, 3), 0.5, 1, tessera.quint8)
    meta = cpu.to("meta")
    assert meta.is_meta and meta.is_quantized and meta.q_scale() == 0.5 and meta.shape == (2, 3)
    for made in (meta.clone(), tessera.empty_like(meta), tessera.empty_like(cpu, device="meta")):
        assert made.is_meta and made.is_quantized and made.q_zero_point() == 1 and made.shape == (2, 3)
    target = tessera.empty_like(meta)
    assert target.copy_(tessera.empty(2, 3, device="meta")) is target  # quantizing on meta: shapes only
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        cpu.copy_(meta)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        cpu.copy_(tessera.empty(2, 3, device="meta"))
    view = meta.view(3, 2).transpose(0, 1)
    assert view.is_meta and view.shape == (2, 3) and view.stride() == (1, 2)
