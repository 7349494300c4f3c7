"""OpInfo entries for the nn operators (aten/native/nn/), called through
torch.nn.functional / tessera.nn.functional with sample generators: convolutions and
fold / unfold, pooling, normalization, embedding, padding, resampling, dropout, attention
and the losses. Each entry names the backward operators its gradients run (`covers`), and
asks gradgradcheck where those backward operators have derivatives of their own.

nn entries run on float32 and float64 (torch 1.13 lacks most reduced-precision CPU nn
kernels; the elementwise families sweep every dtype)."""
import math

import torch

from opinfo import GradSample, OpInfo, make_torch, register

FLOAT = ("float32", "float64")


def nn(name, fn, samples, **kw):
    """fn(F, *tensors, **kwargs) with F the library's nn.functional."""
    kw.setdefault("dtypes", FLOAT)
    kw.setdefault("supports_out", False)
    return OpInfo(name, lambda lib, *t, **k: fn(lib.nn.functional, *t, **k), sample_inputs=samples, **kw)


def T(shape, dtype, seed, low=-2.0, high=2.0):
    return make_torch(shape, dtype, seed, low, high)


def _long(values):
    return torch.tensor(values, dtype=torch.int64)


# ---------------------------------------------------------------- convolution

def conv2d_samples(dtype):
    x = T((1, 2, 3, 3), dtype, 1)
    yield "stride padding bias", [x, T((2, 2, 2, 2), dtype, 2), T((2,), dtype, 3)], {"stride": (1, 2), "padding": 1}
    yield "groups dilation", [x, T((2, 1, 2, 2), dtype, 4)], {"groups": 2, "dilation": (1, 2)}
    yield "same", [x, T((1, 2, 2, 2), dtype, 5)], {"padding": "same"}
    yield "strided input", [T((1, 3, 3, 2), dtype, 6).transpose(1, 3), T((1, 2, 2, 2), dtype, 7)], {}


def conv1d_samples(dtype):
    yield "stride padding", [T((1, 3, 4), dtype, 1), T((3, 3, 2), dtype, 2)], {"stride": 2, "padding": 1}
    yield "bias", [T((2, 2, 5), dtype, 3), T((1, 2, 3), dtype, 4), T((1,), dtype, 5)], {}


def conv3d_samples(dtype):
    yield "plain", [T((1, 2, 2, 3, 3), dtype, 1), T((1, 2, 1, 2, 2), dtype, 2)], {}


def conv_transpose2d_samples(dtype):
    yield "stride output_padding bias", [T((1, 2, 2, 2), dtype, 1), T((2, 3, 2, 2), dtype, 2), T((3,), dtype, 3)], \
        {"stride": 2, "output_padding": 1}
    yield "padding", [T((1, 2, 3, 3), dtype, 4), T((2, 1, 2, 2), dtype, 5)], {"padding": 1}


def conv_transpose1d_samples(dtype):
    yield "stride padding dilation", [T((1, 3, 3), dtype, 1), T((3, 2, 2), dtype, 2)], \
        {"stride": 2, "padding": 1, "dilation": 2}


def conv_transpose3d_samples(dtype):
    yield "stride output_padding bias", [T((1, 2, 2, 2, 2), dtype, 1), T((2, 2, 2, 1, 2), dtype, 2), T((2,), dtype, 3)], \
        {"stride": 2, "output_padding": 1}
    yield "groups padding", [T((2, 3, 2, 2), dtype, 4), T((2, 1, 2, 2, 1), dtype, 5)], {"padding": (0, 1, 0)}


def unfold_samples(dtype):
    yield "padding", [T((1, 2, 3, 3), dtype, 1)], {"kernel_size": 2, "padding": 1}
    yield "stride", [T((1, 1, 4, 3), dtype, 2)], {"kernel_size": (2, 1), "stride": 2}


def fold_samples(dtype):
    yield "overlapping", [T((1, 8, 4), dtype, 1)], {"output_size": (3, 3), "kernel_size": 2}
    yield "stride padding", [T((1, 2, 4), dtype, 2)], {"output_size": (2, 4), "kernel_size": (1, 2), "stride": 2,
                                                       "padding": (0, 1)}


def conv_tbc_samples(dtype):
    yield "pad 1", [T((5, 2, 3), dtype, 1), T((3, 3, 4), dtype, 2), T((4,), dtype, 3)], {"pad": 1}
    yield "no pad, wide kernel", [T((4, 1, 2), dtype, 4), T((4, 2, 1), dtype, 5), T((1,), dtype, 6)], {}


CONV = dict(gradgrad=True, covers=("convolution", "convolution_backward"), rtol=1e-5, atol=1e-5)
register(
    nn("conv2d", lambda F, *t, **k: F.conv2d(*t, **k), conv2d_samples, **CONV),
    nn("conv1d", lambda F, *t, **k: F.conv1d(*t, **k), conv1d_samples, **CONV),
    nn("conv_tbc", lambda F, *t, **k: F.conv_tbc(*t, **k), conv_tbc_samples, **CONV),
    nn("conv3d", lambda F, *t, **k: F.conv3d(*t, **k), conv3d_samples, **CONV),
    nn("conv_transpose2d", lambda F, *t, **k: F.conv_transpose2d(*t, **k), conv_transpose2d_samples, **CONV),
    nn("conv_transpose1d", lambda F, *t, **k: F.conv_transpose1d(*t, **k), conv_transpose1d_samples, **CONV),
    nn("conv_transpose3d", lambda F, *t, **k: F.conv_transpose3d(*t, **k), conv_transpose3d_samples, **CONV),
    nn("unfold", lambda F, x, **k: F.unfold(x, **k), unfold_samples, covers=("im2col",)),
    nn("fold", lambda F, x, **k: F.fold(x, **k), fold_samples, covers=("col2im",)),
)

# ---------------------------------------------------------------- pooling


def pool2d_samples(dtype):
    x = T((1, 2, 3, 4), dtype, 1)
    yield "k2 s1", [x], {"kernel_size": 2, "stride": 1}
    yield "padding ceil", [x], {"kernel_size": 2, "padding": 1, "ceil_mode": True}
    yield "3-D input", [T((2, 3, 3), dtype, 2)], {"kernel_size": (2, 1)}


def pool1d_samples(dtype):
    yield "k2", [T((1, 2, 5), dtype, 1)], {"kernel_size": 2}
    yield "stride padding", [T((2, 1, 6), dtype, 2)], {"kernel_size": 3, "stride": 2, "padding": 1}


