#!/usr/bin/python3
"""NumPy reference for torch 1.13.1's quantized embedding(-bag) operators on
Debian's build (no FBGEMM: the fallback loops in qembeddingbag_prepack.cpp,
qembeddingbag_unpack.cpp, qembeddingbag.cpp and QTensor.cpp run).

Rules are in quantized-embedding-torch113.md. Everything is float32 unless a
docstring says otherwise. Run `/usr/bin/python3 quantized-embedding-ref.py
[cases] [seed]` to compare with the installed torch.
"""
import sys
import numpy as np

f32 = np.float32
f16 = np.float16
EPS8 = f32(1e-8)


# ---------------------------------------------------------------- helpers
def _lrintf(x):
    """lrintf: round half to even in float, then to long. NaN/inf/out of
    range give LONG_MIN (x86 cvtss2si 'integer indefinite')."""
    x = np.asarray(x, dtype=f32)
    with np.errstate(invalid='ignore'):
        r = np.rint(x).astype(np.float64)
    bad = ~np.isfinite(r) | (r >= 2.0**63) | (r < -2.0**63)
    out = np.where(bad, 0, r).astype(np.int64)
    return np.where(bad, np.int64(-2**63), out)


def _min_element(row):
    """std::min_element: first element e with e < current best (NaN never
    wins, and a leading NaN is never replaced)."""
    if not np.isnan(row).any():
        return f32(row[np.argmin(row)])        # first of equal minima (-0.0 vs 0.0)
    best = row[0]
    for v in row[1:]:
        if v < best:
            best = v
    return f32(best)


def _max_element(row):
    if not np.isnan(row).any():
        return f32(row[np.argmax(row)])
    best = row[0]
    for v in row[1:]:
        if best < v:
            best = v
    return f32(best)


def _half(x):
    """float -> at::Half (round to nearest even, overflow to inf)."""
    with np.errstate(over='ignore'):
        return f16(f32(x))


# ---------------------------------------------------------------- prepack
def byte_prepack(w):
    """quantized::embedding_bag_byte_prepack. w: float32 (or float16, which
    torch converts to float first -- see the .md for the 1.13 dangling-buffer
    bug) of any rank >= 1; the last dim is the row. Output uint8 [..., D+8]:
    D bytes, float32 scale (LE), float32 bias (LE)."""
    w = np.ascontiguousarray(w, dtype=f32)
    D = w.shape[-1]
    rows = w.reshape(-1, D)
    out = np.empty((rows.shape[0], D + 8), np.uint8)
    for r in range(rows.shape[0]):
        x = rows[r]
        mn = _min_element(x)
        mx = _max_element(x)
        rng = f32(mx - mn)
        scale = f32(rng / f32(255.0))
        inv = f32(f32(255.0) / f32(rng + EPS8))
        q = _lrintf(f32(x - mn) * inv)          # float sub, float mul
        out[r, :D] = (q & 0xFF).astype(np.uint8)  # no clamp: truncating store
        out[r, D:D + 4] = np.frombuffer(np.array([scale], '<f4').tobytes(), np.uint8)
        out[r, D + 4:] = np.frombuffer(np.array([mn], '<f4').tobytes(), np.uint8)
    return out.reshape(w.shape[:-1] + (D + 8,))


def _quant_loss(x, xmin, xmax, bit):
    """calculate_quant_loss (QTensor.cpp), all float32, no FMA."""
    xmin = f32(_half(xmin))
    rng = f32(f32(xmax) - xmin)
    qmax = f32((1 << bit) - 1)
    scale = f32(1.0) if rng == 0 else f32(_half(rng / qmax))
    inv = f32(1.0) if scale == 0 else f32(f32(1.0) / scale)
    with np.errstate(invalid='ignore', over='ignore'):
        q = np.rint(f32(x - xmin) * inv)
        q = np.maximum(f32(0), np.minimum(q, qmax))     # max(0, min(q, qmax))
        deq = f32(q * scale) + xmin
        d = f32(x - deq)
        sq = f32(d * d)
    norm = f32(0)
    for v in sq:                      # sequential float sum
        norm = f32(norm + v)
    return f32(np.sqrt(norm))


