"""NumPy reference for torch 1.13 (CPU, no FBGEMM, AVX2 dispatch) quantized mean / std.

Inputs are described the way a C++ kernel sees them: the raw integers (logical shape),
the element strides of the quantized input, its dtype name ('quint8'|'qint8'|'qint32'),
per-tensor scale (python float = C++ double) and zero point.

Public entry points:
    qmean(q, strides, dtype, scale, zp, dim=None, keepdim=False, vec=8) -> (ints, path)
    qstd(q, strides, dtype, scale, zp, dim=None, correction=1, keepdim=False, vec=8) -> (ints, path)
`ints` has the output's logical shape and the output's integer dtype; `path` is
'fast' (integer kernel) or 'fallback' (dequantize -> float op -> quantize_per_tensor).
`vec` = floats per SIMD vector in torch's float sum kernel (8 for AVX2/DEFAULT, 16 for AVX512).
Everything assumes at::get_num_threads() == 1 or numel < 32768 (see FINDINGS.md).
"""
import math
from fractions import Fraction
import numpy as np

F32 = np.float32
QINFO = {
    'quint8': (np.uint8, 0, 255),
    'qint8': (np.int8, -128, 127),
    'qint32': (np.int32, -2**31, 2**31 - 1),
}


# ----------------------------------------------------------------------------- helpers
def wrap_dims(dim, ndim):
    """None / [] -> all dims (torch 1.13 semantics for both mean.dim and std.dim)."""
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    dim = list(dim)
    if len(dim) == 0:
        return list(range(ndim))
    nd = max(ndim, 1)
    out = []
    for d in dim:
        if not -nd <= d < nd:
            raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                             % (-nd, nd - 1, d))
        w = d + nd if d < 0 else d
        if w in out:
            raise RuntimeError("dim %d appears multiple times in the list of dims" % w)
        out.append(w)
    return out if ndim > 0 else []


def is_contiguous(shape, strides):
    if int(np.prod(shape)) == 0:
        return True
    expected = 1
    for s, st in zip(reversed(shape), reversed(strides)):
        if s != 1:
            if st != expected:
                return False
            expected *= s
    return True


def contig_strides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return list(reversed(st))


def channels_last_strides(shape):
    n, c, h, w = shape
    c1, h1, w1 = max(c, 1), max(h, 1), max(w, 1)
    return [h1 * w1 * c1, 1, w1 * c1, c1]


def is_innermost(dims, ndim):
    """ReduceOps.cpp is_innnermost_dim: wrapped dims, sorted descending, consecutive,
    the largest being ndim-1 (empty -> true)."""
    ds = sorted(dims, reverse=True)
    if not ds:
        return True
    ok = ds[0] == ndim - 1
    for i in range(1, len(ds)):
        ok = ok and ds[i] == ds[i - 1] - 1
    return ok


def out_shape(shape, dims, keepdim):
    if keepdim:
        return [1 if d in dims else s for d, s in enumerate(shape)]
    return [s for d, s in enumerate(shape) if d not in dims]


def f32_to_int_x86(v, bits):
    """C++ float->integer conversion as compiled for x86 (cvttss2si): NaN and out of range
    give the 'integer indefinite' value, truncated to the destination width."""
    if not np.isfinite(v) or v >= 2.0 ** 31 or v < -2.0 ** 31:
        r = -2 ** 31
    else:
        r = int(v)
    if bits == 8:
        return r & 0xFF  # caller reinterprets for int8
    return r


# ----------------------------------------------------------------------------- quantizer
def dequantize_val(q, scale, zp):
    """Tensor.dequantize() per element as observed in torch 1.13.1 (no FBGEMM):
    float(int32(q - zero_point)) * float(scale). The subtraction wraps in 32 bits (qint32 values
    near the range ends with a zero point pushing them past it come out with the wrong sign);
    the product is a float32 multiply."""
    d = np.asarray(q).astype(np.int64) - int(zp)
    d = ((d + 2 ** 31) % 2 ** 32) - 2 ** 31
    return (d.astype(F32) * F32(scale)).astype(F32)


