"""The margin losses torch implements in ATen or in its Python functional (hinge embedding,
soft margin, multi-label / multi-class margin, triplet with a custom distance) and rrelu,
written as composites of tessera tensor operators so that autograd differentiates them."""
import tessera as _t
from tessera._C import _nn
from tessera.autograd.grad_mode import no_grad

from . import functional as _F
from ._ctc_loss import ctc_loss  # noqa: F401

__all__ = ["hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss", "rrelu", "rrelu_"]

# torch's ScalarType names, which its dtype errors print.
_SCALAR_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                 "int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long",
                 "bool": "Bool", "complex32": "ComplexHalf", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}


def _scalar_name(dtype):
    key = str(dtype).split(".")[-1]
    return _SCALAR_NAMES.get(key, key)


def _sizes(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _apply_reduction(loss, enum):
    if enum == 1:
        return loss.mean()
    return loss.sum() if enum == 2 else loss


def _not_implemented(kernel, t):
    return RuntimeError(f"\"{kernel}\" not implemented for '{_scalar_name(t.dtype)}'")


# ---------------------------------------------------------------- elementwise margin losses

def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target is 1, max(0, margin - input) where it is -1 (both terms for any
    other target value, as torch's kernel adds them)."""
    enum = _F._reduction(size_average, reduce, reduction)
    below_margin = (margin - input).clamp_min(0)
    loss = _t.where(target != 1, below_margin, 0.0) + _t.where(target != -1, input, 0.0)
    return _apply_reduction(loss, enum)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), with torch's unguarded exp (it overflows where torch's does)."""
    enum = _F._reduction(size_average, reduce, reduction)
    return _apply_reduction((-input * target).exp().log1p(), enum)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary logistic loss of every class, optionally weighted, averaged over the classes
    (the last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _F._legacy_reduction(size_average, reduce)
    loss = -(target * _nn.log_sigmoid(input) + (1 - target) * _nn.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# ---------------------------------------------------------------- class-index margin losses

def _margin_frames(input):
    """(nframe, dim) of a multi-class margin loss input: a (C) vector, a (N, C) matrix, or a
    scalar (one frame of one class)."""
    ndims = input.dim()
    if not ((ndims == 2 and input.size(1) != 0) or (ndims == 1 and input.size(0) != 0) or ndims == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           + _sizes(input))
    if ndims <= 1:
        return 1, (1 if ndims == 0 else input.size(0))
    return input.size(0), input.size(1)


def _check_long_target(target):
    if target.dtype != _t.int64:
        raise RuntimeError(f"expected scalar type Long but found {_scalar_name(target.dtype)}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over classes i != y of max(0, margin - x[y] + x[i])^p (times weight[y]), divided
    by the number of classes; one value per frame."""
    enum = _F._reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _margin_frames(input)
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError("inconsistent target size, got: " + _sizes(target))
    # torch 1.13 reads past a short weight; current torch rejects it with this message.
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {_sizes(weight)}")
    _check_long_target(target)
    if not input.is_floating_point():
        raise _not_implemented("multi_margin_loss_cpu_kernel", input)
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found "
                           f"{_scalar_name(weight.dtype)}")
    labels = target.reshape(nframe, 1)
    if nframe and (bool((labels < 0).any()) or bool((labels >= dim).any())):
        raise RuntimeError("target out of range")
    scores = input.reshape(nframe, dim)
    # relu, not clamp_min: torch's kernel gives no gradient where the hinge is exactly 0
    hinge = ((margin - scores.gather(1, labels)) + scores).relu()
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight.index_select(0, labels.reshape(-1)).unsqueeze(1)
    hinge = hinge.masked_fill(_t.arange(dim).unsqueeze(0) == labels, 0.0)
    loss = hinge.sum(1) / dim
    if enum == 0:
        return loss.reshape(tuple(target.shape))
    return _apply_reduction(loss, enum)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """For each frame, the target row lists class indices up to its first -1; every listed
    class j is compared with every unlisted class i: sum of max(0, 1 - (x[j] - x[i])) over
    the pairs, divided by the number of classes. A class listed twice counts twice, as in
    torch's kernel."""
    enum = _F._reduction(size_average, reduce, reduction)
    nframe, dim = _margin_frames(input)
    if input.dim() <= 1:
        consistent = target.dim() <= 1 and target.numel() == dim
    else:
        consistent = target.dim() == 2 and target.size(0) == nframe and target.size(1) == dim
    if not consistent:
        raise RuntimeError(f"inconsistent size {_sizes(target)} for argument #2 'target'")
    _check_long_target(target)
    labels = target.reshape(nframe, dim)
    if nframe and (bool((labels < -1).any()) or bool((labels >= dim).any())):
        raise RuntimeError("argument #2 'target' is out of range")
    if not input.is_floating_point():
        raise _not_implemented("multilabel_margin_loss_forward_out_frame", input)
    scores = input.reshape(nframe, dim)
    listed = ((labels < 0).cumsum(1) == 0).to(input.dtype)       # before the first -1
    counts = _t.zeros((nframe, dim), dtype=input.dtype).scatter_add(1, labels.clamp_min(0), listed)
    unlisted = (counts == 0).to(input.dtype)
    # pair[n, j, i] = 1 - x[n, j] + x[n, i]; relu as torch counts only positive hinges
    pair = ((1 - scores).unsqueeze(2) + scores.unsqueeze(1)).relu()
    loss = (pair * counts.unsqueeze(2) * unlisted.unsqueeze(1)).sum((1, 2)) / dim
    if enum == 0:
        return loss if target.dim() == 2 else loss.reshape(())
    return _apply_reduction(loss, enum)


# ---------------------------------------------------------------- triplet with a custom distance

def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0) for any distance d
    (pairwise_distance by default); swap takes the smaller of d(a, n) and d(p, n)."""
    # Both checks as current torch (1.13 checks neither and accepts 'elementwise_mean').
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number "
                           f"of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative "
                           f"{n_dim}D inputs")
    distance = distance_function if distance_function is not None else _F.pairwise_distance
    positive_dist = distance(anchor, positive)
    negative_dist = distance(anchor, negative)
    if swap:
        negative_dist = _t.minimum(negative_dist, distance(positive, negative))
    loss = (positive_dist - negative_dist + margin).clamp_min(0.0)
    return _apply_reduction(loss, _F._REDUCTIONS[reduction])


# ---------------------------------------------------------------- randomized leaky relu

def _check_rrelu(input, lower, upper, training):
    if not lower <= upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training and not input.is_floating_point():
        raise _not_implemented("rrelu_with_noise_out_cpu", input)


def _rrelu_noise(input, lower, upper):
    """The per-element slope: Uniform(lower, upper) where input <= 0, 1 elsewhere (drawn
    from tessera's default generator). Constant for autograd, so the gradient is grad * noise,
    as torch's."""
    with no_grad():
        slopes = _t.empty_like(input).uniform_(lower, upper)
        return _t.where(input <= 0, slopes, 1.0)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: a random negative slope per element while training, the mean
    slope (lower + upper) / 2 otherwise."""
    if inplace:
        return rrelu_(input, lower, upper, training)
    _check_rrelu(input, lower, upper, training)
    if training:
        return input * _rrelu_noise(input, lower, upper)
    return _nn.leaky_relu(input, (lower + upper) / 2)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place rrelu; returns input."""
    _check_rrelu(input, lower, upper, training)
    if training:
        return input.mul_(_rrelu_noise(input, lower, upper))
    return _nn.leaky_relu_(input, (lower + upper) / 2)
