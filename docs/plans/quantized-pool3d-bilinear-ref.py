"""NumPy reference for torch 1.13.1 (Debian python3-torch: CPU, AVX2 dispatch, GCC 12 with
-ffp-contract=fast, no FBGEMM) quantized avg_pool3d, adaptive_avg_pool3d and
upsample_bilinear2d / F.interpolate(mode='bilinear').  Rules: quantized-pool3d-bilinear-torch113.md.

Inputs are described as a C++ kernel sees them: `q` = the raw integers in LOGICAL order (numpy
array of the logical shape), `strides` = the quantized input's element strides, `dtype` in
('quint8', 'qint8', 'qint32'), per-tensor `scale` (python float = C++ double) and `zp`.

Public entry points (each returns the output's logical integers and its element strides):
    qavg_pool3d(q, strides, dtype, scale, zp, kernel_size, stride=(), padding=0,
                ceil_mode=False, count_include_pad=True, divisor_override=None) -> (ints, ostrides)
    qadaptive_avg_pool3d(q, strides, dtype, scale, zp, output_size) -> (ints, ostrides, path)
    qupsample_bilinear2d(q, strides, dtype, zp, output_size, align_corners,
                         scales_h=None, scales_w=None) -> (ints, ostrides, path)
    interpolate_bilinear(q, strides, dtype, zp, size=None, scale_factor=None,
                         align_corners=None, recompute_scale_factor=None) -> (ints, ostrides, path)
Errors are raised with torch's exception type and message (segfaults become SystemError).
Output qparams are always the input's (scale, zp, dtype).

Run `/usr/bin/python3 quantized-pool3d-bilinear-ref.py [cases] [seed]` to compare with torch.
"""
import math
import os
import sys
import importlib.util
import numpy as np

f32 = np.float32
QI = {'quint8': (np.uint8, 0, 255), 'qint8': (np.int8, -128, 127),
      'qint32': (np.int32, -2**31, 2**31 - 1)}
INT32_FLOAT_MAX = f32(2**31 - 128)   # QuantizeAvx2's int32_float_max_val (2147483520)


# ----------------------------------------------------------------------------- layouts
def contig_strides(sizes):
    """Contiguous strides; c10 uses max(size, 1)."""
    st, acc = [], 1
    for s in reversed(sizes):
        st.append(acc)
        acc *= max(s, 1)
    return list(reversed(st))


def cl_strides(sizes):
    """c10 get_channels_last_strides_{2d,3d} (4-d: ChannelsLast, 5-d: ChannelsLast3d).
    NOTE: no max(size, 1): (2,3,0,2,3) -> (0,1,18,9,3)."""
    n = len(sizes)
    st = [0] * n
    st[1] = 1
    st[n - 1] = sizes[1]
    for d in range(n - 2, 1, -1):
        st[d] = st[d + 1] * sizes[d + 1]
    st[0] = st[2] * sizes[2]
    return st


def is_contiguous(sizes, strides):
    if int(np.prod(sizes)) == 0:
        return True
    exp = 1
    for s, st in zip(reversed(sizes), reversed(strides)):
        if s != 1:
            if st != exp:
                return False
            exp *= s
    return True


def _cl_order(n):
    return (1, 3, 2, 0) if n == 4 else (1, 4, 3, 2, 0) if n == 5 else None


def is_cl_contiguous(sizes, strides):
    """is_contiguous(ChannelsLast) for 4-d, is_contiguous(ChannelsLast3d) for 5-d
    (compute_channels_last_contiguous_{2d,3d}: size-1 dims ignored)."""
    order = _cl_order(len(sizes))
    if order is None:
        return False
    exp = 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != exp:
                return False
            exp *= sizes[d]
    return True


def is_cl_strides_like(sizes, strides):
    """is_channels_last_strides_{2d,3d}_s{4,5}: what suggest_memory_format() asks."""
    order = _cl_order(len(sizes))
    if order is None or strides[1] == 0:
        return False
    mn = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < mn:
            return False
        if d == 0 and mn == strides[1]:
            return False
        mn = strides[d]
        if sizes[d] > 1:
            mn *= sizes[d]
    return True


def suggest_memory_format(sizes, strides):
    """'cl' = ChannelsLast (4-d) / ChannelsLast3d (5-d); else 'contig'."""
    return 'cl' if is_cl_strides_like(sizes, strides) else 'contig'


def strides_for(sizes, fmt):
    return cl_strides(sizes) if fmt == 'cl' else contig_strides(sizes)


def gather(buf, sizes, strides):
    """The logical tensor of `sizes` that views the flat `buf` through `strides`."""
    if int(np.prod(sizes)) == 0:
        return np.zeros(sizes, buf.dtype)
    idx = np.zeros(sizes, np.int64)
    for d, (s, st) in enumerate(zip(sizes, strides)):
        shp = [1] * len(sizes)
        shp[d] = s
        idx = idx + (np.arange(s) * st).reshape(shp)
    return buf[idx]


def to_storage(q, strides):
    """Flat memory of a (non-overlapping) strided tensor holding logical `q`."""
    n = 1 + sum((s - 1) * st for s, st in zip(q.shape, strides)) if q.size else 1
    buf = np.zeros(n, np.int64)
    if q.size:
        buf[gather(np.arange(n), list(q.shape), strides)] = q
    return buf


def wrap32(a):
    return ((np.asarray(a, np.int64) + 2**31) % 2**32) - 2**31


