"""NumPy reference for torch 1.13 (Debian 1.13.1 CPU build, no FBGEMM) quantized
normalization ops: quantized::batch_norm*, layer_norm, group_norm, instance_norm.

All functions take/return integer arrays (int_repr values in logical N,C,... order)
plus per-tensor qparams; dtype is 'quint8', 'qint8' or 'qint32'.

Float semantics follow the compiled kernels: float32 everywhere except where the
source mixes in double (eps, q_scale() ratios); multiply-adds are fused (FMA)
exactly where GCC fused them in the AVX2/AVX512 builds (fma=True, the default);
fma=False plus CAPABILITY='default' reproduces ATEN_CPU_CAPABILITY=default.
Set CAPABILITY to the capability torch dispatched to ('avx2' is the x86 default
in 1.13).  See FINDINGS.md.
"""
import numpy as np

np.seterr(all="ignore")
F32 = np.float32
F64 = np.float64

QRANGE = {
    'quint8': (0, 255),
    'qint8': (-128, 127),
    'qint32': (-(2 ** 31), 2 ** 31 - 1),
}


# ---------------------------------------------------------------- helpers
def fma32(a, b, c):
    """Correctly rounded float32 fma(a, b, c) (vectorised).

    a*b is exact in float64; the float64 sum is made round-to-odd (via the
    TwoSum error term) so the final rounding to float32 is correct."""
    a = np.asarray(a, F32).astype(F64)
    b = np.asarray(b, F32).astype(F64)
    c = np.asarray(c, F32).astype(F64)
    p = a * b
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    s = np.asarray(s, F64)
    mant_even = (s.view(np.int64) & 1) == 0
    fix = (err != 0) & mant_even & np.isfinite(s)
    if np.any(fix):
        s = s.copy()
        s[fix] = np.nextafter(s[fix], s[fix] + err[fix])
    return s.astype(F32)


def madd32(a, b, c, fma):
    a = np.asarray(a, F32); b = np.asarray(b, F32); c = np.asarray(c, F32)
    if fma:
        return fma32(a, b, c)
    return (a * b + c).astype(F32)


I32_MAXF = F32(2147483520.0)      # largest float below 2^31 (QuantizeAvx2 clip constant)


def _wrap(v, bits):
    """two's-complement wrap of int64 values to `bits` (<= 32) bits."""
    m = 1 << bits
    return (np.asarray(v, np.int64) + (m >> 1)) % m - (m >> 1)


def _round_vec8(t, zp, dtype):
    """AVX2/AVX512 QuantizeAvx2 for (q)uint8/int8: min_ps(t, 2^31-128) (NaN -> the
    constant), cvtps_epi32 (round-half-even, out of range -> INT32_MIN), + zp with
    int32 wrap-around, then saturating pack == clamp."""
    lo, hi = QRANGE[dtype]
    t = np.asarray(t, F32)
    with np.errstate(invalid='ignore'):
        v = np.where(np.isnan(t), I32_MAXF, np.minimum(t, I32_MAXF)).astype(F64)
        i = np.where(v < -2147483648.0, -2147483648.0, np.rint(v)).astype(np.int64)
    i = _wrap(i + int(zp), 32)
    return np.clip(i, lo, hi)


def _round_scalar(t, zp, dtype):
    """at::native::quantize_val (non-FBGEMM build): float r = zp + nearbyint(t);
    static_cast<int64_t>(r) (NaN/inf/out of range -> INT64_MIN on x86); clamp."""
    lo, hi = QRANGE[dtype]
    t = np.asarray(t, F32)
    with np.errstate(invalid='ignore', over='ignore'):
        r = (F32(zp) + np.rint(t)).astype(F32).astype(F64)
        bad = ~np.isfinite(r) | (r >= 2.0 ** 63) | (r < -2.0 ** 63)
        q = np.where(bad, float(lo), np.clip(np.where(bad, 0.0, r), lo, hi))
    return q.astype(np.int64)