def adaptive2d_samples(dtype):
    yield "(2, 1)", [T((1, 2, 3, 3), dtype, 1)], {"output_size": (2, 1)}
    yield "(2, 3)", [T((2, 3, 5), dtype, 2)], {"output_size": (2, 3)}


def adaptive1d_samples(dtype):
    yield "2", [T((1, 2, 5), dtype, 1)], {"output_size": 2}
    yield "4", [T((2, 3), dtype, 2)], {"output_size": 4}


POOL = dict(gradgrad=True)
register(
    nn("max_pool2d", lambda F, x, **k: F.max_pool2d(x, **k), pool2d_samples, **POOL,
       covers=("max_pool2d_with_indices", "max_pool2d_with_indices_backward")),
    nn("max_pool2d[indices]", lambda F, x, **k: F.max_pool2d(x, return_indices=True, **k), pool2d_samples, **POOL),
    nn("max_pool1d", lambda F, x, **k: F.max_pool1d(x, **k), pool1d_samples, covers=("max_pool1d_with_indices",)),
    nn("max_pool1d[indices]", lambda F, x, **k: F.max_pool1d(x, return_indices=True, **k), pool1d_samples),
    nn("avg_pool2d", lambda F, x, **k: F.avg_pool2d(x, **k), pool2d_samples, **POOL, covers=("avg_pool2d_backward",)),
    nn("avg_pool2d[exclude pad]", lambda F, x, **k: F.avg_pool2d(x, count_include_pad=False, **k), pool2d_samples),
    nn("avg_pool1d", lambda F, x, **k: F.avg_pool1d(x, **k), pool1d_samples),
    nn("adaptive_avg_pool2d", lambda F, x, **k: F.adaptive_avg_pool2d(x, **k), adaptive2d_samples, **POOL,
       covers=("_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward")),
    nn("adaptive_max_pool2d", lambda F, x, **k: F.adaptive_max_pool2d(x, **k), adaptive2d_samples, **POOL,
       covers=("adaptive_max_pool2d_backward",)),
    nn("adaptive_avg_pool1d", lambda F, x, **k: F.adaptive_avg_pool1d(x, **k), adaptive1d_samples),
    nn("adaptive_max_pool1d", lambda F, x, **k: F.adaptive_max_pool1d(x, **k), adaptive1d_samples),
)



def pool3d_samples(dtype):
    x = T((1, 2, 3, 4, 3), dtype, 1)
    yield "k2 s1", [x], {"kernel_size": 2, "stride": 1}
    yield "padding ceil", [x], {"kernel_size": (2, 3, 2), "stride": 2, "padding": 1, "ceil_mode": True}
    yield "4-D input", [T((2, 3, 3, 2), dtype, 2)], {"kernel_size": (2, 1, 2)}


def max_pool3d_samples(dtype):
    yield from pool3d_samples(dtype)
    yield "dilation", [T((1, 1, 4, 5, 4), dtype, 3)], {"kernel_size": 2, "dilation": (1, 2, 1), "padding": (1, 0, 1)}


def avg_pool3d_samples(dtype):
    yield from pool3d_samples(dtype)
    yield "divisor", [T((1, 2, 3, 3, 3), dtype, 4)], {"kernel_size": 2, "padding": 1, "divisor_override": 3}


def adaptive3d_samples(dtype):
    yield "(2, 1, 3)", [T((1, 2, 3, 3, 4), dtype, 1)], {"output_size": (2, 1, 3)}
    yield "(2, None, 3)", [T((2, 3, 5, 2), dtype, 2)], {"output_size": (2, None, 3)}


def _unpool(n):
    def call(F, x, **k):
        pooled, indices = getattr(F, f"max_pool{n}d")(x, k["kernel_size"], k.get("stride"), return_indices=True)
        return getattr(F, f"max_unpool{n}d")(pooled, indices, **k)
    return call


def unpool1d_samples(dtype):
    yield "k2", [T((1, 2, 6), dtype, 1)], {"kernel_size": 2}
    # (windows that do not overlap: an element that is the max of two windows is unpooled twice)
    yield "output_size", [T((2, 1, 7), dtype, 2)], {"kernel_size": 2, "stride": 3, "output_size": [8]}


def unpool2d_samples(dtype):
    yield "k2", [T((1, 2, 4, 4), dtype, 1)], {"kernel_size": 2}
    yield "output_size", [T((2, 5, 5), dtype, 2)], {"kernel_size": 2, "stride": 2, "output_size": (2, 5, 5)}


def unpool3d_samples(dtype):
    yield "k2", [T((1, 2, 4, 2, 4), dtype, 1)], {"kernel_size": 2}
    yield "stride", [T((1, 5, 4, 3), dtype, 2)], {"kernel_size": (2, 1, 1), "stride": (2, 2, 1)}


def fractional_samples(dims):
    """Inputs with their random samples given (so both libraries pick the same windows)."""
    def samples(dtype):
        spatial = (7, 6) if dims == 2 else (5, 6, 5)
        yield "batched", [T((2, 3) + spatial, dtype, 1), T((2, 3, dims), dtype, 2, 0.0, 1.0)], \
            {"kernel_size": 2, "output_size": tuple(s - 3 for s in spatial)}
        yield "unbatched, kernel 3", [T((2,) + spatial, dtype, 3), T((1, 2, dims), dtype, 4, 0.0, 1.0)], \
            {"kernel_size": 3, "output_size": 2}
        yield "one output cell", [T((1, 1) + spatial, dtype, 5), T((1, 1, dims), dtype, 6, 0.0, 1.0)], \
            {"kernel_size": 2, "output_size": 1}
        # (few enough elements for finite differences; torch's 3-D check is strict)
        small, output = ((4, 3), (3, 2)) if dims == 2 else ((3, 3, 3), (1, 1, 1))
        yield "small", [T((1, 2) + small, dtype, 7), T((1, 2, dims), dtype, 8, 0.0, 1.0)], \
            {"kernel_size": 2, "output_size": output}
    return samples


def _fractional(dims, indices=False):
    def call(F, x, u, **k):
        pool = getattr(F, f"fractional_max_pool{dims}d")
        return pool(x, _random_samples=u, return_indices=indices, **k)
    return call