def quantize_val(scale, zp, value, dtype):
    """at::native::quantize_val (used by quantize_per_tensor when FBGEMM is absent and by the
    std kernel): zp + nearbyint(value * (1.0f / float(scale))) in float, cast to int64, clamp."""
    npt, qmin, qmax = QINFO[dtype]
    value = np.asarray(value, dtype=F32)
    inv = F32(1.0) / F32(scale)
    with np.errstate(all='ignore'):
        t = np.rint(value * inv).astype(F32)
        t = (F32(zp) + t).astype(F32)
    flat = t.ravel()
    out = np.empty(flat.shape, dtype=np.int64)
    for i, v in enumerate(flat):
        if not np.isfinite(v) or abs(float(v)) >= 2.0 ** 63:
            out[i] = -2 ** 63  # cvttss2si 64-bit: integer indefinite
        else:
            out[i] = int(v)
    out = np.clip(out, qmin, qmax)
    return out.reshape(t.shape).astype(npt)


# ----------------------------------------------------------------------------- float sum
def ceil_log2(x):
    if x <= 2:
        return 1
    return (x - 1).bit_length()


def multi_row_sum(load, size):
    """SumKernel.cpp multi_row_sum: 4-level cascade, leaves of 2**level_power rows."""
    num_levels = 4
    level_power = max(4, ceil_log2(size) // num_levels)
    level_step = 1 << level_power
    level_mask = level_step - 1
    z = np.zeros_like(load(0)) if size > 0 else None
    if size == 0:
        return None
    acc = [z.copy() for _ in range(num_levels)]
    i = 0
    while i + level_step <= size:
        for _ in range(level_step):
            acc[0] = (acc[0] + load(i)).astype(F32)
            i += 1
        for j in range(1, num_levels):
            acc[j] = (acc[j] + acc[j - 1]).astype(F32)
            acc[j - 1] = z.copy()
            if (i & (level_mask << (j * level_power))) != 0:
                break
    while i < size:
        acc[0] = (acc[0] + load(i)).astype(F32)
        i += 1
    for j in range(1, num_levels):
        acc[0] = (acc[0] + acc[j]).astype(F32)
    return acc[0]


def row_sum(load, size, zero):
    """SumKernel.cpp row_sum: ilp_factor 4 (element i goes to partial i % 4), tail into
    partial 0, then partials 1..3 added to partial 0 in order. load(i) -> element/vector i."""
    ilp = 4
    size_ilp = size // ilp
    if size_ilp > 0:
        parts = multi_row_sum(lambda r: np.stack([load(r * ilp + k) for k in range(ilp)]), size_ilp)
        parts = [parts[k] for k in range(ilp)]
    else:
        parts = [zero.copy() for _ in range(ilp)]
    for i in range(size_ilp * ilp, size):
        parts[0] = (parts[0] + load(i)).astype(F32)
    for k in range(1, ilp):
        parts[0] = (parts[0] + parts[k]).astype(F32)
    return parts[0]


def cascade_loop(buf_in, buf_out, in_off, out_off, size0, size1, in_strides, out_strides, vec):
    """One 2-d call of cascade_sum's loop (strides in elements)."""
    in_strides = list(in_strides)
    out_strides = list(out_strides)
    if out_strides[0] != 0 and out_strides[1] == 0:
        in_strides.reverse(); out_strides.reverse(); size0, size1 = size1, size0
    if out_strides[0] != 0 and out_strides[1] != 0:  # not a reduction: out += in elementwise
        for j in range(size1):
            for i in range(size0):
                o = out_off + j * out_strides[1] + i * out_strides[0]
                buf_out[o] = F32(buf_out[o] + buf_in[in_off + j * in_strides[1] + i * in_strides[0]])
        return
    out_stride = out_strides[1]
    zero_s = np.zeros((), dtype=F32)
    zero_v = np.zeros(vec, dtype=F32)

    def store(idx, val):
        o = out_off + idx * out_stride
        buf_out[o] = F32(buf_out[o] + F32(val))

    if in_strides[0] == 1 and size0 >= vec:  # vectorized_inner_sum
        vec_size = size0 // vec
        for j in range(size1):
            base = in_off + j * in_strides[1]
            vacc = row_sum(lambda i: buf_in[base + i * vec: base + i * vec + vec], vec_size, zero_v)
            fin = F32(0)
            for k in range(vec_size * vec, size0):
                fin = F32(fin + buf_in[base + k])
            for k in range(vec):
                fin = F32(fin + vacc[k])
            store(j, fin)
    elif in_strides[1] == 1 and size1 >= vec:  # vectorized_outer_sum
        inner = in_strides[0]
        j = 0
        while j + 4 * vec <= size1:
            base = in_off + j
            sums = multi_row_sum(lambda r: np.stack([buf_in[base + r * inner + k * vec: base + r * inner + k * vec + vec]
                                                     for k in range(4)]), size0)
            if sums is None:
                sums = np.zeros((4, vec), dtype=F32)
            for i in range(4):
                for lane in range(vec):
                    store(j + i * vec + lane, sums[i][lane])
            j += 4 * vec
        while j + vec <= size1:
            base = in_off + j
            sums = row_sum(lambda r: buf_in[base + r * inner: base + r * inner + vec], size0, zero_v)
            for lane in range(vec):
                store(j + lane, sums[lane])
            j += vec
        while j < size1:
            base = in_off + j
            store(j, row_sum(lambda r: buf_in[base + r * inner], size0, zero_s))
            j += 1
    elif in_strides[0] < in_strides[1]:  # scalar_inner_sum
        for j in range(size1):
            base = in_off + j * in_strides[1]
            store(j, row_sum(lambda r: buf_in[base + r * in_strides[0]], size0, zero_s))
    else:  # scalar_outer_sum
        j = 0
        while j + 3 < size1:
            base = in_off + j * in_strides[1]
            sums = multi_row_sum(lambda r: np.array([buf_in[base + r * in_strides[0] + k * in_strides[1]]
                                                     for k in range(4)], dtype=F32), size0)
            if sums is None:
                sums = np.zeros(4, dtype=F32)
            for k in range(4):
                store(j + k, sums[k])
            j += 4
        while j < size1:
            base = in_off + j * in_strides[1]
            store(j, row_sum(lambda r: buf_in[base + r * in_strides[0]], size0, zero_s))
            j += 1


def reduction_iter(shape, in_strides, out_strides):
    """TensorIterator for a reduction (output first, input second): reorder_dimensions
    (reduced dims, i.e. output stride 0, to the front, then ascending strides, output's
    strides deciding first) and coalesce_dimensions. Returns (shape, [out_strides, in_strides])
    in iterator order (dim 0 fastest)."""
    ndim = len(shape)
    ops = [list(out_strides), list(in_strides)]
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        for a, st in enumerate(ops):
            s0, s1 = st[d0], st[d1]
            if a == 0 and (s0 == 0) != (s1 == 0):
                return 1 if s1 == 0 else -1
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    shp = [shape[p] for p in perm]
    sts = [[st[p] for p in perm] for st in ops]
    if ndim <= 1:
        return shp, sts
    prev = 0
    for d in range(1, ndim):
        can = shp[prev] == 1 or shp[d] == 1 or all(shp[prev] * st[prev] == st[d] for st in sts)
        if can:
            if shp[prev] == 1:
                for st in sts:
                    st[prev] = st[d]
            shp[prev] *= shp[d]
        else:
            prev += 1
            if prev != d:
                for st in sts:
                    st[prev] = st[d]
                shp[prev] = shp[d]
    shp = shp[:prev + 1]
    sts = [st[:prev + 1] for st in sts]
    return shp, sts


def out_index_iter(shp):
    """Outer (dim >= 2) indices in iteration order (dim 2 fastest)."""
    outer = shp[2:]
    if not outer:
        yield ()
        return
    idx = [0] * len(outer)
    total = int(np.prod(outer))
    for _ in range(total):
        yield tuple(idx)
        for k in range(len(outer)):
            idx[k] += 1
            if idx[k] < outer[k]:
                break
            idx[k] = 0


def float_sum(buf, shape, in_strides, dims, vec):
    """at::sum(float tensor, dims, keepdim=True) on CPU (cascade_sum, serial).
    buf: flat float32 memory of the input. Returns float32 array of the keepdim shape."""
    oshape = [1 if d in dims else s for d, s in enumerate(shape)]
    ostr = contig_strides(oshape)
    ostr_it = [0 if (d in dims and shape[d] != 1) else ostr[d] for d in range(len(shape))]
    out = np.zeros(max(int(np.prod(oshape)), 1), dtype=F32)
    if int(np.prod(shape)) == 0:
        return out[:int(np.prod(oshape))].reshape(oshape)
    shp, (so, si) = reduction_iter(shape, in_strides, ostr_it)
    if len(shp) == 0:
        shp, so, si = [1], [0], [0]
    if len(shp) == 1:
        cascade_loop(buf, out, 0, 0, shp[0], 1, [si[0], 0], [so[0], 0], vec)
    else:
        for idx in out_index_iter(shp):
            ioff = sum(i * s for i, s in zip(idx, si[2:]))
            ooff = sum(i * s for i, s in zip(idx, so[2:]))
            cascade_loop(buf, out, ioff, ooff, shp[0], shp[1], si[:2], so[:2], vec)
    return out[:int(np.prod(oshape))].reshape(oshape)


def float_mean(buf, shape, in_strides, dims, vec):
    """at::mean on CPU in 1.13: sum_out(...).div_(prod of reduced sizes) (true division)."""
    s = float_sum(buf, shape, in_strides, dims, vec)
    n = 1
    for d in dims:
        n *= shape[d]
    with np.errstate(all='ignore'):
        return (s / F32(n)).astype(F32)


def float_std(buf, shape, in_strides, dims, correction, vec):
    """at::std on a float CPU tensor in 1.13 (keepdim shape)."""
    oshape = [1 if d in dims else s for d, s in enumerate(shape)]
    numel = int(np.prod(shape))
    ostr = contig_strides(oshape)
    ostr_it = [0 if (d in dims and shape[d] != 1) else ostr[d] for d in range(len(shape))]
    if numel == 0:
        return np.full(oshape, np.nan, dtype=F32)
    shp, (so, si) = reduction_iter(shape, in_strides, ostr_it)
    if all(s == 0 for s in so):
        # every iterator dim reduced -> std_var_all_cpu (two-pass: float mean -> double, then sum of
        # squared deviations in double in memory order)
        m = float(float_mean(buf, shape, in_strides, list(range(len(shape))), vec).ravel()[0])
        order = memory_order(shape, in_strides)
        acc = 0.0
        for off in order:
            dx = float(buf[off]) - m
            acc += dx * dx
        den = max(0, numel - correction)
        with np.errstate(all='ignore'):
            var = np.float64(acc) / np.float64(den)
        r = np.sqrt(var)
        return np.full(oshape, r, dtype=np.float64).astype(F32)
    # std_var_kernel: Welford in double over the reduced elements in iterator order (sequential;
    # the compiler's possible FMA in m2 made no observable difference)
    nred = 0
    while nred < len(shp) and so[nred] == 0:
        nred += 1
    red_shape, keep_shape = shp[:nred], shp[nred:]
    out = np.zeros(int(np.prod(oshape)), dtype=F32)
    for kidx in nd_iter(keep_shape):
        ioff = sum(i * s for i, s in zip(kidx, si[nred:]))
        ooff = sum(i * s for i, s in zip(kidx, so[nred:]))
        mean, m2, n = 0.0, 0.0, 0
        for ridx in nd_iter(red_shape):
            x = float(buf[ioff + sum(i * s for i, s in zip(ridx, si[:nred]))])
            n += 1
            delta = x - mean
            mean = mean + delta / float(n)
            m2 = m2 + delta * (x - mean)
        nf = float(n)
        divisor = nf - correction if nf > correction else 0.0
        with np.errstate(all='ignore'):
            var = np.float64(m2) / np.float64(divisor)
        out[ooff] = F32(np.sqrt(var))
    return out.reshape(oshape)


def nd_iter(shape):
    """Indices with dim 0 fastest."""
    if not shape:
        yield ()
        return
    idx = [0] * len(shape)
    for _ in range(int(np.prod(shape))):
        yield tuple(idx)
        for k in range(len(shape)):
            idx[k] += 1
            if idx[k] < shape[k]:
                break
            idx[k] = 0


def memory_order(shape, strides):
    """Offsets of a dense tensor in memory order."""
    return sorted(int(sum(i * s for i, s in zip(idx, strides))) for idx in np.ndindex(*shape)) if shape else [0]


def dequantize_layout(q, strides, scale, zp):
    """Tensor.dequantize(): float tensor in q.suggest_memory_format() (channels_last stays
    channels_last, everything else becomes contiguous). Returns (flat buf, float strides)."""
    shape = list(q.shape)
    if len(shape) == 4 and not is_contiguous(shape, strides) and \
            is_contiguous_cl(shape, strides):
        fst = channels_last_strides(shape)
    else:
        fst = contig_strides(shape)
    buf = np.zeros(max(int(np.prod(shape)), 1), dtype=F32)
    deq = dequantize_val(q, scale, zp)
    for idx in np.ndindex(*shape):
        buf[sum(i * s for i, s in zip(idx, fst))] = deq[idx]
    return buf, fst


def is_contiguous_cl(shape, strides):
    if int(np.prod(shape)) == 0:
        return True
    exp = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != exp:
                return False
            exp *= shape[d]
    return True


# ----------------------------------------------------------------------------- raw sums
def group_rows(q, red_dims_count):
    """Contiguous input reduced over its innermost dims: (M, N) view of the integers."""
    shape = list(q.shape)
    nd = len(shape)
    M = int(np.prod(shape[:nd - red_dims_count])) if nd - red_dims_count > 0 else 1
    N = int(np.prod(shape[nd - red_dims_count:])) if red_dims_count > 0 else 1
    return np.asarray(q).reshape(M, N).astype(np.int64), M, N


# ----------------------------------------------------------------------------- qmean
def qmean(q, strides, dtype, scale, zp, dim=None, keepdim=False, vec=8, out_dtype=None):
    q = np.asarray(q)
    shape = list(q.shape)
    nd = len(shape)
    dims = wrap_dims(dim, nd)
    oshape = out_shape(shape, dims, keepdim)
    npt, qmin, qmax = QINFO[dtype]
    if is_contiguous(shape, strides) and is_innermost(dims, nd) and (out_dtype in (None, dtype)):
        # qmean_inner_dim_kernel: the innermost len(dim) dims (all dims for None/[]) are
        # averaged; output keeps input scale / zero point.
        k = nd if dim is None or (not isinstance(dim, int) and len(dim) == 0) else len(dims)
        rows, M, N = group_rows(q, k)
        res = np.empty(M, dtype=np.int64)
        for i in range(M):
            s = int(rows[i].sum())  # hsum: exact int64 (no overflow for any realistic N)
            with np.errstate(all='ignore'):
                y = F32(F32(s) / F32(N))  # static_cast<float>(sum) / N  (float division)
                y = np.rint(y)  # std::nearbyint (ties to even)
            v = f32_to_int_x86(y, 8 if dtype != 'qint32' else 32)
            res[i] = v
        res = res.astype(np.int64)
        if dtype == 'qint8':
            res = ((res + 128) & 0xFF) - 128
        return res.astype(npt).reshape(oshape), 'fast'
    if out_dtype not in (None,):
        raise RuntimeError("fallback with dtype=%s: torch errors (see FINDINGS)" % out_dtype)
    buf, fst = dequantize_layout(q, strides, scale, zp)
    m = float_mean(buf, shape, fst, dims, vec)
    m = m.reshape(oshape)
    return quantize_val(scale, zp, m, dtype), 'fallback'


# ----------------------------------------------------------------------------- qstd
def qstd(q, strides, dtype, scale, zp, dim=None, correction=1, keepdim=False, vec=8):
    """correction: int (unbiased=True -> 1, False -> 0), None -> 1."""
    q = np.asarray(q)
    shape = list(q.shape)
    nd = len(shape)
    dims = wrap_dims(dim, nd)
    oshape = out_shape(shape, dims, keepdim)
    npt, qmin, qmax = QINFO[dtype]
    num_ele = 1
    for d in dims:
        num_ele *= shape[d]
    # is_std_inner_dim_fast_path: "unbiased" = correction given and nonzero (None counts as 0)
    flag = correction is not None and correction != 0
    fast = is_contiguous(shape, strides) and not (num_ele == 1 and flag) \
        and is_innermost(dims, nd)
    if fast:
        k = nd if dim is None or (not isinstance(dim, int) and len(dim) == 0) else len(dims)
        rows, M, N = group_rows(q, k)
        # 1.13 kernel (observed): divisor N - 1 only when correction == 1 exactly; any other
        # value, None included, gives N
        den = N - 1 if correction == 1 else N
        den = float(den)
        ys = np.empty(M, dtype=np.float64)
        for i in range(M):
            s = int(rows[i].sum())
            if dtype == 'qint32':
                s2 = hsum_sq_i32_f32(rows[i], vec)
            else:
                s2 = int((rows[i] * rows[i]).sum())
            with np.errstate(all='ignore'):
                S, S2, Nd, D = np.float64(s), np.float64(s2), np.float64(N), np.float64(den)
                mean = S / Nd                      # x_sum / N          (double)
                mean_unb = S / D                   # x_sum / den
                t = S2 / D                         # x_sum_sq / den
                # GCC contracts "t - (2*mean)*mean_unb" into one fused multiply-add
                if np.isfinite(t) and np.isfinite(mean) and np.isfinite(mean_unb):
                    first = np.float64(dfma(-(2.0 * float(mean)), float(mean_unb), float(t)))
                else:
                    first = t - np.float64(2.0) * mean * mean_unb
                var = first + mean * mean * Nd / D
                var = var if np.isnan(var) else max(var, np.float64(0.0))  # std::max keeps NaN
                ys[i] = np.sqrt(var) * float(scale)
        return quantize_val(scale, zp, ys.astype(F32), dtype).reshape(oshape), 'fast'
    buf, fst = dequantize_layout(q, strides, scale, zp)
    s = float_std(buf, shape, fst, dims, 1 if correction is None else correction, vec)
    return quantize_val(scale, zp, s.reshape(oshape), dtype), 'fallback'


def ffma32(a, b, c):
    """float32 fused multiply-add (single rounding)."""
    return F32(float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))))