def choose_qparams_optimized(x, nbins=200, ratio=0.16, bit=4):
    """at::choose_qparams_optimized -> (xmax, xmin), float32 greedy search."""
    x = np.asarray(x, f32)
    xmin = _min_element(x)
    xmax = _max_element(x)
    step = f32(f32(xmax - xmin) / f32(nbins))
    min_bins = int(nbins * (1.0 - float(f32(ratio))))   # double, truncated
    loss = _quant_loss(x, xmin, xmax, bit)
    best = loss
    cur_min, cur_max, cur_loss = xmin, xmax, loss
    thr = f32(f32(min_bins) * step)
    while f32(cur_min + thr) < cur_max:
        l1 = _quant_loss(x, f32(cur_min + step), cur_max, bit)
        l2 = _quant_loss(x, cur_min, f32(cur_max - step), bit)
        if cur_loss < l1 and cur_loss < l2 and cur_loss < best:
            best, xmin, xmax = cur_loss, cur_min, cur_max
        if l1 < l2:
            cur_min, cur_loss = f32(cur_min + step), l1
        else:
            cur_max, cur_loss = f32(cur_max - step), l2
    return xmax, xmin


def nbit_prepack(w, bit, optimized_qparams=False, nbins=200, ratio=0.16):
    """quantized::embedding_bag_{4,2}bit_prepack on a 2-d float32 [N, D]
    weight (D % (8/bit) == 0). Output uint8 [N, D/(8/bit) + 4]: packed data
    (element j in bits (j % epb)*bit of byte j // epb), fp16 scale, fp16 bias."""
    w = np.ascontiguousarray(w, dtype=f32)
    N, D = w.shape
    epb = 8 // bit
    qmax = (1 << bit) - 1
    nb = (D + epb - 1) // epb
    out = np.zeros((N, nb + 4), np.uint8)
    for r in range(N):
        x = w[r]
        if optimized_qparams:
            xmax, xmin = choose_qparams_optimized(x, nbins, ratio, bit)
        else:
            xmin, xmax = _min_element(x), _max_element(x)
        xmin = f32(_half(xmin))
        rng = f32(xmax - xmin)
        scale = _half(f32(1.0) if rng == 0 else f32(rng / f32(qmax)))
        inv = f32(1.0) if scale == 0 else f32(f32(1.0) / f32(scale))
        if scale == 0 or np.isinf(inv):
            scale, inv = f16(1.0), f32(1.0)
        q = _lrintf(f32(x - xmin) * inv)
        q = np.maximum(0, np.minimum(q, qmax))   # int compare; LONG_MIN -> 0
        for k in range(epb):
            out[r, :nb] |= (q[k::epb].astype(np.uint8) << (k * bit)).astype(np.uint8)
        out[r, nb:nb + 2] = np.frombuffer(np.array([scale], '<f2').tobytes(), np.uint8)
        out[r, nb + 2:] = np.frombuffer(np.array([xmin], '<f2').tobytes(), np.uint8)
    return out


# ---------------------------------------------------------------- unpack
def _row_params(p, bit):
    if bit == 8:
        sb = np.ascontiguousarray(p[:, -8:]).view('<f4')
        return sb[:, 0].astype(f32), sb[:, 1].astype(f32)
    sb = np.ascontiguousarray(p[:, -4:]).view('<f2')
    return sb[:, 0].astype(f32), sb[:, 1].astype(f32)


def _codes(p, bit):
    """[N, D] integer codes of a packed 2-d weight."""
    if bit == 8:
        return p[:, :-8].astype(np.int64)
    epb = 8 // bit
    b = p[:, :-4].astype(np.int64)
    D = b.shape[1] * epb
    c = np.empty((p.shape[0], D), np.int64)
    for k in range(epb):
        c[:, k::epb] = (b >> (k * bit)) & ((1 << bit) - 1)
    return c


def byte_unpack(p):
    """embedding_bag_byte_unpack: any rank >= 1, out[..., D] = f32(q*scale) + bias."""
    p = np.ascontiguousarray(p, np.uint8)
    C = p.shape[-1]
    flat = p.reshape(-1, C)
    s, b = _row_params(flat, 8)
    out = f32(flat[:, :-8].astype(f32) * s[:, None]) + b[:, None]
    return out.astype(f32).reshape(p.shape[:-1] + (C - 8,))