def lp_pool_samples(dims):
    def samples(dtype):
        shape = (1, 2, 5) if dims == 1 else (1, 2, 4, 5)
        yield "p=2", [T(shape, dtype, 1)], {"norm_type": 2.0, "kernel_size": 2}
        yield "p=3 stride ceil", [T(shape, dtype, 2, 0.1, 2.0)], {"norm_type": 3.0, "kernel_size": 3, "stride": 2,
                                                                  "ceil_mode": True}
    return samples


register(
    nn("max_pool3d", lambda F, x, **k: F.max_pool3d(x, **k), max_pool3d_samples, **POOL,
       covers=("max_pool3d_with_indices", "max_pool3d_with_indices_backward")),
    nn("max_pool3d[indices]", lambda F, x, **k: F.max_pool3d(x, return_indices=True, **k), max_pool3d_samples,
       **POOL),
    nn("avg_pool3d", lambda F, x, **k: F.avg_pool3d(x, **k), avg_pool3d_samples, **POOL,
       covers=("avg_pool3d_backward",)),
    nn("avg_pool3d[exclude pad]", lambda F, x, **k: F.avg_pool3d(x, count_include_pad=False, **k), pool3d_samples),
    nn("adaptive_avg_pool3d", lambda F, x, **k: F.adaptive_avg_pool3d(x, **k), adaptive3d_samples, **POOL,
       covers=("_adaptive_avg_pool3d", "_adaptive_avg_pool3d_backward")),
    nn("adaptive_max_pool3d", lambda F, x, **k: F.adaptive_max_pool3d(x, **k), adaptive3d_samples, **POOL,
       covers=("adaptive_max_pool3d_backward",)),
    nn("adaptive_max_pool3d[indices]", lambda F, x, **k: F.adaptive_max_pool3d(x, return_indices=True, **k),
       adaptive3d_samples),
    nn("max_unpool1d", _unpool(1), unpool1d_samples, gradgrad=True),
    nn("max_unpool2d", _unpool(2), unpool2d_samples, gradgrad=True),
    nn("max_unpool3d", _unpool(3), unpool3d_samples, gradgrad=True),
    # (the random samples are data: the gradient is with respect to the input only)
    nn("fractional_max_pool2d", _fractional(2), fractional_samples(2), gradgrad=True, no_grad_inputs=(1,)),
    nn("fractional_max_pool2d[indices]", _fractional(2, True), fractional_samples(2), no_grad_inputs=(1,)),
    nn("fractional_max_pool3d", _fractional(3), fractional_samples(3), gradgrad=True, no_grad_inputs=(1,)),
    nn("fractional_max_pool3d[indices]", _fractional(3, True), fractional_samples(3), no_grad_inputs=(1,)),
    nn("lp_pool1d", lambda F, x, **k: F.lp_pool1d(x, **k), lp_pool_samples(1)),
    nn("lp_pool2d", lambda F, x, **k: F.lp_pool2d(x, **k), lp_pool_samples(2)),
)

# ---------------------------------------------------------------- normalization


def batch_norm_samples(dtype):
    """(input, weight, bias[, running mean, running var]): the statistics last, as data."""
    x, w, b = T((3, 3, 2), dtype, 1), T((3,), dtype, 2, 0.5, 2.0), T((3,), dtype, 3)
    stats = [T((3,), dtype, 4), T((3,), dtype, 5, 0.5, 2.0)]
    yield "training", [x, w, b], {"training": True}
    yield "eval stats", [x, w, b, *stats], {"training": False}
    yield "training stats", [T((4, 3), dtype, 6), w, b, *stats], {"training": True, "momentum": 0.3}


def _batch_norm_call(F, x, w, b, *stats, training, momentum=0.1):
    # running statistics are buffers (updated in training): fresh copies, so that every
    # call of a gradcheck sees the same ones
    mean, var = [s.clone() for s in stats] if stats else (None, None)
    return F.batch_norm(x, mean, var, w, b, training=training, momentum=momentum)


def layer_norm_samples(dtype):
    x = T((3, 3, 2), dtype, 1)
    yield "last dim", [x], {"normalized_shape": [2]}
    yield "two dims affine", [x, T((3, 2), dtype, 2, 0.5, 2.0), T((3, 2), dtype, 3)], {"normalized_shape": [3, 2]}


def group_norm_samples(dtype):
    yield "affine", [T((2, 4, 3), dtype, 1), T((4,), dtype, 2, 0.5, 2.0), T((4,), dtype, 3)], {"num_groups": 2}
    yield "plain", [T((3, 3, 2), dtype, 4)], {"num_groups": 3}


def instance_norm_samples(dtype):
    yield "plain", [T((2, 3, 4), dtype, 1)], {}
    yield "affine", [T((2, 2, 3), dtype, 2), T((2,), dtype, 3, 0.5, 2.0), T((2,), dtype, 4)], {}


def _layer_norm(F, x, *wb, normalized_shape):
    return F.layer_norm(x, normalized_shape, *wb)


def _group_norm(F, x, *wb, num_groups):
    return F.group_norm(x, num_groups, *wb)


def _instance_norm(F, x, *wb):
    return F.instance_norm(x, weight=wb[0], bias=wb[1]) if wb else F.instance_norm(x)


NORM = dict(gradgrad=True, rtol=1e-5, atol=1e-5)
register(
    nn("batch_norm", _batch_norm_call, batch_norm_samples, covers=("native_batch_norm", "native_batch_norm_backward"),
       no_grad_inputs=(3, 4), **NORM),
    nn("layer_norm", _layer_norm, layer_norm_samples, covers=("native_layer_norm", "native_layer_norm_backward"),
       **NORM),
    nn("group_norm", _group_norm, group_norm_samples, covers=("native_group_norm", "native_group_norm_backward"),
       **NORM),
    nn("instance_norm", _instance_norm, instance_norm_samples, **NORM),
    nn("normalize", lambda F, x, **k: F.normalize(x, **k), lambda dtype: [
        ("p=2 dim 1", [T((3, 4), dtype, 1)], {}),
        ("p=1 dim 0", [T((3, 2, 2), dtype, 2)], {"p": 1.0, "dim": 0}),
        ("eps floor", [T((2, 3), dtype, 3) * 1e-3], {"eps": 0.1})]),
    nn("local_response_norm", lambda F, x, **k: F.local_response_norm(x, **k), lambda dtype: [
        ("3-D size 3", [T((2, 5, 3), dtype, 1)], {"size": 3}),
        ("4-D size 2", [T((1, 4, 2, 3), dtype, 2)], {"size": 2, "alpha": 0.1, "beta": 0.5, "k": 2.0}),
        ("5-D", [T((1, 3, 2, 2, 2), dtype, 3)], {"size": 4, "alpha": 0.3})], rtol=1e-5, atol=1e-6),
)

