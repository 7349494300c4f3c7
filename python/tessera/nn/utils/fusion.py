"""Folding an eval-mode batch norm into the convolution or linear layer before it, as
torch.nn.utils.fusion: y = bn(conv(x)) becomes one conv with scaled weight and shifted
bias (gamma / sqrt(running_var + eps) per output channel)."""
import copy

import tessera as _t

from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` computing ``bn(conv(x))``; both must be in eval mode.
    ``transpose`` for a transposed convolution (output channels on weight dim 1)."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused (weight, bias) as new Parameters; a missing conv bias or affine
    weight/bias counts as zeros/ones."""
    if conv_b is None:
        conv_b = _t.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _t.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _t.zeros_like(bn_rm)
    bn_var_rsqrt = _t.rsqrt(bn_rv + bn_eps)
    channel_dim = [1, -1] if transpose else [-1, 1]
    shape = channel_dim + [1] * (len(conv_w.shape) - 2)
    conv_w = conv_w * (bn_w * bn_var_rsqrt).reshape(shape)
    conv_b = (conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b
    return Parameter(conv_w), Parameter(conv_b)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` computing ``bn(linear(x))``; both must be in eval mode."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused (weight, bias) as new Parameters; a missing linear bias counts as zeros."""
    if linear_b is None:
        linear_b = _t.zeros_like(bn_rm)
    bn_scale = bn_w * _t.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * bn_scale + bn_b
    return Parameter(fused_w), Parameter(fused_b)