def nbit_unpack(p, bit):
    """embedding_bag_{4,2}bit_unpack (2-d): out = f32(scale*q) + bias."""
    p = np.ascontiguousarray(p, np.uint8)
    s, b = _row_params(p, bit)
    return (f32(_codes(p, bit).astype(f32) * s[:, None]) + b[:, None]).astype(f32)


# ---------------------------------------------------------------- bag ops
class TorchError(Exception):
    pass


def rowwise_offsets(p, bit, indices, offsets=None, per_sample_weights=None,
                    pruned_weights=False, compressed_indices_mapping=None,
                    include_last_offset=False, is_embedding_op=False):
    """embedding_bag_{byte,4bit,2bit}_rowwise_offsets (mode and
    scale_grad_by_freq are ignored: always a weighted sum). Also
    embedding_byte/4bit with is_embedding_op=True and offsets=arange(n).

    Per bag, out starts at +0.0 and for each index (in order):
        s = f32(w * scale); b = f32(w * bias)          (w = 1 or psw[cur])
        out[j] = (float)fma_double(s, q[j], f32(out[j] + b))
    """
    indices = np.asarray(indices)
    if indices.ndim not in (1, 2):
        raise TorchError('qembedding/qembedding_bag operator supports 1 or 2d indices, got %d' % indices.ndim)
    if indices.ndim == 2 and not is_embedding_op:
        if offsets is not None:
            raise TorchError('offsets has to be None for 2D input')
        if indices.shape[1] == 0:
            raise TorchError('step must be nonzero')
        offsets = np.arange(0, indices.size, indices.shape[1])
    elif offsets is None:
        raise TorchError('expects offsets to be set for 1D indices.')
    offsets = np.asarray(offsets).astype(np.int64)
    idx = indices.reshape(-1).astype(np.int64)
    N = p.shape[0]
    D = p.shape[1] - 8 if bit == 8 else (p.shape[1] - 4) * (8 // bit)
    M = offsets.shape[0]
    out_size = M - 1 if include_last_offset else M
    if out_size < 0:
        raise TorchError('numel: integer multiplication overflow')
    if M == 0:
        raise TorchError('empty offsets: torch 1.13 reads offsets[0] and segfaults')
    # lengths from consecutive differences; offsets[0] is NOT a start index
    lengths = list(np.diff(offsets))
    if not include_last_offset:
        lengths.append(idx.size - offsets[-1])
    scales, biases = _row_params(p, bit)
    codes = _codes(p, bit).astype(np.float64)
    if per_sample_weights is not None:
        psw = np.asarray(per_sample_weights).astype(f32)   # fp16 -> fp32 (nbit only)
    if pruned_weights:
        if compressed_indices_mapping is None:
            raise TorchError('bad optional access')
        cmap = np.asarray(compressed_indices_mapping, np.int32)
        if cmap.size == 1 and cmap[0] == 0:
            pruned_weights = False
    out = np.zeros((out_size, D), f32)
    cur = 0
    for m in range(out_size):
        L = int(lengths[m])
        if cur + L > idx.size:
            raise TorchError('Expect the lengths data to be less than indices size')
        acc = np.zeros(D, f32)
        for _ in range(max(L, 0)):
            i = idx[cur]
            if not pruned_weights:
                if not (0 <= i < N):
                    raise TorchError('Invalid indices data')
                r = i
            else:
                if not (0 <= i < cmap.size):
                    raise TorchError('Invalid indices data for Sparse Op.')
                r = cmap[i]
                if r == -1:
                    cur += 1
                    continue
            wv = psw[cur] if per_sample_weights is not None else f32(1.0)
            s = f32(wv * scales[r])
            b = f32(wv * biases[r])
            t = f32(acc + b)
            acc = (np.float64(s) * codes[r] + t.astype(np.float64)).astype(f32)
            cur += 1
        out[m] = acc
    if is_embedding_op and indices.ndim == 2:
        return out.reshape(indices.shape + (D,))
    return out


# ---------------------------------------------------------------- module path
def observer_float_qparams(w, bit=8):
    """PerChannelMinMaxObserver(qscheme=per_channel_affine_float_qparams,
    ch_axis=0) on a 2-d float weight: per row (float32 tensor ops)
        scale = f32(f32(max - min) / f32(qmax))  ; scale = 1 where scale <= eps(f32)
        zp    = f32(f32(-min) / scale)           (float zero point)"""
    w = np.asarray(w, f32)
    mn, mx = w.min(1), w.max(1)
    qmax = f32((1 << bit) - 1)
    scale = f32(f32(mx - mn) / qmax)
    scale = np.where(scale > np.finfo(f32).eps, scale, f32(1.0)).astype(f32)
    zp = (f32(-mn) / scale).astype(f32)
    return scale, zp


def quantize_per_channel_float_qparams(w, scale, zp, bit=8):
    """quantize_per_channel(w, scale, zp, axis=0, quint8/quint4x2) with float
    qparams: q = clamp(lrintf(f32(f32(x * inv) + zp)), 0, qmax), inv = 1/scale
    (1 if scale == 0). No FMA. Returns the integer codes [N, D]."""
    w = np.asarray(w, f32)
    scale = np.asarray(scale, f32)
    inv = np.where(scale == 0, f32(1.0), f32(1.0) / np.where(scale == 0, f32(1), scale)).astype(f32)
    q = _lrintf(f32(f32(w * inv[:, None]) + np.asarray(zp, f32)[:, None]))
    return np.clip(q, 0, (1 << bit) - 1)


def embedding_bag_prepack_params(codes, scale, zp, bit=8):
    """quantized::embedding_bag_prepack(qweight): the packed buffer it builds
    (same layout as the *_prepack ops). bias = f32(f32(zp * scale) * -1);
    4-bit stores Half(scale), Half(bias). Codes are copied, not re-quantized."""
    codes = np.asarray(codes, np.int64)
    N, D = codes.shape
    scale = np.asarray(scale, f32)
    bias = f32(f32(np.asarray(zp, f32) * scale) * f32(-1))
    if bit == 8:
        out = np.zeros((N, D + 8), np.uint8)
        out[:, :D] = codes
        out[:, D:D + 4] = scale.astype('<f4').view(np.uint8).reshape(N, 4)
        out[:, D + 4:] = bias.astype('<f4').view(np.uint8).reshape(N, 4)
        return out
    nb = (D + 1) // 2
    out = np.zeros((N, nb + 4), np.uint8)
    out[:, :nb] = codes[:, 0::2]
    out[:, :D // 2] |= (codes[:, 1::2] << 4).astype(np.uint8)
    with np.errstate(over='ignore'):
        out[:, nb:nb + 2] = scale.astype(f16).astype('<f2').view(np.uint8).reshape(N, 2)
        out[:, nb + 2:] = bias.astype(f16).astype('<f2').view(np.uint8).reshape(N, 2)
    return out


# ---------------------------------------------------------------- self-test
def _selftest(cases=3000, seed=0):
    import torch
    ops = torch.ops.quantized
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    cnt = {}

    def tally(name, a, b):
        """exact = same shape and bytes; also count exact elements (for
        uint8 packed buffers: exact rows)."""
        a = np.asarray(a)
        b = np.asarray(b)
        ok = a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
        if a.dtype == np.uint8 and a.ndim:
            tot = int(np.prod(a.shape[:-1]))
            el = int((a == b).reshape(tot, -1).all(1).sum()) if a.shape == b.shape else 0
        else:
            tot = a.size
            el = int(((a == b) | (np.isnan(a) & np.isnan(b))).sum()) if a.shape == b.shape else 0
        e, n, ee, nn = cnt.get(name, (0, 0, 0, 0))
        cnt[name] = (e + ok, n + 1, ee + el, nn + tot)
        return ok

    def rand_weight(shape):
        kind = rng.integers(0, 6)
        if kind == 0:
            w = rng.standard_normal(shape)
        elif kind == 1:
            w = rng.uniform(-1, 1, shape) * 10.0 ** rng.integers(-6, 5)
        elif kind == 2:                         # few distinct values: ties
            w = rng.integers(-4, 5, shape) * 0.25
        elif kind == 3:                         # constant rows
            w = np.repeat(rng.standard_normal(shape[:-1] + (1,)), shape[-1], -1)
        elif kind == 4:
            w = rng.standard_normal(shape) * 1e-3 + rng.standard_normal()
        else:
            w = rng.uniform(0, 1, shape) * 255.0 / 7
        return w.astype(f32)

    for c in range(cases):
        bit = [8, 4, 2][c % 3]
        epb = 8 // bit
        N = int(rng.integers(1, 12))
        D = int(rng.integers(1, 9)) * epb * int(rng.integers(1, 4))
        w = rand_weight((N, D))
        tw = torch.from_numpy(w)
        if bit == 8:
            if c % 7 == 0:      # batched byte prepack
                wb = rand_weight((2, N, D))
                tally('byte_prepack_3d', byte_prepack(wb), ops.embedding_bag_byte_prepack(torch.from_numpy(wb)).numpy())
                tally('byte_unpack_3d', byte_unpack(byte_prepack(wb)), ops.embedding_bag_byte_unpack(torch.from_numpy(byte_prepack(wb))).numpy())
            tp = ops.embedding_bag_byte_prepack(tw)
            mp = byte_prepack(w)
            tally('byte_prepack', mp, tp.numpy())
            tally('byte_unpack', byte_unpack(tp.numpy()), ops.embedding_bag_byte_unpack(tp).numpy())
            f = ops.embedding_bag_byte_rowwise_offsets
        else:
            opt = (c % 5 == 0)
            pre = getattr(ops, 'embedding_bag_%dbit_prepack' % bit)
            tp = pre(tw, opt) if opt else pre(tw)
            mp = nbit_prepack(w, bit, opt)
            tally('%dbit_prepack%s' % (bit, '_opt' if opt else ''), mp, tp.numpy())
            unp = getattr(ops, 'embedding_bag_%dbit_unpack' % bit)
            tally('%dbit_unpack' % bit, nbit_unpack(tp.numpy(), bit), unp(tp).numpy())
            f = getattr(ops, 'embedding_bag_%dbit_rowwise_offsets' % bit)
        p = tp.numpy()
        # bag op
        nidx = int(rng.integers(0, 40))
        idx = rng.integers(0, N, nidx)
        itype = [np.int64, np.int32][rng.integers(0, 2)]
        otype = [np.int64, np.int32][rng.integers(0, 2)]
        two_d = rng.random() < 0.15 and nidx > 0
        ilo = bool(rng.random() < 0.3)
        if two_d:
            width = int(rng.integers(1, 6))
            idx = rng.integers(0, N, (int(rng.integers(1, 6)), width))
            offs = None
            ilo = False
        else:
            nb = int(rng.integers(1, 8))
            cuts = np.sort(rng.integers(0, nidx + 1, nb - 1))
            offs = np.concatenate([[0], cuts]).astype(otype)
            if ilo:
                offs = np.concatenate([offs, [nidx]]).astype(otype)
        nflat = idx.size
        psw = None
        if rng.random() < 0.4:
            psw = (rng.standard_normal(nflat) * 2).astype(f32)
            if bit != 8 and rng.random() < 0.3:
                psw = psw.astype(f16)
        pruned = False
        cmap = None
        if rng.random() < 0.2:
            pruned = True
            K = int(rng.integers(1, 2 * N + 2))
            cmap = rng.integers(-1, N, K).astype(np.int32)
            idx = rng.integers(0, K, idx.shape)
        idx = idx.astype(itype)
        t_out = f(tp, torch.from_numpy(idx), None if offs is None else torch.from_numpy(offs),
                  False, int(rng.integers(0, 3)), pruned,
                  None if psw is None else torch.from_numpy(psw),
                  None if cmap is None else torch.from_numpy(cmap), ilo).numpy()
        m_out = rowwise_offsets(p, bit, idx, offs, psw, pruned, cmap, ilo)
        tally('bag_%d%s%s' % (bit, '_psw' if psw is not None else '', '_pruned' if pruned else ''), m_out, t_out)
    # packed-params path: embedding_bag_byte / 4bit, embedding_byte / 4bit
    for c in range(max(cases // 10, 10)):
        bit = [8, 4][c % 2]
        N = int(rng.integers(1, 10))
        D = int(rng.integers(1, 6)) * 2
        w = rand_weight((N, D))
        dt = torch.quint8 if bit == 8 else torch.quint4x2
        sc, zp = observer_float_qparams(w, bit)
        qw = torch.quantize_per_channel(torch.from_numpy(w), torch.from_numpy(sc), torch.from_numpy(zp), 0, dt)
        codes = quantize_per_channel_float_qparams(w, sc, zp, bit)
        tcodes = qw.int_repr().numpy().astype(np.int64)
        if bit == 4:
            tcodes = np.stack([tcodes & 15, tcodes >> 4], -1).reshape(N, D)
        tally('quantize_per_channel_fq_%d' % bit, codes, tcodes)
        pk = ops.embedding_bag_prepack(qw)
        buf = embedding_bag_prepack_params(codes, sc, zp, bit)
        idx = rng.integers(0, N, int(rng.integers(1, 12)))
        offs = np.array([0, len(idx) // 2])
        fb = ops.embedding_bag_byte if bit == 8 else ops.embedding_bag_4bit
        fe = ops.embedding_byte if bit == 8 else ops.embedding_4bit
        tally('packed_bag_%d' % bit, rowwise_offsets(buf, bit, idx, offs),
              fb(pk, torch.from_numpy(idx), torch.from_numpy(offs)).numpy())
        idx2 = rng.integers(0, N, (2, 3))
        tally('packed_embedding_%d' % bit, rowwise_offsets(buf, bit, idx2, np.arange(6), is_embedding_op=True),
              fe(pk, torch.from_numpy(idx2)).numpy())
    # modules: from_float with float_qparams_weight_only_qconfig(_4bit)
    import torch.nn as nn
    import torch.ao.nn.quantized as nnq
    from torch.ao.quantization import (float_qparams_weight_only_qconfig,
                                       float_qparams_weight_only_qconfig_4bit)
    for c in range(max(cases // 20, 10)):
        bit = [8, 4][c % 2]
        N = int(rng.integers(2, 12))
        D = int(rng.integers(1, 6)) * 2
        w = rand_weight((N, D))
        qc = float_qparams_weight_only_qconfig if bit == 8 else float_qparams_weight_only_qconfig_4bit
        if bit == 8 and c % 4 == 0:
            fm = nn.Embedding(N, D)
        else:
            fm = nn.EmbeddingBag(N, D, mode='sum')
        with torch.no_grad():
            fm.weight.copy_(torch.from_numpy(w))
        fm.qconfig = qc
        obs = qc.weight()
        obs(fm.weight)
        tsc, tzp = obs.calculate_qparams()
        sc, zp = observer_float_qparams(w, bit)
        tally('observer_qparams', np.stack([sc, zp]), np.stack([tsc.numpy(), tzp.numpy()]))
        buf = embedding_bag_prepack_params(quantize_per_channel_float_qparams(w, sc, zp, bit), sc, zp, bit)
        if isinstance(fm, nn.Embedding):
            qm = nnq.Embedding.from_float(fm)
            idx = rng.integers(0, N, (2, 3))
            tally('module_Embedding_8', rowwise_offsets(buf, 8, idx, np.arange(6), is_embedding_op=True),
                  qm(torch.from_numpy(idx)).detach().numpy())
        else:
            qm = nnq.EmbeddingBag.from_float(fm)
            idx = rng.integers(0, N, int(rng.integers(1, 12)))
            offs = np.array([0, len(idx) // 3])
            psw = (rng.standard_normal(idx.size)).astype(f32)
            tally('module_EmbeddingBag_%d' % bit, rowwise_offsets(buf, bit, idx, offs, psw),
                  qm(torch.from_numpy(idx), torch.from_numpy(offs), torch.from_numpy(psw)).detach().numpy())
    # deterministic edge cases
    inf, nan = np.inf, np.nan
    rows = [[1, 1, 1, 1], [-0.0, 0.0, 0, 0], [1e-30, 2e-30, 0, 0], [1e-8, 0, 0, 0],
            [3e38, -3e38, 0, 1], [inf, 0, 1, 2], [-inf, 0, 1, 2], [nan, 0, 1, 2],
            [0, nan, 1, 2], [1, 2, nan, 0], [nan, nan, nan, nan], [70000, 0, 1, 2],
            [-70000, 0, 1, 2], [65504, 65520, 0, 1], [5, 5, 5, 5.0000005], [2**-24, 0, 2**-25, 0]]
    for r in rows:
        w = np.array([r], f32)
        with np.errstate(all='ignore'):
            tally('edge_byte_prepack', byte_prepack(w), ops.embedding_bag_byte_prepack(torch.from_numpy(w)).numpy())
            for bit in (4, 2):
                for opt in (False, True):
                    tally('edge_nbit_prepack', nbit_prepack(w, bit, opt),
                          getattr(ops, 'embedding_bag_%dbit_prepack' % bit)(torch.from_numpy(w), opt).numpy())
    # double-rounding witness: torch computes fma in double, then rounds to float
    for bit in (8, 4, 2):
        if bit == 8:
            p = np.zeros((2, 16), np.uint8)
            p[1, :8] = 3
            p[0, 8:] = np.array([0, -2.0**-60], '<f4').view(np.uint8)
            p[1, 8:] = np.array([1 + 2.0**-23, 0], '<f4').view(np.uint8)
            psw = None
        else:
            epb = 8 // bit
            p = np.zeros((2, 8 // epb + 4), np.uint8)
            p[1, :8 // epb] = sum(3 << (k * bit) for k in range(epb))
            p[0, -4:] = np.array([0, -2.0**-20], '<f2').view(np.uint8)
            p[1, -4:] = np.array([1, 0], '<f2').view(np.uint8)
            psw = np.array([2.0**-40, 1 + 2.0**-23], f32)
        fn = ops.embedding_bag_byte_rowwise_offsets if bit == 8 else getattr(ops, 'embedding_bag_%dbit_rowwise_offsets' % bit)
        t = fn(torch.from_numpy(p), torch.tensor([0, 1]), torch.tensor([0]), False, 0, False,
               None if psw is None else torch.from_numpy(psw)).numpy()
        m = rowwise_offsets(p, bit, np.array([0, 1]), np.array([0]), psw)
        tally('edge_double_rounding', m, t)
        assert m[0, 0] == f32(3 + 2.0**-21)
    # offsets[0] is ignored, include_last_offset's last value only bounds-checked, modes ignored
    w = rand_weight((7, 8))
    for bit in (8, 4, 2):
        p = byte_prepack(w) if bit == 8 else nbit_prepack(w, bit)
        fn = ops.embedding_bag_byte_rowwise_offsets if bit == 8 else getattr(ops, 'embedding_bag_%dbit_rowwise_offsets' % bit)
        idx = np.array([1, 2, 3, 4, 5, 6])
        for offs, ilo in (([2, 4], False), ([3, 5], True), ([0, 0, 6, 6], False), ([0, 2, 4, 5], True), ([0, 6], True)):
            for mode in (0, 1, 2):
                t = fn(torch.from_numpy(p), torch.from_numpy(idx), torch.tensor(offs), False, mode, False, None, None, ilo).numpy()
                tally('edge_offsets_modes', rowwise_offsets(p, bit, idx, np.array(offs), include_last_offset=ilo), t)
    print('name: exact cases / cases, exact elements (rows for uint8) / elements')
    for k in sorted(cnt):
        e, n, ee, nn = cnt[k]
        print('  %-28s %6d / %-6d %9d / %d' % (k, e, n, ee, nn))
    tot = sum(v[0] for v in cnt.values()), sum(v[1] for v in cnt.values())
    print('TOTAL exact %d / %d' % tot)
    return tot[0] == tot[1]


if __name__ == '__main__':
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    s = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    sys.exit(0 if _selftest(n, s) else 1)