# ---------------------------------------------------------------- embedding, padding, resampling


def embedding_samples(dtype):
    w = T((5, 3), dtype, 1)
    yield "2-D indices", [_long([[0, 2, 2], [4, 0, 1]]), w], {}
    yield "padding_idx", [_long([1, 2, 1]), w], {"padding_idx": 1}


def embedding_bag_samples(dtype):
    w = T((6, 3), dtype, 1)
    for mode in ("sum", "mean", "max"):
        yield f"2-D {mode}", [_long([[0, 2], [5, 2]]), w], {"mode": mode}
        yield f"offsets {mode}", [_long([1, 3, 3, 4, 0]), w, _long([0, 2])], {"mode": mode}


def _embedding_bag(F, i, w, *offsets, mode):
    return F.embedding_bag(i, w, offsets[0] if offsets else None, mode=mode)


def pad_samples(dtype):
    x = T((1, 2, 3, 3), dtype, 1)
    yield "constant", [x], {"pad": (1, 2, 2, 0), "value": 0.5}
    yield "reflect", [x], {"pad": (1, 2, 2, 0), "mode": "reflect"}
    yield "replicate", [T((1, 2, 3), dtype, 2)], {"pad": (2, 1), "mode": "replicate"}
    yield "circular", [x], {"pad": (1, 2, 2, 1), "mode": "circular"}


def interpolate_samples(dtype):
    x2, x1 = T((1, 2, 2, 3), dtype, 1), T((1, 2, 3), dtype, 2)
    yield "nearest 2-D", [x2], {"scale_factor": 2, "mode": "nearest"}
    yield "nearest 1-D", [x1], {"size": 5, "mode": "nearest"}
    yield "linear", [x1], {"size": 5, "mode": "linear", "align_corners": False}
    yield "bilinear", [x2], {"size": (3, 4), "mode": "bilinear", "align_corners": True}
    yield "bicubic", [x2], {"size": (3, 4), "mode": "bicubic", "align_corners": False}
    x3 = T((1, 2, 5, 7), dtype, 3)
    yield "bilinear antialias down", [x3], {"size": (3, 2), "mode": "bilinear", "antialias": True, "align_corners": False}
    yield "bilinear antialias up", [x2], {"size": (5, 4), "mode": "bilinear", "antialias": True, "align_corners": True}
    yield "bicubic antialias down", [x3], {"size": (2, 3), "mode": "bicubic", "antialias": True, "align_corners": False}
    yield "bicubic antialias scale", [x3], {"scale_factor": 0.6, "mode": "bicubic", "antialias": True,
                                            "align_corners": False}


def grid_sample_samples(dtype):
    x = T((1, 2, 3, 3), dtype, 1)
    for mode in ("bilinear", "nearest"):
        for padding_mode in ("zeros", "border", "reflection"):
            yield f"{mode} {padding_mode}", [x, T((1, 2, 2, 2), dtype, 2, -1.2, 1.2)], \
                {"mode": mode, "padding_mode": padding_mode, "align_corners": False}


def grid_sample_3d_samples(dtype):
    x = T((2, 2, 3, 2, 4), dtype, 3)
    for mode in ("bilinear", "nearest"):
        for padding_mode in ("zeros", "border", "reflection"):
            for align_corners in (False, True):
                yield f"{mode} {padding_mode} align={align_corners}", [x, T((2, 2, 1, 3, 3), dtype, 4, -1.2, 1.2)], \
                    {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}


def pixel_shuffle_samples(dtype):
    yield "2", [T((1, 8, 2, 1), dtype, 1)], {}