# ----------------------------------------------------------------------------- arithmetic
def quantize_val(scale_d, zp, v, lo, hi):
    """at::native::quantize_val (no FBGEMM; quantize_vec loops over it):
    inv = 1.0f/(float)scale; q = (int64)(float(zp) + nearbyint(v*inv)) (float32 add); clamp.
    NaN/inf -> INT64_MIN (x86 cvttss2si) -> qmin."""
    inv = f32(1.0) / f32(scale_d) if f32(scale_d) != 0 else f32(np.inf)
    with np.errstate(all='ignore'):
        t = np.asarray(v, dtype=f32) * inv
        s = (f32(zp) + np.rint(t)).astype(f32)
        bad = ~np.isfinite(s) | (s >= f32(2.0**63)) | (s < f32(-2.0**63))
        qv = np.where(bad, -2**63, np.where(bad, f32(0), s).astype(np.int64))
    return np.clip(qv, lo, hi)


def quantize_avx2(acc_f, multiplier, zp, lo, hi):
    """QuantizeAvx2<uint8/int8> (avg_pool3d vector channels): t = x*multiplier (float);
    _mm256_min_ps(t, 2147483520f) (a NaN t becomes 2147483520); cvtps_epi32 (RNE; out of range
    -> INT32_MIN); + zp with int32 wrap; clamp to [qmin, qmax]."""
    with np.errstate(all='ignore'):
        t = (np.asarray(acc_f, f32) * f32(multiplier)).astype(f32)
        t = np.where(np.isnan(t), INT32_FLOAT_MAX, np.minimum(t, INT32_FLOAT_MAX))
        r = np.rint(t.astype(np.float64))
        r = np.where(r < -2.0**31, -2.0**31, r).astype(np.int64)
    return np.clip(wrap32(r + zp), lo, hi)


def fma32(a, b, c):
    """Correctly rounded float32 fma(a, b, c): the product is exact in float64; the float64 sum
    is made round-to-odd (two-sum) so the final rounding to float32 is correct."""
    a, b, c = (np.asarray(x, f32).astype(np.float64) for x in (a, b, c))
    p = a * b
    s = p + c
    bp = s - p
    err = (p - (s - bp)) + (c - bp)
    si = s.view(np.int64)
    fix = (err != 0) & ((si & 1) == 0)
    s2 = np.where(fix, np.where((err > 0) == (s > 0), si + 1, si - 1), si).view(np.float64)
    return np.where(s == 0, s, s2).astype(f32)


