#!/usr/bin/python3
"""Quantized tensors, tessera against torch 1.13 in one run (issue 26): quantizing and
dequantizing 16M float32 values per tensor (also to quint4x2), a 1024^2 weight per channel,
int_repr, and fake quantization (per tensor, per channel, learnable, with a backward), both
libraries at the same thread count, alternating call by call, output allocation included.
Bytes moved (read + written) give GB/s, beside the STREAM add figure of this machine.

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_quantized.py [build dir] [rounds] [name part]

per-tensor quantize/dequantize loops are AVX2 (aten/native/quantized/cpu/AffineQuantizerKernel.cpp;
torch 1.13 without FBGEMM runs a scalar loop); issue 26's target is 70% of STREAM for
quantize/dequantize of 16M floats. The quantized operators' rows (add, mul, relu, sigmoid,
hardswish, cat, pooling, the norms, mean/std, topk/sort, 3-d pooling, bilinear upsampling) run
tessera's loops against torch's.
"""
import sys

import numpy
import torch

import tessera

from bench_common import THREADS, header, print_table, run_case, set_threads, stream

M16 = 1 << 24


def floats(lib, shape, seed):
    values = numpy.random.default_rng(seed).standard_normal(shape, dtype=numpy.float32)
    return torch.from_numpy(values) if lib is torch else tessera.tensor(values)


def quantized(lib, shape, seed, dtype):
    return lib.quantize_per_tensor(floats(lib, shape, seed), 0.02, 3, getattr(lib, dtype))


def nhwc(lib):
    return quantized(lib, (32, 64, 56, 56), 21, "quint8").contiguous(memory_format=lib.channels_last)


def nhwc3d(lib):
    """An 8x32x16x28x28 quint8 activation in channels_last_3d (a 3-d conv's layout)."""
    return quantized(lib, (8, 32, 16, 28, 28), 30, "quint8").contiguous(memory_format=lib.channels_last_3d)


def channel_qparams(lib, n):
    return lib.linspace(0.01, 0.05, n, dtype=lib.float64), lib.arange(n) % 7


def norm_params(lib, channels):
    """weight, bias, running mean and running variance of a norm over `channels`."""
    w, b, m = (floats(lib, (channels,), 30 + k) for k in range(3))
    return w, b, m, floats(lib, (channels,), 33).abs() + 0.5


def fake_quant_step(lib, x, g):
    """A QAT activation's forward and backward: the straight-through gradient."""
    x.grad = None
    lib.fake_quantize_per_tensor_affine(x, 0.02, 3, -128, 127).backward(g)


def lsq_step(lib, x, s, z, g):
    x.grad = s.grad = z.grad = None
    lib._fake_quantize_learnable_per_tensor_affine(x, s, z, -128, 127, 1.0).backward(g)