register(
    # (padding_idx stops its row's grad by design, which finite differences cannot know:
    # its values and grads are compared with torch's in test_nn_misc.py)
    nn("embedding", lambda F, i, w, **k: F.embedding(i, w, **k), embedding_samples,
       covers=("embedding_backward", "embedding_dense_backward"),
       grad_filter=lambda tensors, kwargs: "padding_idx" not in kwargs),
    nn("embedding_bag", _embedding_bag, embedding_bag_samples),
    # max_norm renormalises the weight in place under no_grad: no graph in either library
    # (the rows to renormalise are the unique indices: data-dependent on meta)
    OpInfo("embedding_renorm_", lambda lib, w, i: lib.embedding_renorm_(w.clone(), i, 1.0, 2.0), dtypes=FLOAT,
           supports_out=False, data_dependent=True,
           sample_inputs=lambda dtype: [("rows", [T((4, 3), dtype, 1), _long([0, 2])], {})]),
    nn("one_hot", lambda F, i: F.one_hot(i, 5), lambda dtype: [("2-D", [_long([[0, 3], [1, 1]])], {})],
       dtypes=("int64",)),
    # without num_classes the count is the largest index plus one, which a meta tensor
    # does not have: refused there (test_meta_one_hot_needs_num_classes)
    nn("one_hot[inferred]", lambda F, i: F.one_hot(i), lambda dtype: [("1-D", [_long([2, 0, 1])], {})],
       dtypes=("int64",), supports_meta=False),
    nn("pad", lambda F, x, **k: F.pad(x, **k), pad_samples, covers=("constant_pad_nd", "_pad_circular")),
    nn("interpolate", lambda F, x, **k: F.interpolate(x, **k), interpolate_samples, rtol=1e-5, atol=1e-5,
       covers=("upsample_nearest1d", "upsample_nearest2d", "upsample_linear1d", "upsample_bilinear2d",
               "upsample_bicubic2d", "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa")),
    nn("grid_sample", lambda F, x, g, **k: F.grid_sample(x, g, **k), grid_sample_samples, rtol=1e-5, atol=1e-5,
       covers=("grid_sampler", "grid_sampler_2d")),
    nn("grid_sample[3-D]", lambda F, x, g, **k: F.grid_sample(x, g, **k), grid_sample_3d_samples, rtol=1e-5,
       atol=1e-5, covers=("grid_sampler_3d",)),
    nn("affine_grid", lambda F, theta, **k: F.affine_grid(theta, **k), lambda dtype: [
        ("2-D", [T((2, 2, 3), dtype, 1)], {"size": [2, 3, 4, 5], "align_corners": False}),
        ("2-D corners", [T((1, 2, 3), dtype, 2)], {"size": [1, 1, 3, 1], "align_corners": True}),
        ("3-D", [T((2, 3, 4), dtype, 3)], {"size": [2, 1, 2, 3, 4], "align_corners": False})],
       covers=("affine_grid_generator",), rtol=1e-6, atol=1e-6),
    nn("pixel_shuffle", lambda F, x: F.pixel_shuffle(x, 2), pixel_shuffle_samples),
    nn("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), pixel_shuffle_samples),
)

# ---------------------------------------------------------------- dropout
# With p = 0, or outside training, dropout is the identity: values are compared. With
# p > 0 in training the masks come from two generators: shapes and dtypes only.

RANDOM = "the masks come from two different generators: shapes and dtypes only"


def dropout_samples(dtype):
    x = T((2, 3, 4), dtype, 1)
    yield "p=0", [x], {"p": 0.0, "training": True}
    yield "eval", [x], {"p": 0.4, "training": False}


def dropout_random_samples(dtype):
    yield "p=0.5", [T((2, 3, 4), dtype, 1)], {"p": 0.5, "training": True}


def _native_dropout_grads(L, a):
    L.manual_seed(0)
    out, mask = L.native_dropout(a.reshape(1, 2, 3), 0.5, True)
    # the kept elements' grads are scaled by 1 / (1 - p); the mask itself carries no grad
    return out * 0 + a.reshape(1, 2, 3) * mask.to(L.float64) * 0 + a.sum()


DROPOUTS = ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout2d", "dropout1d"]
register(*[nn(name, lambda F, x, _n=name, **k: getattr(F, _n)(x, **k), dropout_samples) for name in DROPOUTS])
register(*[nn(f"{name}[random]", lambda F, x, _n=name, **k: getattr(F, _n)(x, **k), dropout_random_samples,
              compare="meta", exempt={"forward": RANDOM}) for name in DROPOUTS])
IN_PLACE_OPS = {"dropout": "dropout_", "alpha_dropout": "alpha_dropout_",
                "feature_alpha_dropout": "feature_alpha_dropout_", "dropout2d": "feature_dropout_",
                "dropout1d": "feature_dropout_"}
register(*[nn(f"{name}[inplace]", lambda F, x, _n=name, **k: getattr(F, _n)(x * 1, inplace=True, **k),
              dropout_samples, covers=(IN_PLACE_OPS[name], "feature_dropout")) for name in DROPOUTS])
def _native_dropout(lib, x):
    out, mask = lib.native_dropout(x, 0.5, True)
    # torch 1.13 returns the mask in the input's dtype; current torch (and tessera) as bool
    return out, mask.bool() if lib is torch else mask


register(OpInfo("native_dropout", _native_dropout, dtypes=FLOAT,
                supports_out=False, compare="meta", exempt={"forward": RANDOM}, covers=("native_dropout_backward",),
                grads=(GradSample(_native_dropout_grads, ([0.5, -1.2, 2.0, 0.3, 1.1, -0.4],), label="seeded"),)))

# ---------------------------------------------------------------- attention


def _attention(lib, q, k, v, **kw):
    if lib is torch:
        # torch 1.13 has no scaled_dot_product_attention: its definition in torch ops
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if kw.get("is_causal"):
            n, m = scores.shape[-2], scores.shape[-1]
            scores = scores.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1), float("-inf"))
        return scores.softmax(-1) @ v
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


def attention_samples(dtype):
    q, k, v = T((1, 2, 3), dtype, 1), T((1, 2, 3), dtype, 2), T((1, 2, 3), dtype, 3)
    yield "plain", [q, k, v], {}
    yield "causal", [q, k, v], {"is_causal": True}
    yield "4-D", [T((1, 2, 3, 2), dtype, 4), T((1, 2, 2, 2), dtype, 5), T((1, 2, 2, 2), dtype, 6)], {}


register(OpInfo("scaled_dot_product_attention", _attention, dtypes=FLOAT, supports_out=False,
                sample_inputs=attention_samples, rtol=1e-5, atol=1e-5, gradgrad=True,
                covers=("_scaled_dot_product_flash_attention_for_cpu",
                        "_scaled_dot_product_flash_attention_for_cpu_backward")))

# ---------------------------------------------------------------- losses
# Each loss on every reduction; targets built to the loss's domain.

REDUCTIONS = ("mean", "sum", "none")


def _pair_samples(target_low=-2.0, target_high=2.0, shape=(2, 3)):
    def samples(dtype):
        for r in REDUCTIONS:
            yield r, [T(shape, dtype, 1), T(shape, dtype, 2, target_low, target_high)], {"reduction": r}
    return samples


def _sign_target(shape, seed):
    return torch.where(make_torch(shape, "float64", seed) > 0, 1.0, -1.0)


def _signed_samples(n_inputs, shape=(2, 3)):
    def samples(dtype):
        for r in REDUCTIONS:
            ins = [T(shape, dtype, k + 1) for k in range(n_inputs)]
            yield r, ins + [_sign_target(shape[:1] if n_inputs == 2 else shape, 9).to(ins[0].dtype)], \
                {"reduction": r}
    return samples


def bce_samples(dtype):
    for r in REDUCTIONS:
        p, t = T((2, 3), dtype, 1, 0.05, 0.95), T((2, 3), dtype, 2, 0.0, 1.0)
        yield r, [p, t], {"reduction": r}
        yield r + " weight", [p, t, T((3,), dtype, 3, 0.5, 2.0)], {"reduction": r}


def _bce(F, p, t, *w, reduction):
    return F.binary_cross_entropy(p, t, w[0] if w else None, reduction=reduction)


def _bce_logits(F, x, t, *w, reduction):
    return F.binary_cross_entropy_with_logits(x, t, *w, reduction=reduction)


def nll_samples(dtype):
    for r in REDUCTIONS:
        yield r, [T((2, 3), dtype, 1), _long([2, 0])], {"reduction": r}
        yield r + " weight ignore", [T((3, 3), dtype, 2), _long([1, 2, 1]), T((3,), dtype, 3, 0.5, 2.0)], \
            {"reduction": r, "ignore_index": 2}
        yield r + " 2-D", [T((1, 2, 3, 1), dtype, 4), _long([[[1], [0], [1]]])], {"reduction": r}
        yield r + " 3-D", [T((1, 2, 2, 1, 2), dtype, 5), _long([[[[1, 0]], [[0, 0]]]])], {"reduction": r}


