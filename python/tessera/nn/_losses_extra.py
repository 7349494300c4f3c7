"""The margin losses: front ends of the aten operators (hinge embedding, soft margin,
multi-label / multi-class margin; aten/native/nn/Loss.cpp), and those torch writes in its
Python functional (multi-label soft margin, triplet with a custom distance); ctc_loss
(aten/native/nn/LossCTC.cpp) and rrelu."""
import tessera as _t
from tessera._C import _nn

from . import functional as _F

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


def _apply_reduction(loss, enum):
    if enum == 1:
        return loss.mean()
    return loss.sum() if enum == 2 else loss


def _not_implemented(kernel, t):
    return RuntimeError(f"\"{kernel}\" not implemented for '{_scalar_name(t.dtype)}'")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Negative log-likelihood of each target under all alignments of log_probs (T, N, C) or
    (T, C); 'mean' divides each loss by its target length, then averages over the batch.
    As torch's, the gradient is the one with respect to the logits of the log_softmax
    that produced log_probs (the documented use)."""
    return _t.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _F._reduction_enum(reduction),
                       zero_infinity)


# ---------------------------------------------------------------- elementwise margin losses

def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    return _t.hinge_embedding_loss(input, target, margin, _F._reduction(size_average, reduce, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.soft_margin_loss(input, target, _F._reduction(size_average, reduce, reduction))


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

def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    enum = _F._reduction(size_average, reduce, reduction)
    # torch's Python front end checks these two with ValueError; the operator checks the rest
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _nn.multi_margin_loss(input, target, p, margin, weight, enum)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nn.multilabel_margin_loss(input, target, _F._reduction(size_average, reduce, reduction))


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

def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (the rrelu operator): a random negative slope per element while
    training, the mean slope (lower + upper) / 2 otherwise."""
    if inplace:
        return _t.rrelu_(input, lower, upper, training)
    return _t.rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place rrelu; returns input."""
    return _t.rrelu_(input, lower, upper, training)