# name, setup(lib) -> args, op(lib, *args), bytes moved
CASES = [
    ("quantize_per_tensor 16M -> qint8", lambda L: (floats(L, (M16,), 0),),
     lambda L, x: L.quantize_per_tensor(x, 0.02, 3, L.qint8), 5 * M16),
    ("quantize_per_tensor 16M -> quint8", lambda L: (floats(L, (M16,), 1),),
     lambda L, x: L.quantize_per_tensor(x, 0.02, 128, L.quint8), 5 * M16),
    ("dequantize 16M qint8", lambda L: (quantized(L, (M16,), 2, "qint8"),), lambda L, q: q.dequantize(), 5 * M16),
    ("int_repr 16M qint8", lambda L: (quantized(L, (M16,), 3, "qint8"),), lambda L, q: q.int_repr(), 2 * M16),
    ("quantize_per_channel 1024^2 axis 0", lambda L: (floats(L, (1024, 1024), 4),) + channel_qparams(L, 1024),
     lambda L, x, s, z: L.quantize_per_channel(x, s, z, 0, L.qint8), 5 * 1024 * 1024),
    ("dequantize per channel 1024^2", lambda L: (L.quantize_per_channel(floats(L, (1024, 1024), 5),
                                                                         *channel_qparams(L, 1024), 0, L.qint8),),
     lambda L, q: q.dequantize(), 5 * 1024 * 1024),
    ("quantize_per_tensor 16M -> quint4x2", lambda L: (floats(L, (M16,), 6),),
     lambda L, x: L.quantize_per_tensor(x, 0.2, 8, L.quint4x2), 4 * M16 + M16 // 2),
    ("dequantize 16M quint4x2", lambda L: (L.quantize_per_tensor(floats(L, (M16,), 7), 0.2, 8, L.quint4x2),),
     lambda L, q: q.dequantize(), 4 * M16 + M16 // 2),
    # fake quantization writes the output and the mask (1 byte) too
    ("fake_quantize_per_tensor_affine 4M", lambda L: (floats(L, (M16 // 4,), 8),),
     lambda L, x: L.fake_quantize_per_tensor_affine(x, 0.02, 3, -128, 127), 9 * M16 // 4),
    ("fake_quantize_per_channel_affine 1024^2", lambda L: (floats(L, (1024, 1024), 9), L.linspace(0.01, 0.05, 1024),
                                                           L.zeros(1024, dtype=L.int32)),
     lambda L, x, s, z: L.fake_quantize_per_channel_affine(x, s, z, 0, -128, 127), 9 * 1024 * 1024),
    ("fake quant fwd+bwd 1M", lambda L: (floats(L, (1 << 20,), 10).requires_grad_(), L.ones(1 << 20)),
     fake_quant_step, 22 * (1 << 20)),
    ("learnable (LSQ) fwd+bwd 1M", lambda L: (floats(L, (1 << 20,), 11).requires_grad_(),
                                              L.tensor([0.02], requires_grad=True), L.tensor([3.0], requires_grad=True),
                                              L.ones(1 << 20)),
     lsq_step, 33 * (1 << 20)),
    # the quantized operators (aten/native/quantized/cpu/QuantizedOpsKernel.cpp): 4M quint8
    ("quantized::add 4M quint8", lambda L: (quantized(L, (M16 // 4,), 12, "quint8"),
                                            quantized(L, (M16 // 4,), 13, "quint8")),
     lambda L, a, b: L.ops.quantized.add(a, b, 0.04, 128), 3 * M16 // 4),
    ("quantized::mul 4M quint8", lambda L: (quantized(L, (M16 // 4,), 14, "quint8"),
                                            quantized(L, (M16 // 4,), 15, "quint8")),
     lambda L, a, b: L.ops.quantized.mul(a, b, 0.001, 128), 3 * M16 // 4),
    ("relu 4M quint8", lambda L: (quantized(L, (M16 // 4,), 16, "quint8"),), lambda L, q: L.relu(q), 2 * M16 // 4),
    ("sigmoid 4M quint8", lambda L: (quantized(L, (M16 // 4,), 17, "quint8"),), lambda L, q: L.sigmoid(q),
     2 * M16 // 4),
    ("quantized::hardswish 4M quint8", lambda L: (quantized(L, (M16 // 4,), 18, "quint8"),),
     lambda L, q: L.ops.quantized.hardswish(q, 0.02, 10), 2 * M16 // 4),
    ("cat 2x 2M quint8 (requantize)", lambda L: (quantized(L, (M16 // 8,), 19, "quint8"),
                                                 L.quantize_per_tensor(floats(L, (M16 // 8,), 20), 0.03, 100,
                                                                       L.quint8)),
     lambda L, a, b: L.cat([a, b]), 2 * M16 // 4),
    # pooling (aten/native/quantized/Pooling.cpp) on a ResNet-style channels_last activation
    ("max_pool2d 3x3/2 32x64x56x56 NHWC", lambda L: (nhwc(L),),
     lambda L, q: L.nn.functional.max_pool2d(q, 3, 2, 1), 32 * 64 * (56 * 56 + 28 * 28)),
    ("avg_pool2d 2x2 32x64x56x56 NHWC", lambda L: (nhwc(L),), lambda L, q: L.nn.functional.avg_pool2d(q, 2),
     32 * 64 * (56 * 56 + 28 * 28)),
    ("adaptive_avg_pool2d 1 32x64x56x56 NHWC", lambda L: (nhwc(L),),
     lambda L, q: L.nn.functional.adaptive_avg_pool2d(q, 1), 32 * 64 * 56 * 56),
    ("max_pool2d 3x3/2 32x64x56x56 NCHW", lambda L: (quantized(L, (32, 64, 56, 56), 22, "quint8"),),
     lambda L, q: L.nn.functional.max_pool2d(q, 3, 2, 1), 32 * 64 * (56 * 56 + 28 * 28)),
    # the norms (aten/native/quantized/Normalization.cpp): a ResNet-style activation, a transformer's rows
    ("quantized::batch_norm2d 32x64x56x56 NHWC", lambda L: (nhwc(L),) + norm_params(L, 64),
     lambda L, q, w, b, m, v: L.ops.quantized.batch_norm2d(q, w, b, m, v, 1e-5, 0.03, 100), 2 * 32 * 64 * 56 * 56),
    ("quantized::layer_norm 4096x1024",
     lambda L: (quantized(L, (4096, 1024), 23, "quint8"),) + norm_params(L, 1024)[:2],
     lambda L, q, w, b: L.ops.quantized.layer_norm(q, [1024], w, b, 1e-5, 0.03, 100), 2 * 4096 * 1024),
    ("quantized::group_norm 8 groups 32x64x56x56 NCHW", lambda L: (quantized(L, (32, 64, 56, 56), 24, "quint8"),)
     + norm_params(L, 64)[:2], lambda L, q, w, b: L.ops.quantized.group_norm(q, 8, w, b, 1e-5, 0.03, 100),
     2 * 32 * 64 * 56 * 56),
    ("quantized::group_norm 8 groups 32x64x56x56 NHWC", lambda L: (nhwc(L),) + norm_params(L, 64)[:2],
     lambda L, q, w, b: L.ops.quantized.group_norm(q, 8, w, b, 1e-5, 0.03, 100), 2 * 32 * 64 * 56 * 56),
    # reductions and order operators (aten/native/quantized/ReduceOps.cpp, Sorting.cpp): the integer
    # fast path on rows, and a conv's channels-last output pooled by the float fallback
    ("mean(-1) 4096x1024 quint8", lambda L: (quantized(L, (4096, 1024), 25, "quint8"),), lambda L, q: q.mean(-1),
     4096 * 1024),
    ("std(-1) 4096x1024 quint8", lambda L: (quantized(L, (4096, 1024), 26, "quint8"),), lambda L, q: q.std(-1),
     4096 * 1024),
    ("mean([2, 3]) 32x64x56x56 NHWC", lambda L: (nhwc(L),), lambda L, q: q.mean([2, 3]), 32 * 64 * 56 * 56),
    ("topk 8 of 4096x1024 quint8", lambda L: (quantized(L, (4096, 1024), 27, "quint8"),),
     lambda L, q: L.topk(q, 8), 4096 * 1024),
    ("sort 1024x1024 quint8", lambda L: (quantized(L, (1024, 1024), 28, "quint8"),), lambda L, q: L.sort(q),
     10 * 1024 * 1024),
    # 3-d pooling and bilinear upsampling (aten/native/quantized/Pooling3d.cpp, UpSample.cpp)
    ("avg_pool3d 2 8x32x16x28x28 NDHWC", lambda L: (nhwc3d(L),), lambda L, q: L.nn.functional.avg_pool3d(q, 2),
     8 * 32 * 16 * 28 * 28 * 9 // 8),
    ("adaptive_avg_pool3d (4, 7, 7) 8x32x16x28x28 NDHWC", lambda L: (nhwc3d(L),),
     lambda L, q: L.nn.functional.adaptive_avg_pool3d(q, (4, 7, 7)), 8 * 32 * 16 * 28 * 28),
    ("bilinear 2x 32x64x28x28 NHWC", lambda L: (nhwc(L)[:, :, :28, :28].contiguous(memory_format=L.channels_last),),
     lambda L, q: L.nn.functional.interpolate(q, scale_factor=2, mode="bilinear"), 32 * 64 * 28 * 28 * 5),
    ("bilinear 2x 32x64x28x28 NCHW", lambda L: (quantized(L, (32, 64, 28, 28), 29, "quint8"),),
     lambda L, q: L.nn.functional.interpolate(q, scale_factor=2, mode="bilinear"), 32 * 64 * 28 * 28 * 5),
]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    only = sys.argv[3] if len(sys.argv) > 3 else ""  # rows whose name contains this
    set_threads()
    stream_before = stream(build)
    rows = [(name, run_case(setup, op, rounds) + (nbytes,), None) for name, setup, op, nbytes in CASES if only in name]
    best = max(stream_before, stream(build))
    print(header(rounds))
    print(f"STREAM add (bench/stream_add, {THREADS} threads): {best:.1f} GB/s (before {stream_before:.1f})")
    print()
    print_table(rows, best, "STREAM")


if __name__ == "__main__":
    main()