def _nll(F, x, t, *w, **k):
    return F.nll_loss(x, t, w[0] if w else None, **k)


def _cross_entropy(F, x, t, *w, **k):
    return F.cross_entropy(x, t, w[0] if w else None, **k)


def cross_entropy_samples(dtype):
    yield from nll_samples(dtype)
    yield "probabilities", [T((2, 3), dtype, 6), T((2, 3), dtype, 7, 0.0, 1.0).softmax(1)], {}
    yield "label_smoothing", [T((2, 3), dtype, 8), _long([1, 2])], {"label_smoothing": 0.2}


def margin_samples(dtype):
    for r in REDUCTIONS:
        yield r, [T((2, 3), dtype, 1), _long([2, 0])], {"reduction": r}
        yield r + " p=2 margin", [T((2, 3), dtype, 2), _long([0, 1])], {"reduction": r, "p": 2, "margin": 0.5}


def multilabel_samples(dtype):
    for r in REDUCTIONS:
        yield r, [T((2, 4), dtype, 1), _long([[3, 0, -1, 1], [1, 2, 3, -1]])], {"reduction": r}


def kl_div_samples(dtype):
    for r in ("mean", "sum", "none", "batchmean"):
        yield r, [T((2, 3), dtype, 1, -3.0, -0.1), T((2, 3), dtype, 2, 0.05, 1.0)], {"reduction": r}
    yield "log_target", [T((2, 3), dtype, 3, -3.0, -0.1), T((2, 3), dtype, 4, -3.0, -0.1)], {"log_target": True}


def poisson_samples(dtype):
    for r in REDUCTIONS:
        yield r, [T((2, 3), dtype, 1), T((2, 3), dtype, 2, 0.0, 3.0)], {"reduction": r}
    yield "rates full", [T((2, 3), dtype, 3, 0.1, 2.0), T((2, 3), dtype, 4, 0.0, 3.0)], {"log_input": False,
                                                                                        "full": True}


def triplet_samples(dtype):
    for r in REDUCTIONS:
        yield r, [T((2, 3), dtype, 1), T((2, 3), dtype, 2), T((2, 3), dtype, 3)], {"reduction": r}
    yield "swap p=1", [T((2, 3), dtype, 4), T((2, 3), dtype, 5), T((2, 3), dtype, 6)], {"swap": True, "p": 1}


def _loss(name):
    return lambda F, *t, _n=name, **k: getattr(F, _n)(*t, **k)


LOSS = dict(rtol=1e-5, atol=1e-5)
# targets (position 1) and class weights (2) are data: torch differentiates few targets and
# refuses the rest, which the cases below check separately (TARGET_GRADS)
DATA = dict(LOSS, no_grad_inputs=(1, 2))
register(
    nn("mse_loss", _loss("mse_loss"), _pair_samples(), **LOSS),
    nn("l1_loss", _loss("l1_loss"), _pair_samples(), **LOSS),
    nn("huber_loss", _loss("huber_loss"), _pair_samples(), **LOSS),
    nn("smooth_l1_loss", _loss("smooth_l1_loss"), _pair_samples(), **LOSS),
    nn("soft_margin_loss", _loss("soft_margin_loss"), _signed_samples(1), **DATA),
    nn("hinge_embedding_loss", _loss("hinge_embedding_loss"), _signed_samples(1), **DATA),
    nn("margin_ranking_loss", _loss("margin_ranking_loss"), _signed_samples(2, (3,)), no_grad_inputs=(2,), **LOSS),
    nn("cosine_embedding_loss", _loss("cosine_embedding_loss"), _signed_samples(2), no_grad_inputs=(2,), **LOSS),
    nn("binary_cross_entropy", _bce, bce_samples, gradgrad=True, **DATA),
    nn("binary_cross_entropy_with_logits", _bce_logits, bce_samples, **DATA),
    nn("kl_div", _loss("kl_div"), kl_div_samples, **LOSS),
    nn("poisson_nll_loss", _loss("poisson_nll_loss"), poisson_samples, **LOSS),
    nn("triplet_margin_loss", _loss("triplet_margin_loss"), triplet_samples, **LOSS),
    nn("nll_loss", _nll, nll_samples, gradgrad=True, no_grad_inputs=(2,),
       covers=("nll_loss_forward", "nll_loss_backward", "nll_loss2d", "nll_loss2d_forward", "nll_loss2d_backward",
               "nll_loss_nd"), **LOSS),
    nn("cross_entropy", _cross_entropy, cross_entropy_samples, covers=("cross_entropy_loss",), no_grad_inputs=(2,),
       **LOSS),
    nn("multi_margin_loss", _loss("multi_margin_loss"), margin_samples, **LOSS),
    nn("multilabel_margin_loss", _loss("multilabel_margin_loss"), multilabel_samples, **LOSS),
)

def ctc_samples(dtype, tensor_lengths=False, log_softmax=False):
    """(log_probs or logits, targets[, input_lengths, target_lengths]) with the lengths as
    kwargs lists, or as int64 tensors after the targets. The reduction is always given:
    torch 1.13's Python binding reads the schema's default `reduction=Mean` as 0 (none),
    tessera's (as torch's C++ API) as 1."""
    cases = [
        ("padded, mean", T((5, 2, 4), dtype, 1), _long([[1, 2], [3, 3]]), [5, 4], [2, 2], {"reduction": 1}),
        ("concatenated, sum, blank 3", T((5, 2, 4), dtype, 2), _long([1, 2, 0, 1]), [5, 3], [2, 2],
         {"blank": 3, "reduction": 2}),
        ("none, zero_infinity, impossible and empty targets", T((3, 3, 3), dtype, 3),
         _long([[1, 1, 1], [2, 0, 0], [1, 0, 0]]), [3, 3, 2], [3, 0, 1], {"reduction": 0, "zero_infinity": True}),
        ("unbatched", T((4, 3), dtype, 4), _long([1, 2]), [4], [2], {"reduction": 1}),
    ]
    for label, x, targets, il, tl, kw in cases:
        if log_softmax:
            x = x.log_softmax(-1)
        if tensor_lengths:
            yield label, [x, targets, _long(il), _long(tl)], kw
        else:
            yield label, [x, targets], dict(kw, input_lengths=il, target_lengths=tl)


