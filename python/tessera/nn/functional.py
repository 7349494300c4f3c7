"""tessera.nn.functional: torch.nn.functional's operators with torch's signatures and
defaults. Most are the generated bindings of aten operators (tessera._C._nn holds the
ones torch keeps in torch._C._nn); the rest are the few lines of Python torch writes
too (inplace= flags, softsign, tanhshrink)."""
import warnings

import tessera as _t
from tessera._C import _nn

# ---------------------------------------------------------------- activations
# Bound as they are, as torch binds them: gelu(input, *, approximate='none'),
# softplus(input, beta=1, threshold=20), softshrink/hardshrink(input, lambd=0.5),
# prelu(input, weight), threshold_(input, threshold, value), and the in-place forms.
gelu = _nn.gelu
softplus = _nn.softplus
softshrink = _nn.softshrink
hardshrink = _t.hardshrink
logsigmoid = _nn.log_sigmoid
prelu = _t.prelu
elu_ = _nn.elu_
leaky_relu_ = _nn.leaky_relu_
hardtanh_ = _nn.hardtanh_
relu_ = _t.relu_
threshold_ = _t.threshold_
celu_ = _t.celu_
selu_ = _t.selu_
sigmoid = _t.sigmoid
tanh = _t.tanh

# ---------------------------------------------------------------- linear layers
# torch binds these from aten as well (torch._C._nn.linear, torch.bilinear).
linear = _t.linear
bilinear = _t.bilinear


def relu(input, inplace=False):
    return _t.relu_(input) if inplace else _t.relu(input)


def relu6(input, inplace=False):
    return _nn.relu6_(input) if inplace else _nn.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


def selu(input, inplace=False):
    return _t.selu_(input) if inplace else _t.selu(input)


