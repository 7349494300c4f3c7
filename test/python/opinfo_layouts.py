"""OpInfo entries for the operators of the non-strided layouts: the _mkldnn layout
(to_mkldnn / to_dense and the mkldnn_* ops, aten/native/mkldnn/) and nested tensors
(aten/native/nested/). Each call converts in and out of the layout, so the registry
compares dense results with torch 1.13's. Neither layout has meta tensors, so these
entries run on CPU only; mkldnn is float32 / bfloat16 only (float64 samples check the
refusal), so their gradients are hand-written float32 round trips of float64 leaves with
dyadic values (exact in float32), compared with torch's."""
from opinfo import GradSample, OpInfo, make_torch, register, resolve_dtype

MKLDNN_DTYPES = ("float32", "bfloat16", "float64")
# Multiples of 1/4: sums of their products are exact in float32, so the round trips through
# float32 give torch's grads to the last bit.
D = [[0.5, -1.25, 2.0], [1.5, 0.75, -0.25]]


def T(shape, dtype, seed):
    return make_torch(shape, dtype, seed, -2.0, 2.0)


def _round_trip(lib, x, **k):
    return x.to_mkldnn(**resolve_dtype(lib, k)).to_dense()


def to_mkldnn_samples(dtype):
    yield "2-d", [T((2, 3), dtype, 1)], {}
    yield "transposed 3-d", [T((4, 3, 2), dtype, 2).transpose(0, 2)], {}
    yield "empty", [T((0, 3), dtype, 3)], {}
    yield "to bfloat16", [T((3, 2), dtype, 4)], {"dtype": "bfloat16"}


def _conv(lib, x, w, b=None, *, padding, stride, dilation, groups, mkldnn=False):
    if mkldnn:
        return lib.mkldnn_convolution(x.to_mkldnn(), w, b, padding, stride, dilation, groups).to_dense()
    return lib.mkldnn_convolution(x, w, b, padding, stride, dilation, groups)


def conv_samples(dtype, mkldnn=False):
    k = {"mkldnn": True} if mkldnn else {}
    yield "2-d padding stride bias", [T((1, 2, 4, 4), dtype, 1), T((3, 2, 3, 3), dtype, 2), T((3,), dtype, 3)], \
        dict(k, padding=[1, 1], stride=[2, 1], dilation=[1, 1], groups=1)
    yield "1-d groups dilation", [T((2, 4, 6), dtype, 4), T((2, 2, 2), dtype, 5)], \
        dict(k, padding=[1], stride=[1], dilation=[2], groups=2)
    yield "3-d", [T((1, 2, 3, 3, 3), dtype, 6), T((2, 2, 2, 2, 2), dtype, 7)], \
        dict(k, padding=[0, 1, 0], stride=[1, 1, 1], dilation=[1, 1, 1], groups=1)
    yield "channels_last input", [T((1, 3, 3, 2), dtype, 8).permute(0, 3, 1, 2), T((2, 2, 2, 2), dtype, 9)], \
        dict(k, padding=[0, 0], stride=[1, 1], dilation=[1, 1], groups=1)


def _pool2d(lib, x, **k):
    return lib.mkldnn_max_pool2d(x.to_mkldnn(), **k).to_dense()


def _pool3d(lib, x, **k):
    return lib.mkldnn_max_pool3d(x.to_mkldnn(), **k).to_dense()


def _adaptive(lib, x, **k):
    return lib.mkldnn_adaptive_avg_pool2d(x.to_mkldnn(), **k).to_dense()


def pool2d_samples(dtype):
    yield "kernel 2", [T((1, 2, 4, 5), dtype, 1)], {"kernel_size": [2, 2]}
    yield "stride padding ceil", [T((2, 1, 5, 5), dtype, 2)], {"kernel_size": [3, 3], "stride": [2, 2],
                                                                "padding": [1, 1], "ceil_mode": True}
    yield "one value", [T((1, 1, 4, 4), dtype, 3)], {"kernel_size": [2]}


def pool3d_samples(dtype):
    yield "kernel 2", [T((1, 2, 4, 4, 4), dtype, 1)], {"kernel_size": [2, 2, 2]}
    yield "stride padding", [T((1, 1, 5, 4, 3), dtype, 2)], {"kernel_size": [3, 2, 2], "stride": [2, 1, 1],
                                                              "padding": [1, 0, 1]}


def adaptive_samples(dtype):
    yield "4x6 to 2x3", [T((2, 3, 4, 6), dtype, 1)], {"output_size": [2, 3]}
    yield "global", [T((1, 2, 3, 3), dtype, 2)], {"output_size": [1, 1]}


def _linear_weights(lib, go, x, w, bias_defined):
    gw, gb = lib.mkldnn_linear_backward_weights(go.to_mkldnn(), x.to_mkldnn(), w, bias_defined)
    return (gw, gb) if bias_defined else gw  # without a bias torch's second result is unspecified