def quantize(y, scale, zp, dtype, vec_mask=True):
    """Requantize float y with (scale, zp): t = y * (1.0f/scale) in float, then
    round-half-even + zp + clamp.  vec_mask marks elements that went through the
    SIMD quantizer (only matters for non-finite / huge t, and only for 8-bit types;
    qint32 always uses quantize_val semantics)."""
    inv = F32(1.0) / F32(scale)
    with np.errstate(invalid='ignore', over='ignore'):
        t = np.asarray(y, F32) * inv
    if dtype == 'qint32':
        return _round_scalar(t, zp, dtype)
    vm = np.broadcast_to(np.asarray(vec_mask, bool), t.shape)
    if CAPABILITY == 'default':      # no SIMD quantizer: quantize_vec -> quantize_val
        return _round_scalar(t, zp, dtype)
    if vm.all():
        return _round_vec8(t, zp, dtype)
    if not vm.any():
        return _round_scalar(t, zp, dtype)
    return np.where(vm, _round_vec8(t, zp, dtype), _round_scalar(t, zp, dtype))


def _qlanes():
    """8-bit elements per SIMD block (4 float vectors): 32 on AVX2/DEFAULT, 64 on AVX512."""
    return 64 if CAPABILITY == 'avx512' else 32


def _bn_vec_channels(C, dtype):
    """channels handled by the SIMD part of q_batch_norm_kernel.  8-bit, AVX2/DEFAULT:
    full 32-lane blocks plus one 8..31 block through a padded buffer -> C//8*8.
    AVX512: 64-lane blocks only (the padded-buffer block requires lanes == 32).
    qint32: blocks of one float vector (8 or 16)."""
    fl = 16 if CAPABILITY == 'avx512' else 8
    if dtype == 'qint32':
        return C // fl * fl
    if CAPABILITY == 'avx512':
        return C // 64 * 64
    return C // 8 * 8


def _col_mask(n, nvec):
    """bool vector of length n: True for the first nvec elements."""
    m = np.zeros(n, bool); m[:nvec] = True
    return m


def _cast_i64_to_f32(v):
    return np.asarray(v, np.int64).astype(F32)


def _stats(sum_i, sumsq_i, n, x_zp, x_scale, eps, fma):
    """Mean (in units of x_scale, zp removed) and x_scale/std, float32 like the kernel."""
    nf = F32(n)
    mean_shifted = _cast_i64_to_f32(sum_i) / nf                 # float
    mean = (mean_shifted - F32(x_zp)).astype(F32)                # float - int64 -> float
    sumsq_f = sumsq_i.astype(F32) if np.asarray(sumsq_i).dtype == F32 else _cast_i64_to_f32(sumsq_i)
    ex2 = sumsq_f / nf
    if fma:   # a/N - m*m  contracted to fnmadd(m, m, a/N) in the AVX2 build
        var = fma32(-mean_shifted, mean_shifted, ex2)
    else:
        var = (ex2 - mean_shifted * mean_shifted).astype(F32)
    var = np.maximum(var, F32(0))
    xs = F32(x_scale)
    v2 = (var * xs * xs).astype(F32)
    inv_std = (F64(xs) / np.sqrt(v2.astype(F64) + F64(eps))).astype(F32)
    return mean, inv_std


CAPABILITY = 'avx2'   # ATEN_CPU_CAPABILITY the torch run used: 'avx2' (default on x86), 'avx512', 'default'


def hsum_sq_i32(x):
    """hsum_sq(const int32_t*, len) -> float, as compiled for CAPABILITY.
    avx2   : 8 float lanes accumulated with FMA, lanes summed left to right into 0.0f,
             then scalar FMA tail.
    avx512 : same with 16 lanes.
    default: plain sequential loop, unfused multiply-add."""
    x = np.asarray(x, np.int64)
    L = x.shape[-1]
    xf = x.astype(np.int32).astype(F32)
    row = np.zeros(x.shape[:-1], F32)
    if CAPABILITY == 'default':
        for i in range(L):
            v = xf[..., i]
            row = (row + v * v).astype(F32)
        return row
    W = 16 if CAPABILITY == 'avx512' else 8
    nv = L // W * W
    lanes = np.zeros(x.shape[:-1] + (W,), F32)
    for i in range(0, nv, W):
        v = xf[..., i:i + W]
        lanes = fma32(v, v, lanes)
    for k in range(W):
        row = (row + lanes[..., k]).astype(F32)
    for i in range(nv, L):
        v = xf[..., i]
        row = fma32(v, v, row)
    return row