# ----------------------------------------------------------------------------- avg_pool3d
def _pool_out(i, k, p, s, ceil):
    """pooling_output_shape (Pool.h, 1.13) incl. its checks, per dim."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError("pad must be non-negative, but got pad: %d" % p)
    if p > int(k / 2):   # C++ int division truncates
        raise RuntimeError("pad should be at most half of kernel size, but got pad=%d and "
                           "kernel_size=%d" % (p, k))
    num = i + 2 * p - (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1    # div_rtn = floor division
    if ceil and (o - 1) * s >= i + p:
        o -= 1
    return o


def _triple(v, name, allow_empty=False):
    v = [v] if isinstance(v, int) else list(v)
    if not (len(v) in (1, 3) or (allow_empty and len(v) == 0)):
        what = {'kernel_size': "kernel_size must either be a single int, or a tuple of three ints",
                'stride': "stride must either be omitted, a single int, or a tuple of three ints",
                'padding': "padding must either be a single int, or a tuple of three ints"}[name]
        raise RuntimeError("avg_pool3d: " + what)
    for x in v:
        if not -2**31 <= x < 2**31:
            raise RuntimeError("integer out of range")
    return v


def qavg_pool3d(q, strides, dtype, scale, zp, kernel_size, stride=(), padding=0,
                ceil_mode=False, count_include_pad=True, divisor_override=None):
    """aten::avg_pool3d, QuantizedCPU (AveragePool3d.cpp + _qavg_pool_nhwc_kernel, AVX2).
    Returns (logical ints, output element strides)."""
    q = np.asarray(q)
    npdt, lo, hi = QI[dtype]
    sizes = list(q.shape)
    nd = len(sizes)
    k = _triple(kernel_size, 'kernel_size')
    kD = k[0]; kH = k[0] if len(k) == 1 else k[1]; kW = k[0] if len(k) == 1 else k[2]
    s = _triple(stride, 'stride', allow_empty=True)
    if len(s) == 0:
        sD, sH, sW = kD, kH, kW
    else:
        sD = s[0]; sH = s[0] if len(s) == 1 else s[1]; sW = s[0] if len(s) == 1 else s[2]
    p = _triple(padding, 'padding')
    pD = p[0]; pH = p[0] if len(p) == 1 else p[1]; pW = p[0] if len(p) == 1 else p[2]
    if nd < 4:   # input.size(-4)
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got -4)"
                         % (-max(nd, 1), max(nd, 1) - 1))
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    D, H, W = sizes[-3:]
    oD = _pool_out(D, kD, pD, sD, ceil_mode)
    oH = _pool_out(H, kH, pH, sH, ceil_mode)
    oW = _pool_out(W, kW, pW, sW, ceil_mode)
    if nd != 5:   # input.contiguous(MemoryFormat::ChannelsLast3d)
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    N, C = sizes[0], sizes[1]
    oshape = [N, C, oD, oH, oW]
    for d in oshape:
        if d < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: [%s]"
                               % (d, ", ".join(map(str, oshape))))
    # input_nhwc = input.contiguous(CL3d): kept as is when already CL3d-contiguous
    in_str = list(strides) if is_cl_contiguous(sizes, strides) else cl_strides(sizes)
    ostr = strides_for(oshape, suggest_memory_format(sizes, in_str))
    out = np.zeros((N, oD, oH, oW, C), np.int64)      # what the kernel writes: packed NDHWC
    x = q.astype(np.int64)
    vec = 0 if dtype == 'qint32' else C // 8 * 8      # do_avg_pool_nhwc_on_AVX_n: 8 lanes
    sc = f32(scale)
    for od in range(oD):
        for oh in range(oH):
            for ow in range(oW):
                ds, hs, ws = od * sD - pD, oh * sH - pH, ow * sW - pW
                de, he, we = min(ds + kD, D + pD), min(hs + kH, H + pH), min(ws + kW, W + pW)
                pool = (de - ds) * (he - hs) * (we - ws)
                ds, hs, ws = max(ds, 0), max(hs, 0), max(ws, 0)
                de, he, we = min(de, D), min(he, H), min(we, W)
                size = (de - ds) * (he - hs) * (we - ws)
                dv = divisor_override if divisor_override else (pool if count_include_pad else size)
                with np.errstate(all='ignore'):
                    mult = f32(f32(sc / sc) / f32(dv))
                if de > ds and he > hs and we > ws:
                    ssum = x[:, :, ds:de, hs:he, ws:we].reshape(N, C, size).sum(-1)
                else:
                    ssum = np.zeros((N, C), np.int64)
                acc = wrap32(ssum + wrap32(-zp * size))      # int32 accumulator
                acc_f = acc.astype(f32)
                res = np.empty((N, C), np.int64)
                if vec:
                    res[:, :vec] = quantize_avx2(acc_f[:, :vec], mult, zp, lo, hi)
                with np.errstate(all='ignore'):
                    sc_scalar = float(f32(1.0) / mult)       # quantize_val(1.0f / multiplier, ...)
                res[:, vec:] = quantize_val(sc_scalar, zp, acc_f[:, vec:], lo, hi)
                out[:, od, oh, ow, :] = res
    return gather(out.reshape(-1), oshape, ostr).astype(npdt), ostr


# ----------------------------------------------------------------------------- adaptive
_MEAN_REF = None


def _mean_ref():
    global _MEAN_REF
    if _MEAN_REF is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'quantized-mean-std-ref.py')
        spec = importlib.util.spec_from_file_location('qmean_ref', path)
        _MEAN_REF = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_MEAN_REF)
    return _MEAN_REF


def _qmean_last3(q, strides, dtype, scale, zp):
    """input.mean({-1,-2,-3}, keepdim=True) on a quantized tensor (see quantized-mean-std-torch113.md).
    The fallback dequantizes into suggest_memory_format() (incl. ChannelsLast3d, which
    quantized-mean-std-ref.py's dequantize_layout does not model), then float mean, then quantize."""
    m = _mean_ref()
    sizes = list(q.shape)
    nd = len(sizes)
    if nd < 3:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got -3)"
                         % (-max(nd, 1), max(nd, 1) - 1))
    oshape = sizes[:-3] + [1, 1, 1]
    if is_contiguous(sizes, strides):
        # qmean_inner_dim_kernel; output allocated in input.suggest_memory_format()
        ostr = strides_for(oshape, suggest_memory_format(sizes, strides)) if nd in (4, 5) \
            else contig_strides(oshape)
        return m.qmean(q, strides, dtype, scale, zp, dim=[-3, -2, -1], keepdim=True)[0], ostr, 'mean-fast'
    fst = strides_for(sizes, suggest_memory_format(sizes, strides)) if nd in (4, 5) else contig_strides(sizes)
    buf = np.zeros(max(int(np.prod(sizes)), 1), f32)
    if q.size:
        buf[gather(np.arange(len(buf)), sizes, fst)] = m.dequantize_val(q, scale, zp)
    mean = m.float_mean(buf, sizes, fst, [nd - 3, nd - 2, nd - 1], 8).reshape(oshape)
    return m.quantize_val(scale, zp, mean, dtype), contig_strides(oshape), 'mean-fallback'


def _ada_range(o, osz, isz):
    """start_index / end_index: floor/ceil of (float)(o*isz) / (float)osz (float32)."""
    st = int(math.floor(f32(o * isz) / f32(osz)))
    en = int(math.ceil(f32((o + 1) * isz) / f32(osz)))
    return st, en