def linear_weights_samples(dtype):
    yield "2-d with bias", [T((4, 3), dtype, 1), T((4, 5), dtype, 2), T((3, 5), dtype, 3)], {"bias_defined": True}
    yield "3-d without bias", [T((2, 2, 3), dtype, 4), T((2, 2, 5), dtype, 5), T((3, 5), dtype, 6)], \
        {"bias_defined": False}


def _add(lib, x, y, **k):
    return lib.add(x.to_mkldnn(), y.to_mkldnn(), **k).to_dense()


def _mul(lib, x, y):
    return (x.to_mkldnn() * y.to_mkldnn()).to_dense()


def _in_place(lib, x, y):
    """add_, mul_ (by a tensor and by a number) and relu_ on one mkldnn tensor; each returns it."""
    m, n = x.to_mkldnn(), y.to_mkldnn()
    assert m.add_(n, alpha=2) is m and m.mul_(n) is m and m.mul_(1.5) is m and m.relu_() is m
    return m.to_dense()


def _zero(lib, x):
    m = x.to_mkldnn()
    assert m.zero_() is m
    return m.to_dense()


def _reshape(lib, x, **k):
    return x.to_mkldnn().reshape(k["shape"]).to_dense()


def binary_samples(dtype):
    yield "2-d", [T((2, 3), dtype, 1), T((2, 3), dtype, 2)], {}
    yield "4-d", [T((2, 3, 2, 2), dtype, 3), T((2, 3, 2, 2), dtype, 4)], {}


def add_samples(dtype):
    yield from binary_samples(dtype)
    yield "alpha", [T((3, 4), dtype, 5), T((3, 4), dtype, 6)], {"alpha": 0.5}


def unary_samples(dtype):
    yield "2-d", [T((3, 4), dtype, 1)], {}
    yield "5-d", [T((1, 2, 2, 1, 3), dtype, 2)], {}


def reshape_samples(dtype):
    yield "flatten", [T((2, 3, 4), dtype, 1)], {"shape": [-1]}
    yield "regroup", [T((2, 3, 4), dtype, 2)], {"shape": [4, -1]}
    yield "same shape", [T((2, 3), dtype, 3)], {"shape": [2, 3]}


# Dyadic (2, 1, 4, 4) values for the pools' gradients: distinct, so no window ties.
P = [[[[(4 * r + c) * 0.25 * (-1) ** (r + c) for c in range(4)] for r in range(4)]],
     [[[(17 - 3 * r - c) * 0.5 for c in range(4)] for r in range(4)]]]

MKLDNN = dict(dtypes=MKLDNN_DTYPES, supports_out=False, supports_meta=False, rtol=1e-5, atol=1e-5,
              dtype_tolerances={"bfloat16": (1.6e-2, 1.6e-2)})
GRAD_VIA_FLOAT32 = {"gradcheck": "the op computes in float32 only: finite differences of the float64 leaves "
                                 "through it cannot resolve the gradient; the values are compared with torch's"}