def _fsum_stats(x_flat_groups, n, dtype='quint8'):
    """hsum / hsum_sq over last axis: exact int64 for 8-bit types; for qint32 the
    sum of squares is a float (see hsum_sq_i32) that the caller casts again."""
    x = x_flat_groups.astype(np.int64)
    if dtype == 'qint32':
        # l_sum_sq_shifted is `auto` = float for int32 input
        return x.sum(-1), hsum_sq_i32(x)
    return x.sum(-1), (x * x).sum(-1)


# ---------------------------------------------------------------- batch norm
def bn_fused_params(weight, bias, mean, var, eps, in_scale, out_scale):
    """compute_fused_params in Normalization.cpp (baseline x86-64, no FMA)."""
    w = np.asarray(weight, F32); b = np.asarray(bias, F32)
    m = np.asarray(mean, F32); v = np.asarray(var, F32)
    inv_sigma = (1.0 / np.sqrt(v + F32(eps)).astype(F64)).astype(F32)
    alpha = ((inv_sigma * w).astype(F64) * (F64(in_scale) / F64(out_scale))).astype(F32)
    beta = ((b - (m * inv_sigma) * w).astype(F64) / F64(out_scale)).astype(F32)
    return alpha, beta


def batch_norm(qx, dtype, in_scale, in_zp, weight, bias, mean, var, eps,
               out_scale, out_zp, relu=False, fma=True):
    """quantized::batch_norm{,1d,2d,3d}[_relu]; qx is (N, C, ...) int array."""
    qx = np.asarray(qx)
    C = qx.shape[1]
    alpha, beta = bn_fused_params(weight, bias, mean, var, eps, in_scale, out_scale)
    bshape = (1, C) + (1,) * (qx.ndim - 2)
    a = alpha.reshape(bshape); b = beta.reshape(bshape)
    d = (qx.astype(np.int64) - in_zp).astype(F32)
    with np.errstate(invalid='ignore', over='ignore'):
        y = madd32(a, d, b, fma)
    lo, hi = QRANGE[dtype]
    # channels [0, C//8*8) go through the SIMD path (32-lane blocks, then an 8..31
    # block via a padded buffer); the rest use lrintf.  qint32 SIMD path uses
    # quantize_vec -> quantize_val.
    ch_vec = _col_mask(C, _bn_vec_channels(C, dtype)).reshape(bshape)
    if dtype == 'qint32':
        qv = _round_scalar(y, out_zp, dtype)
    else:
        qv = _round_vec8(y, out_zp, dtype) if CAPABILITY != 'default' else _round_scalar(y, out_zp, dtype)
        if relu:   # Vectorized::maximum with scalar_t(out_zp) (zp cast to the storage type)
            zq = int(_wrap(out_zp, 8)) if dtype == 'qint8' else int(out_zp) % 256
            qv = np.maximum(qv, zq)
    if dtype == 'qint32' and relu:
        qv = np.maximum(qv, int(_wrap(out_zp, 32)))
    # scalar tail: out_zp + lrintf(y) (LONG_MIN for NaN/inf/out of range), int64 wrap
    with np.errstate(invalid='ignore'):
        yf = np.asarray(y, F32).astype(F64)
        bad = ~np.isfinite(yf) | (np.rint(yf) >= 2.0 ** 63) | (np.rint(yf) < -2.0 ** 63)
        L = np.where(bad, 0.0, np.rint(yf)).astype(np.int64)
    qs = np.where(bad, -(2 ** 63) + out_zp if out_zp >= 0 else (2 ** 63) + out_zp, L + out_zp)
    if relu:
        qs = np.maximum(qs, out_zp)
    qs = np.clip(qs, lo, hi)
    return np.where(ch_vec, qv, qs).astype(np.int64)