def qadaptive_avg_pool3d(q, strides, dtype, scale, zp, output_size):
    """F.adaptive_avg_pool3d on a quantized tensor (composite adaptive_avg_pool3d ->
    mean for (1,1,1), else aten::_adaptive_avg_pool3d QuantizedCPU).
    Returns (logical ints, output strides, path in {'mean-fast','mean-fallback','nhwc','nchw'})."""
    q = np.asarray(q)
    npdt, lo, hi = QI[dtype]
    sizes = list(q.shape)
    nd = len(sizes)
    osz = [output_size] * 3 if isinstance(output_size, int) else list(output_size)
    if any(o is None for o in osz):   # python _list_with_default
        if nd <= len(osz):
            raise ValueError("Input dimension should be at least %d" % (len(osz) + 1))
        osz = [v if v is not None else d for v, d in zip(osz, sizes[-len(osz):])]
    if len(osz) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if min(osz) < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or "
                           "equal to 0 but received {%d, %d,%d}" % tuple(osz))
    if osz == [1, 1, 1]:
        r, ostr, path = _qmean_last3(q, strides, dtype, scale, zp)
        return r.astype(npdt), ostr, path
    for i in range(1, nd):
        if sizes[i] <= 0:
            raise RuntimeError("adaptive_avg_pooling3d(): expected input to have non-empty spatial "
                               "dimensions, but input has sizes [%s] with dimension %d being empty"
                               % (", ".join(map(str, sizes)), i))
    if nd not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    five = nd == 5
    x5 = q.astype(np.int64) if five else q.astype(np.int64)[None]
    N, C, D, H, W = x5.shape
    oD, oH, oW = osz
    oshape = ([N] if five else []) + [C, oD, oH, oW]
    fast = is_cl_contiguous(sizes, strides)
    out5 = np.zeros((N, C, oD, oH, oW), np.int64)
    if fast:
        mem = to_storage(q.astype(np.int64), strides)
        sB = strides[0]
        sC, sD, sH, sW = strides[-4:]
        vec = 0 if dtype == 'qint32' else C // 8 * 8
        cs = np.arange(C)
        # vector lanes load 8 CONSECUTIVE elements from channel c0 (channel stride assumed 1)
        cidx = np.where(cs < vec, (cs // 8 * 8) * sC + cs % 8, cs * sC)
    for od in range(oD):
        ds, de = _ada_range(od, oD, D)
        for oh in range(oH):
            hs, he = _ada_range(oh, oH, H)
            for ow in range(oW):
                ws, we = _ada_range(ow, oW, W)
                kD, kH, kW = de - ds, he - hs, we - ws
                size = kD * kH * kW
                if fast:
                    sp = (np.arange(ds, de)[:, None, None] * sD + np.arange(hs, he)[None, :, None] * sH
                          + np.arange(ws, we)[None, None, :] * sW).reshape(-1)
                    mult = f32(f32(f32(scale) / f32(scale)) / f32(size))
                    for b in range(N):
                        ssum = mem[b * sB + cidx[:, None] + sp[None, :]].sum(-1)
                        acc = wrap32(ssum + wrap32(-zp * size))
                        out5[b, :, od, oh, ow] = quantize_val(float(f32(1.0) / mult), zp,
                                                              acc.astype(f32), lo, hi)
                else:
                    ssum = x5[:, :, ds:de, hs:he, ws:we].reshape(N, C, size).sum(-1)
                    kDr = f32(1.0 / kD)
                    kDHr = f32(kDr / f32(kH))
                    r = f32(kDHr / f32(kW))
                    v = np.rint((ssum.astype(f32) * r).astype(f32))
                    out5[:, :, od, oh, ow] = _cast_underlying(v, dtype)
    if not fast:
        return out5.reshape(oshape).astype(npdt), contig_strides(oshape), 'nchw'
    ostr = strides_for(oshape, suggest_memory_format(sizes, strides))
    buf = out5.transpose(0, 2, 3, 4, 1).reshape(-1)     # written packed N,oD,oH,oW,C
    return gather(buf, oshape, ostr).astype(npdt), ostr, 'nhwc'


def _cast_underlying(v, dtype):
    """static_cast<underlying>(float) as GCC emits it on x86: cvttss2si to 32 bits (out of
    range -> INT32_MIN), then truncation to 8 bits for (u)int8. Means stay in range anyway."""
    v = np.asarray(v, np.float64)
    with np.errstate(all='ignore'):
        r = np.where(np.isfinite(v) & (v < 2.0**31) & (v >= -2.0**31), v, -2.0**31).astype(np.int64)
    if dtype == 'quint8':
        return r & 0xFF
    if dtype == 'qint8':
        return ((r + 128) & 0xFF) - 128
    return r


# ----------------------------------------------------------------------------- bilinear
def _area_scale(isz, osz, align, scale):
    """area_pixel_compute_scale<float>."""
    if align:
        return f32(f32(isz - 1) / f32(osz - 1)) if osz > 1 else f32(0)
    if scale is not None and scale > 0:
        return f32(1.0 / scale)
    with np.errstate(all='ignore'):
        return f32(f32(isz) / f32(osz))


def _src_params(isz, osz, align, scale, fused):
    """area_pixel_compute_source_index<float> + the kernels' index/lambda math.
    align: r*dst.  else: r*(dst+0.5f)-0.5f; in the AVX2 (NHWC) kernel GCC fuses it to
    fma(r, dst+0.5f, -0.5f); the NCHW kernel (baseline build) rounds twice. <0 -> 0."""
    r = _area_scale(isz, osz, align, scale)
    dst = np.arange(osz, dtype=np.int64).astype(f32)
    if align:
        src = (r * dst).astype(f32)
    else:
        src = fma32(r, dst + f32(0.5), f32(-0.5)) if fused else \
            ((r * (dst + f32(0.5))).astype(f32) - f32(0.5)).astype(f32)
        src = np.where(src < 0, f32(0), src).astype(f32)
    i1 = src.astype(np.int64)                 # truncation
    i1p = (i1 < isz - 1).astype(np.int64)
    l1 = (src - i1.astype(f32)).astype(f32)
    l0 = (f32(1) - l1).astype(f32)
    return i1, i1p, l0, l1


def qupsample_bilinear2d(q, strides, dtype, zp, output_size, align_corners,
                         scales_h=None, scales_w=None):
    """aten::upsample_bilinear2d QuantizedCPU (UpSampleBilinear2d.cpp + qupsample_bilinear2d_nhwc_kernel).
    Returns (logical ints, output strides, path in {'copy','nchw','nhwc'})."""
    q = np.asarray(q)
    npdt, lo, hi = QI[dtype]
    osz = list(output_size)
    if len(osz) != 2:
        raise RuntimeError("It is expected output_size equals to 2, but got size %d" % len(osz))
    if q.ndim != 4:
        raise RuntimeError("Non-empty 4D data tensor expected but got a tensor with sizes [%s]"
                           % ", ".join(map(str, q.shape)))
    N, C, H, W = q.shape
    oH, oW = osz
    if not (W > 0 and oW > 0):
        raise RuntimeError('input_width > 0 && output_width > 0 INTERNAL ASSERT FAILED at '
                           '"./aten/src/ATen/native/quantized/cpu/UpSampleBilinear2d.cpp":161, '
                           'please report a bug to PyTorch. ')
    oshape = [N, C, oH, oW]
    for d in oshape:
        if d < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: [%s]"
                               % (d, ", ".join(map(str, oshape))))
    nhwc = is_cl_contiguous(list(q.shape), strides)
    if H == 0 and oH > 0 and N * C > 0:
        raise SystemError("segmentation fault in torch 1.13 (input height 0, output height > 0)")
    if not nhwc and H == oH and W == oW:
        return q.astype(npdt).copy(), contig_strides(oshape), 'copy'     # memcpy special case
    if N * C * oH * oW == 0:
        ostr = strides_for(oshape, suggest_memory_format(list(q.shape), strides)) if nhwc \
            else contig_strides(oshape)
        return np.zeros(oshape, npdt), ostr, 'nhwc' if nhwc else 'nchw'
    h1, h1p, h0l, h1l = _src_params(H, oH, align_corners, scales_h, nhwc)
    w1, w1p, w0l, w1l = _src_params(W, oW, align_corners, scales_w, nhwc)
    x = q.astype(np.int64).astype(f32)        # int -> float (rounds for big qint32)
    A = x[:, :, h1[:, None], w1[None, :]]
    B = x[:, :, h1[:, None], (w1 + w1p)[None, :]]
    Cc = x[:, :, (h1 + h1p)[:, None], w1[None, :]]
    D = x[:, :, (h1 + h1p)[:, None], (w1 + w1p)[None, :]]
    H0, H1 = h0l[:, None], h1l[:, None]
    W0, W1 = w0l[None, :], w1l[None, :]
    zin = f32(zp)
    # requantization scale = (float)(out.q_scale()/in.q_scale()) = 1.0f: quantize_val(1.0, zp, r)
    if not nhwc:
        t1 = (W0 * A).astype(f32) + (W1 * B).astype(f32)
        t2 = (W0 * Cc).astype(f32) + (W1 * D).astype(f32)
        r = ((H0 * t1).astype(f32) + (H1 * t2).astype(f32)).astype(f32) - zin
        return quantize_val(1.0, zp, r.astype(f32), lo, hi).astype(npdt), contig_strides(oshape), 'nchw'
    # AVX2 vector lanes (8-bit dtypes, channels c < C//8*8):
    t1v = fma32(W1, B, (W0 * A).astype(f32))
    t2v = fma32(W1, D, (W0 * Cc).astype(f32))
    rv = (fma32(H1, t2v, (H0 * t1v).astype(f32)) - zin).astype(f32)
    # scalar tail (and every qint32 channel):
    t1s = fma32(W0, A, (W1 * B).astype(f32))
    t2s = fma32(W0, Cc, (W1 * D).astype(f32))
    rs = (fma32(H0, t1s, (H1 * t2s).astype(f32)) - zin).astype(f32)
    vec = 0 if dtype == 'qint32' else C // 8 * 8
    r = np.where((np.arange(C) < vec)[None, :, None, None], rv, rs).astype(f32)
    res = quantize_val(1.0, zp, r, lo, hi)
    ostr = strides_for(oshape, suggest_memory_format(list(q.shape), strides))
    buf = res.transpose(0, 2, 3, 1).reshape(-1)      # written packed N,oH,oW,C
    return gather(buf, oshape, ostr).astype(npdt), ostr, 'nhwc'


def interpolate_bilinear(q, strides, dtype, zp, size=None, scale_factor=None,
                         align_corners=None, recompute_scale_factor=None):
    """torch.nn.functional.interpolate(mode='bilinear') in 1.13 on a quantized tensor."""
    q = np.asarray(q)
    if align_corners is None:
        align_corners = False
    dim = q.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, "
                                 "but got input with spatial dimensions of %s and output size of %s. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "output size in (o1, o2, ...,oK) format." % (list(q.shape[2:]), size))
            output_size = list(size)
        else:
            output_size = [size] * dim
        scale_factors = None
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial "
                                 "dimensions, but got input with spatial dimensions of %s and "
                                 "scale_factor of shape %s. Please provide input tensor in (N, C, "
                                 "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                                 % (list(q.shape[2:]), scale_factor))
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor:
        output_size = [int(math.floor(float(q.shape[i + 2]) * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if q.ndim != 4:
        raise NotImplementedError("Got %dD input, but bilinear mode needs 4D input" % q.ndim)
    if output_size is None:       # upsample_bilinear2d.vec: compute_output_size
        output_size = [int(float(q.shape[i + 2]) * scale_factors[i]) for i in range(2)]  # trunc
        sh, sw = scale_factors
    else:
        sh = sw = None
    return qupsample_bilinear2d(q, strides, dtype, zp, output_size, align_corners, sh, sw)


# ============================================================================= self-test
def _torch_case(torch, ints, dtype, scale, zp, layout, rng):
    TD = {'quint8': torch.uint8, 'qint8': torch.int8, 'qint32': torch.int32}
    t = torch.from_numpy(np.ascontiguousarray(ints).astype(QI[dtype][0]))
    if layout == 'cl':
        t = t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    elif layout == 'clstr':   # explicit channels-last strides even for ambiguous shapes
        mf = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
        t = torch.empty(t.shape, dtype=TD[dtype], memory_format=mf).copy_(t)
    qx = torch._make_per_tensor_quantized_tensor(t, scale, zp)
    if layout == 'perm':      # non-contiguous, non-channels-last
        qx = qx.transpose(-1, -2).contiguous().transpose(-1, -2)
    return qx


def _rand_ints(rng, dtype, shape, big=False):
    _, lo, hi = QI[dtype]
    if dtype == 'qint32' and not big:
        return rng.integers(-5000, 5000, shape), int(rng.integers(-1000, 1000))
    return rng.integers(lo, hi + 1, shape, dtype=np.int64), int(rng.integers(lo, hi + 1))


def _compare(torch, fn_torch, fn_ref):
    """-> (ok, n_elems, kind) comparing ints, strides, or error type+message."""
    try:
        y = fn_torch()
        terr = None
    except Exception as e:   # noqa
        terr = (type(e).__name__, str(e))
    try:
        r = fn_ref()
        rerr = None
    except Exception as e:   # noqa
        rerr = (type(e).__name__, str(e))
    if terr or rerr:
        if terr and rerr and terr[0] == rerr[0] and (terr[1] == rerr[1] or terr[1].startswith(rerr[1])):
            return True, 0, 'error'
        return False, 0, 'error %r vs %r' % (terr, rerr)
    yi = y.int_repr().numpy()
    ri, rst = r[0], r[1]
    ok = yi.shape == ri.shape and bool((yi == ri).all()) and list(y.stride()) == list(rst)
    return ok, yi.size, 'ok' if ok else 'MISMATCH shape %s/%s strides %s/%s ndiff %s' % (
        yi.shape, ri.shape, y.stride(), rst, (yi != ri).sum() if yi.shape == ri.shape else '-')


def _run_avg(torch, F, rng):
    dtype = ['quint8', 'qint8', 'qint32'][rng.integers(3)]
    C = int(rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 33, 64, 129, 130, 135]))
    sp = [int(rng.integers(1, 7)) for _ in range(3)]
    if rng.integers(8) == 0:
        sp = [1, 1, 1]
    shape = [int(rng.integers(1, 3)), C] + sp
    ints, zp = _rand_ints(rng, dtype, shape, big=rng.integers(4) == 0)
    scale = float(rng.choice([0.1, 0.05, 1.0, 0.37, 2.5e-3]))
    k = [int(rng.integers(1, 4)) for _ in range(3)]
    if rng.integers(3) == 0:
        k = [k[0]]
    s = [] if rng.integers(3) == 0 else [int(rng.integers(1, 4)) for _ in range(3)]
    p = [int(rng.integers(0, kk // 2 + 1)) for kk in (k * 3 if len(k) == 1 else k)]
    if rng.integers(20) == 0:
        p = [p[0] + 2, 0, 0]          # pad error
    ceil = bool(rng.integers(2)); cip = bool(rng.integers(2))
    div = int(rng.choice([1, 2, 3, 5, 7, 9, -4, 1000])) if rng.integers(3) == 0 else None
    layout = ['contig', 'cl', 'clstr', 'perm'][rng.integers(4)]
    qx = _torch_case(torch, ints, dtype, scale, zp, layout, rng)
    return _compare(torch, lambda: F.avg_pool3d(qx, k, s, p, ceil, cip, div),
                    lambda: qavg_pool3d(ints, list(qx.stride()), dtype, scale, zp, k, s, p, ceil, cip, div))


def _run_ada(torch, F, rng):
    dtype = ['quint8', 'qint8', 'qint32'][rng.integers(3)]
    C = int(rng.choice([1, 2, 3, 7, 8, 9, 16, 17, 24, 33, 40]))
    sp = [int(rng.integers(1, 8)) for _ in range(3)]
    if rng.integers(6) == 0:
        sp = [1, 1, 1]
    if rng.integers(6) == 0:
        sp[0] = 1
    five = rng.integers(3) > 0
    shape = ([int(rng.integers(1, 3))] if five else []) + [C] + sp
    ints, zp = _rand_ints(rng, dtype, shape, big=rng.integers(4) == 0)
    scale = float(rng.choice([0.1, 0.05, 1.0, 0.37]))
    osz = [int(rng.integers(1, 9)) for _ in range(3)]
    if rng.integers(12) == 0:
        osz = [1, 1, 1]
    if rng.integers(25) == 0:
        osz = [None, 2, None]
    layout = ['contig', 'cl', 'clstr', 'perm'][rng.integers(4)]
    qx = _torch_case(torch, ints, dtype, scale, zp, layout, rng)
    return _compare(torch, lambda: F.adaptive_avg_pool3d(qx, osz),
                    lambda: qadaptive_avg_pool3d(ints, list(qx.stride()), dtype, scale, zp, osz))


def _run_bil(torch, F, rng):
    dtype = ['quint8', 'qint8', 'qint32'][rng.integers(3)]
    C = int(rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 33, 64, 67]))
    shape = [int(rng.integers(1, 3)), C, int(rng.integers(1, 9)), int(rng.integers(1, 9))]
    if rng.integers(10) == 0:
        shape[2] = shape[3] = 1
    ints, zp = _rand_ints(rng, dtype, shape, big=rng.integers(4) == 0)
    scale = float(rng.choice([0.1, 0.05, 1.0]))
    layout = ['contig', 'cl', 'clstr', 'perm'][rng.integers(4)]
    qx = _torch_case(torch, ints, dtype, scale, zp, layout, rng)
    align = [None, False, True][rng.integers(3)]
    mode = rng.integers(3)
    if mode == 0:
        size = (int(rng.integers(1, 17)), int(rng.integers(1, 17)))
        kw = dict(size=size)
    else:
        sfs = [0.3, 0.5, 0.7, 1.1, 1.3, 1.5, 2.0, 2.5, 3.0, 1.7, 0.9, 4.0]
        sf = float(rng.choice(sfs)) if rng.integers(2) else (float(rng.choice(sfs)), float(rng.choice(sfs)))
        kw = dict(scale_factor=sf, recompute_scale_factor=[None, False, True][rng.integers(3)])
    return _compare(torch, lambda: F.interpolate(qx, mode='bilinear', align_corners=align, **kw),
                    lambda: interpolate_bilinear(ints, list(qx.stride()), dtype, zp,
                                                 align_corners=align, **kw))


def _edge_cases(torch, F):
    """Deterministic error / layout cases: (name, torch thunk, ref thunk)."""
    out = []
    rng = np.random.default_rng(0)

    def Q(shape, dtype='quint8', layout='contig', zp=3, scale=0.1):
        ints = _rand_ints(rng, dtype, shape)[0]
        qx = _torch_case(torch, ints, dtype, scale, zp, layout, rng)
        return qx, ints, list(qx.stride()), dtype, scale, zp

    def A(name, shape, *args, layout='contig', dtype='quint8', **kw):
        qx, ints, st, dt, sc, zp = Q(shape, dtype, layout)
        out.append((name, lambda: F.avg_pool3d(qx, *args, **kw),
                    lambda: qavg_pool3d(ints, st, dt, sc, zp, *args, **kw)))

    def B(name, shape, osz, layout='contig', dtype='quint8'):
        qx, ints, st, dt, sc, zp = Q(shape, dtype, layout)
        out.append((name, lambda: F.adaptive_avg_pool3d(qx, osz),
                    lambda: qadaptive_avg_pool3d(ints, st, dt, sc, zp, osz)))

    def U(name, shape, layout='contig', dtype='quint8', **kw):
        qx, ints, st, dt, sc, zp = Q(shape, dtype, layout)
        out.append((name, lambda: F.interpolate(qx, mode='bilinear', **kw),
                    lambda: interpolate_bilinear(ints, st, dt, zp, **kw)))

    for dt in QI:
        A('avg 4d ' + dt, (3, 4, 5, 6), 2, dtype=dt)
        A('avg 3d ' + dt, (4, 5, 6), 2, dtype=dt)
        A('avg k0 vec ' + dt, (2, 9, 2, 2, 2), (0, 1, 1), 1, dtype=dt)
        A('avg k0 vec zp200', (2, 9, 2, 2, 2), (0, 1, 1), 1, dtype=dt)
        A('avg ambiguous pad ' + dt, (1, 9, 1, 1, 1), (2, 2, 1), 1, (1, 1, 0), dtype=dt)
        B('ada 4d D=1 ' + dt, (9, 1, 3, 4), (2, 3, 2), dtype=dt)
        B('ada 1x1x1 up ' + dt, (2, 9, 1, 1, 1), (2, 3, 2), dtype=dt)
        U('bil 1x1 up ' + dt, (2, 9, 1, 1), size=(3, 4), dtype=dt)
    A('avg 2d', (5, 6), 1)
    A('avg 6d', (1, 1, 3, 4, 5, 6), 2)
    A('avg div0', (1, 3, 4, 4, 4), 2, divisor_override=0)
    A('avg k2', (1, 3, 4, 4, 4), (2, 2))
    A('avg s2', (1, 3, 4, 4, 4), 2, (1, 2))
    A('avg p2', (1, 3, 4, 4, 4), 2, 1, (1, 1))
    A('avg stride0', (1, 3, 4, 4, 4), 2, 0)
    A('avg negpad', (1, 3, 4, 4, 4), 2, 1, -1)
    A('avg bigpad', (1, 3, 4, 4, 4), 2, 1, 2)
    A('avg k too big', (1, 3, 2, 2, 2), 3)
    A('avg negative out', (1, 3, 1, 4, 4), 3)
    A('avg neg kernel', (1, 3, 4, 4, 4), (-1, 1, 1), 1)
    A('avg empty N', (0, 3, 4, 4, 4), 2)
    A('avg empty C', (2, 0, 4, 4, 4), 2)
    A('avg empty D', (2, 3, 0, 4, 4), 1)
    A('avg ambiguous clstr', (1, 9, 1, 1, 1), (2, 2, 1), 1, (1, 1, 0), layout='clstr')
    A('avg C1', (2, 1, 4, 5, 6), 2)
    B('ada 3d', (4, 5, 6), 2)
    B('ada 3d (1,1,1)', (4, 5, 6), 1)
    B('ada 2d (1,1,1)', (5, 6), 1)
    B('ada 6d', (1, 2, 3, 4, 5, 6), 2)
    B('ada out 0', (2, 3, 4, 5, 6), 0)
    B('ada out (2,0,2)', (2, 3, 4, 5, 6), (2, 0, 2))
    B('ada out (2,0,2) cl', (2, 3, 4, 5, 6), (2, 0, 2), layout='cl')
    B('ada out neg', (2, 3, 4, 5, 6), (2, -1, 2))
    B('ada out 2 elems', (2, 3, 4, 5, 6), (2, 2))
    B('ada None 2d', (5, 6), (None, 2, None))
    B('ada empty N', (0, 3, 4, 5, 6), 2)
    B('ada empty C', (2, 0, 4, 5, 6), 2)
    B('ada empty D', (2, 3, 0, 5, 6), 2)
    B('ada empty C 4d', (0, 4, 5, 6), 2)
    B('ada 4d CL', (8, 2, 3, 4), (2, 3, 2), layout='cl')
    B('ada 4d CL (1,1,1)', (8, 2, 3, 4), 1, layout='cl')
    B('ada 5d CL3d (1,1,1)', (2, 16, 5, 3, 4), 1, layout='cl')
    U('bil 3d size', (3, 4, 5), size=(3, 3))
    U('bil 3d sf', (3, 4, 5), scale_factor=2.0)
    U('bil 5d sf', (1, 3, 4, 5, 6), scale_factor=2.0)
    U('bil both', (1, 3, 4, 5), size=(3, 3), scale_factor=2.0)
    U('bil neither', (1, 3, 4, 5))
    U('bil recompute+size', (1, 3, 4, 5), size=(3, 3), recompute_scale_factor=True)
    U('bil out H0', (1, 3, 4, 5), size=(0, 4))
    U('bil out H0 cl', (2, 3, 4, 5), layout='cl', size=(0, 4))
    U('bil out W0', (1, 3, 4, 5), size=(3, 0))
    U('bil sf small', (1, 3, 4, 5), scale_factor=0.1)
    U('bil empty N', (0, 3, 4, 5), size=(3, 3))
    U('bil empty C', (2, 0, 4, 5), size=(3, 3))
    U('bil empty N cl', (0, 3, 4, 5), layout='cl', size=(3, 3))
    U('bil in H0 out H0', (2, 3, 0, 5), size=(0, 3))
    U('bil same size nchw sf', (1, 3, 5, 6), scale_factor=1.1)
    U('bil same size nhwc sf', (1, 16, 5, 6), layout='cl', scale_factor=1.1)
    U('bil C1 cl', (2, 1, 4, 5), layout='cl', size=(3, 7))
    U('bil 1x1 clstr', (2, 3, 1, 1), layout='clstr', size=(3, 7))
    # per-channel inputs
    pc = torch.quantize_per_channel(torch.randn(2, 3, 4, 5, 6), torch.ones(3) * 0.1,
                                    torch.zeros(3, dtype=torch.long), 1, torch.quint8)
    msg = ("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  (Could this "
           "error message be improved?  If so, please report an enhancement request to PyTorch.)")

    def perchan():
        raise RuntimeError(msg)
    out.append(('avg per-channel', lambda: F.avg_pool3d(pc, 2), perchan))
    out.append(('ada per-channel', lambda: F.adaptive_avg_pool3d(pc, 2), perchan))
    out.append(('bil per-channel', lambda: F.interpolate(pc[:, :, 0], size=(3, 3), mode='bilinear'), perchan))
    return out


def main():
    import torch
    import torch.nn.functional as F
    ncases = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = np.random.default_rng(seed)
    stats = {}
    for nthreads in (1, 2):
        torch.set_num_threads(nthreads)
        for name, fn in (('avg_pool3d', _run_avg), ('adaptive_avg_pool3d', _run_ada),
                         ('bilinear', _run_bil)):
            st = stats.setdefault((name, nthreads), [0, 0, 0, 0])   # ok, total, elems, errors
            for _ in range(ncases // 6):
                ok, n, kind = fn(torch, F, rng)
                st[0] += ok; st[1] += 1; st[2] += n if ok else 0; st[3] += kind == 'error'
                if not ok:
                    print('  %s (threads=%d): %s' % (name, nthreads, kind))
    for (name, nt), (ok, tot, el, er) in stats.items():
        print('%-20s threads=%d: %d/%d cases exact (%d output elements; %d error cases matched)'
              % (name, nt, ok, tot, el, er))
    torch.set_num_threads(1)
    edge = _edge_cases(torch, F)
    eok = 0
    for name, ft, fr in edge:
        ok, n, kind = _compare(torch, ft, fr)
        eok += ok
        if not ok:
            print('  edge %s: %s' % (name, kind))
    print('edge cases: %d/%d exact (values, strides or error message)' % (eok, len(edge)))


if __name__ == '__main__':
    main()