def dfma(a, b, c):
    """float64 fused multiply-add (single rounding)."""
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def hsum_sq_i32_f32(row, vec=8):
    """hsum_sq(const int32_t*) as compiled in Debian's torch 1.13.1 AVX2 kernels (GCC 12,
    -ffp-contract=fast): 8 float lanes, each lane acc = fma(x, x, acc); lanes summed 0..7 into
    a float; tail (len % 8): groups of 4 squares rounded to float then added in order (GCC
    vectorised the products), the last len % 4 elements with a scalar fma.
    With ATEN_CPU_CAPABILITY=avx512 (vec=16): 16 lanes and tail groups of 8."""
    row = [int(v) for v in row]
    n = len(row)
    lanes = 8 if vec == 8 else 16
    acc = [F32(0)] * lanes
    i = 0
    while i + lanes <= n:
        for l in range(lanes):
            f = F32(row[i + l])
            acc[l] = ffma32(f, f, acc[l])
        i += lanes
    total = F32(0)
    for l in range(lanes):
        total = F32(total + acc[l])
    tail = [F32(v) for v in row[i:]]
    grp = 4 if lanes == 8 else 8  # AVX512 build: the tail's products go in groups of 8
    k4 = len(tail) // grp * grp
    for k, f in enumerate(tail):
        total = F32(total + F32(f * f)) if k < k4 else ffma32(f, f, total)
    return float(total)