def _ctc_of_logits(lib, logits, targets, *lengths, **k):
    return lib.ctc_loss(logits.log_softmax(-1), targets, *lengths, **k)


def _ctc_raw_samples(dtype):
    for label, (x, targets), kw in ctc_samples(dtype, log_softmax=True):
        if x.dim() == 3:
            kw = {k: v for k, v in kw.items() if k in ("input_lengths", "target_lengths", "blank", "zero_infinity")}
            yield label, [x, targets], kw


# torch's derivative of _ctc_loss is with respect to the logits of a log_softmax making
# log_probs: the ctc_loss entries differentiate that composition (exact, so gradchecked);
# _ctc_loss itself compares its grads with torch's formula.
register(
    OpInfo("ctc_loss", _ctc_of_logits, dtypes=FLOAT, supports_out=False, sample_inputs=ctc_samples, **LOSS),
    OpInfo("ctc_loss[tensor lengths]", _ctc_of_logits, dtypes=FLOAT, supports_out=False, supports_meta=False,
           sample_inputs=lambda dtype: ctc_samples(dtype, tensor_lengths=True), **LOSS),
    OpInfo("_ctc_loss", lambda lib, lp, targets, **k: lib._ctc_loss(lp, targets, **k)[0], dtypes=FLOAT,
           supports_out=False, sample_inputs=_ctc_raw_samples, covers=("_ctc_loss_backward",),
           exempt={"gradcheck": "torch's formula is the derivative with respect to the logits behind log_softmax, "
                                "not log_probs (gradchecked through log_softmax by the ctc_loss entries)"},
           **LOSS),
)

# ---------------------------------------------------------------- distances and bilinear


def bilinear_samples(dtype):
    yield "bias", [T((2, 3), dtype, 1), T((2, 2), dtype, 2), T((4, 3, 2), dtype, 3), T((4,), dtype, 4)], {}
    yield "no bias", [T((3,), dtype, 5), T((2,), dtype, 6), T((1, 3, 2), dtype, 7)], {}


register(
    nn("cosine_similarity", lambda F, a, b, **k: F.cosine_similarity(a, b, **k), lambda dtype: [
        ("dim 1", [T((2, 3), dtype, 1), T((2, 3), dtype, 2)], {}),
        ("dim 0 broadcast", [T((3, 2), dtype, 3), T((3, 1), dtype, 4)], {"dim": 0})], **LOSS),
    nn("pairwise_distance", lambda F, a, b, **k: F.pairwise_distance(a, b, **k), lambda dtype: [
        ("p=2", [T((2, 3), dtype, 1), T((2, 3), dtype, 2)], {}),
        ("p=1 keepdim", [T((2, 3), dtype, 3), T((1, 3), dtype, 4)], {"p": 1.0, "keepdim": True})], **LOSS),
    nn("bilinear", lambda F, *t: F.bilinear(*t), bilinear_samples, **LOSS),
    nn("pdist", lambda F, x, **k: F.pdist(x, **k), lambda dtype: [
        ("p=2", [T((4, 3), dtype, 1)], {}),
        ("p=1", [T((3, 2), dtype, 2)], {"p": 1.0}),
        ("p=3", [T((3, 2), dtype, 3)], {"p": 3.0}),
        ("p=inf", [T((4, 2), dtype, 4)], {"p": float("inf")}),
        ("one row", [T((1, 2), dtype, 5)], {})], **LOSS),
)


# Which loss inputs take a grad and which are refused when they require one: the same in
# both libraries (the message is torch's check_no_requires_grad).
TARGET_GRADS = {
    "mse_loss": "F.mse_loss(lib.ones(2, 3), lib.zeros(2, 3, requires_grad=True))",
    "binary_cross_entropy[target]": "F.binary_cross_entropy(lib.full((2,), 0.3), lib.full((2,), 0.6, requires_grad=True))",
    "binary_cross_entropy[weight]": "F.binary_cross_entropy(lib.full((2,), 0.3), lib.ones(2), "
                                    "weight=lib.ones(2, requires_grad=True))",
    "binary_cross_entropy_with_logits[weight]": "F.binary_cross_entropy_with_logits(lib.ones(2), lib.ones(2), "
                                                "weight=lib.ones(2, requires_grad=True))",
    "binary_cross_entropy_with_logits[pos_weight]": "F.binary_cross_entropy_with_logits(lib.ones(2), lib.ones(2), "
                                                    "pos_weight=lib.ones(2, requires_grad=True))",
    "nll_loss[weight]": "F.nll_loss(lib.zeros(2, 3), lib.tensor([0, 2]), weight=lib.ones(3, requires_grad=True))",
    "soft_margin_loss[target]": "F.soft_margin_loss(lib.ones(2), lib.ones(2, requires_grad=True))",
}

# ---------------------------------------------------------------- rrelu, recurrent cells, packing


def _rrelu_seeded(L, a):
    L.manual_seed(0)  # the same slopes on every call of gradcheck
    return L.rrelu(a, 0.1, 0.4, training=True)


register(
    OpInfo("rrelu", lambda lib, a, **k: lib.rrelu(a, **k), dtypes=FLOAT, supports_out=False,
           kwargs=({}, {"lower": 0.2, "upper": 0.6}), inplace=lambda lib, a, **k: lib.rrelu_(a, **k)),
    OpInfo("rrelu[training]", lambda lib, a: lib.rrelu(a, 0.1, 0.4, training=True), dtypes=FLOAT,
           supports_out=False, compare="meta", inplace=lambda lib, a: lib.rrelu_(a, 0.1, 0.4, training=True),
           grads=(GradSample(_rrelu_seeded, ([[-0.5, 1.25, -2.0], [1.5, -0.75, 0.3]],), label="seeded"),),
           exempt={"forward": RANDOM, "grad": "unseeded slopes: the seeded GradSample is the gradient case",
                   "torch_grad": "the two generators draw different slopes: tessera's seeded grads are "
                                 "gradchecked, torch's are not comparable"}),
)


