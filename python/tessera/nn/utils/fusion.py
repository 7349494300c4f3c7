"""Folding an eval-mode batch norm into the convolution or linear layer that feeds it,
with the interface of torch.nn.utils.fusion: since bn(y) = a * y + b per channel, with
a = gamma / sqrt(running_var + eps) and b = beta - a * running_mean, the layer's weight
is scaled by a per output channel and its bias becomes a * bias + b."""
import copy

import tessera as _t

from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _bn_terms(bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    # the per-channel pieces of the batch norm, missing affine terms as 1 and 0
    gamma = _t.ones_like(bn_rm) if bn_w is None else bn_w
    beta = _t.zeros_like(bn_rm) if bn_b is None else bn_b
    return gamma, beta, _t.rsqrt(bn_rv + bn_eps)


def _fused_copy(layer, bn, fold):
    assert not (layer.training or bn.training), "Fusion only for eval!"
    out = copy.deepcopy(layer)
    out.weight, out.bias = fold(out.weight, out.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return out


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` that computes ``bn(conv(x))``; both must be in eval mode.
    ``transpose``: ``conv`` is a transposed convolution (output channels on weight dim 1)."""
    return _fused_copy(conv, bn, lambda *terms: fuse_conv_bn_weights(*terms, transpose))


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused (weight, bias), as new Parameters; a missing conv bias counts as zeros."""
    gamma, beta, inv_std = _bn_terms(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
    bias = _t.zeros_like(bn_rm) if conv_b is None else conv_b
    view = [1] * conv_w.dim()
    view[1 if transpose else 0] = -1
    weight = conv_w * (gamma * inv_std).reshape(view)
    bias = (bias - bn_rm) * inv_std * gamma + beta
    return Parameter(weight), Parameter(bias)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` that computes ``bn(linear(x))``; both must be in eval mode."""
    return _fused_copy(linear, bn, fuse_linear_bn_weights)


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused (weight, bias), as new Parameters; a missing linear bias counts as zeros."""
    scale = bn_w * _t.rsqrt(bn_rv + bn_eps)
    bias = _t.zeros_like(bn_rm) if linear_b is None else linear_b
    return Parameter(linear_w * scale[:, None]), Parameter((bias - bn_rm) * scale + bn_b)