# ----------------------------------------------------------------------------- QNNPACK engine
def qmean_qnnpack(q, scale, zp, keepdim=False, variant=0):
    """mean(dim=[2, 3]) of a 4-d quint8 tensor when torch.backends.quantized.engine == 'qnnpack'
    (pytorch's QNNPACK global average pooling, x86 SSE2 kernels), output qparams = input's:
    acc = sum(x) - H*W*zp (int32); out = clamp(nearbyint(float(acc) * s) + zp, 0, 255) with
    s = float32(input_scale) / (float32(output_scale) * float32(H*W)) in float32."""
    q = np.asarray(q).astype(np.int64)
    n, c, h, w = q.shape
    width = h * w
    if width == 0:
        raise RuntimeError("failed to setup QNNPACK Global Average Pooling operator")
    if variant == 0:
        s = F32(F32(scale) / F32(F32(scale) * F32(width)))
    else:
        s = F32(F32(F32(scale) / F32(scale)) / F32(width))
    acc = q.reshape(n, c, width).sum(axis=2) - width * int(zp)
    y = np.rint((acc.astype(F32) * s).astype(F32)).astype(np.int64) + int(zp)
    out = np.clip(y, 0, 255).astype(np.uint8)
    return out.reshape((n, c, 1, 1) if keepdim else (n, c))