def cell_samples(gates, lstm=False):
    def samples(dtype):
        x, h = T((2, 3), dtype, 1), T((2, 4), dtype, 2)
        w_ih, w_hh = T((4 * gates, 3), dtype, 3, -0.6, 0.6), T((4 * gates, 4), dtype, 4, -0.6, 0.6)
        b_ih, b_hh = T((4 * gates,), dtype, 5), T((4 * gates,), dtype, 6)
        states = [h, T((2, 4), dtype, 7)] if lstm else [h]
        yield "biases", [x, *states, w_ih, w_hh, b_ih, b_hh], {}
        yield "no biases", [x, *states, w_ih, w_hh], {}
    return samples


def _lstm_cell(lib, x, h, c, *weights):
    return lib.lstm_cell(x, [h, c], *weights)


register(
    OpInfo("rnn_tanh_cell", lambda lib, *t: lib.rnn_tanh_cell(*t), dtypes=FLOAT, supports_out=False,
           sample_inputs=cell_samples(1), rtol=1e-5, atol=1e-5),
    OpInfo("rnn_relu_cell", lambda lib, *t: lib.rnn_relu_cell(*t), dtypes=FLOAT, supports_out=False,
           sample_inputs=cell_samples(1), rtol=1e-5, atol=1e-5),
    OpInfo("gru_cell", lambda lib, *t: lib.gru_cell(*t), dtypes=FLOAT, supports_out=False,
           sample_inputs=cell_samples(3), rtol=1e-5, atol=1e-5),
    OpInfo("lstm_cell", _lstm_cell, dtypes=FLOAT, supports_out=False, sample_inputs=cell_samples(4, lstm=True),
           rtol=1e-5, atol=1e-5),
)


def _layer_params(dtype, gates, input_size, hidden, layers, dirs, biases, proj=0, seed=10):
    """torch's flat parameter list: per layer-direction w_ih, w_hh, [b_ih, b_hh], [w_hr]."""
    out, state = [], proj or hidden
    for layer in range(layers):
        width = input_size if layer == 0 else state * dirs
        for _ in range(dirs):
            seed += 5
            out += [T((gates * hidden, width), dtype, seed, -0.6, 0.6), T((gates * hidden, state), dtype, seed + 1, -0.6, 0.6)]
            if biases:
                out += [T((gates * hidden,), dtype, seed + 2), T((gates * hidden,), dtype, seed + 3)]
            if proj:
                out.append(T((proj, hidden), dtype, seed + 4, -0.6, 0.6))
    return out


def layer_samples(gates, lstm=False, packed=False):
    """(x or data, [batch_sizes], h0, [c0], *params) with the op's flags as kwargs."""
    configs = [("1 layer", 1, 1, True, 0, False), ("2 layers, bidirectional, no biases", 2, 2, False, 0, True)]
    if lstm:
        configs.append(("projections, bidirectional", 1, 2, True, 2, False))

    def samples(dtype):
        for label, layers, dirs, biases, proj, batch_first in configs:
            flags = {"has_biases": biases, "num_layers": layers, "dropout": 0.0, "train": True,
                     "bidirectional": dirs == 2}
            h0 = T((layers * dirs, 3, proj or 3), dtype, 2)
            states = [h0, T((layers * dirs, 3, 3), dtype, 3)] if lstm else [h0]
            params = _layer_params(dtype, gates, 2, 3, layers, dirs, biases, proj)
            if packed:
                yield label, [T((6, 2), dtype, 1), _long([3, 2, 1]), *states, *params], flags
            else:
                x = T((3, 4, 2) if batch_first else (4, 3, 2), dtype, 1)
                yield label, [x, *states, *params], dict(flags, batch_first=batch_first)
    return samples


def _layer_call(name, lstm, packed):
    def call(lib, x, *rest, **k):
        lead = [x] + ([rest[0]] if packed else [])
        rest = rest[1:] if packed else rest
        hx, params = ([rest[0], rest[1]], rest[2:]) if lstm else (rest[0], rest[1:])
        return getattr(lib, name)(*lead, hx, list(params), **k)
    return call


def layer_entries(name, gates, lstm=False):
    # the batch sizes are read on the host: a meta tensor has no values to read
    return [OpInfo(name, _layer_call(name, lstm, False), dtypes=FLOAT, supports_out=False,
                   sample_inputs=layer_samples(gates, lstm), rtol=1e-5, atol=1e-5),
            OpInfo(name + "[packed]", _layer_call(name, lstm, True), dtypes=FLOAT, supports_out=False,
                   supports_meta=False, sample_inputs=layer_samples(gates, lstm, packed=True), rtol=1e-5, atol=1e-5)]


register(*layer_entries("rnn_tanh", 1), *layer_entries("rnn_relu", 1), *layer_entries("gru", 3),
         *layer_entries("lstm", 4, lstm=True))


def pad_sequence_samples(dtype):
    seqs = [T((3, 2), dtype, 1), T((1, 2), dtype, 2), T((2, 2), dtype, 3)]
    yield "time first", seqs, {}
    yield "batch first, value", seqs, {"batch_first": True, "padding_value": -1.5}
    yield "1-D", [T((2,), dtype, 4), T((4,), dtype, 5)], {"batch_first": True}


def pack_samples(dtype):
    yield "time first", [T((3, 2, 2), dtype, 1), _long([3, 1])], {"batch_first": False}
    yield "batch first", [T((3, 4), dtype, 2), _long([4, 2, 2])], {"batch_first": True}


def unpack_samples(dtype):
    yield "steps 2, 1, 1", [T((4, 2), dtype, 1), _long([2, 1, 1])], {"batch_first": False, "total_length": 3}
    yield "batch first, longer", [T((3,), dtype, 2), _long([2, 1])], {"batch_first": True, "total_length": 4}


# (the lengths and batch sizes are read on the host: a meta tensor has no values to read)
HOST_LENGTHS = dict(supports_meta=False, supports_out=False, dtypes=FLOAT)
register(
    OpInfo("pad_sequence", lambda lib, *seqs, **k: lib._C._nn.pad_sequence(list(seqs), **k), dtypes=FLOAT,
           supports_out=False, sample_inputs=pad_sequence_samples),
    OpInfo("_pack_padded_sequence", lambda lib, x, lengths, **k: lib._pack_padded_sequence(x, lengths, **k),
           sample_inputs=pack_samples, **HOST_LENGTHS),
    OpInfo("_pad_packed_sequence", lambda lib, data, sizes, **k: lib._pad_packed_sequence(
        data, sizes, k["batch_first"], -0.5, k["total_length"]), sample_inputs=unpack_samples, **HOST_LENGTHS),
)