# ---------------------------------------------------------------- layer norm
def layer_norm(qx, dtype, x_scale, x_zp, normalized_shape, weight, bias, eps,
               out_scale, out_zp, fma=True):
    qx = np.asarray(qx)
    k = len(normalized_shape)
    N = int(np.prod(normalized_shape)) if k else 1
    M = qx.size // N if N else 0
    out = np.empty(qx.shape, np.int64)
    if qx.size == 0:
        return out
    x = qx.reshape(M, N).astype(np.int64)
    s, ss = _fsum_stats(x, N, dtype)
    mean, inv_std = _stats(s, ss, N, x_zp, x_scale, eps, fma)
    g = np.ones(N, F32) if weight is None else np.asarray(weight, F32).reshape(N)
    b = np.zeros(N, F32) if bias is None else np.asarray(bias, F32).reshape(N)
    dq = (x - x_zp).astype(F32)
    t = ((dq - mean[:, None]).astype(F32) * inv_std[:, None]).astype(F32)
    y = madd32(t, g[None, :], b[None, :], fma)
    vm = _col_mask(N, N // _qlanes() * _qlanes())[None, :]   # SIMD blocks, scalar tail
    return quantize(y, out_scale, out_zp, dtype, vm).reshape(qx.shape)


# ---------------------------------------------------------------- group norm
def _group_norm_nchw(x, G, weight, bias, eps, x_scale, x_zp, out_scale, out_zp, dtype, fma):
    B, C = x.shape[:2]
    HxW = int(np.prod(x.shape[2:]))
    cpg = C // G
    xg = x.reshape(B, G, cpg * HxW).astype(np.int64)
    s, ss = _fsum_stats(xg, cpg * HxW, dtype)
    mean, inv_std = _stats(s, ss, cpg * HxW, x_zp, x_scale, eps, fma)   # (B, G)
    g = np.ones(C, F32) if weight is None else np.asarray(weight, F32).reshape(C)
    b = np.zeros(C, F32) if bias is None else np.asarray(bias, F32).reshape(C)
    gamma_p = (inv_std[:, :, None] * g.reshape(1, G, cpg)).astype(F32)        # (B,G,cpg)
    beta = np.broadcast_to(b.reshape(1, G, cpg), gamma_p.shape)
    dq = (xg.reshape(B, G, cpg, HxW) - x_zp).astype(F32)
    t = (dq - mean[:, :, None, None]).astype(F32)
    y = madd32(t, gamma_p[..., None], beta[..., None], fma)
    return quantize(y, out_scale, out_zp, dtype).reshape(x.shape)


FEATURE_MAP_THRESHOLD = 512
NHWC_GAMMA_NULL_UNFUSED_BIAS = True


def _group_norm_nhwc(x, G, weight, bias, eps, x_scale, x_zp, out_scale, out_zp, dtype, fma,
                     num_threads=1):
    B, C = x.shape[:2]
    HxW = int(np.prod(x.shape[2:]))
    cpg = C // G
    N = cpg * HxW
    g = np.ones(C, F32) if weight is None else np.asarray(weight, F32).reshape(C)
    b = np.zeros(C, F32) if bias is None else np.asarray(bias, F32).reshape(C)
    xl = np.moveaxis(x.reshape(B, C, HxW), 1, 2).astype(np.int64)   # (B, HxW, C)
    if HxW < FEATURE_MAP_THRESHOLD:
        # impl-1: exact integer sums per group
        xg = xl.reshape(B, HxW, G, cpg)
        s = xg.sum(axis=(1, 3))
        if dtype == 'qint32':
            # int64 accumulator += float hsum_sq(row): float add, truncation to int64
            rows = hsum_sq_i32(np.moveaxis(xg, 1, 2))          # (B, G, HxW)
            ss = np.zeros((B, G), np.int64)
            for hw in range(HxW):
                ss = np.trunc(ss.astype(F32) + rows[:, :, hw]).astype(np.int64)
        else:
            ss = (xg * xg).sum(axis=(1, 3))
        mean, inv_std = _stats(s, ss, N, x_zp, x_scale, eps, fma)      # (B, G)
    else:
        # impl-2: float32 per-channel accumulation, chunked over threads
        total = B * HxW
        T = max(1, min(num_threads, total))
        chunk = -(-total // T)
        flat = xl.reshape(total, C)
        bufs = []
        for t in range(T):
            lo, hi = t * chunk, min(total, (t + 1) * chunk)
            bs = np.zeros((B, C), F32); bq = np.zeros((B, C), F32)
            for n in range(B):
                a, e = max(lo, n * HxW), min(hi, (n + 1) * HxW)
                if a >= e:
                    continue
                seg = flat[a:e]
                bs[n] = np.add.accumulate(np.vstack([np.zeros((1, C)), seg]).astype(F32), axis=0, dtype=F32)[-1]
                sq = (seg * seg).astype(np.int32).astype(np.int64) if dtype == 'qint32' else seg * seg
                bq[n] = np.add.accumulate(np.vstack([np.zeros((1, C)), sq]).astype(F32), axis=0, dtype=F32)[-1]
            bufs.append((bs, bq))
        mean = np.empty((B, G), F32); inv_std = np.empty((B, G), F32)
        for n in range(B):
            for gi in range(G):
                mv = F32(0); rv = F32(0)
                for (bs, bq) in bufs:
                    for d in range(cpg):
                        mv = F32(mv + bs[n, gi * cpg + d])
                        rv = F32(rv + bq[n, gi * cpg + d])
                nf = F32(N)
                ms = F32(mv / nf)
                mean[n, gi] = F32(ms - F32(x_zp))
                ex2 = F32(rv / nf)
                var = fma32(-ms, ms, ex2) if fma else F32(ex2 - ms * ms)
                var = max(F32(var), F32(0))
                xs = F32(x_scale)
                v2 = F32(F32(var * xs) * xs)
                inv_std[n, gi] = F32(F64(xs) / np.sqrt(F64(v2) + F64(eps)))
    scale = (inv_std[:, :, None] * g.reshape(1, G, cpg)).astype(F32)                   # (B,G,cpg)
    bb = np.broadcast_to(b.reshape(1, G, cpg), scale.shape)
    if weight is None and NHWC_GAMMA_NULL_UNFUSED_BIAS:
        # GCC hoists (-inv_std * mean) out of the channel loop when gamma is null,
        # so the add of beta is a separate rounding (no FMA) in the AVX2 build.
        biasv = ((-scale * mean[:, :, None]).astype(F32) + bb).astype(F32)
    else:
        biasv = madd32(-scale, mean[:, :, None], bb, fma)
    scale = scale.reshape(B, 1, C); biasv = biasv.reshape(B, 1, C)
    dq = (xl - x_zp).astype(F32)
    y = madd32(dq, scale, biasv, fma)                                                   # (B,HxW,C)
    if HxW < FEATURE_MAP_THRESHOLD:   # SIMD over each group's cpg channels
        vm = np.tile(_col_mask(cpg, cpg // _qlanes() * _qlanes()), G)
    else:                             # SIMD over all C channels of a pixel
        vm = _col_mask(C, C // _qlanes() * _qlanes())
    q = quantize(y, out_scale, out_zp, dtype, vm[None, None, :])
    return np.moveaxis(q, 2, 1).reshape(x.shape)


def group_norm(qx, dtype, x_scale, x_zp, num_groups, weight, bias, eps, out_scale, out_zp,
               channels_last=False, fma=True, num_threads=1):
    """channels_last: True when torch sees the 4-D input as channels_last-contiguous
    (qx.is_contiguous(memory_format=torch.channels_last)), which selects the NHWC kernel."""
    qx = np.asarray(qx)
    if qx.size == 0:
        return np.empty(qx.shape, np.int64)
    if channels_last:
        return _group_norm_nhwc(qx, num_groups, weight, bias, eps, x_scale, x_zp,
                                out_scale, out_zp, dtype, fma, num_threads)
    return _group_norm_nchw(qx, num_groups, weight, bias, eps, x_scale, x_zp,
                            out_scale, out_zp, dtype, fma)


def instance_norm(qx, dtype, x_scale, x_zp, weight, bias, eps, out_scale, out_zp,
                  channels_last=False, fma=True, num_threads=1):
    return group_norm(qx, dtype, x_scale, x_zp, np.asarray(qx).shape[1], weight, bias, eps,
                      out_scale, out_zp, channels_last, fma, num_threads)