register(
    OpInfo("to_mkldnn", _round_trip, sample_inputs=to_mkldnn_samples,
           covers=("to_dense", "_to_dense", "to_dense_backward", "to_mkldnn_backward"),
           grads=(GradSample(lambda lib, x: x.float().to_mkldnn().to_dense().double() * 2, (D,), "round trip"),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("mkldnn_convolution", _conv, arity=3, sample_inputs=conv_samples, covers=("convolution",
           "convolution_backward"),
           grads=(GradSample(lambda lib, x, w: lib.mkldnn_convolution(x.float(), w.float(), None, [1], [1], [1], 1)
                             .double(), ([D], [[[0.25, -0.5], [1.0, 0.75]], [[-1.5, 0.5], [0.25, 1.25]],
                                                        [[0.5, 0.5], [-0.75, 1.0]]]), "1-d"),),
           exempt=GRAD_VIA_FLOAT32, **dict(MKLDNN, supports_meta=True)),
    OpInfo("mkldnn_convolution[mkldnn input]", _conv, arity=3, sample_inputs=lambda d: conv_samples(d, True),
           **MKLDNN),
    OpInfo("mkldnn_max_pool2d", _pool2d, sample_inputs=pool2d_samples,
           covers=("max_pool2d", "mkldnn_max_pool2d_backward"),
           grads=(GradSample(lambda lib, x: lib.mkldnn_max_pool2d(x.float().to_mkldnn(), [2, 2], [2, 2]).to_dense()
                             .double(), (P,), "2x2"),
                  GradSample(lambda lib, x: lib.nn.functional.max_pool2d(x.float().to_mkldnn(), 3, 1, 1).to_dense()
                             .double(), (P,), "F.max_pool2d overlapping windows")),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("mkldnn_max_pool3d", _pool3d, sample_inputs=pool3d_samples,
           covers=("max_pool3d", "mkldnn_max_pool3d_backward"),
           grads=(GradSample(lambda lib, x: lib.mkldnn_max_pool3d(x.float().to_mkldnn(), [1, 2, 2], [1, 2, 2])
                             .to_dense().double(), ([P],), "1x2x2"),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("mkldnn_adaptive_avg_pool2d", _adaptive, sample_inputs=adaptive_samples,
           covers=("adaptive_avg_pool2d", "mkldnn_adaptive_avg_pool2d_backward"),
           grads=(GradSample(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x.float().to_mkldnn(), [2, 2])
                             .to_dense().double(), (P,), "4x4 to 2x2"),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("add[mkldnn]", _add, arity=2, sample_inputs=add_samples,
           grads=(GradSample(lambda lib, x, y: lib.add(x.float().to_mkldnn(), y.float().to_mkldnn(), alpha=2)
                             .to_dense().double(), (D, [[1.0, 0.5, -0.75], [0.25, -2.0, 1.25]])),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("mul[mkldnn]", _mul, arity=2, sample_inputs=binary_samples,
           grads=(GradSample(lambda lib, x, y: (x.float().to_mkldnn() * y.float().to_mkldnn() * 0.5).to_dense()
                             .double(), (D, [[1.0, 0.5, -0.75], [0.25, -2.0, 1.25]])),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("relu[mkldnn]", lambda lib, x: x.to_mkldnn().relu().to_dense(), sample_inputs=unary_samples,
           covers=("threshold_backward",),
           grads=(GradSample(lambda lib, x: lib.nn.functional.relu(x.float().to_mkldnn()).to_dense().double(), (D,)),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("add_[mkldnn in place]", _in_place, arity=2, sample_inputs=binary_samples, **MKLDNN),
    OpInfo("clone[mkldnn]", lambda lib, x: x.to_mkldnn().clone().to_dense(), sample_inputs=unary_samples,
           grads=(GradSample(lambda lib, x: x.float().to_mkldnn().clone().to_dense().double(), (D,)),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    # torch 1.13 corrupts its heap zeroing a bfloat16 mkldnn tensor ("corrupted size vs. prev_size")
    OpInfo("zero_[mkldnn]", _zero, sample_inputs=unary_samples, **dict(MKLDNN, dtypes=("float32", "float64"))),
    OpInfo("_mkldnn_reshape", _reshape, sample_inputs=reshape_samples, covers=("reshape",),
           grads=(GradSample(lambda lib, x: x.float().to_mkldnn().reshape(-1).to_dense().double() * 3, (D,)),),
           exempt=GRAD_VIA_FLOAT32, **MKLDNN),
    OpInfo("mkldnn_linear_backward_weights", _linear_weights, arity=3, sample_inputs=linear_weights_samples,
           **MKLDNN),
)


# ---------------------------------------------------------------- nested tensors

NESTED_DTYPES = ("float32", "float64", "int32", "int64", "bool")


def _padded(lib, a, b, **k):
    return lib.nested.nested_tensor([a, b]).to_padded_tensor(1.5, **k)


def _as_nested(lib, a, b):
    return lib.nested.as_nested_tensor([a, b]).to_padded_tensor(0.0)


def _function_form(lib, a, b, **k):
    return lib.nested.to_padded_tensor(lib.nested.nested_tensor([a, b]), -1.0, **k)


def _sizes(lib, a, b):
    return lib.nested.nested_tensor([a, b])._nested_tensor_size()


def nested_samples(dtype):
    yield "2-d ragged", [T((2, 3), dtype, 1), T((3, 2), dtype, 2)], {}
    yield "1-d", [T((4,), dtype, 3), T((1,), dtype, 4)], {}
    yield "an empty component", [T((0, 3), dtype, 5), T((2, 2), dtype, 6)], {}


def padded_size_samples(dtype):
    yield from nested_samples(dtype)
    yield "output_size", [T((2, 3), dtype, 7), T((1, 1), dtype, 8)], {"output_size": (2, 3, 4)}


NESTED = dict(dtypes=NESTED_DTYPES, supports_out=False, supports_meta=False)

register(
    OpInfo("_nested_tensor_from_tensor_list", _as_nested, arity=2, sample_inputs=nested_samples, **NESTED),
    OpInfo("to_padded_tensor", _padded, arity=2, sample_inputs=padded_size_samples, **NESTED),
    OpInfo("nested_to_padded_tensor", _function_form, arity=2, sample_inputs=padded_size_samples, **NESTED),
    OpInfo("_nested_tensor_size", _sizes, arity=2, sample_inputs=nested_samples, **NESTED),
)
