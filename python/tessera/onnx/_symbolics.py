"""The ONNX form of each call the exporter traces (opsets 14-17), as torch 1.13 writes it:
each function takes the graph, the call's real result and its arguments, adds nodes, and
returns the name of the value that stands for the result. What torch's graph optimizer
then does (folding batch norms into convolutions, merging transposes) is _passes.py's."""
from .errors import OnnxExporterError

SYMBOLICS = {}


def symbolic(*names):
    def register(fn):
        for name in names:
            SYMBOLICS[name] = fn
        return fn
    return register


def _tuple(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def _unsupported(what):
    raise OnnxExporterError(f"tessera.onnx.export: exporting {what} to ONNX is not supported")


# ---------------------------------------------------------------- linear algebra

def _constant_weight(g, weight, what):
    if not g.is_constant(weight):
        _unsupported(f"{what} with a weight computed from the inputs")
    return g.array(weight)


@symbolic("linear")
def linear(g, result, input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        return g.op("Gemm", g.value(input), g.value(weight), g.value(bias), alpha=1.0, beta=1.0, transB=1)
    if g.is_constant(weight):  # (torch folds the weight's transpose into a new initializer)
        transposed = g.initializer(g.unique_initializer_name("MatMul"), g.array(weight).T.copy())
    else:
        transposed = g.op("Transpose", g.value(weight), perm=[1, 0])
    out = g.op("MatMul", g.value(input), transposed)
    return out if bias is None else g.op("Add", g.value(bias), out)


@symbolic("matmul", "bmm")
def matmul(g, result, input, other):
    return g.op("MatMul", g.value(input), g.value(other))


# ---------------------------------------------------------------- elementwise

def _same_types(g, result, *operands):
    # (torch inserts Casts where an operand's type differs from the result's)
    if any(hasattr(t, "dtype") and t.dtype != result.dtype for t in operands):
        _unsupported(f"{g.current} that changes the type of its operands (to {result.dtype})")


def _binary(op_type):
    def fn(g, result, input, other, alpha=None):
        if alpha is not None and alpha != 1:
            _unsupported(f"{op_type} with alpha={alpha}")
        # (torch inserts Casts where the operands' types differ from the result's)
        _same_types(g, result, input, other)
        a = g.value(input) if hasattr(input, "shape") else g.scalar_like(input, other)
        b = g.value(other) if hasattr(other, "shape") else g.scalar_like(other, input)
        return g.op(op_type, a, b)
    return fn


for _name, _op in (("add", "Add"), ("__add__", "Add"), ("add_", "Add"), ("__iadd__", "Add"), ("sub", "Sub"),
                   ("__sub__", "Sub"), ("sub_", "Sub"), ("__isub__", "Sub"), ("mul", "Mul"), ("__mul__", "Mul"),
                   ("mul_", "Mul"), ("__imul__", "Mul"), ("div", "Div"), ("__truediv__", "Div"), ("div_", "Div"),
                   ("__itruediv__", "Div"), ("true_divide", "Div")):
    SYMBOLICS[_name] = _binary(_op)


@symbolic("__radd__")
def radd(g, result, self, other):
    _same_types(g, result, self)
    return g.op("Add", g.value(self), g.scalar_like(other, self))  # (torch's operand order)


@symbolic("__rmul__")
def rmul(g, result, self, other):
    _same_types(g, result, self)
    return g.op("Mul", g.value(self), g.scalar_like(other, self))


def _unary(op_type):
    def fn(g, result, input, *args, **kwargs):
        _same_types(g, result, input)
        return g.op(op_type, g.value(input))
    return fn


for _name, _op in (("relu", "Relu"), ("relu_", "Relu"), ("sigmoid", "Sigmoid"), ("tanh", "Tanh"), ("exp", "Exp"),
                   ("log", "Log"), ("sqrt", "Sqrt"), ("neg", "Neg"), ("__neg__", "Neg"), ("abs", "Abs"),
                   ("erf", "Erf")):
    SYMBOLICS[_name] = _unary(_op)


for _name, _op in (("selu", "Selu"), ("hardswish", "HardSwish")):
    SYMBOLICS[_name] = _unary(_op)


@symbolic("elu", "celu")
def elu(g, result, input, alpha=1.0, inplace=False):
    return g.op("Elu" if g.current == "elu" else "Celu", g.value(input), alpha=float(alpha))


@symbolic("softplus")
def softplus(g, result, input, beta=1, threshold=20):
    if beta == 1:
        return g.op("Softplus", g.value(input))
    scaled = g.op("Mul", g.value(input), g.scalar_like(beta, input))
    return g.op("Div", g.op("Softplus", scaled), g.scalar_like(beta, input))


@symbolic("hardtanh", "relu6")
def hardtanh(g, result, input, min_val=-1.0, max_val=1.0, inplace=False):
    if g.current == "relu6":
        min_val, max_val = 0.0, 6.0
    return g.op("Clip", g.value(input), g.scalar_like(min_val, input), g.scalar_like(max_val, input))


@symbolic("clamp", "clip", "clamp_min", "clamp_max")
def clamp(g, result, input, min=None, max=None):
    if g.current == "clamp_max":
        min, max = None, (max if max is not None else min)
    if hasattr(min, "shape") or hasattr(max, "shape") or (min is None and max is None):
        _unsupported(f"{g.current} with tensor bounds or none")
    _same_types(g, result, input)
    x = g.value(input)
    lower = g.scalar_like(min, input) if min is not None else ""
    upper = g.scalar_like(max, input) if max is not None else ""
    return g.op("Clip", x, lower, upper)  # (an omitted bound is an empty input)


@symbolic("hardsigmoid")
def hardsigmoid(g, result, input, inplace=False):
    return g.op("HardSigmoid", g.value(input), alpha=1.0 / 6)


@symbolic("silu")
def silu(g, result, input, inplace=False):
    x = g.value(input)
    return g.op("Mul", x, g.op("Sigmoid", x))


@symbolic("mish")
def mish(g, result, input, inplace=False):
    x = g.value(input)
    return g.op("Mul", x, g.op("Tanh", g.op("Softplus", x)))


@symbolic("softsign")
def softsign(g, result, input):
    x = g.value(input)
    return g.op("Div", x, g.op("Add", g.op("Abs", x), g.scalar_like(1.0, input)))


@symbolic("tanhshrink")
def tanhshrink(g, result, input):
    x = g.value(input)
    return g.op("Sub", x, g.op("Tanh", x))


@symbolic("log_sigmoid", "logsigmoid")
def log_sigmoid(g, result, input):
    return g.op("Log", g.op("Sigmoid", g.value(input)))


@symbolic("glu")
def glu(g, result, input, dim=-1):
    first, second = g.op("Split", g.value(input), outputs=2, axis=int(dim))
    return g.op("Mul", first, g.op("Sigmoid", second))


@symbolic("prelu")
def prelu(g, result, input, weight):
    # (torch folds the weight into one broadcasting over the dims after the channels)
    w = _constant_weight(g, weight, "prelu")
    if input.dim() > 2:
        w = w.reshape((w.shape[0],) + (1,) * (input.dim() - 2))
    return g.op("PRelu", g.value(input), g.initializer(g.unique_initializer_name("PRelu"), w))


@symbolic("leaky_relu")
def leaky_relu(g, result, input, negative_slope=0.01, inplace=False):
    return g.op("LeakyRelu", g.value(input), alpha=float(negative_slope))


@symbolic("gelu")
def gelu(g, result, input, approximate="none"):
    x = g.value(input)
    if approximate == "tanh":
        # x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2, in torch's order of nodes
        cube = g.op("Mul", x, g.op("Mul", x, x))
        c = g.scalar_like(0.044715, input)
        inner = g.op("Add", x, g.op("Mul", c, cube))
        c = g.scalar_like(0.7978845608028654, input)
        tanh = g.op("Tanh", g.op("Mul", c, inner))
        c = g.scalar_like(1.0, input)
        product = g.op("Mul", x, g.op("Add", c, tanh))
        c = g.scalar_like(0.5, input)
        return g.op("Mul", c, product)
    # x * (1 + erf(x / sqrt(2))) / 2, in torch's order of nodes
    scaled = g.op("Div", x, g.scalar_like(1.4142135381698608, input))
    shifted = g.op("Add", g.op("Erf", scaled), g.scalar_like(1.0, input))
    return g.op("Mul", g.op("Mul", x, shifted), g.scalar_like(0.5, input))


def _softmax(op_type):
    def fn(g, result, input, dim=None, *rest, **kwargs):
        if kwargs.get("dtype") is not None or any(r is not None and not isinstance(r, int) for r in rest):
            _unsupported(f"{op_type} with dtype=")
        if dim is None:
            _unsupported(f"{op_type} without dim")
        return g.op(op_type, g.value(input), axis=int(dim))
    return fn


SYMBOLICS["softmax"] = _softmax("Softmax")
SYMBOLICS["log_softmax"] = _softmax("LogSoftmax")


@symbolic("dropout", "dropout2d", "dropout1d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
def dropout(g, result, input, p=0.5, training=False, inplace=False):
    if training:
        _unsupported("dropout in training mode")
    return g.value(input)  # (eval mode: the identity, no node)


# ---------------------------------------------------------------- convolution, norms, pools

@symbolic("conv1d", "conv2d", "conv3d")
def conv(g, result, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    n = weight.dim() - 2
    kernel = list(weight.shape[2:])
    dilation = _tuple(dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0] * n
        else:  # 'same' (stride 1): the total padding is dilation * (k - 1), the odd one at the end
            totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
            begins = [t // 2 for t in totals]
            pads = begins + [t - b for t, b in zip(totals, begins)]
            padding = None
    if padding is not None:
        pads = _tuple(padding, n) * 2
    inputs = [g.value(input), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    return g.op("Conv", *inputs, dilations=dilation, group=int(groups), kernel_shape=kernel, pads=pads,
                strides=_tuple(stride, n))


@symbolic("batch_norm")
def batch_norm(g, result, input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    if training or running_mean is None or momentum is None:
        _unsupported("batch_norm in training mode or with a cumulative average (momentum=None)")
    np = g.np
    x = g.value(input)
    stats = g.array(running_mean)
    scale = g.value(weight) if weight is not None else g.constant(np.ones_like(stats))
    shift = g.value(bias) if bias is not None else g.constant(np.zeros_like(stats))
    return g.op("BatchNormalization", x, scale, shift, g.value(running_mean), g.value(running_var),
                epsilon=float(eps), momentum=float(1 - momentum), training_mode=0)


@symbolic("layer_norm")
def layer_norm(g, result, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    n = len(normalized_shape)
    x = g.value(input)
    if g.opset >= 17:
        dtype = g.array(input.detach().reshape(-1)[:0]).dtype
        inputs = [x, g.value(weight) if weight is not None else g.constant(g.np.ones(tuple(normalized_shape),
                                                                                       dtype=dtype))]
        if bias is not None:
            inputs.append(g.value(bias))
        return g.op("LayerNormalization", *inputs, axis=-n, epsilon=float(eps))
    axes = list(range(-n, 0))
    centred = g.op("Sub", x, g.op("ReduceMean", x, axes=axes))
    variance = g.op("ReduceMean", g.op("Pow", centred, g.scalar_like(2.0, input)), axes=axes)
    out = g.op("Div", centred, g.op("Sqrt", g.op("Add", variance, g.scalar_like(eps, input))))
    if weight is not None:
        out = g.op("Mul", out, g.value(weight))
    if bias is not None:
        out = g.op("Add", out, g.value(bias))
    return out


@symbolic("instance_norm")
def instance_norm(g, result, input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if not use_input_stats:
        _unsupported("instance_norm with running statistics")
    channels = input.shape[1]
    ones = g.np.ones(channels, dtype=g.array(input.detach().reshape(-1)[:0]).dtype)
    scale = g.value(weight) if weight is not None else g.constant(ones)
    shift = g.value(bias) if bias is not None else g.constant(ones * 0)
    return g.op("InstanceNormalization", g.value(input), scale, shift, epsilon=float(eps))


@symbolic("group_norm")
def group_norm(g, result, input, num_groups, weight=None, bias=None, eps=1e-5):
    # torch's form: the groups as instance-norm channels, then the affine part per channel
    x = g.value(input)
    dtype = g.array(input.detach().reshape(-1)[:0]).dtype
    grouped = g.op("Reshape", x, g.ints([0, num_groups, -1]), allowzero=0)
    normed = g.op("InstanceNormalization", grouped, g.constant(g.np.ones(num_groups, dtype=dtype)),
                  g.constant(g.np.zeros(num_groups, dtype=dtype)), epsilon=float(eps))
    out = g.op("Reshape", normed, g.op("Shape", x), allowzero=0)
    broadcast = (input.shape[1],) + (1,) * (input.dim() - 2)
    if weight is not None:
        w = _constant_weight(g, weight, "group_norm").reshape(broadcast)
        out = g.op("Mul", out, g.initializer(g.unique_initializer_name("Mul"), w))
    if bias is not None:
        b = _constant_weight(g, bias, "group_norm").reshape(broadcast)
        out = g.op("Add", out, g.initializer(g.unique_initializer_name("Add"), b))
    return out


@symbolic("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def conv_transpose(g, result, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    n = weight.dim() - 2
    inputs = [g.value(input), g.value(weight)] + ([g.value(bias)] if bias is not None else [])
    return g.op("ConvTranspose", *inputs, dilations=_tuple(dilation, n), group=int(groups),
                kernel_shape=list(weight.shape[2:]), output_padding=_tuple(output_padding, n),
                pads=_tuple(padding, n) * 2, strides=_tuple(stride, n))


@symbolic("interpolate", "upsample")
def interpolate(g, result, input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    n = input.dim() - 2
    if antialias or recompute_scale_factor or mode not in ("nearest", "linear", "bilinear", "trilinear"):
        _unsupported(f"interpolate(mode='{mode}', antialias={antialias}, "
                     f"recompute_scale_factor={recompute_scale_factor})")
    attrs = {"coordinate_transformation_mode": "align_corners" if align_corners else
             ("asymmetric" if mode == "nearest" else "half_pixel"),
             "cubic_coeff_a": -0.75, "mode": "nearest" if mode == "nearest" else "linear", "nearest_mode": "floor"}
    x = g.value(input)
    if scale_factor is not None:
        scales = g.constant(g.np.array([1.0, 1.0] + [float(s) for s in _tuple(scale_factor, n)], dtype=g.np.float32))
        return g.op("Resize", x, "", scales, **attrs)
    # (a size: the batch and channel sizes read from the input, as torch)
    shape = g.op("Shape", x)
    axes = g.ints([0])
    start = g.ints([0])
    lead = g.op("Slice", shape, start, g.ints([2]), axes)
    sizes = g.op("Concat", lead, g.ints(_tuple(size, n)), axis=0)
    return g.op("Resize", x, "", "", sizes, **attrs)


@symbolic("max_pool1d", "max_pool2d", "max_pool3d")
def max_pool(g, result, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
             return_indices=False):
    if return_indices:
        _unsupported("max_pool with return_indices=True")
    n = input.dim() - 2
    stride = kernel_size if stride is None or stride == [] else stride
    attrs = {"ceil_mode": int(ceil_mode), "kernel_shape": _tuple(kernel_size, n), "pads": _tuple(padding, n) * 2,
             "strides": _tuple(stride, n)}
    if any(d != 1 for d in _tuple(dilation, n)):
        attrs["dilations"] = _tuple(dilation, n)
    return g.op("MaxPool", g.value(input), **attrs)


@symbolic("avg_pool1d", "avg_pool2d", "avg_pool3d")
def avg_pool(g, result, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
    if divisor_override is not None or not count_include_pad:
        _unsupported("avg_pool with divisor_override or count_include_pad=False")
    n = input.dim() - 2
    stride = kernel_size if stride is None or stride == [] else stride
    pads = _tuple(padding, n)
    # torch pads explicitly (zeros count in the average), then pools without padding
    padded = g.op("Pad", g.value(input), g.ints([0, 0] + pads + [0, 0] + pads), mode="constant")
    return g.op("AveragePool", padded, ceil_mode=int(ceil_mode), kernel_shape=_tuple(kernel_size, n),
                pads=[0] * (2 * n), strides=_tuple(stride, n))


@symbolic("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d")
def adaptive_max_pool(g, result, input, output_size, return_indices=False):
    if return_indices or any(s != 1 for s in _tuple(output_size, input.dim() - 2)):
        _unsupported(f"adaptive_max_pool with output size {output_size} or indices (only 1, as a MaxPool)")
    spatial = list(input.shape[2:])
    g.baked.append(g.current)
    return g.op("MaxPool", g.value(input), kernel_shape=spatial, pads=[0] * (2 * len(spatial)), strides=spatial)


@symbolic("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")
def adaptive_avg_pool(g, result, input, output_size):
    if any(s != 1 for s in _tuple(output_size, input.dim() - 2)):
        _unsupported(f"adaptive_avg_pool with output size {output_size} (only 1, GlobalAveragePool)")
    return g.op("GlobalAveragePool", g.value(input))


@symbolic("pad")
def pad(g, result, input, pad, mode="constant", value=None):
    """torch's opset-11 form: the pads as (begin, end) pairs from the last dim, reordered at
    run time into ONNX's all-begins-then-all-ends by a chain torch's folding leaves."""
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        _unsupported(f"pad(mode='{mode}')")
    pads = [int(p) for p in pad]
    extension = g.ints([2 * input.dim() - len(pads)])
    zeros = g.onnx.numpy_helper.from_array(g.np.array([0], dtype=g.np.int64))
    given = g.ints(pads)
    pairs = g.op("Reshape", g.op("Concat", given, g.op("ConstantOfShape", extension, value=zeros), axis=0),
                 g.ints([-1, 2]), allowzero=0)
    axes, starts, ends, steps = g.ints([0]), g.ints([-1]), g.ints([-9223372036854775807]), g.ints([-1])
    flipped = g.op("Slice", pairs, starts, ends, axes, steps)
    flat = g.op("Reshape", g.op("Transpose", flipped, perm=[1, 0]), g.ints([-1]), allowzero=0)
    onnx_pads = g.op("Cast", flat, to=7)
    if mode == "constant":
        fill = g.scalar_like(0.0 if value is None else value, input)
        return g.op("Pad", g.value(input), onnx_pads, fill, mode="constant")
    return g.op("Pad", g.value(input), onnx_pads, mode=modes[mode])


@symbolic("embedding")
def embedding(g, result, input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    if max_norm is not None:
        _unsupported("embedding with max_norm")
    return g.op("Gather", g.value(weight), g.value(input))


# ---------------------------------------------------------------- shapes

def _shape_args(shape):
    return list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else list(shape)


@symbolic("reshape", "view")
def reshape(g, result, input, *shape):
    g.baked.append(g.current)
    return g.op("Reshape", g.value(input), g.ints(int(s) for s in _shape_args(shape)), allowzero=0)


@symbolic("flatten")
def flatten(g, result, input, start_dim=0, end_dim=-1):
    rank = input.dim()
    start, end = start_dim % max(rank, 1), end_dim % max(rank, 1)
    if start == 1 and end == rank - 1:
        return g.op("Flatten", g.value(input), axis=1)
    g.baked.append("flatten")
    return g.op("Reshape", g.value(input), g.ints(result.shape), allowzero=0)


@symbolic("transpose")
def transpose(g, result, input, dim0, dim1):
    perm = list(range(input.dim()))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return _transpose(g, input, perm)


@symbolic("permute")
def permute(g, result, input, *dims):
    return _transpose(g, input, [d % input.dim() for d in _shape_args(dims)])


def _transpose(g, input, perm):
    return g.op("Transpose", g.value(input), perm=perm)


@symbolic("unsqueeze")
def unsqueeze(g, result, input, dim):
    return g.op("Unsqueeze", g.value(input), g.ints([dim]))


@symbolic("squeeze")
def squeeze(g, result, input, dim=None):
    g.baked.append("squeeze")
    if dim is None:
        axes = [d for d, s in enumerate(input.shape) if s == 1]
    else:
        axes = [dim] if input.shape[dim] == 1 else []
    if not axes:
        return g.value(input)
    return g.op("Squeeze", g.value(input), g.ints(axes))


@symbolic("chunk")
def chunk(g, result, input, chunks, dim=0):
    """torch's form: the chunk size computed from the input's runtime shape, ceil(size /
    chunks), and one Slice per chunk."""
    if len(result) != chunks:
        _unsupported(f"chunk into {len(result)} parts of {chunks} asked")
    x = g.value(input)
    shape = g.op("Shape", x)
    axis = g.ints([dim])
    size = g.op("Gather", shape, axis, axis=0)
    start = g.ints([0])
    step = g.op("Div", g.op("Add", size, g.ints([chunks - 1])), g.ints([chunks]))
    outs = []
    for i in range(1, chunks + 1):
        end = g.op("Mul", step, g.ints([i]))
        outs.append(g.op("Slice", x, start, end, axis))
        start = end
    return outs


@symbolic("cat", "concat")
def cat(g, result, tensors, dim=0):
    return g.op("Concat", *[g.value(t) for t in tensors], axis=int(dim))


@symbolic("contiguous", "clone", "detach")
def identity(g, result, input, *args, **kwargs):
    return g.value(input)