def celu(input, alpha=1.0, inplace=False):
    return _t.celu_(input, alpha) if inplace else _t.celu(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _nn.leaky_relu_(input, negative_slope) if inplace else _nn.leaky_relu(input, negative_slope)


def silu(input, inplace=False):
    return _nn.silu_(input) if inplace else _nn.silu(input)


def mish(input, inplace=False):
    return _nn.mish_(input) if inplace else _nn.mish(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _nn.hardtanh_(input, min_val, max_val) if inplace else _nn.hardtanh(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def hardswish(input, inplace=False):
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def threshold(input, threshold, value, inplace=False):
    return _t.threshold_(input, threshold, value) if inplace else _t.threshold(input, threshold, value)


def glu(input, dim=-1):
    return _nn.glu(input, dim)


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


# ---------------------------------------------------------------- softmax family

def _implicit_softmax_dim(name, ndim):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                  "Change the call to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("softmax", input.dim())
    return input.softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("softmin", input.dim())
    return (-input).softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_softmax_dim("log_softmax", input.dim())
    return input.log_softmax(dim, dtype=dtype)


# ---------------------------------------------------------------- losses

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction):
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated, please use reduction='mean' instead.")
        return 1
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _legacy_reduction(size_average, reduce):
    """reduction for the deprecated size_average / reduce arguments (either may be None)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.")
    return reduction


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


def _broadcast_with_warning(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)
    return _t.broadcast_tensors(input, target)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    return _nn.cross_entropy_loss(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index,
                                  label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _nn.nll_loss_nd(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    enum = _reduction(size_average, reduce, reduction)
    return _nn.mse_loss(*_broadcast_with_warning(input, target), enum)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    enum = _reduction(size_average, reduce, reduction)
    return _nn.l1_loss(*_broadcast_with_warning(input, target), enum)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    enum = _reduction(size_average, reduce, reduction)
    input, target = _broadcast_with_warning(input, target)
    if beta == 0.0:
        return _nn.l1_loss(input, target, enum)
    return _nn.smooth_l1_loss(input, target, enum, beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    return _nn.huber_loss(*_broadcast_with_warning(input, target), _reduction_enum(reduction), delta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    enum = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(_t.broadcast_shapes(target.size(), weight.size()))
    return _nn.binary_cross_entropy(input, target, weight, enum)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    enum = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _t.binary_cross_entropy_with_logits(input, target, weight, pos_weight, enum)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
        enum = 2 if reduction == "batchmean" else _reduction_enum(reduction)
    reduced = _t.kl_div(input, target, enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size(0)
    return reduced


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _t.poisson_nll_loss(input, target, log_input, full, eps, _REDUCTIONS[reduction])


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of a Gaussian with mean `input` and variance `var` (one per
    element, or one per sample when var lacks input's last dim or has it as 1)."""
    import math
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)      # one variance per sample (homoscedastic)
        elif not (input.size()[:-1] == var.size()[:-1] and var.size(-1) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # clamped for the division and the log; the clamp itself is not differentiated
    var = var.clone()
    with _t.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    enum = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _t.margin_ranking_loss(input1, input2, target, margin, enum)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    return _t.cosine_embedding_loss(input1, input2, target, margin, _reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    enum = _reduction(size_average, reduce, reduction)
    return _t.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, enum)


cosine_similarity = _t.cosine_similarity
pairwise_distance = _t.pairwise_distance


# ---------------------------------------------------------------- convolution
# torch binds these as they are (padding may be ints or 'same'/'valid'; the schema
# overloads tell them apart). unfold and fold are im2col and col2im.
conv1d = _t.conv1d
conv2d = _t.conv2d
conv3d = _t.conv3d
conv_transpose1d = _t.conv_transpose1d
conv_transpose2d = _t.conv_transpose2d
conv_transpose3d = _t.conv_transpose3d
conv_tbc = _t.conv_tbc


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    return _nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    return _nn.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


# ---------------------------------------------------------------- pooling

def _sizes_with_default(output_size, input_sizes):
    """output_size with None entries taken from the input's trailing sizes."""
    if isinstance(output_size, int):
        return output_size
    if len(input_sizes) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    trailing = input_sizes[-len(output_size):]
    return [d if v is None else v for v, d in zip(output_size, trailing)]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _t.max_pool1d_with_indices(input, kernel_size, [] if stride is None else stride, padding, dilation,
                                      ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _t.max_pool1d(input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _nn.max_pool2d_with_indices(input, kernel_size, [] if stride is None else stride, padding, dilation,
                                       ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _t.max_pool2d(input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _t.avg_pool1d(input, kernel_size, [] if stride is None else stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _nn.avg_pool2d(input, kernel_size, [] if stride is None else stride, padding, ceil_mode, count_include_pad,
                          divisor_override)


adaptive_avg_pool1d = _t.adaptive_avg_pool1d


def adaptive_avg_pool2d(input, output_size):
    return _nn.adaptive_avg_pool2d(input, _sizes_with_default(output_size, input.size()))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _t.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = _t.adaptive_max_pool1d(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool2d(input, _sizes_with_default(output_size, input.size()))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _nn.max_pool3d_with_indices(input, kernel_size, [] if stride is None else stride, padding, dilation,
                                       ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _t.max_pool3d(input, kernel_size, [] if stride is None else stride, padding, dilation, ceil_mode)


def _fractional_max_pool(dims, input, kernel_size, output_size, output_ratio, _random_samples):
    """The op's arguments: output_size from output_ratio of the input's spatial sizes, and
    one uniform sample per plane and dimension when none is given (torch draws them so)."""
    name = f"fractional_max_pool{dims}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = _ntuple(output_ratio, dims)
        output_size = [int(input.size(-dims + i) * ratio[i]) for i in range(dims)]
    if _random_samples is None:
        batch = 1 if input.dim() == dims + 1 else input.size(0)
        _random_samples = _t.rand(batch, input.size(-dims - 1), dims, dtype=input.dtype, device=input.device)
    op = _nn.fractional_max_pool2d if dims == 2 else _nn.fractional_max_pool3d
    return op(input, _ntuple(kernel_size, dims), _ntuple(output_size, dims), _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    out = _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _nn.avg_pool3d(input, kernel_size, [] if stride is None else stride, padding, ceil_mode, count_include_pad,
                          divisor_override)


def adaptive_avg_pool3d(input, output_size):
    return _nn.adaptive_avg_pool3d(input, _sizes_with_default(output_size, input.size()))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _nn.adaptive_max_pool3d(input, _sizes_with_default(output_size, input.size()))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """The spatial size max_unpool restores: the pooling's input size by default, else
    `output_size` (optionally with its batch and channel sizes), which must lie within a
    stride of that default along each dim."""
    n = len(kernel_size)
    default = [(input.size(-n + d) - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for d in range(n):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return output_size


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel_size, padding = _ntuple(kernel_size, 1), _ntuple(padding, 1)
    stride = kernel_size if stride is None else _ntuple(stride, 1)
    size = list(_unpool_output_size(input, kernel_size, stride, padding, output_size)) + [1]
    return _nn.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel_size, padding = _ntuple(kernel_size, 2), _ntuple(padding, 2)
    stride = kernel_size if stride is None else _ntuple(stride, 2)
    return _nn.max_unpool2d(input, indices, _unpool_output_size(input, kernel_size, stride, padding, output_size))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel_size, padding = _ntuple(kernel_size, 3), _ntuple(padding, 3)
    stride = kernel_size if stride is None else _ntuple(stride, 3)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _nn.max_unpool3d(input, indices, size, stride, padding)


def _lp_root(pooled, norm_type, window):
    # the window's sum of |x|^p (p-th powers of negative x cancel as torch's do), then its root
    return (_t.sign(pooled) * relu(pooled.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    pooled = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_root(pooled, norm_type, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kh, kw = _pair(kernel_size)
    pooled = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_root(pooled, norm_type, kh * kw)


# ---------------------------------------------------------------- normalization

def _verify_batch_size(size):
    count = size[0]
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    count = 1
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return _t.div(input, denom) if out is None else _t.div(input, denom, out=out)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each element divided by (k + alpha * mean of squares over `size` neighbouring
    channels) ** beta; the channel window is zero-padded, size // 2 before."""
    dim = input.dim()
    if dim < 3:
        # (torch 1.13's message has a run of spaces from a line continuation; current torch's has not)
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    squares = input.mul(input).unsqueeze(1)
    if dim == 3:
        squares = pad(squares, (0, 0, size // 2, (size - 1) // 2))
        window = avg_pool2d(squares, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        squares = squares.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        squares = pad(squares, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        window = avg_pool3d(squares, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / window.mul(alpha).add(k).pow(beta)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _t.layer_norm(input, normalized_shape, weight, bias, eps, False)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.size())
    return _t.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _t.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _t.group_norm(input, num_groups, weight, bias, eps, False)


# ---------------------------------------------------------------- dropout

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _t.dropout_(input, p, training) if inplace else _t.dropout(input, p, training)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _t.alpha_dropout_(input, p, training) if inplace else _t.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return (_t.feature_alpha_dropout_(input, p, training) if inplace
            else _t.feature_alpha_dropout(input, p, training))


def _channel_dropout(input, p, training, inplace, batched):
    """feature_dropout on [N, C, ...], an unbatched input given a batch dim of 1 around it."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _t.feature_dropout_(input, p, training) if inplace else _t.feature_dropout(input, p, training)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, input.dim() == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use dropout "
                      "instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).")
    if ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.")
    return _t.feature_dropout_(input, p, training) if inplace else _t.feature_dropout(input, p, training)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use dropout "
                      "instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).")
    return _channel_dropout(input, p, training, inplace, ndim == 5)


# ---------------------------------------------------------------- embedding, one_hot, padding

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with _t.no_grad():
            _t.embedding_renorm_(weight, input, max_norm, norm_type)
    return _t.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
                         f"then it must have the same shape as the input ({input.shape})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = _t.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with _t.no_grad():
            _t.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return _t.embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
                            per_sample_weights, include_last_offset, padding_idx)[0]


one_hot = _nn.one_hot
pad = _nn.pad
pixel_shuffle = _t.pixel_shuffle
channel_shuffle = _t.channel_shuffle
native_channel_shuffle = _t.native_channel_shuffle
pixel_unshuffle = _t.pixel_unshuffle


# ---------------------------------------------------------------- grid sampling
_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in _GRID_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    return _t.grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode], align_corners)


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.")
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size[2:]) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _t.affine_grid_generator(theta, size, align_corners)


GRID_SAMPLE_INTERPOLATION_MODES = _GRID_MODES
GRID_SAMPLE_PADDING_MODES = _GRID_PADDING
pdist = _t.pdist


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau); with hard=True the one-hot of its argmax in the
    forward pass and the soft sample's gradient in the backward (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.")
    gumbels = -_t.empty_like(logits, memory_format=_t.contiguous_format).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.max(dim, keepdim=True)[1]
    one_hot_sample = _t.zeros_like(logits, memory_format=_t.contiguous_format).scatter_(dim, index, 1.0)
    return one_hot_sample - soft.detach() + soft


# ---------------------------------------------------------------- attention
# scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
# is_causal=False, scale=None, enable_gqa=False): float32/float64 on CPU without dropout
# take the fused kernel (keys a block at a time, no L x S matrix); the rest the math form.
scaled_dot_product_attention = _nn.scaled_dot_product_attention


# ---------------------------------------------------------------- interpolation

_LINEAR_MODES = ("linear", "bilinear", "bicubic", "trilinear")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dims of [N, C, *spatial]: mode nearest (1-D, 2-D), linear (1-D),
    bilinear and bicubic (2-D, also antialiased), as torch.nn.functional.interpolate."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    output_size = scale_factors = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                                 f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                                 "...,oK) format.")
            output_size = list(size)
        else:
            output_size = [size] * dim
    else:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor and scale_factors is not None:
        import math
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is only supported for bilinear and bicubic modes")
    if antialias:
        aa = _nn._upsample_bilinear2d_aa if mode == "bilinear" else _nn._upsample_bicubic2d_aa
        return aa(input, output_size, align_corners, scale_factors)
    if mode == "nearest" and input.dim() == 3:
        return _nn.upsample_nearest1d(input, output_size, scale_factors)
    if mode == "nearest" and input.dim() == 4:
        return _nn.upsample_nearest2d(input, output_size, scale_factors)
    if mode == "linear" and input.dim() == 3:
        return _nn.upsample_linear1d(input, output_size, align_corners, scale_factors)
    if mode == "bilinear" and input.dim() == 4:
        return _nn.upsample_bilinear2d(input, output_size, align_corners, scale_factors)
    if mode == "bicubic" and input.dim() == 4:
        return _nn.upsample_bicubic2d(input, output_size, align_corners, scale_factors)
    for name, ndim in (("linear", 3), ("bilinear", 4), ("bicubic", 4), ("trilinear", 5)):
        if mode == name and input.dim() != ndim:
            raise NotImplementedError(f"Got {input.dim()}D input, but {name} mode needs {ndim}D input")
    if mode in ("nearest", "area", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear"):
        raise NotImplementedError(f"interpolate: mode '{mode}' on {input.dim()}D input is not implemented in "
                                  "tessera yet (nearest 1-D/2-D, linear, bilinear and bicubic are)")
    raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: "
                              "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
                              "(got {})".format(input.dim(), mode))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


from ._attention import multi_head_attention_forward, _canonical_mask, _none_or_dtype  # noqa: E402,F401
from ._losses_extra import (ctc_loss, hinge_embedding_loss, multi_margin_loss,  # noqa: E402,F401
                            multilabel_margin_loss, multilabel_soft_margin_loss, rrelu, rrelu_,
                            soft_margin_loss, triplet_margin_with_distance_loss)
from . import grad  # noqa: E402,F401  (F.grad is the nn.grad module, as in torch)
